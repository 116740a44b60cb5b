"""Attention knockout: exactness against explicit masks, restoration, backends, bad inputs."""

import pytest
import torch
from torch import nn

from conftest import tiny_llama
from neurips25.narrow_gate import attention_knockout, attention_weights
from neurips25.narrow_gate.knockout import _ACTIVE
from neurips25.narrow_gate.reproduce import _tiny_chameleon, knockout_mechanics


def explicit_mask(S, j, batch=2):
    keep = torch.tril(torch.ones(S, S, dtype=torch.bool))
    keep[:, j] = False
    keep[0, 0] = True
    return torch.zeros(batch, 1, S, S).masked_fill(~keep, torch.finfo(torch.float32).min)


@pytest.mark.parametrize("build", [tiny_llama, _tiny_chameleon])
@torch.no_grad()
def test_mask_pre_softmax_equals_explicit_4d_mask(build, ids):
    m = build()
    j = 4
    with attention_knockout(m, "all", [j], "all", mode="mask_pre_softmax"):
        ko = m(input_ids=ids).logits
    ref = m(input_ids=ids, attention_mask=explicit_mask(12, j)).logits
    rows = [p for p in range(12) if p != j]
    assert (ko - ref)[:, rows].abs().max() < 1e-5
    assert (ko - m(input_ids=ids).logits).abs().max() > 1e-4  # the knockout did something


@torch.no_grad()
def test_empty_key_set_is_bit_identical_and_future_keys_change_nothing(llama, ids):
    ref = llama(ids).logits
    with attention_knockout(llama, "all", [], "all"):
        assert torch.equal(llama(ids).logits, ref)
    # causal: queries 0..3 never see key 8, so removing that edge is a no-op (an invariance)
    with attention_knockout(llama, range(4), [8], "all"):
        assert torch.equal(llama(ids).logits[:, :4], ref[:, :4])


@torch.no_grad()
def test_zero_post_softmax_zeroes_exactly_the_edges_without_renormalising(llama, ids):
    ref = attention_weights(llama, {"input_ids": ids})
    with attention_knockout(llama, [7, 9], [3, 5], layers=[0], mode="zero_post_softmax"):
        w = attention_weights(llama, {"input_ids": ids})
    expect = ref[0].clone()
    expect[:, :, [7, 9][0], [3, 5]] = 0
    expect[:, :, 9, [3, 5]] = 0
    assert torch.equal(w[0], expect)  # layer 0 sees identical inputs: the oracle is the reference with zeros
    sums = w[0].sum(-1)
    assert (sums[:, :, [7, 9]] < 1 - 1e-4).all() and torch.allclose(sums[:, :, [0, 1, 8, 10]], torch.ones(1))


@torch.no_grad()
def test_restored_after_exception_and_nested(llama, ids):
    ref = llama(ids).logits
    with pytest.raises(RuntimeError, match="boom"):
        with attention_knockout(llama, "all", [2], "all"):
            raise RuntimeError("boom")
    assert llama.config._attn_implementation == "eager" and not _ACTIVE
    assert torch.equal(llama(ids).logits, ref)
    with attention_knockout(llama, "all", [2], [0]):
        with attention_knockout(llama, "all", [3], [1]):
            both = llama(ids).logits
        with attention_knockout(llama, "all", [2], [0]):
            assert not torch.equal(llama(ids).logits, both)
    assert not _ACTIVE and torch.equal(llama(ids).logits, ref)


@torch.no_grad()
def test_eager_patch_backend_matches_interface_and_sdpa_model_is_restored(ids):
    m = tiny_llama("eager")
    with attention_knockout(m, "all", [3], "all", backend="interface"):
        a = m(ids).logits
    with attention_knockout(m, "all", [3], "all", backend="eager_patch"):
        b = m(ids).logits
    assert torch.equal(a, b)
    s = tiny_llama("sdpa")
    ref = s(ids).logits
    with attention_knockout(s, "all", [3], "all"):
        assert torch.allclose(s(ids).logits, a, atol=1e-5)
    assert s.config._attn_implementation == "sdpa" and torch.equal(s(ids).logits, ref)


def test_mechanics_of_the_reproduction_pass_and_control_fails():
    mech = knockout_mechanics(0)
    for v in mech.values():
        assert v["mask_vs_explicit_max_abs"] < 1e-5 and v["empty_max_abs"] <= 1e-6 and v["zero_rows_below_one"]
        assert v["control_delete_token_max_abs"] > 1e-5
        assert v["token_change_under_mask_pre_softmax"] <= 1e-6 < v["token_change_under_zero_post_softmax"]


def test_bad_inputs(llama, ids):
    with pytest.raises(ValueError, match="out of range"):
        with attention_knockout(llama, "all", [1], layers=[5]):
            pass
    with pytest.raises(ValueError, match="mode must be one of"):
        with attention_knockout(llama, "all", [1], mode="zero"):
            pass
    with pytest.raises(ValueError, match="no decoder layers"):
        with attention_knockout(nn.Linear(3, 3), "all", [1]):
            pass
    with pytest.raises(ValueError, match="outside the sequence of length 12"):
        with attention_knockout(llama, "all", [40]), torch.no_grad():
            llama(ids)
    with pytest.raises(ValueError, match="non-negative integer positions"):
        with attention_knockout(llama, "all", [-1]):
            pass
    with pytest.raises(ValueError, match="attn_implementation='eager'"):
        attention_weights(tiny_llama("sdpa"), {"input_ids": ids})
    assert not _ACTIVE
