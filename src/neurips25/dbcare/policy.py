r"""DBCARE: a dynamically budgeted elimination race for cost-aware best-arm identification.

Harding & Kandasamy, "Balancing Performance and Costs in Best Arm Identification", NeurIPS 2025
(arXiv 2505.20583). The learner pays ``cost`` per pull and, when it stops, a penalty for the
recommended arm: the probability of misidentification (``risk="mi"``) or the simple regret
(``risk="sr"``). It minimises ``penalty + cost * E[pulls]``, with no budget and no confidence level.

The algorithm (reconstructed from public summaries; see docs/dbcare.md):

1. every surviving arm is pulled once per round, so each has ``n`` pulls after round ``n``;
2. an arm is eliminated when :math:`\max_l \hat\mu_l - \hat\mu_k > e(n, k)` (``k`` survivors);
3. the race stops once ``n`` reaches the survivor-dependent budget :math:`N^*(k)`:
   :math:`N^*_{MI}(k) = 1/(k e c)`, :math:`N^*_{SR}(k) = \frac{3}{2e}\sigma^{2/3}((k-1)c)^{-2/3}`;
   eliminating an arm raises the cap (fewer survivors, more samples each);
4. it recommends the empirical best survivor.

The confidence radius ``e(n, k)`` is pluggable (``radius=``); the defaults tie its failure level to
the cost:
:math:`e_{MI} = \sigma\sqrt{(4/n)\log\max(e, 1/(k c n))}`,
:math:`e_{SR} = \sigma\sqrt{(4/n)\log\max(e, \sigma/((k-1) c n^{3/2}))}`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from neurips25.dbcare.bandits import check_positive
from neurips25.dbcare.round_robin import RoundRobinPolicy

Radius = Callable[[np.ndarray, np.ndarray, float, float], np.ndarray]


def radius_mi(n: np.ndarray, k: np.ndarray, sigma: float, cost: float) -> np.ndarray:
    """Default MI confidence radius ``sigma * sqrt((4/n) log max(e, 1/(k c n)))`` (reconstructed)."""
    return sigma * np.sqrt(4.0 / n * np.log(np.maximum(np.e, 1.0 / (k * cost * n))))


def radius_sr(n: np.ndarray, k: np.ndarray, sigma: float, cost: float) -> np.ndarray:
    """Default SR confidence radius ``sigma * sqrt((4/n) log max(e, sigma/((k-1) c n^1.5)))`` (reconstructed)."""
    km1 = np.maximum(k - 1, 1)
    return sigma * np.sqrt(4.0 / n * np.log(np.maximum(np.e, sigma / (km1 * cost * n**1.5))))


class DBCARE(RoundRobinPolicy):
    """Dynamically budgeted elimination for cost-aware best-arm identification.

    Parameters
    ----------
    cost : float
        Cost paid per pull, > 0.
    sigma : float, default 1.0
        Known sub-Gaussian parameter of the rewards (0.5 for Bernoulli rewards).
    risk : {"mi", "sr"}, default "mi"
        Penalty the budget is tuned for: misidentification probability or simple regret.
    radius : callable, optional
        ``radius(n, k, sigma, cost) -> e`` with ``n`` pulls per survivor and ``k`` survivors
        (float arrays that broadcast); it must return an array of their broadcast shape, without
        NaN and >= 0 (``inf`` = never eliminate), else a ``ValueError`` is raised. Defaults to
        :func:`radius_mi` / :func:`radius_sr`.
    budget : callable, optional
        ``budget(k) -> N*(k)``, the per-arm round cap with ``k`` survivors (same shape as ``k``);
        defaults to the formulas in the module docstring.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> policy = DBCARE(cost=1e-3, sigma=1.0).reset(n_arms=2)
    >>> while not policy.should_stop():
    ...     for arm in policy.select_arms():
    ...         policy.update(arm, rng.normal([0.0, 1.0][arm], 1.0))
    >>> policy.recommend()
    1
    """

    def __init__(self, cost: float, sigma: float = 1.0, risk: str = "mi", radius: Radius | None = None,
                 budget: Callable[[np.ndarray], np.ndarray] | None = None):
        self.cost = check_positive(cost, "cost")
        self.sigma = check_positive(sigma, "sigma")
        if not isinstance(risk, str) or risk not in ("mi", "sr"):
            raise ValueError(f"risk must be 'mi' or 'sr'; got {risk!r}")
        self.risk = risk
        if radius is not None and not callable(radius):
            raise TypeError(f"radius must be callable(n, k, sigma, cost); got {type(radius).__name__}")
        if budget is not None and not callable(budget):
            raise TypeError(f"budget must be callable(k); got {type(budget).__name__}")
        self.radius = radius or (radius_mi if risk == "mi" else radius_sr)
        self._budget = budget

    def __repr__(self) -> str:
        return f"DBCARE(cost={self.cost:g}, sigma={self.sigma:g}, risk={self.risk!r})"

    def budget(self, k) -> np.ndarray:
        """Per-arm round cap ``N*(k)`` with ``k`` surviving arms (array-friendly)."""
        k = np.asarray(k, dtype=float)
        if self._budget is not None:
            out = _checked(self._budget, (k,), k.shape, "budget(k)")
            return out
        if self.risk == "mi":
            return 1.0 / (k * np.e * self.cost)
        with np.errstate(divide="ignore"):
            return 1.5 / np.e * self.sigma ** (2 / 3) * ((k - 1) * self.cost) ** (-2 / 3)

    def confidence_radius(self, n, k) -> np.ndarray:
        """The confidence radius ``e(n, k)``, validated: shape of ``broadcast(n, k)``, no NaN, >= 0."""
        n, k = np.asarray(n, dtype=float), np.asarray(k, dtype=float)
        shape = np.broadcast_shapes(n.shape, k.shape)
        return _checked(self.radius, (n, k, self.sigma, self.cost), shape, "radius(n, k, sigma, cost)")

    def pulls_nothing(self, n_arms: int) -> bool:
        # a budget below one round: guessing is cheaper than a single round of pulls
        return bool(self.budget(n_arms) < 1)

    def eliminate(self, n, means, alive):
        k = alive.sum(axis=1)[:, None]  # [R, 1]
        e = self.confidence_radius(n, k)  # [R, B]
        best = means.max(axis=1, keepdims=True)
        return alive[:, :, None] & (best - means > e[:, None, :])

    def stop(self, n, means, alive):
        k = alive.sum(axis=1)[:, None]
        return (n >= self.budget(k)) | (k == 1)

    def two_arm_threshold(self, n):
        return self.confidence_radius(n, np.full(np.shape(n), 2.0))

    def two_arm_rounds(self):
        return float(self.budget(2))

    def max_rounds(self, n_arms: int) -> float:
        # the race stops at the first n >= N*(k); k only falls, so no run outlasts max_k N*(k)
        caps = self.budget(np.arange(2, int(n_arms) + 1))
        return float(max(1.0, np.ceil(caps.max())))


def _checked(fn, args, shape, what: str) -> np.ndarray:
    """Call a user callable and check its output: numeric, of ``shape``, no NaN, >= 0."""
    try:
        out = np.asarray(fn(*args), dtype=float)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{what} must return an array of numbers of shape {shape}; calling it failed: {err}") from err
    if out.shape != tuple(shape):
        raise ValueError(f"{what} must return an array of shape {tuple(shape)} (the broadcast shape of its "
                         f"array arguments); got shape {out.shape}")
    if np.isnan(out).any():
        raise ValueError(f"{what} returned NaN")
    if (out < 0).any():
        raise ValueError(f"{what} must be >= 0; got min {out.min():g}")
    return out
