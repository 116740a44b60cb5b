"""Issue #59: a second ``generate`` in the same knockout context uses its own prompt boundary."""

import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "contracts"))
from contract_fixtures import causal_lm, token_ids  # noqa: E402

from neurips25.narrow_gate import Generated, attention_knockout  # noqa: E402


def _gen(m, ids, n=4, **kw):
    out = m.generate(ids, max_new_tokens=n, do_sample=False, output_logits=True, return_dict_in_generate=True,
                     pad_token_id=0, **kw)
    return out.sequences, torch.stack(out.logits, 1)


@pytest.mark.parametrize("use_cache", [True, False])
@torch.no_grad()
def test_generated_resets_its_prompt_for_every_generate_call(use_cache):
    # the review's probe: prompts of 8 then 12 tokens; the second call was knocked out as From(8)
    m = causal_lm("llama")
    first, second = token_ids(1, 8, seed=3), token_ids(1, 12, seed=4)
    with attention_knockout(m, Generated(), [2, 5], "all"):
        ref_seq, ref_logits = _gen(m, second, use_cache=use_cache)  # alone in its own context
    with attention_knockout(m, Generated(), [2, 5], "all"):
        _gen(m, first, use_cache=use_cache)
        seq, logits = _gen(m, second, use_cache=use_cache)
    assert torch.equal(seq, ref_seq)
    assert (logits - ref_logits).abs().max() < 1e-5
    # and a later plain forward with a fresh cache is a prompt of its own: nothing in it is generated
    plain = m(second).logits
    with attention_knockout(m, Generated(), [2, 5], "all"):
        _gen(m, first, use_cache=use_cache)
        assert torch.equal(m(second).logits, plain)
    assert "generate" not in vars(m)  # the context restores the model's own generate


@torch.no_grad()
def test_recorder_under_generate_refuses_passes_of_different_lengths_by_name():
    # generate records one pass per step (8 tokens, then 1, 1): concatenating them along the batch crashed
    # with torch's "Sizes of tensors must match"
    from neurips25.narrow_gate import ResidualRecorder

    m, ids = causal_lm("llama"), token_ids(1, 8)
    with ResidualRecorder(m, [0]) as rec:
        m.generate(ids, max_new_tokens=2, do_sample=False, pad_token_id=0)
    with pytest.raises(ValueError, match="passes of different sequence lengths"):
        _ = rec.residuals
    with pytest.raises(ValueError, match="passes of different sequence lengths"):
        rec.at(0, 3)
