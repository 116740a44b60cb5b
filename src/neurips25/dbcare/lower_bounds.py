r"""Lower bounds on the cost-aware risks for two arms (reconstructed, see docs/dbcare.md).

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

from neurips25.dbcare.bandits import check_positive


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
