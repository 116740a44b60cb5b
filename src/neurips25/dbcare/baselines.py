"""Baselines from the fixed-budget and fixed-confidence paradigms, plus the two references.

- :class:`UniformFixedBudget` - total budget ``T`` split evenly, recommend the empirical best.
- :class:`SequentialHalving` - Karnin, Koren & Somekh (2013): ``ceil(log2 K)`` phases, halve survivors.
- :class:`SuccessiveElimination` - Even-Dar, Mannor & Mansour (2006), confidence ``delta``.
- :class:`LUCB` - LUCB1 of Kalyanakrishnan et al. (2012), confidence ``delta``.
- :class:`TrackAndStop` - Garivier & Kaufmann (2016), Gaussian model, D-tracking, GLR stopping with
  ``beta(t) = log((1 + log t) / delta)``.
- :class:`Guess` - no pull, a uniformly random recommendation.
- :class:`OracleFixedBudget` - knows the means and picks the per-arm budget minimising the risk.

Fixed-confidence methods never stop on a tiny gap, so each takes ``max_pulls`` (default 1e6) and the
simulator reports how often it was hit. With two arms, LUCB and Track-and-Stop pull both arms every
round (LUCB's best and challenger are the two arms; with equal variances the optimal allocation is
1/2-1/2), so they run on the fast round-robin engine; with more arms they run step by step.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import norm

from neurips25.dbcare.bandits import check_int, check_positive, check_real
from neurips25.dbcare.round_robin import RoundRobinPolicy


def _check_delta(delta) -> float:
    d = check_real(delta, "delta")
    if not 0 < d < 1:
        raise ValueError(f"delta must lie in (0, 1); got {delta!r}")
    return d


def _check_cap(max_pulls) -> float:
    m = float(_scalar_or_inf(max_pulls))
    if not m >= 2:
        raise ValueError(f"max_pulls must be >= 2; got {max_pulls!r}")
    return m


def _check_lazy(lazy) -> float:
    v = check_real(lazy, "lazy")
    if not 0 <= v < 1:
        raise ValueError(f"lazy must lie in [0, 1); got {lazy!r}")
    return v


def _batch(lazy: float, t: np.ndarray, max_pulls: float, per: int = 1) -> np.ndarray:
    """Pulls per decision (per arm of the decision): ``max(1, floor(lazy t))``, kept within the cap."""
    m = np.maximum(1, np.floor(lazy * t)).astype(np.int64)
    if np.isfinite(max_pulls):
        m = np.minimum(m, np.maximum(1, (max_pulls - t) // per).astype(np.int64))
    return m


def _scalar_or_inf(value):
    if isinstance(value, float) and value == np.inf:
        return value
    return check_real(value, "max_pulls")


class UniformFixedBudget(RoundRobinPolicy):
    """Spend a total budget ``T`` evenly (``T // K`` pulls per arm), recommend the empirical best."""

    def __init__(self, T: int):
        self.T = check_int(T, "T", 2)

    def __repr__(self) -> str:
        return f"UniformFixedBudget(T={self.T})"

    def per_arm(self, n_arms: int) -> int:
        if self.T < n_arms:
            raise ValueError(f"T={self.T} is below one pull per arm for {n_arms} arms")
        return self.T // n_arms

    def prepare(self, bandit) -> None:
        self.per_arm(bandit.n_arms)

    def stop(self, n, means, alive):
        return np.broadcast_to(n >= self.per_arm(alive.shape[1]), (alive.shape[0], np.shape(n)[1])).copy()

    def two_arm_threshold(self, n):
        return np.full(n.shape, np.inf)

    def two_arm_rounds(self):
        return float(self.per_arm(2))

    def max_rounds(self, n_arms: int) -> float:
        return float(self.per_arm(n_arms))


class SequentialHalving(RoundRobinPolicy):
    """Sequential halving with total budget ``T`` (Karnin et al., 2013)."""

    def __init__(self, T: int):
        self.T = check_int(T, "T", 2)

    def __repr__(self) -> str:
        return f"SequentialHalving(T={self.T})"

    def boundaries(self, n_arms: int) -> list[int]:
        """Per-arm pull counts at the end of each phase."""
        phases = max(1, math.ceil(math.log2(n_arms)))
        out, k, total = [], n_arms, 0
        for _ in range(phases):
            t = self.T // (k * phases)
            if t < 1:
                raise ValueError(f"T={self.T} is too small for sequential halving on {n_arms} arms")
            total += t
            out.append(total)
            k = math.ceil(k / 2)
        return out

    def prepare(self, bandit) -> None:
        self.boundaries(bandit.n_arms)

    def eliminate(self, n, means, alive):
        K = alive.shape[1]
        bounds = self.boundaries(K)
        n_b = np.broadcast_to(n, (alive.shape[0], np.shape(n)[1]))
        at = np.isin(n_b, bounds)  # [R, B]
        order = np.argsort(-means, axis=1, kind="stable")  # survivors first, best first
        position = np.argsort(order, axis=1, kind="stable")  # rank of each arm
        keep = np.ceil(alive.sum(axis=1) / 2)[:, None, None]
        return alive[:, :, None] & at[:, None, :] & (position >= keep)

    def stop(self, n, means, alive):
        last = self.boundaries(alive.shape[1])[-1]
        return np.broadcast_to(n >= last, (alive.shape[0], np.shape(n)[1])).copy()

    def two_arm_threshold(self, n):
        return np.full(n.shape, np.inf)

    def two_arm_rounds(self):
        return float(self.boundaries(2)[-1])

    def max_rounds(self, n_arms: int) -> float:
        return float(self.boundaries(n_arms)[-1])


class SuccessiveElimination(RoundRobinPolicy):
    """Successive elimination at confidence ``delta``: drop arms ``2 r_n`` below the leader,
    ``r_n = sigma sqrt(2 log(4 K n^2 / delta) / n)``."""

    def __init__(self, delta: float = 0.1, sigma: float = 1.0, max_pulls: float = 1e6):
        self.delta = _check_delta(delta)
        self.sigma = check_positive(sigma, "sigma")
        self.max_pulls = _check_cap(max_pulls)

    def __repr__(self) -> str:
        return f"SuccessiveElimination(delta={self.delta:g})"

    def eliminate(self, n, means, alive):
        K = alive.shape[1]
        r = self.sigma * np.sqrt(2.0 * np.log(4.0 * K * n.astype(float) ** 2 / self.delta) / n)
        r = np.broadcast_to(r, (alive.shape[0], np.shape(n)[1]))
        best = means.max(axis=1, keepdims=True)
        return alive[:, :, None] & (best - means > 2 * r[:, None, :])

    def stop(self, n, means, alive):
        k = alive.sum(axis=1)[:, None]
        return np.broadcast_to(k == 1, (alive.shape[0], np.shape(n)[1])).copy()

    def two_arm_threshold(self, n):
        return 2 * self.sigma * np.sqrt(2.0 * np.log(8.0 * n.astype(float) ** 2 / self.delta) / n)


class _AdaptiveMixin:
    """Step-by-step policies: ``select(counts, sums, t) -> arms [R, q]`` and ``done(counts, sums, t)``.

    With two arms they are round-robin policies; with more, the episode interface below asks for the
    arms ``select`` picks (after one initial pull of every arm) and stops when ``done`` says so or at
    ``max_pulls``: the same steps as the vectorised step engine (``simulate.run_adaptive``).
    """

    def round_robin(self, n_arms: int) -> bool:
        return n_arms == 2

    def reset(self, n_arms: int):
        super().reset(n_arms)
        self._stepwise = not self.round_robin(self._alive.size)
        return self

    def _next_arms(self) -> list[int]:
        if not self._stepwise:
            return super()._next_arms()
        if self._counts.min() == 0:  # the initial pull of every arm
            return np.flatnonzero(self._counts == 0).tolist()
        t = np.array([float(self._counts.sum())])
        return self.select(self._counts[None], self._sums[None], t)[0].tolist()

    def _end_request(self) -> None:
        if not self._stepwise:
            return super()._end_request()
        self._round += 1
        if self._counts.min() == 0:
            return
        t = float(self._counts.sum())
        done = bool(self.done(self._counts[None], self._sums[None], np.array([t]))[0])
        if done or t >= self.max_pulls:
            self._stopped = True
            self._check_rewards_sigma(on_data=done)


class LUCB(_AdaptiveMixin, RoundRobinPolicy):
    """LUCB1 at confidence ``delta``: pull the empirical best and its strongest challenger; stop when
    the best's lower bound clears every upper bound. ``beta(u, t) = sigma sqrt(2 log(5 K t^4/(4 delta)) / u)``.

    ``lazy > 0`` (K > 2 only) repeats each decision ``max(1, floor(lazy * t))`` times before the next
    one and the stopping test (a simulation shortcut: about ``log(cap)/lazy`` decisions instead of one
    per pull); ``lazy = 0`` (default) is the textbook algorithm.
    """

    def __init__(self, delta: float = 0.1, sigma: float = 1.0, max_pulls: float = 1e6, lazy: float = 0.0):
        self.delta = _check_delta(delta)
        self.sigma = check_positive(sigma, "sigma")
        self.max_pulls = _check_cap(max_pulls)
        self.lazy = _check_lazy(lazy)

    def __repr__(self) -> str:
        return f"LUCB(delta={self.delta:g})"

    def _beta(self, counts, t, K):
        return self.sigma * np.sqrt(2.0 * np.log(5.0 * K * t**4 / (4.0 * self.delta)) / counts)

    # two arms: both are pulled every round (round-robin engine); t = total pulls = 2 n, as with K arms
    def stop(self, n, means, alive):
        K = alive.shape[1]
        beta = self._beta(n.astype(float), K * n.astype(float), K)
        srt = np.sort(means, axis=1)
        return (srt[:, -1, :] - beta) > (srt[:, -2, :] + beta)

    def two_arm_threshold(self, n):
        n = n.astype(float)
        return 2 * self._beta(n, 2 * n, 2)

    # more arms: step engine
    def _bounds(self, counts, sums, t):
        mu = sums / counts
        b = self._beta(counts, t[:, None], counts.shape[1])
        return mu, mu - b, mu + b

    def select(self, counts, sums, t):
        mu, _, ucb = self._bounds(counts, sums, t)
        h = np.argmax(mu, axis=1)
        ucb = ucb.copy()
        ucb[np.arange(len(h)), h] = -np.inf
        pair = np.stack([h, np.argmax(ucb, axis=1)], axis=1)  # [R, 2]
        m = _batch(self.lazy, t, self.max_pulls, per=2)
        if m.max() == 1:
            return pair
        j = np.arange(m.max())[None, :, None]
        return np.where(j < m[:, None, None], pair[:, None, :], -1).reshape(len(h), -1)

    def done(self, counts, sums, t):
        mu, lcb, ucb = self._bounds(counts, sums, t)
        h = np.argmax(mu, axis=1)
        ucb = ucb.copy()
        ucb[np.arange(len(h)), h] = -np.inf
        return lcb[np.arange(len(h)), h] > ucb.max(axis=1)


class TrackAndStop(_AdaptiveMixin, RoundRobinPolicy):
    """Track-and-Stop (Gaussian model) at confidence ``delta`` with D-tracking and GLR stopping.

    ``lazy > 0`` (K > 2 only) keeps the optimal weights for ``m = max(1, floor(lazy * t))`` pulls,
    shared out by the tracking deficits ``(t + m - 1) w - N``, before recomputing them and the
    stopping test (a simulation shortcut); ``lazy = 0`` (default) decides every pull.
    """

    def __init__(self, delta: float = 0.1, sigma: float = 1.0, max_pulls: float = 1e6, lazy: float = 0.0):
        self.delta = _check_delta(delta)
        self.sigma = check_positive(sigma, "sigma")
        self.max_pulls = _check_cap(max_pulls)
        self.lazy = _check_lazy(lazy)

    def __repr__(self) -> str:
        return f"TrackAndStop(delta={self.delta:g})"

    def _beta(self, t):
        return np.log((1.0 + np.log(t)) / self.delta)

    # two arms, equal variance: optimal weights are 1/2-1/2, both arms every round
    def stop(self, n, means, alive):
        srt = np.sort(means, axis=1)
        gap = srt[:, -1, :] - srt[:, -2, :]
        glr = n * gap**2 / (4.0 * self.sigma**2)  # N1 N2/(N1+N2) * gap^2/(2 sigma^2), N1 = N2 = n
        return glr > self._beta(2.0 * n)

    def two_arm_threshold(self, n):
        n = n.astype(float)
        return np.sqrt(4.0 * self.sigma**2 * self._beta(2.0 * n) / n)

    def optimal_weights(self, mu: np.ndarray) -> np.ndarray:
        """Gaussian optimal allocation ``w*(mu)`` per row (Garivier & Kaufmann 2016, Thm. 5), by bisection."""
        R, K = mu.shape
        best = np.argmax(mu, axis=1)
        gaps = mu[np.arange(R), best][:, None] - mu
        gaps[np.arange(R), best] = np.inf
        gaps = np.maximum(gaps, 1e-12)
        c = gaps**2 / (2 * self.sigma**2)  # g_a(x) = c_a x / (1 + x); c = inf for the best arm, so x_best = 0
        lo, hi = np.zeros(R), c.min(axis=1)
        for _ in range(26):  # F(y) = sum_a x_a(y)^2 is increasing in y; solve F(y) = 1 (to ~1e-8 relative)
            y = 0.5 * (lo + hi)
            x = y[:, None] / np.maximum(c - y[:, None], 1e-300)
            big = np.einsum("rk,rk->r", x, x) > 1
            hi, lo = np.where(big, y, hi), np.where(big, lo, y)
        x = y[:, None] / np.maximum(c - y[:, None], 1e-300)
        x[np.arange(R), best] = 1.0
        return x / x.sum(axis=1, keepdims=True)

    def select(self, counts, sums, t):
        K = counts.shape[1]
        starving = counts.min(axis=1) < np.sqrt(t) - K / 2  # forced exploration
        w = self.optimal_weights(sums / counts)
        m = np.where(starving, 1, _batch(self.lazy, t, self.max_pulls))
        if m.max() == 1:
            track = np.argmax(t[:, None] * w - counts, axis=1)
            return np.where(starving, np.argmin(counts, axis=1), track)[:, None]
        # share m pulls by the tracking deficits; the remainder goes to the largest leftover deficit
        deficit = np.maximum((t + m - 1)[:, None] * w - counts, 0.0)
        alloc = np.floor(m[:, None] * deficit / np.maximum(deficit.sum(axis=1, keepdims=True), 1e-300))
        rest = m - alloc.sum(axis=1)
        alloc[np.arange(len(m)), np.argmax(deficit - alloc, axis=1)] += rest
        alloc[starving] = 0
        alloc[starving, np.argmin(counts[starving], axis=1)] = 1
        cum = np.cumsum(alloc, axis=1)  # pull j of a row goes to the first arm whose cumulative share exceeds j
        j = np.arange(m.max())[None, :, None]
        arms = (j >= cum[:, None, :]).sum(axis=2)
        return np.where(j[:, :, 0] < m[:, None], arms, -1)

    def done(self, counts, sums, t):
        mu = sums / counts
        R = len(mu)
        h = np.argmax(mu, axis=1)
        nh, mh = counts[np.arange(R), h][:, None], mu[np.arange(R), h][:, None]
        z = nh * counts / (nh + counts) * (mh - mu) ** 2 / (2 * self.sigma**2)
        z[np.arange(R), h] = np.inf
        return z.min(axis=1) > self._beta(t)


class Guess(RoundRobinPolicy):
    """Recommend a uniformly random arm without pulling anything."""

    def __repr__(self) -> str:
        return "Guess()"

    def pulls_nothing(self, n_arms: int) -> bool:
        return True

    def stop(self, n, means, alive):
        return np.ones((alive.shape[0], np.shape(n)[1]), dtype=bool)


class OracleFixedBudget(RoundRobinPolicy):
    """Knows the means; pulls every arm ``n*`` times, ``n*`` minimising the (Gaussian-approximate) risk.

    ``P(error | n) ~ sum_k Phi(-gap_k sqrt(n / 2) / sigma)``; ``n* = 0`` means guessing is best.
    """

    def __init__(self, cost: float, sigma: float = 1.0, risk: str = "mi", n_max: int = 10**7):
        self.cost = check_positive(cost, "cost")
        self.sigma = check_positive(sigma, "sigma")
        if risk not in ("mi", "sr"):
            raise ValueError(f"risk must be 'mi' or 'sr'; got {risk!r}")
        self.risk, self.n_max = risk, int(n_max)
        self.n_star: int | None = None

    def __repr__(self) -> str:
        return f"OracleFixedBudget(risk={self.risk!r})"

    def prepare(self, bandit) -> None:
        mu = np.asarray(bandit.means, dtype=float)
        K = mu.size
        gaps = np.sort(mu.max() - mu)[1:]
        n = np.unique(np.round(np.logspace(0, np.log10(self.n_max), 4000)).astype(int))
        err = norm.cdf(-gaps[None, :] * np.sqrt(n[:, None] / 2.0) / self.sigma)
        pen = (err if self.risk == "mi" else err * gaps[None, :]).sum(axis=1)
        risk = np.minimum(pen, 1.0 if self.risk == "mi" else np.inf) + self.cost * K * n
        guess = (K - 1) / K if self.risk == "mi" else gaps.sum() / K
        self.n_star = 0 if guess <= risk.min() else int(n[np.argmin(risk)])

    def pulls_nothing(self, n_arms: int) -> bool:
        if self.n_star is None:
            raise RuntimeError("OracleFixedBudget needs prepare(bandit) to see the means")
        return self.n_star == 0

    def stop(self, n, means, alive):
        return np.broadcast_to(n >= self.n_star, (alive.shape[0], np.shape(n)[1])).copy()

    def two_arm_threshold(self, n):
        return np.full(n.shape, np.inf)

    def two_arm_rounds(self):
        return float(self.n_star)
