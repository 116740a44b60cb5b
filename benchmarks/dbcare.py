"""DBCARE simulator speed: the vectorised engines against two honest per-replication baselines, in one run.

    python benchmarks/dbcare.py [--reps 10000]

Workload: 10,000 replications of DBCARE (MI) on two arms, gap 0.05, c = 1e-4 (the issue's target:
"10k reps within a few seconds"), plus a 5-arm instance. Baselines, both measured on a subset of
replications and scaled per replication:

- a plain scalar loop: Python floats over rewards drawn beforehand (what one would write by hand,
  with no per-pull numpy call); it is checked to give the same answers as the engine;
- the episode API (``reset / select_arms / update / should_stop / recommend``), which validates every
  call and does a little numpy work per pull: the cost of driving the policy by hand.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from neurips25.dbcare import DBCARE, GaussianBandit, RewardTable, simulate
from neurips25.dbcare.simulate import run_round_robin, run_two_arm


def scalar_loop(rewards, cost, sigma=1.0):
    """Two-arm DBCARE (MI) in plain Python over pre-drawn rewards ``rewards[r][arm][pull]``."""
    cap = 1.0 / (2 * math.e * cost)  # N*(2)
    recs, pulls = [], []
    for x0, x1 in rewards:
        s0 = s1 = 0.0
        n = 0
        while True:
            s0 += x0[n]
            s1 += x1[n]
            n += 1
            diff = (s0 - s1) / n
            radius = sigma * math.sqrt(4.0 / n * math.log(max(math.e, 1.0 / (2 * cost * n))))
            if abs(diff) > radius or n >= cap:
                break
        recs.append(0 if diff >= 0 else 1)
        pulls.append(2 * n)
    return np.array(recs), np.array(pulls)


def episode_loop(policy, table, reps):
    for r in range(reps):
        policy.reset(table.bandit.n_arms)
        counts = np.zeros(table.bandit.n_arms, dtype=int)
        while not policy.should_stop():
            for arm in policy.select_arms():
                policy.update(arm, table.lookup(np.array([r]), np.array([arm]), np.array([counts[arm]]))[0])
                counts[arm] += 1


def timed(fn, repeat=3):
    best = np.inf
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--reps", type=int, default=10_000)
    ap.add_argument("--scalar-reps", type=int, default=500)
    ap.add_argument("--episode-reps", type=int, default=20)
    args = ap.parse_args()
    c, gap = 1e-4, 0.05
    means = [0.0, -gap]
    pol = DBCARE(c)
    bandit = GaussianBandit(means, 1.0)
    t_fast = timed(lambda: simulate(pol, means, n_reps=args.reps, seed=0))
    t_general = timed(lambda: simulate(pol, means, n_reps=args.reps, seed=0, fast=False))

    # the scalar loop reads the same pre-drawn rewards as the engine (one block covers N*(2) pulls)
    m = args.scalar_reps
    n_max = int(np.ceil(float(pol.budget(2))))
    table = RewardTable(bandit, m, seed=0, block=n_max)
    rewards = [[table.get_block(0)[r, 0].tolist(), table.get_block(0)[r, 1].tolist()] for r in range(m)]
    t_scalar = timed(lambda: scalar_loop(rewards, c), repeat=1)
    rec_s, pulls_s = scalar_loop(rewards, c)
    rec_e, pulls_e, _ = run_two_arm(pol, RewardTable(bandit, m, seed=0, block=n_max), np.zeros((m, 2)),
                                    np.random.default_rng(0))
    agree = bool(np.array_equal(rec_s, rec_e) and np.array_equal(pulls_s, pulls_e))

    t_episode = timed(lambda: episode_loop(pol, RewardTable(bandit, args.episode_reps, 0), args.episode_reps),
                      repeat=1)
    per_scalar, per_episode = t_scalar / m, t_episode / args.episode_reps
    means5 = [0.0, -0.05, -0.1, -0.2, -0.4]
    t_k = timed(lambda: simulate(pol, means5, n_reps=args.reps, seed=0), repeat=1)
    t_k_rr = timed(lambda: run_round_robin(pol, RewardTable(GaussianBandit(means5), 200, 0), np.zeros((200, 5)),
                                           np.random.default_rng(0)), repeat=1)
    print(f"two arms, gap {gap}, c {c:g}, {args.reps} replications (DBCARE, MI)")
    print(f"  simulate, two-arm difference walk : {t_fast:8.3f} s = {args.reps / t_fast:9.0f} reps/s")
    print(f"  simulate, general round-robin     : {t_general:8.3f} s = {args.reps / t_general:9.0f} reps/s")
    print(f"  plain scalar loop (per rep)       : {per_scalar * 1e3:8.3f} ms = {1 / per_scalar:9.0f} reps/s "
          f"(same answers as the engine: {agree})")
    print(f"  episode API loop (per rep)        : {per_episode * 1e3:8.3f} ms = {1 / per_episode:9.0f} reps/s")
    print(f"  speed-up vs plain scalar loop     : {per_scalar * args.reps / t_fast:8.1f}x (fast path), "
          f"{per_scalar * args.reps / t_general:.1f}x (general)")
    print(f"  speed-up vs episode API loop      : {per_episode * args.reps / t_fast:8.0f}x (fast path), "
          f"{per_episode * args.reps / t_general:.0f}x (general)")
    print(f"five arms {means5}: {args.reps} replications {t_k:.3f} s; 200 replications {t_k_rr:.3f} s")


if __name__ == "__main__":
    main()
