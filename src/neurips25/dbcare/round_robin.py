"""Round-robin elimination policies: the shared protocol and its sequential (one-episode) driver.

A round-robin policy pulls every surviving arm once per round, so after round ``n`` every survivor
has exactly ``n`` pulls. It is defined by two vectorised rules evaluated after each round:

- ``eliminate(n, means, alive) -> bool[R, K, B]``: which surviving arms to drop after round ``n``;
- ``stop(n, means, alive) -> bool[R, B]``: whether to stop after round ``n`` (evaluated on the
  survivors left after that round's eliminations).

``n`` (rounds) broadcasts to ``[R, B]`` (it is ``[1, B]`` or ``[R, 1]``), ``means`` is
``[R, K, B]`` (empirical means; ``-inf`` for eliminated arms) and ``alive`` is ``[R, K]``.
The batched simulator (``simulate.py``) and the one-episode driver below apply the same rules,
so a practitioner's A/B test and the 10,000-replication study run the same algorithm.
"""

from __future__ import annotations

import numpy as np

from neurips25.dbcare.bandits import check_int, check_reward


class RoundRobinPolicy:
    """Base class: subclasses define :meth:`eliminate` and :meth:`stop`.

    The episode interface (``reset``, ``select_arms``, ``update``, ``should_stop``, ``recommend``) lets
    a user drive the policy with real observations, one round at a time.
    """

    #: stop (and count a cap hit) once total pulls reach this
    max_pulls: float = np.inf

    def prepare(self, bandit) -> None:
        """Hook called once per simulation with the environment (e.g. the gap oracle reads its means)."""

    def pulls_nothing(self, n_arms: int) -> bool:
        """True when the policy recommends without any pull (e.g. a budget below one round)."""
        return False

    def eliminate(self, n: np.ndarray, means: np.ndarray, alive: np.ndarray) -> np.ndarray:
        return np.zeros(means.shape, dtype=bool)

    # Two-arm form: with two arms every rule here reduces to "stop once |mean_1 - mean_2| > h(n),
    # or after a fixed number of rounds", which the simulator runs on the reward difference alone.
    def two_arm_threshold(self, n: np.ndarray) -> np.ndarray | None:
        """``h(n)`` for two arms (``inf`` = never), or None when the policy has no such form."""
        return None

    def max_rounds(self, n_arms: int) -> float:
        """An upper bound on the rounds of any run (``inf`` when unknown); the engine reads no further."""
        return np.inf

    def two_arm_rounds(self) -> float:
        """Rounds after which a two-arm run stops regardless of the data."""
        return np.inf

    def stop(self, n: np.ndarray, means: np.ndarray, alive: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    # ----- one-episode driver ---------------------------------------------------------------
    def reset(self, n_arms: int) -> RoundRobinPolicy:
        """Start an episode with ``n_arms`` arms (an integer >= 2)."""
        K = check_int(n_arms, "n_arms", 2)
        self._alive = np.ones(K, dtype=bool)
        self._sums = np.zeros(K)
        self._counts = np.zeros(K, dtype=np.int64)
        self._round = 0
        self._pending: list[int] = []
        self._pulls = 0
        self._stopped = self.pulls_nothing(K)
        return self

    def select_arms(self) -> list[int]:
        """Arms to pull next (a round-robin policy: every survivor once); empty once stopped.

        Every requested arm must be passed to :meth:`update` before the next call; calling it again
        while arms are pending raises ``RuntimeError`` (re-requesting would double-count a round).
        """
        self._check_started()
        if self._stopped:
            return []
        if self._pending:
            raise RuntimeError(f"select_arms() called while arms {sorted(self._pending)} of the current request "
                               "are still pending; pass each to update(arm, reward) first")
        self._pending = self._next_arms()
        return sorted(self._pending)

    def _next_arms(self) -> list[int]:
        return np.flatnonzero(self._alive).tolist()

    def update(self, arm: int, reward: float) -> None:
        """Record one observation of ``arm``, which must be pending from :meth:`select_arms`."""
        self._check_started()
        arm = check_int(arm, "arm", 0)
        if arm not in self._pending:
            raise ValueError(f"arm {arm} was not requested by select_arms() (pending: {sorted(self._pending)})")
        reward = check_reward(reward)
        self._pending.remove(arm)
        self._sums[arm] += reward
        self._counts[arm] += 1
        self._pulls += 1
        if not self._pending:
            self._end_request()

    def _end_request(self) -> None:
        self._round += 1
        n = np.array([[self._round]])
        means = np.where(self._alive, self._sums / self._round, -np.inf)[None, :, None]
        elim = self.eliminate(n, means, self._alive[None])[0, :, 0] & self._alive
        self._alive &= ~elim
        means = np.where(self._alive, self._sums / self._round, -np.inf)[None, :, None]
        stop = bool(self.stop(n, means, self._alive[None])[0, 0])
        if stop or self._alive.sum() == 1 or self._pulls >= self.max_pulls:
            self._stopped = True

    def should_stop(self) -> bool:
        self._check_started()
        return self._stopped

    def recommend(self, rng: np.random.Generator | None = None) -> int:
        """The empirical best surviving arm.

        A policy that decided to pull nothing (e.g. :class:`Guess`, or a budget below one round)
        recommends a uniformly random arm from ``rng``; before any observation otherwise, and while a
        request is pending, it raises ``RuntimeError``.
        """
        self._check_started()
        if self._pulls == 0:
            if not self._stopped:
                raise RuntimeError("recommend() before any observation: pull the arms from select_arms() first")
            rng = rng or np.random.default_rng()
            return int(rng.integers(self._alive.size))
        if self._pending:
            raise RuntimeError(f"recommend() while arms {sorted(self._pending)} are pending; update them first")
        return int(np.argmax(self.empirical_means))

    @property
    def empirical_means(self) -> np.ndarray:
        """Empirical mean of every arm (``-inf`` for eliminated or never pulled arms)."""
        self._check_started()
        with np.errstate(invalid="ignore", divide="ignore"):
            mu = self._sums / self._counts
        return np.where(self._alive & (self._counts > 0), mu, -np.inf)

    @property
    def survivors(self) -> list[int]:
        """Arms still in the race."""
        self._check_started()
        return np.flatnonzero(self._alive).tolist()

    @property
    def total_pulls(self) -> int:
        return self._pulls

    def _check_started(self) -> None:
        if not hasattr(self, "_alive"):
            raise RuntimeError("call reset(n_arms) before using the policy")
