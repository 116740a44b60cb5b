"""Streaming: delay-k rule, KV-cached sessions equal full forwards, the generate() stopping hook."""

import numpy as np
import pytest
import torch

from neurips25.scm import DelayKPolicy, SCMStoppingCriteria, StreamingContentMonitor


def _loop_first_stop(p, k, tau):
    count = 0
    for i, x in enumerate(p):
        count += x >= tau
        if count >= k:
            return i + 1
    return 0


@pytest.mark.parametrize("seed", range(5))
def test_first_stop_matches_loop(seed):
    rng = np.random.default_rng(seed)
    p = rng.random(30)
    for k in (1, 3, 10, 40):
        for tau in (0.5, 0.8):
            assert DelayKPolicy(k, tau).first_stop(p) == _loop_first_stop(p, k, tau)


def test_policy_bad_arguments():
    for k in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="`k` must be an integer >= 1"):
            DelayKPolicy(k, 0.5)
    for tau in (0.0, 1.0, 1.2, -0.1):
        with pytest.raises(ValueError, match=r"`threshold` must be in \(0, 1\)"):
            DelayKPolicy(1, tau)
    assert DelayKPolicy(np.int64(2), np.float32(0.7)).k == 2  # numpy scalars are fine


def test_session_equals_full_forward(monitor):
    prompt, resp = [1, 5, 7, 9], [3, 8, 2, 11, 4, 6, 30, 12]
    sess = monitor.start(prompt, DelayKPolicy(2, 0.5))
    streamed = [sess.step(t).p_harm for t in resp]
    with torch.no_grad():
        full = monitor(torch.tensor([prompt + resp])).token_logits[0, len(prompt):].softmax(-1)[:, 1]
    assert np.max(np.abs(np.array(streamed) - full.numpy())) <= 1e-5
    # the count and the latch agree with the whole-sequence rule
    assert sess.stopped_at == DelayKPolicy(2, 0.5).first_stop(streamed)
    assert sess.harmful_count == int(np.sum(np.array(streamed) >= 0.5))


def test_session_stop_latches(monitor):
    with torch.no_grad():
        monitor.token_head.bias.copy_(torch.tensor([0.0, 20.0]))  # every token harmful
    sess = monitor.start([1, 2], DelayKPolicy(3, 0.9))
    stops = [sess.step(5).stop for _ in range(5)]
    assert stops == [False, False, True, True, True]
    assert sess.stopped_at == 3


def test_session_bad_inputs(monitor):
    with pytest.raises(ValueError, match="`prompt_ids` is empty"):
        monitor.start([])
    with pytest.raises(ValueError, match="`prompt_ids` must be a 1-D sequence"):
        monitor.start(torch.ones(2, 3, dtype=torch.long))
    sess = monitor.start([1, 2])
    with pytest.raises(ValueError, match="`token_id` must be a non-negative integer"):
        sess.step(-1)
    with pytest.raises(ValueError, match="heads-only"):
        StreamingContentMonitor(None, hidden_size=8).start([1])


def test_stopping_criteria_cuts_generation(causal_lm):
    mon = StreamingContentMonitor(causal_lm.model).eval()
    with torch.no_grad():
        mon.token_head.bias.copy_(torch.tensor([0.0, 20.0]))
    crit = SCMStoppingCriteria(mon, DelayKPolicy(4, 0.5), prompt_length=3)
    ids = torch.tensor([[1, 5, 6]])
    out = causal_lm.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=20, do_sample=False,
                             stopping_criteria=[crit], pad_token_id=0)
    assert out.shape[1] - 3 == 4 and crit.stopped and crit.session.stopped_at == 4


def test_stopping_criteria_lets_benign_run(causal_lm):
    mon = StreamingContentMonitor(causal_lm.model).eval()
    with torch.no_grad():
        mon.token_head.bias.copy_(torch.tensor([20.0, 0.0]))
    crit = SCMStoppingCriteria(mon, DelayKPolicy(1, 0.5), prompt_length=2)
    ids = torch.tensor([[1, 5]])
    out = causal_lm.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=7, min_new_tokens=7,
                             do_sample=False, stopping_criteria=[crit], pad_token_id=0)
    assert out.shape[1] == 9 and not crit.stopped and len(crit.session.probs) == 7


def test_stopping_criteria_bad_arguments(monitor):
    with pytest.raises(ValueError, match="`prompt_length` must be an integer >= 1"):
        SCMStoppingCriteria(monitor, DelayKPolicy(), 0)
    crit = SCMStoppingCriteria(monitor, DelayKPolicy(), 1)
    with pytest.raises(ValueError, match="batch size 1"):
        crit(torch.ones(2, 3, dtype=torch.long))
