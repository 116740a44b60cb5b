"""Per-step influence of a GRPO step and the RL-readiness numbers a user checks before RL (BRIDGE Sec. 3).

One GRPO step on query q moves the objective on another query q' by, to first order,
``dJ(q') = eta <grad J(q'), grad J(q)>``. With binary rewards, group-normalised advantages, on-policy
and no KL, the GRPO gradient of q's group is::

    grad J(q) = sqrt(alpha (1 - alpha)) (g+ - g-)                      (the per-step influence identity)
    g+- = mean over correct / failed rollouts o of grad log pi(o | q)    (length-normalised here, as in GRPO)

so ``dJ(q') = eta sqrt(alpha_q (1 - alpha_q)) E_{o'}[A(q', o') (K+ - K-)]`` with the co-influence kernel
``K[(q', o'), (q, o)] = <grad log pi(o' | q'), grad log pi(o | q)>``. A model is RL-ready when (1) many
queries have alpha away from 0 and 1 (``informativeness``) and (2) learning on one query moves others
(``co_influence``).
"""

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from neurips25.behavior_injection.grpo import (
    Rollouts,
    completion_logprobs,
    group_advantages,
    grpo_objective,
    sample_rollouts,
    score_rollouts,
)


def _check_alpha(alpha) -> np.ndarray:
    a = np.asarray(alpha, dtype=float)
    if a.ndim != 1 or a.size == 0:
        raise ValueError(f"`alpha` must be a non-empty 1-D array of per-query accuracies, got shape {a.shape}")
    if not np.all(np.isfinite(a)) or a.min() < 0 or a.max() > 1:
        raise ValueError("`alpha` must lie in [0, 1]")
    return a


def informativeness(alpha) -> float:
    """Mean ``sqrt(alpha (1 - alpha))`` over queries: the weight of each query's GRPO update (peak 0.5)."""
    a = _check_alpha(alpha)
    return float(np.mean(np.sqrt(a * (1 - a))))


def frac_zero_std(alpha) -> float:
    """Share of queries whose group has all-equal rewards (alpha in {0, 1}): no GRPO signal."""
    a = _check_alpha(alpha)
    return float(np.mean((a == 0) | (a == 1)))


@dataclasses.dataclass
class Group:
    """The rollouts of one query and their rewards."""

    rollouts: Rollouts
    rewards: np.ndarray  # (n,)

    @property
    def alpha(self) -> float:
        return float(np.mean(self.rewards))


def sample_groups(model, tokenizer, queries: Sequence[Any], reward_fn: Callable[[Any, str], float],
                  prompt_of: Callable[[Any], str] = str, n: int = 8, max_new_tokens: int = 128,
                  temperature: float = 1.0, batch_queries: int = 16) -> list[Group]:
    """``n`` rollouts per query and their rewards, one :class:`Group` per query."""
    import torch

    groups = []
    for s in range(0, len(queries), batch_queries):
        qs = list(queries[s:s + batch_queries])
        ro = sample_rollouts(model, tokenizer, [prompt_of(q) for q in qs], n, max_new_tokens, temperature)
        r, _ = score_rollouts(ro, qs, reward_fn)
        for i in range(len(qs)):
            sl = slice(i * n, (i + 1) * n)
            T = int(ro.completion_mask[sl].sum(1).max())
            sub = Rollouts(ro.prompt_ids[sl], ro.prompt_mask[sl], ro.completion_ids[sl, :T],
                           ro.completion_mask[sl, :T], ro.texts[sl], n)
            groups.append(Group(sub, r[i]))
    del torch
    return groups


def rollout_accuracy(model, tokenizer, queries, reward_fn, prompt_of=str, n: int = 16, max_new_tokens: int = 128,
                     temperature: float = 1.0) -> np.ndarray:
    """Per-query rollout accuracy alpha: the mean reward of ``n`` sampled completions (the share with reward 1
    when rewards are binary)."""
    groups = sample_groups(model, tokenizer, queries, reward_fn, prompt_of, n, max_new_tokens, temperature)
    return np.array([g.alpha for g in groups])


def _params(model) -> list:
    return [p for p in model.parameters() if p.requires_grad]


def _flat_grad(model, scalar) -> Any:
    import torch

    ps = _params(model)
    gs = torch.autograd.grad(scalar, ps, allow_unused=True)
    return torch.cat([(g if g is not None else torch.zeros_like(p)).reshape(-1) for g, p in zip(gs, ps)])


def _seq_logp(model, ro: Rollouts, rows, length_norm: bool = True):
    """Per-rollout log pi(o | q) of ``rows`` (length-normalised by default, as GRPO's objective)."""
    lp = completion_logprobs(model, ro.prompt_ids[rows], ro.prompt_mask[rows], ro.completion_ids[rows],
                             ro.completion_mask[rows])
    m = ro.completion_mask[rows].to(lp.dtype)
    s = (lp * m).sum(1)
    return s / m.sum(1).clamp_min(1) if length_norm else s


def mean_score_gradients(model, group: Group) -> tuple[Any, Any]:
    """``(g+, g-)``: mean score gradients over the correct and the failed rollouts of an informative group."""
    import torch

    r = np.asarray(group.rewards)
    if not ((r == 0) | (r == 1)).all():
        raise ValueError("`group.rewards` must be binary (0 / 1) for the influence identity")
    pos, neg = np.flatnonzero(r == 1), np.flatnonzero(r == 0)
    if len(pos) == 0 or len(neg) == 0:
        raise ValueError("the group is not informative (alpha in {0, 1}); g+ and g- need both outcomes")
    out = []
    for rows in (pos, neg):
        idx = torch.as_tensor(rows)
        out.append(_flat_grad(model, _seq_logp(model, group.rollouts, idx).mean()))
    return out[0], out[1]


def grpo_gradient(model, group: Group, advantages=None):
    """Gradient of the GRPO objective of one group at ratio 1 (on-policy), through :func:`grpo_objective`.

    ``advantages`` defaults to the group-normalised ones; pass others to see the identity fail.
    """
    import torch

    ro = group.rollouts
    idx = torch.arange(ro.completion_ids.shape[0])
    adv = group_advantages(group.rewards[None])[0] if advantages is None else torch.as_tensor(advantages)
    lp = completion_logprobs(model, ro.prompt_ids[idx], ro.prompt_mask[idx], ro.completion_ids, ro.completion_mask)
    J = grpo_objective(lp, lp.detach(), adv.to(lp.dtype), ro.completion_mask)
    return _flat_grad(model, J)


def influence_identity_error(model, group: Group, advantages=None) -> dict:
    """Max abs difference between the GRPO gradient and ``sqrt(alpha (1 - alpha)) (g+ - g-)``."""
    g_pos, g_neg = mean_score_gradients(model, group)
    a = group.alpha
    predicted = np.sqrt(a * (1 - a)) * (g_pos - g_neg)
    actual = grpo_gradient(model, group, advantages)
    err = float((actual - predicted).abs().max())
    return {"alpha": a, "max_abs_error": err, "grad_max_abs": float(actual.abs().max()),
            "rel_error": err / max(float(actual.abs().max()), 1e-30)}


def co_influence(model, groups: Sequence[Group]) -> dict:
    """Co-influence between informative queries.

    Returns ``C`` with ``C[i, j] = E_{o'~q_i}[A(q_i, o') (K+ - K-)(q_j)] = <grad J(q_i), g+(q_j) - g-(q_j)>``,
    the gain on query i per unit step along query j's contrast (before the sqrt(alpha) weight); ``mean`` =
    mean off-diagonal entry, ``cosine`` = mean off-diagonal cosine of the contrasts g+ - g-, ``alpha`` of the
    informative groups and ``index`` (their positions in ``groups``).
    """
    import torch

    idx = [i for i, g in enumerate(groups) if 0 < g.alpha < 1]
    if len(idx) < 2:
        return {"C": np.zeros((0, 0)), "mean": float("nan"), "cosine": float("nan"), "alpha": [], "index": idx}
    contrasts, weights = [], []
    for i in idx:
        g_pos, g_neg = mean_score_gradients(model, groups[i])
        contrasts.append(g_pos - g_neg)
        weights.append(np.sqrt(groups[i].alpha * (1 - groups[i].alpha)))
    D = torch.stack(contrasts)  # (k, n_params)
    G = (D @ D.T).double().cpu().numpy()
    w = np.array(weights)
    C = w[:, None] * G  # grad J(q_i) = w_i d_i
    off = ~np.eye(len(idx), dtype=bool)
    norms = np.sqrt(np.diag(G))
    cos = G / np.maximum(np.outer(norms, norms), 1e-30)
    return {"C": C, "mean": float(C[off].mean()), "cosine": float(cos[off].mean()),
            "alpha": [groups[i].alpha for i in idx], "index": idx}


def first_order_check(model, train_groups: Sequence[Group], heldout_groups: Sequence[Group],
                      step_norm: float = 1e-3, central: bool = False) -> dict:
    """Predicted vs measured one-step change of the held-out GRPO surrogate objective.

    For each informative training group q, take the step ``theta + s grad J(q) / ||grad J(q)||`` (s =
    ``step_norm``) and measure the change of each informative held-out group's clipped surrogate
    ``J(q'; theta)`` (fixed rollouts and advantages, pi_old = the current policy); the prediction is
    ``s <grad J(q'), grad J(q)> / ||grad J(q)||``. Returns the pairs and their Pearson r. ``central=True``
    measures ``(J(theta + step) - J(theta - step)) / 2`` instead, which cancels the second-order term.

    Hugging Face Llama computes RMSNorm and RoPE in float32 even for a float64 model, so the objective is
    float32-exact only: steps much below 1e-3 drown in rounding.
    """
    import torch

    if not isinstance(step_norm, numbers.Real) or step_norm <= 0:
        raise ValueError(f"`step_norm` must be > 0, got {step_norm!r}")
    tr = [g for g in train_groups if 0 < g.alpha < 1]
    ho = [g for g in heldout_groups if 0 < g.alpha < 1]
    if not tr or not ho:
        raise ValueError("need at least one informative group (0 < alpha < 1) in both `train_groups` and "
                         "`heldout_groups`")
    ps = _params(model)

    def surrogate(g: Group, old):
        ro = g.rollouts
        lp = completion_logprobs(model, ro.prompt_ids, ro.prompt_mask, ro.completion_ids, ro.completion_mask)
        adv = group_advantages(g.rewards[None])[0].to(lp.dtype)
        return grpo_objective(lp, old, adv, ro.completion_mask)

    with torch.no_grad():
        olds = [completion_logprobs(model, g.rollouts.prompt_ids, g.rollouts.prompt_mask,
                                    g.rollouts.completion_ids, g.rollouts.completion_mask) for g in ho]
        base = [float(surrogate(g, o)) for g, o in zip(ho, olds)]
    u = [_flat_grad(model, surrogate(g, o)) for g, o in zip(ho, olds)]
    predicted, measured = [], []
    for g in tr:
        d = grpo_gradient(model, g)
        step = step_norm * d / d.norm().clamp_min(1e-30)
        with torch.no_grad():
            off = 0
            for p in ps:
                p.add_(step[off:off + p.numel()].view_as(p))
                off += p.numel()
            after = [float(surrogate(h, o)) for h, o in zip(ho, olds)]
            off = 0
            for p in ps:
                p.sub_((2 if central else 1) * step[off:off + p.numel()].view_as(p))
                off += p.numel()
            if central:
                before = [float(surrogate(h, o)) for h, o in zip(ho, olds)]
                off = 0
                for p in ps:
                    p.add_(step[off:off + p.numel()].view_as(p))
                    off += p.numel()
        for j in range(len(ho)):
            predicted.append(float(u[j] @ step))
            measured.append((after[j] - before[j]) / 2 if central else after[j] - base[j])
    pr, me = np.array(predicted), np.array(measured)
    r = float(np.corrcoef(pr, me)[0, 1]) if len(pr) > 2 and pr.std() > 0 and me.std() > 0 else float("nan")
    return {"predicted": pr, "measured": me, "pearson_r": r, "n_pairs": len(pr)}


def rl_readiness(model, tokenizer, queries: Sequence[Any], reward_fn: Callable[[Any, str], float],
                 prompt_of: Callable[[Any], str] = str, n: int = 8, max_new_tokens: int = 128,
                 temperature: float = 1.0, with_co_influence: bool = True) -> dict:
    """The numbers to check before RL on ``queries``, from ``n >= 2`` rollouts per query.

    Returns ``alpha`` (per-query mean reward: the accuracy with binary rewards), ``informativeness`` (mean over
    queries of the population s.d. of the group's rewards, the scale GRPO divides by; with binary rewards it is
    ``sqrt(alpha (1 - alpha))``, peak 0.5), ``frac_reward_zero_std`` (share of groups whose rewards are all
    equal: no GRPO signal, as ``GRPO.step`` reports it), ``mean_accuracy`` and, with ``with_co_influence``, the
    mean co-influence between informative queries. The co-influence rests on the binary identity and is
    refused (ValueError) for rewards other than 0 / 1; pass ``with_co_influence=False`` for graded rewards.
    """
    if len(queries) == 0:
        raise ValueError("`queries` must not be empty")
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 2:
        raise ValueError(f"`n` must be an int >= 2 (rollouts per query: one rollout has no reward spread), got {n!r}")
    groups = sample_groups(model, tokenizer, queries, reward_fn, prompt_of, n, max_new_tokens, temperature)
    alpha = np.array([g.alpha for g in groups])
    spread = np.array([float(np.std(g.rewards)) for g in groups])  # population s.d., as group_advantages
    out = {"alpha": alpha, "informativeness": float(spread.mean()),
           "frac_reward_zero_std": float(np.mean(spread <= 1e-12)), "mean_accuracy": float(alpha.mean())}
    if with_co_influence:
        rewards = np.concatenate([g.rewards for g in groups])
        if not np.isin(rewards, (0.0, 1.0)).all():
            raise ValueError("`reward_fn` returned rewards other than 0 / 1 (e.g. "
                             f"{float(rewards[~np.isin(rewards, (0.0, 1.0))][0])!r}); the co-influence needs binary "
                             "rewards: pass with_co_influence=False for graded rewards")
        ci = co_influence(model, groups)
        out.update(co_influence=ci["mean"], co_influence_cosine=ci["cosine"], n_informative=len(ci["index"]))
    return out
