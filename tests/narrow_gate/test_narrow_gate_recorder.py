"""Residual recording, patching (oracle and invariance) and the metrics."""

import numpy as np
import pytest
import torch

from neurips25.narrow_gate import (
    ModalitySpans,
    ResidualRecorder,
    cross_modal_attention_share,
    eoi_patching,
    modality_cosine,
    modality_homogeneity,
    neighborhood_overlap,
    patch_attention_input,
    patch_residual,
)


@torch.no_grad()
def test_recorder_matches_hidden_states(llama, ids):
    def ours():
        return [h for h in llama.model.layers[0]._forward_hooks.values() if "ResidualRecorder" in h.__qualname__]
    with ResidualRecorder(llama) as rec:
        out = llama(ids, output_hidden_states=True)
        assert len(ours()) == 1
    assert rec.residuals.shape == (2, 2, 12, 32)
    assert torch.allclose(rec.residuals[0], out.hidden_states[1])  # the last one is normed by HF
    assert not ours()  # our hook removed on exit
    with pytest.raises(RuntimeError, match="nothing recorded"):
        _ = ResidualRecorder(llama).residuals


@torch.no_grad()
def test_patching_own_values_is_identity_and_last_layer_patch_is_local(llama, ids):
    ref = llama(ids).logits
    with ResidualRecorder(llama) as rec, ResidualRecorder(llama, site="attn_input") as rin:
        llama(ids)
    with patch_residual(llama, 5, 0, rec):
        assert torch.allclose(llama(ids).logits, ref, atol=1e-6)
    with patch_attention_input(llama, 5, [0, 1], rin):
        assert torch.allclose(llama(ids).logits, ref, atol=1e-6)
    other = torch.randint(6, 64, (2, 12), generator=torch.Generator().manual_seed(9))
    out = eoi_patching(llama, {"input_ids": ids}, {"input_ids": other}, position=5, layers=[1])
    diff = (out[1] - ref).abs().amax(-1)  # (batch, seq)
    assert diff[:, 5].min() > 1e-4 and diff[:, [p for p in range(12) if p != 5]].max() == 0
    early = eoi_patching(llama, {"input_ids": ids}, {"input_ids": other}, position=5, layers=[0])[0]
    assert ((early - ref).abs().amax(-1)[:, :5] == 0).all() and (early - ref)[:, 6:].abs().max() > 0  # causal


def test_patch_bad_inputs(llama):
    with pytest.raises(ValueError, match="non-negative int"):
        with patch_residual(llama, -1, 0, torch.zeros(32)):
            pass
    with pytest.raises(ValueError, match="out of range"):
        with patch_residual(llama, 1, 7, torch.zeros(32)):
            pass
    with pytest.raises(ValueError, match="NaN"):
        with patch_residual(llama, 1, 0, torch.full((32,), float("nan"))):
            pass


def test_metrics_oracles():
    spans = ModalitySpans(image=[0, 1, 2], text=[3, 4], special={"eoi": 2}, length=5)
    spans = ModalitySpans(image=[0, 1], text=[3, 4], special={"eoi": 2}, length=5)
    r = torch.zeros(1, 2, 5, 4)
    r[..., :2, 0] = 1.0
    r[..., 2:, 1] = 1.0
    cos = modality_cosine(r, spans)
    assert cos["cross"][0] == 0 and cos["intra_image"][0] == 1 and cos["intra_text"][0] == 1
    r2 = torch.randn(1, 30, 5, 4) * 0.05 + r.repeat(1, 15, 1, 1)
    assert modality_homogeneity(r2, spans)[0] > 0.99
    attn = torch.zeros(2, 1, 1, 5, 5)
    attn[0, ..., 3:, 2] = 0.5  # layer 0: all text->image mass on [EOI]
    attn[0, ..., 3:, 3] = 0.5
    attn[1, ..., 3:, :3] = 1 / 3  # layer 1: uniform over image side
    share = cross_modal_attention_share(attn, spans)
    assert np.allclose(share["eoi"], [1.0, 1 / 3]) and np.allclose(share["max_single"], [1.0, 1 / 3])
    assert np.allclose(share["total"], [0.5, 1.0])
    X = np.r_[np.zeros((20, 2)), np.ones((20, 2)) * 10] + np.random.default_rng(0).normal(0, 0.1, (40, 2))
    y = np.r_[np.zeros(20), np.ones(20)]
    assert neighborhood_overlap(X, y, 5) == 1.0
    assert neighborhood_overlap(X, np.random.default_rng(1).integers(0, 2, 40), 5) < 0.8


def test_metrics_bad_inputs():
    spans = ModalitySpans(image=[0, 1], text=[3, 9], special={"eoi": 2})
    with pytest.raises(ValueError, match="sequence length 5"):
        modality_cosine(torch.zeros(1, 1, 5, 4), spans)
    with pytest.raises(ValueError, match="k must be"):
        neighborhood_overlap(np.zeros((5, 2)), np.zeros(5), 5)
    with pytest.raises(ValueError, match="NaN"):
        neighborhood_overlap(np.full((5, 2), np.nan), np.zeros(5), 2)
    with pytest.raises(ValueError, match="shape \\(layers, batch, heads, seq, seq\\)"):
        cross_modal_attention_share(torch.zeros(2, 5, 5), spans)
