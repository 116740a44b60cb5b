"""GRPO: advantages, the clipped objective against a loop transcription, rollouts, reward failures."""

import numpy as np
import pytest
import torch

from neurips25.behavior_injection import (
    GRPO,
    MiniIGSM,
    build_tokenizer,
    group_advantages,
    grpo_objective,
    sample_rollouts,
    score_rollouts,
    tiny_llama,
)


def test_advantages_closed_form():
    r = np.array([[1, 1, 0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1, 1]], float)
    A = group_advantages(r).numpy()
    a = 0.25
    assert np.allclose(A[0, :2], np.sqrt((1 - a) / a)) and np.allclose(A[0, 2:], -np.sqrt(a / (1 - a)))
    assert np.all(A[1] == 0)  # all-equal group: no signal
    with pytest.raises(ValueError, match="group_size >= 2"):
        group_advantages(np.ones(4))
    with pytest.raises(ValueError, match="finite"):
        group_advantages(np.array([[0.0, np.nan]]))


def test_objective_matches_a_loop_transcription():
    g = torch.Generator().manual_seed(0)
    B, T = 5, 7
    logp, old, ref = (-torch.rand(B, T, generator=g, dtype=torch.float64) for _ in range(3))
    mask = (torch.rand(B, T, generator=g) > 0.2).long()
    mask[:, 0] = 1
    A = torch.randn(B, generator=g, dtype=torch.float64)
    eps, beta = 0.2, 0.05
    total = 0.0
    for i in range(B):
        s, n = 0.0, 0
        for t in range(T):
            if mask[i, t]:
                rho = float(torch.exp(logp[i, t] - old[i, t]))
                term = min(rho * float(A[i]), min(max(rho, 1 - eps), 1 + eps) * float(A[i]))
                d = float(ref[i, t] - logp[i, t])
                s += term - beta * (np.exp(d) - d - 1)
                n += 1
        total += s / n
    got = float(grpo_objective(logp, old, A, mask, eps, beta, ref))
    assert got == pytest.approx(total / B, rel=1e-12)


def test_rollouts_mask_and_context_error(tok, model64, task):
    qs = task.samples(2)
    ro = sample_rollouts(model64, tok, [q.question for q in qs], 3, 10)
    assert ro.completion_ids.shape[0] == 6 and len(ro.texts) == 6
    eos = tok.eos_token_id
    for row, m in zip(ro.completion_ids, ro.completion_mask):
        k = int(m.sum())
        assert (row[:k - 1] != eos).all() and (m[k:] == 0).all()
    with pytest.raises(ValueError, match="exceed the context"):
        sample_rollouts(model64, tok, [qs[0].question], 2, 1000)
    with pytest.raises(ValueError, match="`n` must be a positive int"):
        sample_rollouts(model64, tok, [qs[0].question], 0, 5)


def test_kv_cache_gives_the_same_greedy_rollouts(tok, model64, task):
    qs = [q.question for q in task.samples(3)]
    a = sample_rollouts(model64, tok, qs, 1, 12, greedy=True, use_cache=True).texts
    b = sample_rollouts(model64, tok, qs, 1, 12, greedy=True, use_cache=False).texts
    assert a == b


def test_reward_that_raises_gives_zero_and_warns(tok, model64, task):
    qs = task.samples(2)
    ro = sample_rollouts(model64, tok, [q.question for q in qs], 2, 5)

    def bad(q, c):
        if q is qs[1]:
            raise KeyError("boom")
        return 1.0

    with pytest.warns(RuntimeWarning, match="`reward_fn` raised KeyError"):
        r, errs = score_rollouts(ro, qs, bad)
    assert r.tolist() == [[1.0, 1.0], [0.0, 0.0]] and errs[0][0] == 1


def test_step_learns_a_rewarded_token(tok, task):
    """A few GRPO steps raise the probability of completions that contain a rewarded word."""
    from neurips25.behavior_injection import tiny_llama

    torch.manual_seed(1)
    m = tiny_llama(len(tok), d_model=32, n_layers=1, n_heads=2, max_len=160, seed=1, tokenizer=tok)
    qs = task.samples(4)
    reward = lambda q, c: float("5" in c.split()[:3])
    tr = GRPO(m, tok, group_size=8, lr=3e-2, max_new_tokens=3)
    first = [tr.step(qs, reward, prompt_of=lambda q: q.question)["reward_mean"] for _ in range(2)]
    last = [tr.step(qs, reward, prompt_of=lambda q: q.question)["reward_mean"] for _ in range(12)][-3:]
    assert np.mean(last) > np.mean(first) + 0.2


@pytest.mark.parametrize("kw, msg", [(dict(group_size=1), "`group_size`"), (dict(beta=0.1), "reference model"),
                                     (dict(clip_eps=1.5), "`clip_eps`"), (dict(lr=0), "`lr`")])
def test_bad_trainer_args(tok, model64, kw, msg):
    with pytest.raises(ValueError, match=msg):
        GRPO(model64, tok, **kw)


def test_sampling_has_no_top_k_on_a_large_vocabulary(monkeypatch):
    """Pure sampling: transformers' global default top_k=50 must not apply (a 61-token vocabulary here, as
    SmolLM2's 49k), and every token keeps its policy probability."""
    from transformers.generation import logits_process

    big = MiniIGSM(n_ops=2, mod=23, seed=0)
    tok = build_tokenizer(big.vocabulary())
    assert len(tok) > 50
    model = tiny_llama(len(tok), d_model=16, n_layers=1, n_heads=2, max_len=96, seed=0, tokenizer=tok)

    def refuse(self, input_ids, scores):
        raise AssertionError(f"a top-k warper (k={self.top_k}) truncated the sampling distribution")

    monkeypatch.setattr(logits_process.TopKLogitsWarper, "__call__", refuse)
    monkeypatch.setattr(logits_process.TopPLogitsWarper, "__call__", refuse)
    torch.manual_seed(0)
    ro = sample_rollouts(model, tok, [big.sample().question for _ in range(2)], 4, 6)
    assert ro.completion_ids.shape[0] == 8
