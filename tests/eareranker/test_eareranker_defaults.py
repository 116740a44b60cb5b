"""issue #59: the warm-up rule of early stopping, the scale warning, the planted data, the CPU precision choice."""

import warnings

import numpy as np
import pytest

from neurips25.eareranker import EARerankerEstimator, spearman
from neurips25.eareranker.data import planted_pairs

TINY = dict(n_chunks=2, d_model=16, n_layers=1, n_heads=2, dim_feedforward=32)


def test_early_stopping_never_keeps_a_checkpoint_inside_the_warmup():
    # pure-noise scores: the validation loss is lowest before the model has learnt anything, i.e. inside the
    # warm-up; the kept checkpoint must still come after it (the old rule kept step 10 of a 40-step warm-up)
    rng = np.random.default_rng(0)
    Q, X = rng.normal(size=(256, 8)).astype(np.float32), rng.normal(size=(256, 8)).astype(np.float32)
    s = rng.uniform(0, 100, 256)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # noise: a collapse warning may fire
        est = EARerankerEstimator(**TINY, max_steps=400, eval_every=10, n_iter_no_change=3, lr=1e-2,
                                  batch_size=8).fit(Q, X, s)
    warm = est.warmup_steps_
    assert warm == min(100, 400 // 10, int(np.ceil(224 / 8)))  # 100 steps, a tenth of the budget, one epoch
    assert len(est.validation_curve_) > warm // 10  # it did evaluate inside the warm-up ...
    assert est.best_step_ > warm  # ... but kept a later checkpoint


@pytest.mark.parametrize("low, high, scale", [(1, 5, "1-5"), (0, 10, "0-10"), (0, 1, "0-1")])
def test_scores_on_another_scale_warn_naming_the_scale(low, high, scale):
    rng = np.random.default_rng(1)
    Q, X = rng.normal(size=(64, 8)).astype(np.float32), rng.normal(size=(64, 8)).astype(np.float32)
    s = rng.integers(low, high + 1, 64).astype(float)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "EARerankerEstimator predictions collapsed")
        with pytest.warns(UserWarning, match=f"a {scale}.* scale, but the rubric's bins span \\[0, 100\\]"):
            EARerankerEstimator(**TINY, max_steps=2, early_stopping=False).fit(Q, X, s)



@pytest.mark.parametrize("d", [32, 768])
def test_planted_pairs_put_the_raw_cosine_between_chance_and_the_oracle(d):
    q, x, s, oracle = planted_pairs(4000, d, seed=0)
    assert q.shape == x.shape == (4000, d) and np.allclose(np.linalg.norm(q, axis=1), 1, atol=1e-5)
    assert 0.74 < spearman(np.sum(q * x, 1), s) < 0.82 and spearman(oracle, s) > 0.94
    with pytest.raises(ValueError, match="`noise` must be a finite real number >= 0"):
        planted_pairs(10, d, noise=-1)


def test_cross_encoder_precision_auto_falls_back_to_float32_where_bf16_is_slow(monkeypatch):
    import torch

    from neurips25.eareranker.baselines import _MixedPrecision
    from neurips25.pretrained import precision

    monkeypatch.setattr(precision, "_cache", {})
    monkeypatch.setattr(precision, "probe_bf16_speed", lambda *a, **k: 13.0)  # emulated bf16: 13x slower
    assert precision.choose_cpu_dtype("auto") == torch.float32
    assert _MixedPrecision(torch.nn.Linear(2, 1), "auto").on is False
    assert _MixedPrecision(torch.nn.Linear(2, 1), True).on is True  # an explicit request is honoured
    monkeypatch.setattr(precision, "_cache", {})
    monkeypatch.setattr(precision, "probe_bf16_speed", lambda *a, **k: 0.3)  # native bf16 (AMX)
    assert _MixedPrecision(torch.nn.Linear(2, 1), "auto").on is True
    with pytest.raises(ValueError, match="`bf16` must be True, False or 'auto'"):
        _MixedPrecision(torch.nn.Linear(2, 1), "yes")


def test_defaults_beat_the_raw_cosine_on_planted_data():
    # planted adequacy at d = 384 (cosine + low-rank bilinear + document term), 1,500 training pairs: the old
    # defaults (warm-up 100 steps, lr 2e-3, no similarity path) fell below the raw cosine here
    q, x, s, oracle = planted_pairs(2500, 384, seed=0)
    tr, te = slice(0, 1500), slice(1500, None)
    est = EARerankerEstimator().fit(q[tr], x[tr], s[tr])
    cos = spearman(np.sum(q[te] * x[te], 1), s[te])
    assert spearman(est.predict_score(q[te], x[te]), s[te]) > cos + 0.005
    assert est.best_step_ > est.warmup_steps_
