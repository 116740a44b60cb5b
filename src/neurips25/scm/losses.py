"""The SCM training objective: two cross-entropies and the logic-consistency term.

``L = alpha * CE_token + (1 - alpha) * CE_response + gamma * L_logic`` with the soft implication
"response harmful => some token harmful" acting on the *predictions* (not on labels):
``p_r = softmax(f)[1]``, ``m = reduce_t softmax(g_t)[1]`` over valid tokens and
``L_logic = -log(max(1e-8, 1 - p_r + p_r * m))`` (official code, ``utils/logic_consistency_loss.py``).
"""

from __future__ import annotations

import numbers

import torch
import torch.nn.functional as F

REDUCTIONS = ("max", "mean", "min")
IGNORE_INDEX = -100


def _check_logits(name: str, x, ndim: int) -> None:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"`{name}` must be a torch.Tensor; got {type(x).__name__}")
    if x.ndim != ndim or x.shape[-1] != 2:
        want = "(batch, 2)" if ndim == 2 else "(batch, seq, 2)"
        raise ValueError(f"`{name}` must have shape {want}; got {tuple(x.shape)}")
    if not torch.isfinite(x).all():
        raise ValueError(f"`{name}` contains NaN or inf")


def logic_consistency_loss(response_logits: torch.Tensor, token_logits: torch.Tensor,
                           mask: torch.Tensor, reduce: str = "max") -> torch.Tensor:
    """Soft implication loss ``-log(1 - p_r + p_r * m)``, averaged over the batch.

    Parameters
    ----------
    response_logits : Tensor (batch, 2)
        Response-head logits f(h_last).
    token_logits : Tensor (batch, seq, 2)
        Token-head logits g(h_t).
    mask : Tensor (batch, seq), bool or {0, 1}
        Which positions count (response tokens); rows with no valid token contribute ``m = 0``.
    reduce : {"max", "mean", "min"}
        How token probabilities are pooled into ``m``.

    Examples
    --------
    >>> r = torch.tensor([[0.0, 0.0]]); t = torch.tensor([[[0.0, 0.0], [0.0, 10.0]]])
    >>> round(float(logic_consistency_loss(r, t, torch.ones(1, 2))), 4)  # p_r=.5, m~1: no penalty
    0.0
    """
    _check_logits("response_logits", response_logits, 2)
    _check_logits("token_logits", token_logits, 3)
    if not isinstance(mask, torch.Tensor) or mask.shape != token_logits.shape[:2]:
        got = tuple(mask.shape) if isinstance(mask, torch.Tensor) else type(mask).__name__
        raise ValueError(f"`mask` must be a tensor of shape {tuple(token_logits.shape[:2])} (batch, seq); got {got}")
    if response_logits.shape[0] != token_logits.shape[0]:
        raise ValueError(f"`response_logits` has batch {response_logits.shape[0]} but `token_logits` has "
                         f"{token_logits.shape[0]}")
    if reduce not in REDUCTIONS:
        raise ValueError(f"`reduce` must be one of {REDUCTIONS}; got {reduce!r}")
    m_ = mask.to(token_logits.dtype)
    p_r = response_logits.softmax(-1)[:, 1]
    p_t = token_logits.softmax(-1)[..., 1] * m_  # masked positions -> 0, as in the official code
    if reduce == "max":
        m = p_t.max(dim=1).values
    elif reduce == "mean":
        m = p_t.sum(1) / m_.sum(1).clamp_min(1.0)
    else:  # min over valid positions only
        m = torch.where(m_ > 0, p_t, torch.ones_like(p_t)).min(dim=1).values
        m = torch.where(m_.sum(1) > 0, m, torch.zeros_like(m))
    return -torch.log(torch.clamp(1 - p_r + p_r * m, min=1e-8)).mean()


def scm_loss(token_logits: torch.Tensor, response_logits: torch.Tensor, token_labels: torch.Tensor | None,
             response_labels: torch.Tensor | None, mask: torch.Tensor, alpha: float = 0.5, gamma: float = 1.0,
             reduce: str = "max") -> tuple[torch.Tensor, dict[str, float]]:
    """``alpha CE_token + (1 - alpha) CE_response + gamma L_logic``; returns (loss, its parts as floats).

    ``token_labels`` (batch, seq) use -100 for ignored positions (prompt, non-first sub-tokens, padding);
    a term whose labels are ``None`` or whose weight is 0 is skipped.
    """
    if not isinstance(alpha, numbers.Real) or not 0.0 <= float(alpha) <= 1.0:
        raise ValueError(f"`alpha` must be in [0, 1]; got {alpha!r}")
    if not isinstance(gamma, numbers.Real) or float(gamma) < 0:
        raise ValueError(f"`gamma` must be >= 0; got {gamma!r}")
    alpha, gamma = float(alpha), float(gamma)
    zero = token_logits.new_zeros(())
    ce_t = ce_r = logic = zero
    if token_labels is not None and alpha > 0:
        if token_labels.shape != token_logits.shape[:2]:
            raise ValueError(f"`token_labels` must have shape {tuple(token_logits.shape[:2])} (batch, seq); "
                             f"got {tuple(token_labels.shape)}")
        if (token_labels != IGNORE_INDEX).any():
            ce_t = F.cross_entropy(token_logits.reshape(-1, 2), token_labels.reshape(-1).long(),
                                   ignore_index=IGNORE_INDEX)
    if response_labels is not None and alpha < 1:
        if response_labels.shape != response_logits.shape[:1]:
            raise ValueError(f"`response_labels` must have shape ({response_logits.shape[0]},); "
                             f"got {tuple(response_labels.shape)}")
        ce_r = F.cross_entropy(response_logits, response_labels.long())
    if gamma > 0:
        logic = logic_consistency_loss(response_logits, token_logits, mask, reduce)
    parts = {"ce_token": float(ce_t.detach()), "ce_response": float(ce_r.detach()), "logic": float(logic.detach())}
    return alpha * ce_t + (1 - alpha) * ce_r + gamma * logic, parts
