r"""Lower bounds on the cost-aware risks, two arms and K arms (reconstructed, see docs/dbcare.md).

Misidentification risk, two arms with gap :math:`\Delta`, known :math:`\sigma`, cost :math:`c` per pull:

.. math::

    \mathrm{LB}_{MI}(\Delta) = \begin{cases}
        \frac{\sigma^2 c}{4\Delta^2}\log\frac{e\,\Delta^2}{\sigma^2 c} & \Delta \ge \sigma\sqrt{c} \\
        1/4 & \text{otherwise}
    \end{cases}

continuous at the phase transition :math:`\Delta^* = \sigma\sqrt c`.

Simple-regret risk: with two arms :math:`R_{SR} = \Delta\,P(\hat I \ne 1) + c\,E[\tau]
= \Delta\,(P(\hat I\ne 1) + (c/\Delta) E[\tau])`, i.e. :math:`\Delta` times a misidentification risk at
cost :math:`c/\Delta`, hence :math:`\mathrm{LB}_{SR}(\Delta) = \Delta\,\mathrm{LB}_{MI}(\Delta; c/\Delta)`.
Its phase transition is at :math:`\Delta^* = (\sigma^2 c)^{1/3}`, as in the paper's summary, and unlike the
summary's approximate form it is continuous there (the summary's form drops to 0 at :math:`\Delta^*`).
"""

from __future__ import annotations

import numpy as np

from neurips25.dbcare.bandits import check_means, check_positive


def _gaps(gap) -> np.ndarray:
    g = np.asarray(gap, dtype=float)
    if not np.all(np.isfinite(g)) or np.any(g < 0):
        raise ValueError(f"gap must be finite and >= 0; got {gap!r}")
    return g


def lower_bound_mi(gap, sigma: float = 1.0, cost: float = 1e-4):
    """Two-arm lower bound on ``P(wrong arm) + cost * E[pulls]``.

    Parameters
    ----------
    gap : float or array-like
        Gap between the two arm means (>= 0).
    sigma : float
        Sub-Gaussian parameter of the rewards.
    cost : float
        Cost per pull (> 0).

    Returns
    -------
    float or ndarray, the same shape as ``gap``.

    Examples
    --------
    >>> round(float(lower_bound_mi(0.01, 1.0, 1e-4)), 6)   # exactly at the transition
    0.25
    """
    sigma = check_positive(sigma, "sigma")
    cost = check_positive(cost, "cost")
    out = _lb_mi(_gaps(gap), sigma, cost)
    return float(out) if out.ndim == 0 else out


def _lb_mi(g: np.ndarray, sigma: float, cost) -> np.ndarray:
    """The MI bound without validation; ``cost`` may be an array broadcasting with ``g``."""
    ratio = np.where(g > 0, g**2 / (sigma**2 * cost), 0.0)
    above = np.log(np.e * np.maximum(ratio, 1.0)) / (4 * np.maximum(ratio, 1e-300))
    return np.where(ratio >= 1.0, above, 0.25)


def lower_bound_sr(gap, sigma: float = 1.0, cost: float = 1e-4):
    """Two-arm lower bound on ``E[regret of the recommended arm] + cost * E[pulls]``.

    ``gap * lower_bound_mi(gap, sigma, cost / gap)`` (see the module docstring); 0 for a zero gap.

    Examples
    --------
    >>> d = (1e-4) ** (1 / 3)                 # the SR phase transition for sigma=1, c=1e-4
    >>> round(float(lower_bound_sr(d, 1.0, 1e-4)) / d, 6)
    0.25
    """
    sigma = check_positive(sigma, "sigma")
    cost = check_positive(cost, "cost")
    g = _gaps(gap)
    safe = np.where(g > 0, g, 1.0)
    out = np.where(g > 0, safe * _lb_mi(safe, sigma, cost / safe), 0.0)
    return float(out) if out.ndim == 0 else out


def worst_case_lower_bound_sr(sigma: float = 1.0, cost: float = 1e-4) -> float:
    """``max over gaps`` of :func:`lower_bound_sr`: ``(3/8) e^{-1/3} (sigma^2 c)^{1/3}`` (about 0.27 (σ²c)^{1/3})."""
    sigma = check_positive(sigma, "sigma")
    cost = check_positive(cost, "cost")
    return 0.375 * np.exp(-1 / 3) * (sigma**2 * cost) ** (1 / 3)


# ----- K arms (reconstructed: the paper states its K-arm bounds in terms of H = sum_k 1/gap_k^2 with a
# phase transition per arm; the exact form was not available, this one reduces to the two-arm bounds) ---
def _k_arm_gaps(means) -> np.ndarray:
    mu = check_means(means)
    return np.sort(mu.max() - mu)[1:]  # the K - 1 gaps of the arms other than (one) best arm


def complexity_h(means, sigma: float = 1.0) -> float:
    r"""Problem complexity :math:`H = \sum_{k \ne 1} \sigma^2 / \Delta_k^2` (``inf`` with a tie for best).

    Examples
    --------
    >>> complexity_h([0.0, -0.5, -1.0])
    5.0
    """
    sigma = check_positive(sigma, "sigma")
    g = _k_arm_gaps(means)
    with np.errstate(divide="ignore"):
        return float(np.sum(sigma**2 / g**2))


def _give_up_min(g: np.ndarray, resolvable: np.ndarray, term: np.ndarray, left_penalty) -> float:
    """``min_j`` over resolving the ``j`` easiest resolvable arms (largest gaps) and giving up on the rest."""
    order = np.argsort(-g, kind="stable")
    g, resolvable, term = g[order], resolvable[order], term[order]
    n_res = int(resolvable.sum())  # resolvable arms come first (larger gaps)
    best = np.inf
    for j in range(n_res + 1):
        best = min(best, float(term[:j].sum() + left_penalty(g[j:])))
    return best


def k_arm_lower_bound_mi(means, sigma: float = 1.0, cost: float = 1e-4) -> float:
    r"""K-arm lower bound on the misidentification risk (reconstructed).

    Resolving a suboptimal arm with :math:`\Delta_k \ge \sigma\sqrt c` costs at least its two-arm
    bound :math:`b_k = \frac{\sigma^2 c}{4\Delta_k^2}\log\frac{e\Delta_k^2}{\sigma^2 c}` (in total about
    :math:`\frac{c}{4}H\log(\cdot)`, :math:`H = \sum_k \sigma^2/\Delta_k^2`); giving up on a set
    :math:`G` of :math:`m` arms (forced for arms below the transition) leaves at least half the error of
    guessing among them and the best arm, :math:`\frac{m}{2(m+1)}`. A learner gives up on the hardest
    arms, so

    .. math::
        \mathrm{LB}^K_{MI} = \min_{G \supseteq \{k:\Delta_k<\sigma\sqrt c\}}
        \sum_{k \notin G} b_k + \frac{|G|}{2(|G|+1)},

    with :math:`G` ranging over the sets of the smallest gaps. With two arms it is
    :func:`lower_bound_mi`; it never exceeds half the risk of guessing, :math:`(K-1)/(2K)`.

    Examples
    --------
    >>> float(k_arm_lower_bound_mi([0.0, -0.3], 1.0, 1e-4)) == lower_bound_mi(0.3, 1.0, 1e-4)
    True
    """
    sigma, cost = check_positive(sigma, "sigma"), check_positive(cost, "cost")
    g = _k_arm_gaps(means)
    resolvable = g >= sigma * np.sqrt(cost)
    term = np.where(resolvable, _lb_mi(np.maximum(g, 1e-300), sigma, cost), np.inf)
    return _give_up_min(g, resolvable, term, lambda left: left.size / (2 * (left.size + 1)))


def k_arm_lower_bound_sr(means, sigma: float = 1.0, cost: float = 1e-4) -> float:
    r"""K-arm lower bound on the simple-regret risk (reconstructed): the SR analogue of
    :func:`k_arm_lower_bound_mi`, with the transition at :math:`(\sigma^2 c)^{1/3}`, the per-arm cost
    :math:`b_k = \frac{\sigma^2 c}{4\Delta_k^2}\log\frac{e\Delta_k^3}{\sigma^2 c}` and, for the given-up
    set :math:`G`, half the regret of guessing among it and the best arm,
    :math:`\sum_{k\in G}\Delta_k / (2(|G|+1))`. With two arms it is :func:`lower_bound_sr`.

    Examples
    --------
    >>> round(k_arm_lower_bound_sr([0.0, -0.3], 1.0, 1e-4) / lower_bound_sr(0.3, 1.0, 1e-4), 12)
    1.0
    """
    sigma, cost = check_positive(sigma, "sigma"), check_positive(cost, "cost")
    g = _k_arm_gaps(means)
    resolvable = g >= (sigma**2 * cost) ** (1 / 3)
    safe = np.maximum(g, 1e-300)
    term = np.where(resolvable, safe * _lb_mi(safe, sigma, cost / safe), np.inf)
    return _give_up_min(g, resolvable, term, lambda left: left.sum() / (2 * (left.size + 1)))
