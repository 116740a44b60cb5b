"""Round-robin elimination policies: the shared protocol and its sequential (one-episode) driver.

A round-robin policy pulls every surviving arm once per round, so after round ``n`` every survivor
has exactly ``n`` pulls. It is defined by two vectorised rules evaluated after each round:

- ``eliminate(n, means, alive) -> bool[R, K, B]``: which surviving arms to drop after round ``n``;
- ``stop(n, means, alive) -> bool[R, B]``: whether to stop after round ``n`` (evaluated on the
  survivors left after that round's eliminations).

``n`` (rounds) broadcasts to ``[R, B]`` (it is ``[1, B]`` or ``[R, 1]``), ``means`` is
``[R, K, B]`` (empirical means; ``-inf`` for eliminated arms) and ``alive`` is ``[R, K]``.
The batched simulator (``simulate.py``) and the one-episode driver below apply the same rules,
so a practitioner's A/B test and the 10,000-replication study run the same algorithm. Both check the
rewards against the ``sigma`` a policy was built for with one rule, :func:`check_sigma`: ``simulate``
refuses an environment whose sigma differs, the episode API warns (:class:`SigmaMismatchWarning`) when
the rewards it is given are more spread out than ``sigma`` allows, or when it decides on one reward per arm.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from neurips25.dbcare.bandits import check_int, check_reward

#: false-alarm rate of the episode API's test of the rewards' spread against ``sigma`` (per decision)
SIGMA_TEST_LEVEL = 1e-3


class SigmaMismatchWarning(UserWarning):
    """The rewards fed to a policy's episode API do not fit the ``sigma`` it was built for."""


def check_sigma(policy, rewards_sigma: float | None = None, df: int | None = None, n_rewards: int = 0,
                one_each=None, stacklevel: int = 4) -> str | None:
    """The one check of a policy's ``sigma`` against its rewards, shared by ``simulate`` and the episode API.

    A policy's stopping and elimination rules are calibrated for rewards with sub-Gaussian parameter
    ``policy.sigma``; rewards that are more spread out make it decide on noise (two arms, ``sigma`` 100x
    too small: about 50% errors).

    - ``df=None`` (``simulate``): ``rewards_sigma`` is the environment's own; any difference raises
      ``ValueError``.
    - ``df >= 1`` (the episode API): ``rewards_sigma`` is the pooled within-arm standard deviation of the
      ``n_rewards`` rewards seen, with ``df`` degrees of freedom. A sub-Gaussian parameter is at least the
      standard deviation, so a spread above ``sigma`` beyond sampling noise (``s^2 / sigma^2`` above the upper
      :data:`SIGMA_TEST_LEVEL` quantile of ``chi^2_df / df``) warns :class:`SigmaMismatchWarning`; a smaller
      spread does not (``sigma`` is an upper bound: Bernoulli rewards near 0 or 1 are less spread than 0.5).
    - ``df=0`` (the episode API, a decision on one reward per arm, ``one_each`` those rewards): no spread to
      estimate, so it warns when they differ by more than noise of standard deviation ``sigma`` makes them
      differ (range above ``sqrt(2) sigma z`` with ``z`` the upper ``SIGMA_TEST_LEVEL / K^2`` normal quantile):
      either the arms' means differ by that much or ``sigma`` is below the rewards' spread.

    Returns the message of the warning or error, or None. Policies without a ``sigma`` are not checked.
    ``stacklevel`` is passed to ``warnings.warn`` (the default points at the caller of ``simulate``).
    """
    p_sigma = getattr(policy, "sigma", None)
    if p_sigma is None:
        return None
    name = type(policy).__name__
    if df is None:
        if rewards_sigma is None or np.isclose(p_sigma, rewards_sigma, rtol=1e-12, atol=0):
            return None
        raise ValueError(f"{name} assumes sigma={p_sigma:g} but the rewards have sigma={rewards_sigma:g}; build "
                         f"{name} with sigma={rewards_sigma:g}")
    from scipy.stats import chi2, norm

    if df == 0:
        one_each = np.asarray(one_each, dtype=float)
        K = max(one_each.size, 2)
        spread = float(one_each.max() - one_each.min())
        if not spread > math.sqrt(2.0) * p_sigma * norm.isf(SIGMA_TEST_LEVEL / K**2):
            return None
        msg = (f"{name} assumes sigma={p_sigma:g} and decided on one reward per arm, whose values differ by "
               f"{spread:.3g} = {spread / p_sigma:.1f} sigma: more than noise of standard deviation sigma makes "
               f"them differ (level {SIGMA_TEST_LEVEL:g}), unless the arms' means differ that much. If the "
               f"rewards' standard deviation is above {p_sigma:g} the decision is noise (sigma far below the "
               f"spread: near 50% errors with two arms); build {name} with the rewards' sub-Gaussian parameter "
               "(simulate refuses the same mismatch against the environment)")
    else:
        if not rewards_sigma ** 2 > p_sigma ** 2 * chi2.isf(SIGMA_TEST_LEVEL, df) / df:
            return None
        msg = (f"{name} assumes sigma={p_sigma:g} but the rewards have sigma ~{rewards_sigma:.3g} (pooled "
               f"within-arm standard deviation of {n_rewards} rewards, {df} degrees of freedom: above sigma "
               f"beyond sampling noise at level {SIGMA_TEST_LEVEL:g}); its eliminations and stops are "
               f"miscalibrated and its error rate can be far above its target; build {name} with sigma >= "
               f"{rewards_sigma:.3g} (simulate refuses the same mismatch against the environment)")
    warnings.warn(msg, SigmaMismatchWarning, stacklevel=stacklevel)
    return msg


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
        self._squares = np.zeros(K)  # sums of squared rewards: the spread check against sigma
        self._counts = np.zeros(K, dtype=np.int64)
        self._sigma_checked = getattr(self, "sigma", None) is None  # warn at most once per episode
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
        self._squares[arm] += reward * reward
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
        if elim.any() or self._stopped:
            self._check_rewards_sigma(on_data=bool(elim.any()))

    def _check_rewards_sigma(self, on_data: bool) -> None:
        """At a decision: the rewards' pooled within-arm spread against ``sigma`` (:func:`check_sigma`);
        ``on_data``: the decision came from the data (an elimination, a data-driven stop), so one taken on
        one reward per arm is flagged too."""
        if self._sigma_checked:
            return
        seen = self._counts > 0
        df = int((self._counts[seen] - 1).sum())
        if df == 0 and not on_data:
            return
        sigma, one_each = None, None
        if df > 0:
            within = self._squares[seen] - self._sums[seen] ** 2 / self._counts[seen]
            sigma = math.sqrt(max(float(within.sum()), 0.0) / df)
        else:
            one_each = self._sums[seen]  # one reward per arm: their sums are the rewards
        # stack: check_sigma < here < _end_request < update < the user's loop
        if check_sigma(self, sigma, df, int(self._counts.sum()), one_each, stacklevel=5) is not None:
            self._sigma_checked = True

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
