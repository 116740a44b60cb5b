"""Stochastic K-armed bandit environments and the common-random-number reward table.

Every policy in a comparison reads its rewards from a :class:`RewardTable`: the reward of arm ``k``
at its ``j``-th pull in replication ``r`` is a fixed number drawn once from the seed. Two policies
run with the same seed therefore see the same rewards for the same pulls (common random numbers),
so their risk difference is not sampling noise.
"""

from __future__ import annotations

import numpy as np


def check_means(means, name: str = "means") -> np.ndarray:
    """Validate a vector of arm means: 1-D, finite, at least two arms."""
    arr = np.asarray(means, dtype=float)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D sequence of arm means; got shape {arr.shape}")
    if arr.size < 2:
        raise ValueError(f"{name} needs at least 2 arms; got {arr.size}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (no NaN/inf); got {arr.tolist()}")
    return arr


def check_positive(value, name: str) -> float:
    v = float(value)
    if not np.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be a finite number > 0; got {value!r}")
    return v


class GaussianBandit:
    """K arms with Gaussian rewards ``N(means[k], sigma**2)``.

    Parameters
    ----------
    means : array-like of shape (K,)
    sigma : float
        Known reward standard deviation (the sub-Gaussian parameter the policies use).

    Examples
    --------
    >>> bandit = GaussianBandit([0.5, 0.4], sigma=1.0)
    >>> bandit.draw(np.random.default_rng(0), (3, 2, 4)).shape
    (3, 2, 4)
    """

    kind = "gaussian"

    def __init__(self, means, sigma: float = 1.0):
        self.means = check_means(means)
        self.sigma = check_positive(sigma, "sigma")

    @property
    def n_arms(self) -> int:
        return self.means.size

    def draw(self, rng: np.random.Generator, shape: tuple[int, int, int]) -> np.ndarray:
        """Rewards of shape ``(R, K, B)``: replication, arm, pull index."""
        return self.means[None, :, None] + self.sigma * rng.standard_normal(shape)


class BernoulliBandit:
    """K arms with Bernoulli(``means[k]``) rewards; sub-Gaussian with ``sigma = 0.5``.

    Examples
    --------
    >>> BernoulliBandit([0.3, 0.2]).sigma
    0.5
    """

    kind = "bernoulli"
    sigma = 0.5

    def __init__(self, means):
        self.means = check_means(means)
        if np.any((self.means < 0) | (self.means > 1)):
            raise ValueError(f"means of a Bernoulli bandit must lie in [0, 1]; got {self.means.tolist()}")

    @property
    def n_arms(self) -> int:
        return self.means.size

    def draw(self, rng: np.random.Generator, shape: tuple[int, int, int]) -> np.ndarray:
        return (rng.random(shape) < self.means[None, :, None]).astype(float)


def make_bandit(means, sigma: float = 1.0, env: str = "gaussian"):
    """``GaussianBandit(means, sigma)`` or ``BernoulliBandit(means)`` by name."""
    if env == "gaussian":
        return GaussianBandit(means, sigma)
    if env == "bernoulli":
        return BernoulliBandit(means)
    raise ValueError(f"env must be 'gaussian' or 'bernoulli'; got {env!r}")


class RewardTable:
    """Rewards indexed by (replication, arm, pull number), generated lazily in blocks.

    Block ``c`` holds pulls ``c*B .. c*B+B-1`` of every arm of every replication and is drawn from
    ``default_rng([seed, c])``, so any block can be (re)built independently and identically.

    Parameters
    ----------
    bandit : GaussianBandit or BernoulliBandit
    n_reps : int
    seed : int
    block : int, optional
        Pulls per block; by default chosen so a block holds about two million rewards.
    """

    def __init__(self, bandit, n_reps: int, seed: int, block: int | None = None):
        if n_reps < 1:
            raise ValueError(f"n_reps must be >= 1; got {n_reps}")
        self.bandit, self.n_reps, self.seed = bandit, int(n_reps), int(seed)
        K = bandit.n_arms
        self.block = int(block) if block else int(np.clip(2_000_000 // (self.n_reps * K), 16, 4096))
        self._cache: dict[int, np.ndarray] = {}

    def get_block(self, c: int) -> np.ndarray:
        """Rewards ``[R, K, B]`` of block ``c``."""
        if c not in self._cache:
            rng = np.random.default_rng([self.seed, c])
            self._cache[c] = self.bandit.draw(rng, (self.n_reps, self.bandit.n_arms, self.block))
        return self._cache[c]

    def release_below(self, c: int) -> None:
        """Forget blocks with index < c (they will not be read again)."""
        for key in [k for k in self._cache if k < c]:
            del self._cache[key]

    def lookup(self, reps: np.ndarray, arms: np.ndarray, pulls: np.ndarray) -> np.ndarray:
        """Rewards at 0-based pull indices ``pulls`` of ``arms`` in replications ``reps``."""
        out = np.empty(len(reps))
        blocks = pulls // self.block
        for c in np.unique(blocks):
            sel = blocks == c
            out[sel] = self.get_block(int(c))[reps[sel], arms[sel], pulls[sel] % self.block]
        return out
