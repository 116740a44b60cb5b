"""The fine-tuned MiniLM cross-encoder baseline (c3b's plaintext reranker): early stopping by the validation
ranking criterion, the best epoch kept, bf16 mixed precision with a float32 head."""

import numpy as np
import pytest
import torch

from neurips25.eareranker import cross_encoder_scores, finetune_cross_encoder
from neurips25.eareranker.data import AdequacySynth
from neurips25.eareranker.metrics import spearman_within

pytest.importorskip("sentence_transformers")


@pytest.fixture(scope="module")
def pairs():
    d = AdequacySynth(n_entities=6, seed=3).generate()
    own = np.flatnonzero(~d.distractor)

    def texts(idx):
        return [d.queries[d.pair_query[i]] for i in idx], [d.docs[d.pair_doc[i]] for i in idx]

    tr, va = own[:8], own[18:30]  # two queries' own documents (6 each) validate
    return texts(tr), d.scores[tr], texts(va), d.scores[va], d.pair_query[va]


@pytest.mark.parametrize("bf16", [True, False])
def test_cross_encoder_keeps_best_epoch_and_converges_by_patience(pairs, bf16):
    (q, x), s, (vq, vx), vs, vg = pairs
    ce = finetune_cross_encoder(q, x, s, max_length=24, epochs=4, batch_size=4, lr=5e-4, seed=0, patience=1,
                                bf16=bf16, val_queries=vq, val_docs=vx, val_scores=vs, val_groups=vg)
    curve = ce.validation_curve_
    assert 1 <= len(curve) <= 4 and len(ce.validation_bce_) == len(curve)
    assert ce.best_epoch_ == 1 + int(np.argmax(curve))
    # converged = stopped after `patience` epochs without improvement, before the cap
    assert ce.converged_ == (len(curve) - ce.best_epoch_ >= 1)
    if ce.converged_:
        assert len(curve) == ce.best_epoch_ + 1
    # the kept weights are the best epoch's: rescoring the validation pairs the same way gives its value exactly
    p = cross_encoder_scores(ce, vq, vx, bf16=bf16)
    assert p.shape == (len(vq),) and np.all((p > 0) & (p < 1))
    assert spearman_within(p, vs, vg) == pytest.approx(curve[ce.best_epoch_ - 1], abs=1e-12)
    assert not ce.model.classifier._forward_hooks  # the float32-head hook is gone after training and scoring
    # mixed precision scores the same model as CrossEncoder.predict (float32) does, up to bf16 rounding
    ref = np.asarray(ce.predict(list(zip(vq, vx)), show_progress_bar=False))
    assert np.max(np.abs(p - ref)) < (0.02 if bf16 else 1e-5)


def test_bf16_head_is_float32(pairs):
    """bf16 keeps ~3 significant digits: a bf16 head would round near-equal logits to ties; the head runs in
    float32, so the logits are not confined to the bf16 grid."""
    (q, x), s, _, _, _ = pairs
    ce = finetune_cross_encoder(q, x, s, max_length=24, epochs=1, batch_size=4, seed=0, bf16=True)
    p = cross_encoder_scores(ce, q, x, bf16=True)
    logit = torch.from_numpy(np.log(p / (1 - p))).float()
    assert torch.any(logit.to(torch.bfloat16).float() != logit)
    with pytest.raises(ValueError, match="`queries` and `docs`"):
        cross_encoder_scores(ce, q, x[:-1])


def test_cross_encoder_validates_several_times_an_epoch(pairs):
    """Issue #62 (c3b v5): on a whole training split one epoch is many steps, so convergence is judged on
    validations inside the epoch; the curve holds evals_per_epoch values an epoch and the best one is kept."""
    (q, x), s, (vq, vx), vs, vg = pairs
    ce = finetune_cross_encoder(q, x, s, max_length=24, epochs=2, batch_size=2, lr=5e-4, seed=0, patience=2,
                                bf16=False, evals_per_epoch=3, val_queries=vq, val_docs=vx, val_scores=vs,
                                val_groups=vg)
    curve = ce.validation_curve_
    assert 1 <= len(curve) <= 6
    assert ce.best_epoch_ == 1 + int(np.argmax(curve))
    assert ce.converged_ == (len(curve) - ce.best_epoch_ >= 2)
    if not ce.converged_:
        assert len(curve) == 6  # ran to the cap: 2 epochs x 3 validations
    p = cross_encoder_scores(ce, vq, vx, bf16=False)
    assert spearman_within(p, vs, vg) == pytest.approx(curve[ce.best_epoch_ - 1], abs=1e-12)
    with pytest.raises(ValueError, match="evals_per_epoch"):
        finetune_cross_encoder(q, x, s, max_length=24, epochs=1, evals_per_epoch=0)


def test_default_precision_goes_through_choose_cpu_dtype(monkeypatch):
    """Issue #64: the cross-encoder's default bf16='auto' is float32 where the probe finds bf16 slow, bf16 where
    it finds it fast, and the choice is recorded for the run's provenance."""
    from neurips25.eareranker import baselines
    from neurips25.pretrained import precision

    monkeypatch.setattr(baselines, "_PRECISION", {})
    monkeypatch.setattr(precision, "bf16_is_fast", lambda: False)
    assert baselines.resolve_bf16("auto") is False
    assert baselines.provenance_facts()["cross_encoder_precision"]["bf16_autocast"] is False
    monkeypatch.setattr(precision, "bf16_is_fast", lambda: True)
    assert baselines.resolve_bf16("auto") is True
    assert "faster" in baselines.provenance_facts()["cross_encoder_precision"]["reason"]
    assert baselines.resolve_bf16(np.bool_(False)) is False
    with pytest.raises(ValueError, match="`bf16`"):
        baselines.resolve_bf16("bf16")
    import inspect

    assert inspect.signature(finetune_cross_encoder).parameters["bf16"].default == "auto"
    assert inspect.signature(cross_encoder_scores).parameters["bf16"].default == "auto"
