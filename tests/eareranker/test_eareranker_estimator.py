"""EARerankerEstimator: learns planted adequacy, determinism, rank/filter contract, save/load, bad inputs."""

import numpy as np
import pytest
from sklearn.base import clone

from neurips25.eareranker import EARerankerEstimator, HashedBowEncoder, spearman

TINY = dict(n_chunks=4, d_model=16, n_layers=1, n_heads=2, dim_feedforward=32)


@pytest.fixture(scope="module")
def planted():
    # adequacy = how well the document matches the query: a learnable function of (q, x) only
    rng = np.random.default_rng(0)
    Q = rng.normal(size=(600, 16)).astype(np.float32)
    X = (np.where(rng.random((600, 1)) < 0.5, Q, 0) + rng.normal(size=(600, 16))).astype(np.float32)
    s = 100 / (1 + np.exp(-((Q * X).sum(1) - 4) / 3))
    return Q, X, s


@pytest.fixture(scope="module")
def fitted(planted):
    Q, X, s = planted
    return EARerankerEstimator(**TINY, epochs=15, batch_size=64, seed=0).fit(Q[:500], X[:500], s[:500])


def test_learns_planted_adequacy(planted, fitted):
    Q, X, s = planted
    pred = fitted.predict_score(Q[500:], X[500:])
    assert spearman(pred, s[500:]) > 0.6
    assert np.mean(fitted.predict_bin(Q[500:], X[500:]) == fitted.rubric_.to_bin(s[500:])) > 0.4
    assert fitted.loss_curve_[-1] < fitted.loss_curve_[0]


def test_same_seed_same_scores(planted):
    Q, X, s = planted
    a = EARerankerEstimator(**TINY, epochs=1, seed=5).fit(Q[:200], X[:200], s[:200]).predict_score(Q, X)
    b = EARerankerEstimator(**TINY, epochs=1, seed=np.int64(5)).fit(Q[:200], X[:200], s[:200]).predict_score(Q, X)
    c = EARerankerEstimator(**TINY, epochs=1, seed=6).fit(Q[:200], X[:200], s[:200]).predict_score(Q, X)
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_rank_and_filter_contract(planted, fitted):
    Q, X, _ = planted
    res = fitted.rank(Q[0], X[:30], top_k=5)
    scores = fitted.predict_score(np.repeat(Q[:1], 30, 0), X[:30])
    assert [r["corpus_id"] for r in res] == list(np.argsort(-scores, kind="stable")[:5])
    assert [r["score"] for r in res] == sorted((r["score"] for r in res), reverse=True)
    assert len(fitted.rank(Q[0], X[:30])) == 30
    bins = fitted.predict_bin(np.repeat(Q[:1], 30, 0), X[:30])
    kept = fitted.filter(Q[0], X[:30], min_bin=3)
    assert sorted(kept) == sorted(np.flatnonzero(bins >= 3).tolist())


def test_text_pairs_through_encode_fn(planted):
    enc = HashedBowEncoder(dim=16)
    texts = ["the capital of Xand", "Xand has capital Mor", "weather report today", "capital of Xand is Mor"]
    est = EARerankerEstimator(**TINY, epochs=1, encode_fn=enc).fit(enc(texts[:1] * 3), enc(texts[1:]), [90, 5, 95])
    p = est.predict([(texts[0], t) for t in texts[1:]])
    assert p.shape == (3,)
    assert est.rank(texts[0], texts[1:], top_k=2, return_documents=True)[0]["text"] in texts[1:]


def test_save_load_round_trip(tmp_path, planted, fitted):
    Q, X, _ = planted
    fitted.save(tmp_path / "m")
    back = EARerankerEstimator.load(tmp_path / "m")
    np.testing.assert_array_equal(back.predict_score(Q, X), fitted.predict_score(Q, X))
    assert back.get_params()["n_chunks"] == 4 and clone(fitted).get_params() == fitted.get_params()
    with pytest.raises(FileNotFoundError, match="written by save"):
        EARerankerEstimator.load(tmp_path / "nothing")


def test_bad_inputs(planted, fitted):
    Q, X, s = planted
    est = EARerankerEstimator(**TINY, epochs=1)
    with pytest.raises(ValueError, match="same embedding dimension"):
        est.fit(Q, X[:, :8], s)
    with pytest.raises(ValueError, match="`n_chunks` must divide the embedding dimension d=16"):
        EARerankerEstimator(n_chunks=5, d_model=16, n_heads=2, epochs=1).fit(Q, X, s)
    bad = Q.copy()
    bad[3, 2] = np.nan
    with pytest.raises(ValueError, match="`query_emb` contains 1 NaN"):
        est.fit(bad, X, s)
    with pytest.raises(ValueError, match=r"`scores` must lie in \[0, 100\]"):
        est.fit(Q, X, s + 50)
    with pytest.raises(ValueError, match="same number of rows"):
        est.fit(Q[:10], X[:9], s[:10])
    with pytest.raises(RuntimeError, match="not fitted"):
        est.predict_score(Q, X)
    with pytest.raises(ValueError, match="fitted on d=16"):
        fitted.predict_score(Q[:, :8], X[:, :8])
    with pytest.raises(ValueError, match="`top_k`"):
        fitted.rank(Q[0], X[:5], top_k=0)
    with pytest.raises(ValueError, match="`min_bin`"):
        fitted.filter(Q[0], X[:5], min_bin=6)
    with pytest.raises(ValueError, match="`pairs`"):
        fitted.predict(["not a pair"])
    with pytest.raises(ValueError, match="`epochs`"):
        EARerankerEstimator(**TINY, epochs=0).fit(Q, X, s)
