"""EARerankerEstimator: learns planted adequacy with its defaults, warnings, determinism, one decision for
rank / bin / filter, CrossEncoder keywords, save/load with the encoder settings, bad inputs."""

import json
import warnings

import numpy as np
import pytest
from sklearn.base import clone

from neurips25.eareranker import EARerankerEstimator, HashedBowEncoder, MiniLMEncoder, spearman

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
    return EARerankerEstimator(**TINY, epochs=15, batch_size=64, seed=0, early_stopping=False).fit(
        Q[:500], X[:500], s[:500])


def planted_bilinear(n=1500, d=4, seed=0):
    """Adequacy a bilinear function of the two (unit) embeddings: s = 100 sigmoid(0.5 z), z = std. q^T W x."""
    rng = np.random.default_rng(seed)
    Q, X = rng.normal(size=(n, d)), rng.normal(size=(n, d))
    Q /= np.linalg.norm(Q, axis=1, keepdims=True)
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    z = np.einsum("ni,ij,nj->n", Q, rng.normal(size=(d, d)), X)
    return Q.astype(np.float32), X.astype(np.float32), 100 / (1 + np.exp(-0.5 * (z - z.mean()) / z.std()))


def test_defaults_learn_planted_bilinear():
    # review/issue #49: with the old defaults (20 epochs at batch 256, 100 steps here; T=8 chunks) the model
    # predicted a near-constant (see docs/eareranker.md for the numbers of this data); the step budget with early
    # stopping on a held-out tenth trains it
    Q, X, s = planted_bilinear()
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # no collapse warning either
        est = EARerankerEstimator().fit(Q[:1200], X[:1200], s[:1200])
    pred = est.predict_score(Q[1200:], X[1200:])
    assert np.corrcoef(pred, s[1200:])[0, 1] > 0.8
    assert pred.std() > 0.5 * s[1200:].std()
    assert est.best_step_ <= est.n_steps_ <= est.max_steps and len(est.validation_curve_) == len(est.loss_curve_)


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


def test_rank_bin_filter_agree(planted, fitted):
    # review bug: rank ordered by the score head but reported (and filter kept by) the bin head, so filter could
    # keep a document ranked below one it dropped. One decision now: bin head picks the bin, score inside it.
    Q, X, _ = planted
    for i in range(0, 100, 20):
        ranked = fitted.rank(Q[i], X[100:160])
        assert all(fitted.rubric_.to_bin(r["score"]) == r["bin"] for r in ranked)
        assert [r["bin"] for r in ranked] == sorted((r["bin"] for r in ranked), reverse=True)
        for b in range(6):
            kept = fitted.filter(Q[i], X[100:160], min_bin=b)
            assert kept == [r["corpus_id"] for r in ranked][:len(kept)]  # a prefix of the ranking
    np.testing.assert_array_equal(fitted.rubric_.to_bin(fitted.predict_score(Q, X)), fitted.predict_bin(Q, X))
    raw = fitted.predict_raw_score(Q, X)
    assert np.all(np.abs(raw - fitted.predict_score(Q, X)) <= np.abs(raw - 50) + 50)  # a clip of the raw head


def test_collapse_and_unit_scale_warnings(planted):
    Q, X, s = planted
    with pytest.warns(UserWarning, match="predictions collapsed"):  # lr 5 saturates the score head: a constant
        # (without the similarity path, which starts at the calibrated cosine and keeps a spread)
        EARerankerEstimator(**TINY, max_steps=5, lr=5.0, early_stopping=False, similarity_path=False).fit(
            Q[:300], X[:300], s[:300])
    with pytest.warns(UserWarning, match=r"all lie in \[0, 1\]"):
        EARerankerEstimator(**TINY, max_steps=2).fit(Q[:200], X[:200], s[:200] / 100)
    with warnings.catch_warnings(record=True) as got:  # 0-100 scores: no scale warning
        warnings.simplefilter("always")
        EARerankerEstimator(**TINY, max_steps=2).fit(Q[:200], X[:200], s[:200])
    assert not [w for w in got if "all lie in" in str(w.message)]


def test_crossencoder_keywords(planted, fitted):
    # review: rank(..., batch_size=32) and show_progress_bar= (what a pipeline passes a CrossEncoder) raised
    Q, X, _ = planted
    a = fitted.rank(Q[0], X[:30], top_k=4, batch_size=7, show_progress_bar=False)
    assert a == fitted.rank(Q[0], X[:30], top_k=4)
    enc = HashedBowEncoder(dim=16)
    est = clone(fitted).set_params(encode_fn=enc, epochs=None, max_steps=2).fit(Q[:64], X[:64],
                                                                                np.linspace(0, 100, 64))
    pairs = [("capital of Xand", "Xand has capital Mor"), ("capital of Xand", "weather today")]
    np.testing.assert_allclose(est.predict(pairs, batch_size=1, show_progress_bar=True), est.predict(pairs))
    with pytest.raises(ValueError, match="`batch_size`"):
        fitted.rank(Q[0], X[:5], batch_size=0)


@pytest.mark.filterwarnings("ignore:EARerankerEstimator predictions collapsed")  # 2 steps on 3 pairs
def test_text_pairs_through_encode_fn(planted):
    enc = HashedBowEncoder(dim=16)
    texts = ["the capital of Xand", "Xand has capital Mor", "weather report today", "capital of Xand is Mor"]
    est = EARerankerEstimator(**TINY, max_steps=2, encode_fn=enc).fit(enc(texts[:1] * 3), enc(texts[1:]), [90, 5, 95])
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


def test_save_keeps_encoder_settings(tmp_path, planted, fitted):
    # review bug: save dropped the encoder, so load() embedded text with MiniLM at 256 word pieces although the
    # model was trained on 128-piece embeddings
    est = clone(fitted).set_params(encode_fn=MiniLMEncoder(max_seq_length=128, chunk_words=64), epochs=None,
                                   max_steps=2)
    est.fit(*planted)
    est.save(tmp_path / "m")
    assert json.loads((tmp_path / "m" / "eareranker_config.json").read_text())["encoder"]["max_seq_length"] == 128
    back = EARerankerEstimator.load(tmp_path / "m")
    assert isinstance(back.encode_fn, MiniLMEncoder)
    assert (back.encode_fn.max_seq_length, back.encode_fn.chunk_words) == (128, 64)
    est.set_params(encode_fn=HashedBowEncoder(dim=16)).save(tmp_path / "h")
    assert EARerankerEstimator.load(tmp_path / "h").encode_fn.dim == 16
    with pytest.warns(UserWarning, match="cannot be stored"):
        est.set_params(encode_fn=lambda t: np.zeros((len(t), 16))).save(tmp_path / "c")
    with pytest.raises(RuntimeError, match="pass encode_fn= to load"):
        EARerankerEstimator.load(tmp_path / "c").predict([("q", "d")])


def test_bad_inputs(planted, fitted):
    Q, X, s = planted
    est = EARerankerEstimator(**TINY, max_steps=1)
    with pytest.raises(ValueError, match="same embedding dimension"):
        est.fit(Q, X[:, :8], s)
    with pytest.raises(ValueError, match="`n_chunks` must divide the embedding dimension d=16"):
        EARerankerEstimator(n_chunks=5, d_model=16, n_heads=2, expansion="chunk", max_steps=1).fit(Q, X, s)
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
    with pytest.raises(ValueError, match="`max_steps`"):
        EARerankerEstimator(**TINY, max_steps=0).fit(Q, X, s)
    with pytest.raises(ValueError, match="`validation_fraction`"):
        EARerankerEstimator(**TINY, validation_fraction=1.5).fit(Q, X, s)
    with pytest.raises(ValueError, match="`expansion`"):
        EARerankerEstimator(**TINY, expansion="slice").fit(Q, X, s)
    with pytest.raises(ValueError, match="`n_iter_no_change`"):
        EARerankerEstimator(**TINY, n_iter_no_change=0).fit(Q, X, s)


@pytest.mark.filterwarnings("ignore:EARerankerEstimator predictions collapsed")  # one step on 8 pairs
def test_obscure_inputs_name_the_argument(planted):
    # review section 6: string scores gave numpy's "could not convert string to float" (no argument named) and
    # dropout=1.5 torch's message from deep inside the layer constructor
    Q, X, s = planted
    with pytest.raises(ValueError, match="`scores` must be numeric"):
        EARerankerEstimator(**TINY, max_steps=1).fit(Q[:8], X[:8], ["high"] * 8)
    with pytest.raises(ValueError, match=r"`dropout` must be in \[0, 1\)"):
        EARerankerEstimator(**TINY, max_steps=1, dropout=1.5).fit(Q[:8], X[:8], s[:8])
    est = EARerankerEstimator(**TINY, max_steps=1, dropout=np.float32(0.1)).fit(Q[:8], X[:8], s[:8])  # numpy real ok
    assert est.model_ is not None


def test_external_validation_ranking_criterion_picks_best_checkpoint(planted):
    # issue #49 c3b v3: EAReranker chooses its checkpoint as the cross-encoder does - the best mean per-query
    # Spearman on external validation pairs, every pair used for training (no internal hold-out)
    Q, X, s = planted
    groups = np.repeat(np.arange(10), 10)
    kw = dict(**TINY, max_steps=60, eval_every=10, n_iter_no_change=100, batch_size=64, seed=0)
    est = EARerankerEstimator(**kw).fit(Q[:200], X[:200], s[:200], val_query_emb=Q[500:600],
                                        val_doc_emb=X[500:600], val_scores=s[500:600], val_groups=groups)
    curve = np.asarray(est.validation_curve_)
    assert len(curve) == 6 and est.n_steps_ == 60  # patience over the whole budget: no early cut
    assert est.best_step_ == 10 * (int(np.nanargmax(curve)) + 1)
    # the kept weights are that checkpoint's: their validation Spearman is the curve's maximum
    from neurips25.eareranker import spearman_within
    got = spearman_within(est.predict_score(Q[500:600], X[500:600]), s[500:600], groups)
    assert got == pytest.approx(np.nanmax(curve), abs=1e-9)
    # no internal hold-out: the class weights come from all 200 training pairs (same seed, early_stopping off)
    plain = EARerankerEstimator(**{**kw, "early_stopping": False}).fit(Q[:200], X[:200], s[:200])
    assert est.validation_curve_ != plain.validation_curve_ and plain.validation_curve_ == []
    with pytest.raises(ValueError, match="`val_scores`"):
        EARerankerEstimator(**kw).fit(Q[:200], X[:200], s[:200], val_query_emb=Q[:10], val_doc_emb=X[:10])
    with pytest.raises(ValueError, match="`val_groups`"):
        EARerankerEstimator(**kw).fit(Q[:200], X[:200], s[:200], val_query_emb=Q[:10], val_doc_emb=X[:10],
                                      val_scores=s[:10], val_groups=groups)
