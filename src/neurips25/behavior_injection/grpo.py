"""GRPO (group relative policy optimisation) for any Hugging Face causal LM, with KV-cache rollouts.

For each query q, sample a group of N completions o_1..o_N from pi_old, score them with a verifiable
reward r_i and normalise within the group::

    A_i = (r_i - mean(r)) / std(r)                       (population std; A_i = 0 when std = 0)
    J   = mean_i 1/|o_i| sum_t min(rho_it A_i, clip(rho_it, 1-eps, 1+eps) A_i) - beta KL_t(pi || pi_ref)
    rho_it = pi(o_it | q, o_i<t) / pi_old(o_it | q, o_i<t),  KL_t = exp(l_ref - l) - (l_ref - l) - 1  (k3)

With binary rewards and ``rho = 1`` (on-policy), ``beta = 0``, the gradient of one group is
``sqrt(alpha (1 - alpha)) (g+ - g-)`` (alpha = share of correct rollouts, g+- = mean score gradients of the
correct / failed rollouts): the per-step influence of BRIDGE Sec. 3 (see ``influence.py``). TRL's
``GRPOTrainer`` divides by the sample std (N-1); that rescales every advantage by sqrt((N-1)/N).
"""

from __future__ import annotations

import dataclasses
import numbers
import time
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np


def group_advantages(rewards):
    """Group-normalised advantages of a ``(Q, N)`` reward tensor: ``(r - mean) / std`` per row, 0 if std = 0."""
    import torch

    r = torch.as_tensor(rewards, dtype=torch.float64)
    if r.ndim != 2 or r.shape[1] < 2:
        raise ValueError(f"`rewards` must be (n_queries, group_size >= 2), got shape {tuple(r.shape)}")
    if not torch.isfinite(r).all():
        raise ValueError("`rewards` must be finite")
    mean = r.mean(dim=1, keepdim=True)
    std = r.std(dim=1, unbiased=False, keepdim=True)
    return torch.where(std > 1e-12, (r - mean) / std.clamp_min(1e-12), torch.zeros_like(r))


def grpo_objective(logp, old_logp, advantages, mask, clip_eps: float = 0.2, beta: float = 0.0, ref_logp=None,
                   length_norm: bool = True):
    """The clipped GRPO objective J (to maximise), averaged over rollouts.

    Shapes: ``logp``, ``old_logp``, ``ref_logp``, ``mask``: (B, T) token log-probs of the completions and
    their 0/1 mask; ``advantages``: (B,).
    """
    import torch

    ratio = torch.exp(logp - old_logp)
    A = advantages.to(logp.dtype)[:, None]
    surr = torch.minimum(ratio * A, torch.clamp(ratio, 1 - clip_eps, 1 + clip_eps) * A)
    if beta:
        if ref_logp is None:
            raise ValueError("`beta` > 0 needs `ref_logp` (a reference model)")
        d = ref_logp - logp
        surr = surr - beta * (torch.exp(d) - d - 1)
    m = mask.to(logp.dtype)
    per_rollout = (surr * m).sum(1)
    if length_norm:
        per_rollout = per_rollout / m.sum(1).clamp_min(1)
    return per_rollout.mean()


def completion_logprobs(model, prompt_ids, prompt_mask, completion_ids, completion_mask):
    """Token log-probs (B, T) of ``completion_ids`` after left-padded ``prompt_ids`` under ``model``.

    Each row is re-packed without its left padding (prompt then completion, padding only at the end) before
    the forward pass: a left-padded row has query positions that see no key at all, and in float64 (Qwen2,
    Llama) their all-masked softmax is NaN, which reaches the real tokens through 0 * NaN in the next layer.
    With right padding every query sees at least the first real token, in any dtype and attention kernel.
    """
    import torch

    B, P = prompt_ids.shape
    T = completion_ids.shape[1]
    ids = torch.cat([prompt_ids, completion_ids], 1)
    mask = torch.cat([prompt_mask, completion_mask], 1)
    n_prompt = prompt_mask.sum(1)  # real prompt tokens per row
    shift = P - n_prompt  # left padding per row
    j = torch.arange(P + T, device=ids.device)[None, :]
    src = j + shift[:, None]
    inside = src < P + T
    src = src.clamp_max(P + T - 1)
    packed = torch.where(inside, ids.gather(1, src), torch.zeros_like(ids))
    packed_mask = torch.where(inside, mask.gather(1, src), torch.zeros_like(mask))
    logits = model(input_ids=packed, attention_mask=packed_mask).logits
    # completion token k of row i sits at n_prompt_i + k; the logits one position earlier predict it
    pos = (n_prompt[:, None] - 1 + torch.arange(T, device=ids.device)[None, :])
    logits = logits.gather(1, pos[..., None].expand(-1, -1, logits.shape[-1]))
    logits = logits.float() if logits.dtype == torch.float16 else logits
    return torch.log_softmax(logits, -1).gather(-1, completion_ids[..., None])[..., 0]


@dataclasses.dataclass
class Rollouts:
    """A batch of sampled completions: ``n`` per prompt, row ``q * n + j`` is rollout j of prompt q."""

    prompt_ids: Any  # (Q*n, P) left padded
    prompt_mask: Any
    completion_ids: Any  # (Q*n, T) right padded
    completion_mask: Any  # 1 up to and including <eos>
    texts: list[str]
    n: int


def bos_prefix(tokenizer) -> list[int]:
    """``[bos]`` when the tokenizer is configured to add its bos (``add_special_tokens=True`` puts it first), else
    ``[]``: a tokenizer without a bos (Qwen2) or whose bos is a marker it never adds (SmolLM2's
    ``<|im_start|>``) gets none. Prompts of rollouts and of SFT pairs start with this prefix."""
    bos = getattr(tokenizer, "bos_token_id", None)
    if bos is None:
        return []
    added = tokenizer("x", add_special_tokens=True)["input_ids"]
    plain = tokenizer("x", add_special_tokens=False)["input_ids"]
    return [int(bos)] if added[:1] == [bos] and plain[:1] != [bos] else []


def pad_id(tokenizer) -> int:
    """The tokenizer's pad id, its eos id when it has no pad token (GPT-2, Llama); ValueError without either."""
    for name in ("pad_token_id", "eos_token_id"):
        v = getattr(tokenizer, name, None)
        if v is not None:
            return int(v)
    raise ValueError("`tokenizer` has neither a pad_token nor an eos_token: set tokenizer.pad_token before "
                     "batching prompts")


def encode_prompts(tokenizer, prompts: Sequence[str]):
    """Left-padded ``bos_prefix + prompt`` ids and mask (padded with :func:`pad_id`)."""
    import torch

    enc = tokenizer([str(p) for p in prompts], add_special_tokens=False)["input_ids"]
    unk = getattr(tokenizer, "unk_token_id", None)
    if unk is not None and any(unk in e for e in enc):
        raise ValueError("`prompts` contain words outside the tokenizer's vocabulary")
    prefix = bos_prefix(tokenizer)
    enc = [prefix + list(e) for e in enc]
    empty = [i for i, e in enumerate(enc) if not e]
    if empty:
        raise ValueError(f"`prompts` [{empty[0]}] encodes to no token (and the tokenizer adds no bos)")
    P = max(len(e) for e in enc)
    ids = torch.full((len(enc), P), pad_id(tokenizer), dtype=torch.long)
    mask = torch.zeros((len(enc), P), dtype=torch.long)
    for i, e in enumerate(enc):
        ids[i, P - len(e):] = torch.tensor(e)
        mask[i, P - len(e):] = 1
    return ids, mask


def refuse_float16(model, name: str) -> None:
    """ValueError when ``model`` has trainable float16 parameters: AdamW's ``eps`` (1e-8) is 0 in float16, so a
    parameter with a zero gradient is updated by 0 / 0 and the weights turn NaN silently."""
    import torch

    if any(p.requires_grad and p.dtype == torch.float16 for p in model.parameters()):
        raise ValueError(f"`{name}` has float16 parameters: AdamW cannot train them (its eps underflows to 0 and "
                         "the weights turn NaN); train in float32 or bfloat16 (model.float() / "
                         "model.to(torch.bfloat16)), or keep float32 weights under autocast")


def _model_vocab(model) -> int:
    """Rows of the model's output layer (the ids it can emit)."""
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    w = getattr(head, "weight", None)
    if w is not None:
        return int(w.shape[0])
    return int(model.config.vocab_size)


def sample_rollouts(model, tokenizer, prompts: Sequence[str], n: int, max_new_tokens: int,
                    temperature: float = 1.0, greedy: bool = False, use_cache: bool = True) -> Rollouts:
    """Sample ``n`` completions per prompt with ``model.generate`` (pure sampling: no top-k / top-p).

    Prompts are ``bos_prefix(tokenizer) + prompt`` (:func:`bos_prefix`). Ids the model can emit but the tokenizer
    cannot decode (a vocabulary padded beyond ``len(tokenizer)``, as in real checkpoints) are never sampled:
    their logits are suppressed, so the text the reward reads holds every token GRPO trains on. Log-probs
    (:func:`completion_logprobs`) stay over the model's whole vocabulary.

    Raises ValueError when prompt plus ``max_new_tokens`` exceed the model's context, or when the tokenizer
    has ids past the model's vocabulary.
    """
    import torch
    from transformers import GenerationConfig

    if not isinstance(n, numbers.Integral) or n < 1:
        raise ValueError(f"`n` must be a positive int, got {n!r}")
    if not isinstance(max_new_tokens, numbers.Integral) or max_new_tokens < 1:
        raise ValueError(f"`max_new_tokens` must be a positive int, got {max_new_tokens!r}")
    if not isinstance(temperature, numbers.Real) or temperature <= 0:
        raise ValueError(f"`temperature` must be > 0, got {temperature!r}")
    ids, mask = encode_prompts(tokenizer, prompts)
    vocab, n_tok = _model_vocab(model), len(tokenizer)
    if int(ids.max()) >= vocab:
        raise ValueError(f"the tokenizer gives id {int(ids.max())} but the model's vocabulary has {vocab} ids: "
                         "`tokenizer` and `model` do not match")
    ctx = model.config.max_position_embeddings
    if ids.shape[1] + max_new_tokens > ctx:
        raise ValueError(f"rollouts would exceed the context: prompt of {ids.shape[1]} tokens + "
                         f"`max_new_tokens`={max_new_tokens} > max_position_embeddings={ctx}")
    # top_k=0 switches top-k off: None would fall back to transformers' global default top_k=50, which
    # truncates the sampling distribution of any vocabulary above 50 tokens (the policy would no longer be the
    # distribution whose log-probs GRPO trains)
    gc = GenerationConfig(do_sample=not greedy, temperature=float(temperature) if not greedy else None,
                          top_k=None if greedy else 0, top_p=None, max_new_tokens=int(max_new_tokens),
                          num_return_sequences=1 if greedy else int(n), use_cache=use_cache,
                          pad_token_id=pad_id(tokenizer), eos_token_id=tokenizer.eos_token_id,
                          bos_token_id=tokenizer.bos_token_id,
                          suppress_tokens=list(range(n_tok, vocab)) if vocab > n_tok else None)
    was_training = model.training
    model.eval()
    with torch.no_grad():
        out = model.generate(input_ids=ids, attention_mask=mask, generation_config=gc)
    if was_training:
        model.train()
    reps = int(n) if not greedy else 1
    P = ids.shape[1]
    comp = out[:, P:]
    pad = pad_id(tokenizer)
    eos = tokenizer.eos_token_id
    is_eos = comp == eos if eos is not None else torch.zeros_like(comp, dtype=torch.bool)
    # 1 up to and including the first <eos>; everything after it is padding
    after = (is_eos.cumsum(1) - is_eos.long()) > 0
    cmask = (~after).long()
    comp = comp.masked_fill(after, pad)
    texts = tokenizer.batch_decode(comp.masked_fill(is_eos, pad), skip_special_tokens=True)
    return Rollouts(ids.repeat_interleave(reps, 0), mask.repeat_interleave(reps, 0), comp, cmask, texts, reps)


def score_rollouts(rollouts: Rollouts, queries: Sequence[Any], reward_fn: Callable[[Any, str], float]):
    """Rewards (Q, n); a group whose reward function raises gets reward 0 everywhere and a warning.

    When it raises on EVERY query, the error is raised (a RuntimeError naming the first one) instead: training
    on all-zero rewards has no signal at all, e.g. a TRL-style ``reward(completions, **kwargs)`` passed where
    ``reward_fn(query, completion)`` is expected (review of #19, section 5).
    """
    n = rollouts.n
    r = np.zeros((len(queries), n))
    errors = []
    for q, query in enumerate(queries):
        try:
            vals = [float(reward_fn(query, rollouts.texts[q * n + j])) for j in range(n)]
            if not all(np.isfinite(vals)):
                raise ValueError(f"non-finite reward {vals}")
            r[q] = vals
        except Exception as exc:  # a user reward function failing must not kill training
            errors.append((q, f"{type(exc).__name__}: {exc}"))
            if len(errors) < len(queries):
                warnings.warn(f"`reward_fn` raised {type(exc).__name__} ({exc}) on query {q}; that group gets "
                              f"reward 0", RuntimeWarning, stacklevel=2)
    if queries and len(errors) == len(queries):
        raise RuntimeError(f"`reward_fn` raised on every query (first: {errors[0][1]}); it must take "
                           "(query, completion) and return a number")
    return r, errors


class GRPO:
    """GRPO trainer for a causal LM with the Hugging Face interface.

    Parameters
    ----------
    policy : transformers PreTrainedModel
        Trained in place.
    tokenizer : PreTrainedTokenizerFast
        With pad / bos / eos tokens.
    ref : PreTrainedModel, optional
        Reference model for the KL term (needed when ``beta > 0``).
    group_size : int, default 8
        N rollouts per query.
    beta : float, default 0.0
        KL coefficient.
    clip_eps : float, default 0.2
    lr : float, default 1e-4
    max_new_tokens : int, default 128
    temperature : float, default 1.0
    n_inner : int, default 1
        Optimiser steps per batch of rollouts (mu of GRPO); with 1 the update is exactly on-policy.
    max_grad_norm : float > 0 or None, default 1.0
        Gradient-norm clipping of each update; None switches it off.

    Examples
    --------
    >>> # trainer = GRPO(model, tok, group_size=8); stats = trainer.step(problems, MiniIGSM.reward,
    >>> #                                                                 prompt_of=lambda p: p.question)
    """

    def __init__(self, policy, tokenizer, ref=None, group_size: int = 8, beta: float = 0.0, clip_eps: float = 0.2,
                 lr: float = 1e-4, max_new_tokens: int = 128, temperature: float = 1.0, n_inner: int = 1,
                 max_grad_norm: float = 1.0):
        import torch

        if not isinstance(group_size, numbers.Integral) or group_size < 2:
            raise ValueError(f"`group_size` must be an int >= 2, got {group_size!r}")
        if not isinstance(beta, numbers.Real) or beta < 0:
            raise ValueError(f"`beta` must be >= 0, got {beta!r}")
        if beta > 0 and ref is None:
            raise ValueError("`beta` > 0 needs a reference model `ref`")
        if not isinstance(clip_eps, numbers.Real) or not 0 < clip_eps < 1:
            raise ValueError(f"`clip_eps` must be in (0, 1), got {clip_eps!r}")
        if not isinstance(lr, numbers.Real) or lr <= 0:
            raise ValueError(f"`lr` must be > 0, got {lr!r}")
        if not isinstance(n_inner, numbers.Integral) or n_inner < 1:
            raise ValueError(f"`n_inner` must be a positive int, got {n_inner!r}")
        # a negative norm would make clip_grad_norm_ scale the gradient by a negative factor: the update would
        # then descend the objective (minimise the reward) without any error
        if max_grad_norm is not None and (isinstance(max_grad_norm, bool) or not isinstance(
                max_grad_norm, numbers.Real) or not np.isfinite(float(max_grad_norm)) or float(max_grad_norm) <= 0):
            raise ValueError(f"`max_grad_norm` must be a finite number > 0 (or None for no clipping), got "
                             f"{max_grad_norm!r}")
        refuse_float16(policy, "policy")
        self.policy, self.tokenizer, self.ref = policy, tokenizer, ref
        self.group_size, self.beta, self.clip_eps = int(group_size), float(beta), float(clip_eps)
        self.max_new_tokens, self.temperature, self.n_inner = int(max_new_tokens), float(temperature), int(n_inner)
        self.max_grad_norm = None if max_grad_norm is None else float(max_grad_norm)
        self.opt = torch.optim.AdamW(policy.parameters(), lr=float(lr), weight_decay=0.0, betas=(0.9, 0.99))

    def step(self, queries: Sequence[Any], reward_fn: Callable[[Any, str], float],
             prompt_of: Callable[[Any], str] = str) -> dict:
        """One GRPO step on ``queries``: rollouts, rewards, advantages, ``n_inner`` clipped updates.

        Returns stats: ``alpha`` (per-query accuracy), ``frac_reward_zero_std``, ``reward_mean``,
        ``objective``, ``completion_len``, ``reward_errors`` and the time of each phase.
        """
        import torch

        if len(queries) == 0:
            raise ValueError("`queries` must not be empty")
        t0 = time.perf_counter()
        ro = sample_rollouts(self.policy, self.tokenizer, [prompt_of(q) for q in queries], self.group_size,
                             self.max_new_tokens, self.temperature)
        t1 = time.perf_counter()
        rewards, errors = score_rollouts(ro, queries, reward_fn)
        adv = group_advantages(rewards).reshape(-1)
        t2 = time.perf_counter()
        self.policy.train()
        with torch.no_grad():
            ref = (completion_logprobs(self.ref, ro.prompt_ids, ro.prompt_mask, ro.completion_ids,
                                       ro.completion_mask) if self.beta else None)
        obj, old = float("nan"), None
        if bool((adv != 0).any()) or self.beta:
            for _ in range(self.n_inner):
                logp = completion_logprobs(self.policy, ro.prompt_ids, ro.prompt_mask, ro.completion_ids,
                                           ro.completion_mask)
                if old is None:  # pi_old is the policy that sampled: its log-probs are the first pass's
                    old = logp.detach()
                J = grpo_objective(logp, old, adv, ro.completion_mask, self.clip_eps, self.beta, ref)
                self.opt.zero_grad(set_to_none=True)
                (-J).backward()
                if self.max_grad_norm is not None:
                    torch.nn.utils.clip_grad_norm_(self.policy.parameters(), self.max_grad_norm)
                self.opt.step()
                obj = float(J.detach())
        self.policy.eval()
        t3 = time.perf_counter()
        alpha = rewards.mean(1)
        return {"alpha": alpha, "reward_mean": float(rewards.mean()),
                "frac_reward_zero_std": float(np.mean(rewards.std(1) == 0)), "objective": obj,
                "completion_len": float(ro.completion_mask.sum(1).float().mean()), "reward_errors": errors,
                "time_rollout": t1 - t0, "time_reward": t2 - t1, "time_update": t3 - t2}
