"""Stochastic K-armed bandit environments and the common-random-number reward table.

Every policy in a comparison reads its rewards from a :class:`RewardTable`: the reward of arm ``k``
at its ``j``-th pull in replication ``r`` is a fixed number drawn once from the seed. Two policies
run with the same seed therefore see the same rewards for the same pulls (common random numbers),
so their risk difference is not sampling noise.

Environments: :class:`GaussianBandit`, :class:`BernoulliBandit` and :class:`EmpiricalBandit` (a
bootstrap over logged A/B outcomes, or their replay in logged order). Each has ``means``,
``sigma`` (``None`` when unknown), ``n_arms``, ``draw(rng, (R, K, B))`` for the simulator and
``sample(arm, rng)`` for driving one episode by hand.
"""

from __future__ import annotations

import csv
import numbers
from pathlib import Path

import numpy as np


def check_means(means, name: str = "means") -> np.ndarray:
    """Validate a vector of arm means: 1-D, finite, at least two arms."""
    try:
        arr = np.asarray(means, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a 1-D sequence of numbers; got {means!r}") from None
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D sequence of arm means; got shape {arr.shape}")
    if arr.size < 2:
        raise ValueError(f"{name} needs at least 2 arms; got {arr.size}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (no NaN/inf); got {arr.tolist()}")
    return arr


def _scalar(value):
    """Unwrap a 0-d numpy array to its Python scalar (other values unchanged)."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return value.item()
    return value


def check_real(value, name: str) -> float:
    """A finite real number (Python or numpy scalar; not a string, not a bool)."""
    value = _scalar(value)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number; got {value!r} ({type(value).__name__})")
    v = float(value)
    if not np.isfinite(v):
        raise ValueError(f"{name} must be finite; got {value!r}")
    return v


def check_positive(value, name: str) -> float:
    """A finite real number > 0."""
    v = check_real(value, name)
    if v <= 0:
        raise ValueError(f"{name} must be a finite number > 0; got {value!r}")
    return v


def check_int(value, name: str, minimum: int) -> int:
    """An integer (Python or numpy; not a float such as 2.7, not a bool) >= ``minimum``."""
    value = _scalar(value)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer >= {minimum}; got {value!r} ({type(value).__name__})")
    if int(value) < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}")
    return int(value)


def check_reward(value, name: str = "reward") -> float:
    """One observed reward: a finite real number; numpy scalars and booleans (conversions) accepted."""
    value = _scalar(value)
    if isinstance(value, (bool, np.bool_)):
        return float(value)
    return check_real(value, name)


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

    def __repr__(self) -> str:
        return f"GaussianBandit(means={self.means.tolist()}, sigma={self.sigma:g})"

    @property
    def n_arms(self) -> int:
        return self.means.size

    def draw(self, rng: np.random.Generator, shape: tuple[int, int, int]) -> np.ndarray:
        """Rewards of shape ``(R, K, B)``: replication, arm, pull index."""
        return self.means[None, :, None] + self.sigma * rng.standard_normal(shape)

    def sample(self, arm, rng: np.random.Generator) -> float:
        """One reward of ``arm`` (for driving an episode by hand)."""
        arm = _check_arm(arm, self.n_arms)
        return float(self.means[arm] + self.sigma * rng.standard_normal())


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

    def __repr__(self) -> str:
        return f"BernoulliBandit(means={self.means.tolist()})"

    @property
    def n_arms(self) -> int:
        return self.means.size

    def draw(self, rng: np.random.Generator, shape: tuple[int, int, int]) -> np.ndarray:
        return (rng.random(shape) < self.means[None, :, None]).astype(float)

    def sample(self, arm, rng: np.random.Generator) -> float:
        arm = _check_arm(arm, self.n_arms)
        return float(rng.random() < self.means[arm])


class EmpiricalBandit:
    """Arms defined by logged outcomes: a bootstrap over them, or their replay in logged order.

    Each arm's reward distribution is the empirical distribution of its logged outcomes (e.g. the
    conversions of each variant of a past A/B test). :meth:`draw` (used by
    :func:`~neurips25.dbcare.simulate`) and :meth:`sample` resample with replacement (bootstrap);
    :meth:`replay` returns a function that hands out each arm's outcomes in the logged order, to run
    one episode exactly as it would have run on the real data.

    Parameters
    ----------
    outcomes : sequence of 1-D array-likes, or a 2-D array of shape (K, n)
        The logged outcomes of each arm (arms may have different lengths); at least 2 arms, each
        with at least one finite outcome.
    sigma : float, optional
        Sub-Gaussian parameter to assume (e.g. 0.5 for outcomes in [0, 1]). ``None`` (default) means
        unknown: :func:`~neurips25.dbcare.simulate` then uses the policy's ``sigma`` unchecked.

    Examples
    --------
    >>> bandit = EmpiricalBandit([[0, 1, 1, 0, 1], [0, 0, 1, 0, 0]], sigma=0.5)
    >>> bandit.means.tolist()
    [0.6, 0.2]
    >>> pull = bandit.replay()
    >>> [pull(0), pull(0), pull(1)]
    [0.0, 1.0, 0.0]
    """

    kind = "empirical"

    def __init__(self, outcomes, sigma: float | None = None):
        if isinstance(outcomes, (str, bytes)) or not hasattr(outcomes, "__len__"):
            raise TypeError(f"outcomes must be a sequence of per-arm outcome arrays; got {type(outcomes).__name__}")
        if isinstance(outcomes, np.ndarray) and outcomes.ndim != 2:
            raise ValueError(f"outcomes as an array must be 2-D (arms, outcomes); got shape {outcomes.shape}")
        arms = []
        for k, a in enumerate(outcomes):
            try:
                arr = np.asarray(a, dtype=float)
            except (TypeError, ValueError):
                raise TypeError(f"outcomes[{k}] must be an array of numbers; got {a!r}") from None
            if arr.ndim != 1 or arr.size == 0:
                raise ValueError(f"outcomes[{k}] must be a non-empty 1-D array; got shape {arr.shape}")
            if not np.all(np.isfinite(arr)):
                raise ValueError(f"outcomes[{k}] must be finite (no NaN/inf)")
            arms.append(arr)
        if len(arms) < 2:
            raise ValueError(f"outcomes needs at least 2 arms; got {len(arms)}")
        self.outcomes = arms
        self.means = np.array([a.mean() for a in arms])
        self.sigma = None if sigma is None else check_positive(sigma, "sigma")

    def __repr__(self) -> str:
        return f"EmpiricalBandit(n_arms={self.n_arms}, sizes={[a.size for a in self.outcomes]})"

    @property
    def n_arms(self) -> int:
        return len(self.outcomes)

    def draw(self, rng: np.random.Generator, shape: tuple[int, int, int]) -> np.ndarray:
        """Bootstrap rewards of shape ``(R, K, B)``."""
        R, K, B = shape
        out = np.empty(shape)
        for k, a in enumerate(self.outcomes):
            out[:, k, :] = a[rng.integers(a.size, size=(R, B))]
        return out

    def sample(self, arm, rng: np.random.Generator) -> float:
        """One bootstrap draw from ``arm``'s outcomes."""
        a = self.outcomes[_check_arm(arm, self.n_arms)]
        return float(a[rng.integers(a.size)])

    def replay(self):
        """A function ``pull(arm) -> outcome`` that returns each arm's outcomes in logged order.

        It raises a ``ValueError`` naming the arm once that arm's log is exhausted.
        """
        used = [0] * self.n_arms

        def pull(arm) -> float:
            k = _check_arm(arm, self.n_arms)
            if used[k] >= self.outcomes[k].size:
                raise ValueError(f"arm {k}: its {self.outcomes[k].size} logged outcomes are used up")
            used[k] += 1
            return float(self.outcomes[k][used[k] - 1])

        return pull

    @classmethod
    def from_csv(cls, path, arm_column: str = "arm", outcome_column: str = "outcome",
                 sigma: float | None = None) -> EmpiricalBandit:
        """Read a long-format CSV with a header (one row per observation: arm label, outcome).

        Arms are ordered by first appearance; ``arm_labels`` keeps their labels.
        """
        path = Path(path)
        with path.open(newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            fields = reader.fieldnames or []
            for col in (arm_column, outcome_column):
                if col not in fields:
                    raise ValueError(f"{path}: no column {col!r} (columns: {fields})")
            per_arm: dict[str, list[float]] = {}
            for i, row in enumerate(reader, start=2):
                try:
                    value = float(row[outcome_column])
                except (TypeError, ValueError):
                    raise ValueError(f"{path}, line {i}: outcome {row[outcome_column]!r} is not a number") from None
                per_arm.setdefault(row[arm_column], []).append(value)
        bandit = cls(list(per_arm.values()), sigma=sigma)
        bandit.arm_labels = list(per_arm)
        return bandit

    @classmethod
    def from_npz(cls, path, sigma: float | None = None) -> EmpiricalBandit:
        """Read one array per arm from an ``.npz`` file (never unpickles; arrays in file order)."""
        with np.load(Path(path), allow_pickle=False) as data:
            names = list(data.files)
            bandit = cls([data[n] for n in names], sigma=sigma)
        bandit.arm_labels = names
        return bandit


def _check_arm(arm, n_arms: int) -> int:
    k = check_int(arm, "arm", 0)
    if k >= n_arms:
        raise ValueError(f"arm must be in [0, {n_arms - 1}]; got {arm!r}")
    return k


def is_bandit(obj) -> bool:
    """Duck type of an environment: ``means``, ``n_arms`` and ``draw``."""
    return all(hasattr(obj, a) for a in ("means", "n_arms", "draw"))


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
    bandit : GaussianBandit, BernoulliBandit or EmpiricalBandit
    n_reps : int
    seed : int
    block : int, optional
        Pulls per block; by default chosen so a block holds about two million rewards.
    """

    def __init__(self, bandit, n_reps: int, seed: int, block: int | None = None):
        self.bandit, self.n_reps, self.seed = bandit, check_int(n_reps, "n_reps", 1), int(seed)
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
