"""Issue #59: the generate hook on rows that end by EOS, on a generator without an EOS id, and a LoRA monitor
loaded without its backbone.

Tiny Llama from tests/contracts/contract_fixtures.py (eos 2, pad 0); the monitor's backbone is its first layer.
"""

import copy
import pathlib
import sys
import warnings

import pytest
import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "contracts"))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from contract_fixtures import causal_lm  # noqa: E402

from neurips25.scm import (  # noqa: E402
    DelayKPolicy,
    SCMStoppingCriteria,
    StreamingContentMonitor,
    tiny_decoder,
    truncate_layers,
)

NEVER = DelayKPolicy(10**6, 0.5)


def _monitor(lm, harmful=False):
    torch.manual_seed(3)
    mon = StreamingContentMonitor(truncate_layers(copy.deepcopy(lm.model), 1)).eval()
    if harmful:  # every token scores p_harm ~ 1
        with torch.no_grad():
            mon.token_head.bias.copy_(torch.tensor([0.0, 20.0]))
    return mon


def _ids(batch=3, length=6, seed=5):
    return torch.randint(3, 88, (batch, length), generator=torch.Generator().manual_seed(seed))


def _free(lm, ids, n):
    return lm.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=n, min_new_tokens=n,
                       do_sample=False, pad_token_id=0)


def _eos_case():
    """A batch of 3 where row 1 generates [x, eos] (eos: its second free token, which no other row emits)."""
    lm, ids, n = causal_lm("llama"), _ids(), 6
    free = _free(lm, ids, n)[:, ids.shape[1]:]
    eos = int(free[1, 1])
    assert eos != int(free[1, 0]) and not (free[[0, 2]] == eos).any(), "pick another seed"
    lm.generation_config.eos_token_id = eos
    return lm, ids, n, eos


@pytest.mark.parametrize("shared", [False, True], ids=["own", "shared"])
def test_a_row_that_ends_by_eos_is_not_scored_on_the_padding(shared):
    # the review's probe: a row that generated [51, EOS] was reported stopped at token 4, decided on padding
    lm, ids, n, eos = _eos_case()
    mon = _monitor(lm, harmful=True)
    with mon.guard(lm, DelayKPolicy(3, 0.5), ids.shape[1], share=shared) as crit:
        out = lm.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=n, do_sample=False,
                          stopping_criteria=[crit], pad_token_id=0)
    P = ids.shape[1]
    assert int(out[1, P + 1]) == eos
    assert len(crit.sessions[1].probs) == 1  # its one answer token; neither the EOS nor the padding after it
    assert crit.sessions[1].stopped_at == 0 and crit.sessions[1].ended
    assert crit.stopped_rows.tolist() == [True, False, True]
    assert [s.stopped_at for s in crit.sessions] == [3, 0, 3]


def test_the_criterion_reads_eos_ids_given_by_hand():
    lm, ids, n, eos = _eos_case()
    mon = _monitor(lm, harmful=True)
    crit = SCMStoppingCriteria(mon, DelayKPolicy(3, 0.5), ids.shape[1], eos_token_id=[eos, 99])
    lm.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=n, do_sample=False,
                stopping_criteria=[crit], pad_token_id=0)
    assert crit.stopped_rows.tolist() == [True, False, True]
    with pytest.raises(ValueError, match="`eos_token_id` must be"):
        SCMStoppingCriteria(mon, NEVER, 6, eos_token_id=1.5)


def test_without_eos_ids_a_batch_warns_that_finished_rows_would_be_scored():
    lm, ids, n, eos = _eos_case()
    mon = _monitor(lm)
    crit = SCMStoppingCriteria(mon, NEVER, ids.shape[1])  # own backbone, built by hand, no eos_token_id
    with pytest.warns(UserWarning, match="eos_token_id"):
        lm.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=2, do_sample=False,
                    stopping_criteria=[crit], pad_token_id=0)


@pytest.mark.parametrize("shared", [False, True], ids=["own", "shared"])
def test_flagged_rows_are_cut_when_the_generation_config_has_no_eos(shared):
    # before the fix: stops recorded, yet every row ran on to the last row's stop (transformers pads finished
    # rows only when some criterion carries `eos_token_id`)
    from test_scm_hook import _batch_case

    lm, mon, ids, n, free, pol, stops = _batch_case("llama")
    lm.generation_config.eos_token_id = None
    with mon.guard(lm, pol, ids.shape[1], share=shared) as crit:
        out = lm.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=n, do_sample=False,
                          stopping_criteria=[crit], pad_token_id=0)
    P, lag = ids.shape[1], 1 if shared else 0
    assert [s.stopped_at for s in crit.sessions] == stops
    for b, s in enumerate(stops):
        if s:
            assert bool((out[b, P + s + lag:] == 0).all()), f"row {b} kept generating after its stop at {s}"


def test_a_generator_without_pad_or_eos_is_told_by_name():
    lm = causal_lm("llama")
    lm.generation_config.eos_token_id = None
    lm.generation_config.pad_token_id = None
    with pytest.warns(UserWarning, match="pad_token_id"):
        _monitor(lm).guard(lm, NEVER, 6).close()


def test_from_pretrained_without_the_backbone_refuses_saved_adapters(tmp_path):
    # before the fix the LoRA adapters were dropped silently and a heads-only monitor came back
    mon = StreamingContentMonitor(tiny_decoder(40, 16, 2, 2, seed=0), lora_r=2)
    mon.save_pretrained(tmp_path / "lora")
    with pytest.raises(ValueError, match="`backbone` is None.*LoRA"):
        StreamingContentMonitor.from_pretrained(tmp_path / "lora")
    # heads trained on a frozen backbone still load heads-only
    frozen = StreamingContentMonitor(tiny_decoder(40, 16, 2, 2, seed=0))
    frozen.save_pretrained(tmp_path / "heads")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        back = StreamingContentMonitor.from_pretrained(tmp_path / "heads")
    assert back.backbone is None
    assert torch.equal(back.token_head.weight, frozen.token_head.weight)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "fp16"])
@pytest.mark.parametrize("shared", [False, True], ids=["own", "shared"])
def test_float32_heads_on_a_half_precision_generator(dtype, shared):
    # heads trained in float32 (on cached states) attached to a bf16 / fp16 generator: before the fix every
    # entry point (forward, session, both generate modes) crashed with "mat1 and mat2 must have the same dtype"
    lm = causal_lm("llama")
    heads = _monitor(lm)
    gen = copy.deepcopy(lm).to(dtype)
    live = heads.with_backbone(truncate_layers(copy.deepcopy(gen.model), 1))
    ids = _ids(batch=2)
    with live.guard(gen, NEVER, ids.shape[1], share=shared) as crit:
        out = gen.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=4, min_new_tokens=4,
                           do_sample=False, stopping_criteria=[crit], pad_token_id=0)
    with torch.no_grad():
        offline = live(out).token_logits.softmax(-1)[:, ids.shape[1]:, 1]
        ref = heads(out).token_logits.softmax(-1)[:, ids.shape[1]:, 1]  # all float32
    assert offline.dtype == torch.float32
    for b, sess in enumerate(crit.sessions):
        assert len(sess.probs) == (3 if shared else 4)
        got = torch.tensor(sess.probs)
        assert (got - offline[b, :len(got)]).abs().max() < 1e-2
        assert (got - ref[b, :len(got)]).abs().max() < 5e-2
    assert torch.isfinite(torch.tensor(live.start(ids[0]).step(5).p_harm))
