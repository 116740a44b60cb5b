"""Vectorised Monte-Carlo risk of a policy: every replication advances together as arrays.

Two engines share one :class:`~neurips25.dbcare.bandits.RewardTable` (common random numbers):

- the round-robin engine processes rounds in blocks of ``B``: cumulative sums give every arm's
  empirical mean after each round of the block at once, the policy's rules flag eliminations and
  stops for all ``[replication, round]`` pairs, and each replication jumps to its first event. Its
  cost grows with the number of rounds divided by ``B``, not with the replications;
- the step engine (LUCB / Track-and-Stop with more than two arms) advances one decision per step
  for all live replications.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from neurips25.dbcare.bandits import (
    BernoulliBandit,
    RewardTable,
    check_int,
    check_positive,
    is_bandit,
    make_bandit,
)
from neurips25.dbcare.round_robin import RoundRobinPolicy, check_sigma


@dataclasses.dataclass(frozen=True)
class RiskEstimate:
    """Monte-Carlo estimate of a policy's cost-aware risk.

    Attributes
    ----------
    risk : float
        Mean of ``penalty + cost * pulls`` for the requested penalty (``kind``).
    p_error, simple_regret, mean_samples : float
        Means of ``1[recommended != best]``, ``mu* - mu_recommended`` and the number of pulls.
    stderr : float
        Standard error of ``risk``.
    cap_rate : float
        Fraction of replications stopped by ``max_pulls``.
    kind : str
        ``"mi"`` or ``"sr"``.
    risk_mi, risk_sr, stderr_mi, stderr_sr : float
        Both risks, whichever ``kind`` was asked for.
    n_reps : int
    """

    risk: float
    p_error: float
    simple_regret: float
    mean_samples: float
    stderr: float
    cap_rate: float
    kind: str
    risk_mi: float
    risk_sr: float
    stderr_mi: float
    stderr_sr: float
    n_reps: int


def _finish(means, cost, rec, pulls, capped, kind) -> RiskEstimate:
    best = int(np.argmax(means))
    err = (rec != best).astype(float)
    regret = means[best] - means[rec]
    mi, sr = err + cost * pulls, regret + cost * pulls
    se = lambda x: float(x.std(ddof=1) / np.sqrt(x.size)) if x.size > 1 else float("nan")
    return RiskEstimate(
        risk=float((mi if kind == "mi" else sr).mean()), p_error=float(err.mean()),
        simple_regret=float(regret.mean()), mean_samples=float(pulls.mean()),
        stderr=se(mi if kind == "mi" else sr), cap_rate=float(capped.mean()), kind=kind,
        risk_mi=float(mi.mean()), risk_sr=float(sr.mean()), stderr_mi=se(mi), stderr_sr=se(sr),
        n_reps=int(rec.size),
    )


def run_round_robin(policy: RoundRobinPolicy, table: RewardTable, jitter: np.ndarray, rng: np.random.Generator):
    """Run a round-robin policy on every replication of ``table``.

    Returns ``(recommendation [R], pulls [R], capped [R])``.
    """
    R, K, B = table.n_reps, table.bandit.n_arms, table.block
    if policy.pulls_nothing(K):
        return rng.integers(K, size=R), np.zeros(R), np.zeros(R, dtype=bool)
    alive = np.ones((R, K), dtype=bool)
    sums = np.zeros((R, K))
    gone_pulls = np.zeros(R)  # pulls spent on arms already eliminated
    active = np.ones(R, dtype=bool)
    rec, pulls, capped = np.full(R, -1), np.zeros(R), np.zeros(R, dtype=bool)
    limit = policy.max_rounds(K)  # every replication stops by this round: read no column beyond it
    n_done, c = 0, 0
    while active.any():
        ids = np.flatnonzero(active)
        width = int(min(B, max(limit - n_done, 1)))
        cols = np.arange(width)
        csum = sums[ids][:, :, None] + np.cumsum(table.get_block(c)[ids][:, :, :width], axis=2)
        n = n_done + np.arange(1, width + 1)
        raw = csum / n + jitter[ids][:, :, None]
        a, gone = alive[ids].copy(), gone_pulls[ids].copy()
        offset, done = np.zeros(len(ids), dtype=int), np.zeros(len(ids), dtype=bool)
        cand = np.arange(len(ids))  # rows that may still have an event in this block
        while cand.size:
            ac = a[cand]
            means = np.where(ac[:, :, None], raw[cand], -np.inf)
            el = policy.eliminate(n[None, :], means, ac) & ac[:, :, None]
            st = policy.stop(n[None, :], means, ac)
            cap = (gone[cand][:, None] + n[None, :] * ac.sum(axis=1)[:, None]) >= policy.max_pulls
            ev = (el.any(axis=1) | st | cap) & (cols[None, :] >= offset[cand][:, None])
            hit = np.flatnonzero(ev.any(axis=1))
            if hit.size == 0:
                break
            rows = cand[hit]
            b = ev[hit].argmax(axis=1)
            nb = n[b]
            e_rb = el[hit, :, b]
            a[rows] &= ~e_rb
            gone[rows] += nb * e_rb.sum(axis=1)
            # re-check stopping on the survivors left after this round's eliminations
            mb = np.where(a[rows], raw[rows, :, b], -np.inf)[:, :, None]
            st2 = policy.stop(nb[:, None], mb, a[rows])[:, 0] | (a[rows].sum(axis=1) == 1)
            fin = st2 | cap[hit, b]
            fr = rows[fin]
            done[fr] = True
            rec[ids[fr]] = np.argmax(mb[fin, :, 0], axis=1)
            pulls[ids[fr]] = gone[fr] + nb[fin] * a[fr].sum(axis=1)
            capped[ids[fr]] = ~st2[fin]
            offset[rows] = b + 1
            # rows without an event keep their survivors, so they have none later in this block either
            cand = rows[~fin]
        alive[ids], gone_pulls[ids], sums[ids] = a, gone, csum[:, :, -1]
        active[ids[done]] = False
        if width < B and active.any():
            raise RuntimeError(f"{policy!r} ran past its max_rounds({K}) = {limit}")
        n_done += B
        c += 1
        table.release_below(c)
    return rec, pulls, capped


def run_two_arm(policy: RoundRobinPolicy, table: RewardTable, jitter: np.ndarray, rng: np.random.Generator):
    """Two-arm fast path: the walk of reward differences against the policy's threshold ``h(n)``.

    Equivalent to :func:`run_round_robin` for two arms (tested), several times cheaper.
    """
    R, B = table.n_reps, table.block
    if policy.pulls_nothing(2):
        return rng.integers(2, size=R), np.zeros(R), np.zeros(R, dtype=bool)
    rounds = policy.two_arm_rounds()
    cap_rounds = np.floor(policy.max_pulls / 2) if np.isfinite(policy.max_pulls) else np.inf
    last = min(rounds, np.ceil(policy.max_pulls / 2))
    diff = np.zeros(R)
    active = np.ones(R, dtype=bool)
    rec, pulls, capped = np.full(R, -1), np.zeros(R), np.zeros(R, dtype=bool)
    tie = jitter[:, 0] - jitter[:, 1]
    n_done, c = 0, 0
    while active.any():
        ids = np.flatnonzero(active)
        blk = table.get_block(c)[ids]
        walk = diff[ids][:, None] + np.cumsum(blk[:, 0, :] - blk[:, 1, :], axis=1)
        n = n_done + np.arange(1, B + 1)
        gap = walk / n + tie[ids][:, None]
        ev = (np.abs(gap) > policy.two_arm_threshold(n)[None, :]) | (n >= last)[None, :]
        hit = ev.any(axis=1)
        b = ev[hit].argmax(axis=1)
        f = ids[hit]
        rec[f] = np.where(gap[hit, b] >= 0, 0, 1)
        pulls[f] = 2 * n[b]
        capped[f] = (n[b] >= cap_rounds) & ~(np.abs(gap[hit, b]) > policy.two_arm_threshold(n[b]))
        active[f] = False
        diff[ids] = walk[:, -1]
        n_done += B
        c += 1
        table.release_below(c)
    return rec, pulls, capped


def run_adaptive(policy, table: RewardTable, jitter: np.ndarray):
    """Run a step-by-step policy (``select`` / ``done``) on every replication of ``table``."""
    R, K = table.n_reps, table.bandit.n_arms
    counts = np.ones((R, K), dtype=np.int64)
    sums = table.get_block(0)[:, :, 0].copy()  # one initial pull of every arm
    active = np.ones(R, dtype=bool)
    rec, capped = np.full(R, -1), np.zeros(R, dtype=bool)
    step = 0
    while active.any():
        ids = np.flatnonzero(active)
        cnt, sm = counts[ids], sums[ids]
        t = cnt.sum(axis=1).astype(float)
        stop = policy.done(cnt, sm, t)
        cap = t >= policy.max_pulls
        fin = stop | cap
        if fin.any():
            f = ids[fin]
            rec[f] = np.argmax(sums[f] / counts[f] + jitter[f], axis=1)
            capped[f] = ~stop[fin]
            active[f] = False
            ids = ids[~fin]
            if ids.size == 0:
                break
        arms = policy.select(counts[ids], sums[ids], counts[ids].sum(axis=1).astype(float))
        # a decision may ask for several pulls (-1 pads rows that asked for fewer); the j-th request of
        # an arm in a row reads its next unread reward, as if the pulls were made one by one
        onehot = arms[:, :, None] == np.arange(K)  # [R', q, K]
        before = np.cumsum(onehot, axis=1) - onehot
        ok = arms >= 0
        arm = np.where(ok, arms, 0)
        pull = counts[ids][:, None, :] + before
        pull = np.take_along_axis(pull, arm[:, :, None], axis=2)[:, :, 0]
        rows = np.broadcast_to(ids[:, None], arms.shape)
        r, a, j = rows[ok], arm[ok], pull[ok]
        np.add.at(sums, (r, a), table.lookup(r, a, j))
        counts[ids] += onehot.sum(axis=1)
        step += 1
        if step % 256 == 0:
            table.release_below(int(counts[active].min()) // table.block if active.any() else 0)
    return rec, counts.sum(axis=1).astype(float), capped


def resolve_setting(policy, bandit, sigma, cost, env):
    """The environment and the cost of a simulation, checked against what the policy assumes.

    ``bandit`` is an environment object or a vector of means (then ``env`` and ``sigma`` build it).
    The policy's own ``cost`` / ``sigma`` (when it has them) are the defaults; a different value given
    here raises, since the run would silently evaluate a policy tuned for another setting.
    """
    p_cost, p_sigma = getattr(policy, "cost", None), getattr(policy, "sigma", None)
    if cost is None:
        if p_cost is None:
            raise ValueError(f"cost is required: {policy!r} does not know the cost per pull")
        cost = p_cost
    cost = check_positive(cost, "cost")
    if p_cost is not None and not np.isclose(cost, p_cost, rtol=1e-12, atol=0):
        raise ValueError(f"cost={cost:g} but the policy was built for cost={p_cost:g}; build {type(policy).__name__} "
                         "with the cost you simulate (or omit cost to use the policy's)")
    if is_bandit(bandit):
        if env is not None:
            raise ValueError("env applies to a vector of means; got an environment object as well")
        if sigma is not None and getattr(bandit, "sigma", None) is not None and sigma != bandit.sigma:
            raise ValueError(f"sigma={sigma:g} but the environment has sigma={bandit.sigma:g}; omit sigma")
    else:
        env = env or "gaussian"
        if env == "gaussian":
            sigma = check_positive(sigma if sigma is not None else (p_sigma if p_sigma is not None else 1.0), "sigma")
        elif sigma is not None and check_positive(sigma, "sigma") != BernoulliBandit.sigma:
            raise ValueError(f"sigma={sigma:g} given for Bernoulli rewards, whose sub-Gaussian parameter is 0.5")
        bandit = make_bandit(means=bandit, sigma=sigma if sigma is not None else 1.0, env=env)
    b_sigma = getattr(bandit, "sigma", None)
    outcomes = getattr(bandit, "outcomes", None)
    if b_sigma is None and outcomes is not None:  # logged outcomes, no sigma given: check their spread instead
        n = np.array([len(a) for a in outcomes])
        df = int((n - 1).sum())
        if df > 0:
            within = sum(float(((np.asarray(a, dtype=float) - np.mean(a)) ** 2).sum()) for a in outcomes)
            check_sigma(policy, float(np.sqrt(within / df)), df, int(n.sum()))
    else:
        check_sigma(policy, b_sigma)  # the episode API's check, against the environment's own sigma
    return bandit, cost


def simulate(policy, means, sigma: float | None = None, cost: float | None = None, n_reps: int = 1000,
             seed: int = 0, env: str | None = None, kind: str | None = None, fast: bool = True) -> RiskEstimate:
    """Estimate a policy's risk ``penalty + cost * E[pulls]`` over ``n_reps`` replications.

    All replications advance together as arrays (no Python loop over replications). Policies run
    with the same ``seed`` see the same rewards for the same pulls (common random numbers).

    Parameters
    ----------
    policy : RoundRobinPolicy
        :class:`DBCARE` or a baseline.
    means : array-like of shape (K,), or an environment
        Arm means (K >= 2; the best arm is ``argmax(means)``), or a ``GaussianBandit``,
        ``BernoulliBandit`` or ``EmpiricalBandit``.
    sigma : float, optional
        Reward standard deviation when ``means`` is a vector with ``env="gaussian"``; defaults to the
        policy's ``sigma`` (else 1). A value that differs from the policy's or the environment's raises.
    cost : float, optional
        Cost per pull, > 0, charged in the risk; defaults to the policy's ``cost`` and must equal it
        when the policy has one (DBCARE, the oracle); required for policies that ignore the cost.
    n_reps : int
        Replications.
    seed : int
    env : {"gaussian", "bernoulli"}, optional
        Reward family for a vector of means (default Gaussian).
    kind : {"mi", "sr"}, optional
        Penalty reported in ``risk``; defaults to ``policy.risk`` when it has one, else ``"mi"``.
    fast : bool, default True
        Use the two-arm difference-walk engine when it applies (same answer, several times faster).

    Returns
    -------
    RiskEstimate

    Examples
    --------
    >>> from neurips25.dbcare import DBCARE
    >>> est = simulate(DBCARE(cost=1e-4), [0.0, -0.3], n_reps=2000, seed=0)
    >>> est.risk < 0.1
    True
    """
    if not isinstance(policy, RoundRobinPolicy):
        raise TypeError(f"policy must be a DBCARE or baseline policy; got {type(policy).__name__}")
    bandit, cost = resolve_setting(policy, means, sigma, cost, env)
    n_reps = check_int(n_reps, "n_reps", 1)
    kind = kind or getattr(policy, "risk", "mi")
    if kind not in ("mi", "sr"):
        raise ValueError(f"kind must be 'mi' or 'sr'; got {kind!r}")
    policy.prepare(bandit)
    table = RewardTable(bandit, n_reps, seed)
    side = np.random.default_rng([seed, 7919])
    # tiny per-(replication, arm) offsets break exact ties (Bernoulli means) at random, not by index
    jitter = side.random((n_reps, bandit.n_arms)) * 1e-9
    adaptive = hasattr(policy, "select") and not policy.round_robin(bandit.n_arms)
    if adaptive:
        rec, pulls, capped = run_adaptive(policy, table, jitter)
    elif bandit.n_arms == 2 and fast and policy.two_arm_threshold(np.ones(1)) is not None:
        rec, pulls, capped = run_two_arm(policy, table, jitter, side)
    else:
        rec, pulls, capped = run_round_robin(policy, table, jitter, side)
    return _finish(bandit.means, cost, rec, pulls, capped, kind)
