"""v2 (#50): exact on softcapped Gemma2, the zero_post_softmax leak, knockout and patching under generate.

The tiny models are the contract suite's shared fixtures (tests/contracts/contract_fixtures.py).
"""

import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "contracts"))
from contract_fixtures import causal_lm, token_ids, vlm  # noqa: E402

from neurips25.narrow_gate import From, Generated, ResidualRecorder, attention_knockout, patch_residual  # noqa: E402
from neurips25.narrow_gate.knockout import _ACTIVE  # noqa: E402


@torch.no_grad()
def test_empty_knockout_is_exact_on_gemma2_with_softcap():
    # the v1 function dropped `softcap`: this moved the logits by ~0.25 (the review's finding b)
    m, ids = causal_lm("gemma2"), token_ids(2, 10)
    ref = m(ids).logits
    for mode in ("mask_pre_softmax", "zero_post_softmax"):
        with attention_knockout(m, "all", [], "all", mode=mode):
            assert (m(ids).logits - ref).abs().max() <= 1e-6
    # and the knockout reaches through the softcapped scores: key 3 removed == the padding mask removing it
    mask = torch.ones_like(ids)
    mask[:, 3] = 0
    with attention_knockout(m, "all", [3], "all"):
        ko = m(ids).logits
    keep = [i for i in range(10) if i != 3]
    assert (ko - m(ids, attention_mask=mask).logits)[:, keep].abs().max() < 1e-4


@pytest.mark.parametrize("name", ["llama", "chameleon"])
@torch.no_grad()
def test_zero_post_softmax_leaks_through_the_normaliser_mask_pre_softmax_does_not(name):
    """Change token j, knock out key j for every query in every layer: do the other positions' logits move?"""
    m = vlm(name) if name == "chameleon" else causal_lm(name)
    ids, j = token_ids(1, 10), 4
    other = ids.clone()
    other[0, j] = (ids[0, j] + 7) % 80 + 3
    keep = [i for i in range(10) if i != j]
    signal = (m(ids).logits - m(other).logits)[:, keep].abs().max()
    moved = {}
    for mode in ("mask_pre_softmax", "zero_post_softmax"):
        with attention_knockout(m, "all", [j], "all", mode=mode):
            moved[mode] = float((m(ids).logits - m(other).logits)[:, keep].abs().max())
    assert signal > 1e-3
    assert moved["mask_pre_softmax"] <= 1e-6  # an information block
    assert moved["zero_post_softmax"] > 1e-6  # the paper's hook: the key still reaches the text (a leak)
    assert moved["zero_post_softmax"] < signal


def _greedy_no_cache(model, ids, n):
    seq, logits = ids, []
    for _ in range(n):
        lg = model(seq, use_cache=False).logits[:, -1]
        logits.append(lg)
        seq = torch.cat([seq, lg.argmax(-1, keepdim=True)], 1)
    return seq, torch.stack(logits, 1)


def _generate(model, ids, n):
    out = model.generate(ids, max_new_tokens=n, do_sample=False, output_logits=True, return_dict_in_generate=True)
    return out.sequences, torch.stack(out.logits, 1)


@pytest.mark.parametrize("name", ["llama", "gemma2"])  # gemma2: sliding-window layers keep only the last keys
@pytest.mark.parametrize("queries", ["from", "generated"])
@torch.no_grad()
def test_knockout_under_generate_with_cache_equals_no_cache_recomputation(name, queries):
    m, ids = causal_lm(name), token_ids(1, 8)
    q = From(5) if queries == "from" else Generated()
    ref_seq, ref_logits = None, None
    with attention_knockout(m, q, [6], "all"):
        ref_seq, ref_logits = _greedy_no_cache(m, ids, 5)
    with attention_knockout(m, q, [6], "all"):
        seq, logits = _generate(m, ids, 5)
    assert torch.equal(seq, ref_seq)
    assert (logits - ref_logits).abs().max() < 1e-5
    _, plain = _generate(m, ids, 5)
    assert (plain - ref_logits).abs().max() > 1e-4  # the knockout acted on the generated queries
    assert not _ACTIVE


@torch.no_grad()
def test_generated_queries_leave_the_prompt_alone_and_from_equals_explicit_positions():
    m, ids = causal_lm("llama"), token_ids(1, 8)
    ref = m(ids).logits
    with attention_knockout(m, Generated(), [2], "all"):
        assert torch.equal(m(ids).logits, ref)  # the first forward is the prompt: no generated query yet
    with attention_knockout(m, From(5), [2], "all"):
        a = m(ids).logits
    with attention_knockout(m, [5, 6, 7], [2], "all"):
        b = m(ids).logits
    assert torch.equal(a, b)
    with attention_knockout(m, From(6) | [3], [2], "all"):
        c = m(ids).logits
    with attention_knockout(m, [3, 6, 7], [2], "all"):
        assert torch.equal(c, m(ids).logits)


@torch.no_grad()
def test_patching_under_generate_with_cache_equals_no_cache_recomputation():
    m = causal_lm("llama")
    base, src = token_ids(1, 8, seed=1), token_ids(1, 8, seed=2)
    with ResidualRecorder(m, [0]) as rec:
        m(src)
    with patch_residual(m, 5, 0, rec.at(0, 5)):
        ref_seq, ref_logits = _greedy_no_cache(m, base, 4)
        seq, logits = _generate(m, base, 4)
    assert torch.equal(seq, ref_seq) and (logits - ref_logits).abs().max() < 1e-5
    _, plain = _generate(m, base, 4)
    assert (plain - ref_logits).abs().max() > 1e-4


def test_bad_inputs_v2():
    m, ids = causal_lm("llama"), token_ids(1, 8)
    with pytest.raises(ValueError, match="From start must be a non-negative int"):
        From(-1)
    with pytest.raises(ValueError, match="From start must be a non-negative int"):
        From(1.5)
    with pytest.raises(ValueError, match="under generate use From"):
        with torch.no_grad(), attention_knockout(m, torch.ones(1, 8, dtype=torch.bool), [2], "all"):
            m.generate(ids, max_new_tokens=2, do_sample=False)
    with pytest.raises(ValueError, match="layers is empty"):
        with attention_knockout(m, "all", [2], layers=[]):
            pass
    from neurips25.narrow_gate import ModalitySpans

    with pytest.raises(ValueError, match="special\\['eoi'\\] = 4 is also in the text span"):
        ModalitySpans(image=[1, 2], text=[3, 4], special={"eoi": 4})
    with pytest.raises(ValueError, match="position 50 is outside the sequence of length 8"):
        with torch.no_grad(), patch_residual(m, 50, 0, torch.zeros(32)):
            m(ids)
    assert not _ACTIVE


def test_a_class_without_eager_attention_is_refused_by_name():
    from torch import nn

    class Attn(nn.Module):
        pass

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.self_attn = Attn()

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([Block()])

    with pytest.raises(ValueError, match="does not support Attn"):
        with attention_knockout(Net(), "all", [1]):
            pass
