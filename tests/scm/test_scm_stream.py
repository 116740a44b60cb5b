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
    with pytest.raises(ValueError, match="outside the backbone's vocabulary"):
        sess.step(10**6)  # was an IndexError from the embedding (review 6)
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
    with pytest.raises(ValueError, match=r"`input_ids` must be a \(batch, length\) tensor"):
        crit(torch.ones(3, dtype=torch.long))
    with pytest.raises(ValueError, match="`pad_token_id` must be an integer or None"):
        SCMStoppingCriteria(monitor, DelayKPolicy(), 1, pad_token_id=1.5)
    assert crit(torch.ones(2, 3, dtype=torch.long)).shape == (2,)  # a batch: one bool per row


def _deep_lm(n_layers=3):
    transformers = pytest.importorskip("transformers")
    cfg = transformers.LlamaConfig(vocab_size=40, hidden_size=16, intermediate_size=32, num_hidden_layers=n_layers,
                                   num_attention_heads=2, num_key_value_heads=2, tie_word_embeddings=False)
    torch.manual_seed(1)
    return transformers.LlamaForCausalLM(cfg).eval()


def _monitor_on_first_layers(lm, n, bias=None):
    import copy

    from neurips25.scm import truncate_layers

    torch.manual_seed(2)
    mon = StreamingContentMonitor(truncate_layers(copy.deepcopy(lm.model), n)).eval()
    if bias is not None:
        with torch.no_grad():
            mon.token_head.bias.copy_(torch.tensor(bias))
    return mon


def test_shared_backbone_scores_equal_the_monitors_own_session():
    lm = _deep_lm(3)
    mon = _monitor_on_first_layers(lm, 2)
    ids = torch.tensor([[1, 5, 6, 7]])
    kw = dict(attention_mask=torch.ones_like(ids), max_new_tokens=12, min_new_tokens=12, do_sample=False,
              pad_token_id=0)
    never = DelayKPolicy(10**6, 0.5)
    own = SCMStoppingCriteria(mon, never, prompt_length=4)
    out_own = lm.generate(ids, stopping_criteria=[own], **kw)
    with SCMStoppingCriteria(mon, never, prompt_length=4, generator=lm) as shared:
        out_shared = lm.generate(ids, stopping_criteria=[shared], **kw)
    assert torch.equal(out_own, out_shared)  # watching changes nothing in the generation
    # the shared tap has scored every token but the last (its hidden state comes with the next forward)
    assert len(own.session.probs) == 12 and len(shared.session.probs) == 11
    assert np.max(np.abs(np.array(shared.session.probs) - np.array(own.session.probs[:11]))) <= 1e-5
    assert not lm.model.layers[1]._forward_hooks  # removed on exit


def test_shared_backbone_stops_one_token_later():
    lm = _deep_lm(3)
    mon = _monitor_on_first_layers(lm, 2, bias=[0.0, 20.0])  # every token harmful
    ids = torch.tensor([[1, 5, 6]])
    kw = dict(attention_mask=torch.ones_like(ids), max_new_tokens=20, do_sample=False, pad_token_id=0)
    own = SCMStoppingCriteria(mon, DelayKPolicy(4, 0.5), prompt_length=3)
    assert lm.generate(ids, stopping_criteria=[own], **kw).shape[1] - 3 == 4
    with SCMStoppingCriteria(mon, DelayKPolicy(4, 0.5), prompt_length=3, generator=lm) as shared:
        out = lm.generate(ids, stopping_criteria=[shared], **kw)
    assert out.shape[1] - 3 == 5 and shared.stopped and shared.session.stopped_at == 4


def test_shared_backbone_refused_when_weights_differ():
    lm = _deep_lm(3)
    mon = _monitor_on_first_layers(lm, 2)
    with torch.no_grad():
        mon.backbone.layers[1].mlp.up_proj.weight.add_(1e-3)
    with pytest.raises(ValueError, match="does not share the monitor's backbone"):
        SCMStoppingCriteria(mon, DelayKPolicy(), 3, generator=lm)
    heads_only = StreamingContentMonitor(None, hidden_size=16)
    with pytest.raises(ValueError, match="Llama-style decoders"):
        SCMStoppingCriteria(heads_only, DelayKPolicy(), 3, generator=lm)
    crit = SCMStoppingCriteria(_monitor_on_first_layers(lm, 2), DelayKPolicy(), 3, generator=lm)
    crit.close()
    assert not lm.model.layers[1]._forward_hooks
    with pytest.raises(RuntimeError, match="closed"):
        crit(torch.tensor([[1, 2, 3, 4]]))
