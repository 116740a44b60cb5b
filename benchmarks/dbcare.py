"""DBCARE simulator speed: vectorised engines vs a per-replication loop, in one run.

    python benchmarks/dbcare.py [--reps 10000]

Prints the throughput of ``simulate`` (10,000 replications of a two-arm instance at c = 1e-4, the
issue's target "within a few seconds"), and the speed-up of the vectorised engines over the plain
episode loop (measured on a subset of replications and scaled per replication).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from neurips25.dbcare import DBCARE, GaussianBandit, RewardTable, simulate
from neurips25.dbcare.simulate import run_round_robin


def plain_loop(policy, table, reps):
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
    ap.add_argument("--loop-reps", type=int, default=20)
    args = ap.parse_args()
    c, gap = 1e-4, 0.05
    means = [0.0, -gap]
    pol = DBCARE(c)
    t_fast = timed(lambda: simulate(pol, means, 1.0, c, args.reps, seed=0))
    t_general = timed(lambda: simulate(pol, means, 1.0, c, args.reps, seed=0, fast=False))
    bandit = GaussianBandit(means, 1.0)
    t_loop = timed(lambda: plain_loop(pol, RewardTable(bandit, args.loop_reps, 0), args.loop_reps), repeat=1)
    per_rep_loop = t_loop / args.loop_reps
    t_k = timed(lambda: simulate(pol, [0.0, -0.05, -0.1, -0.2, -0.4], 1.0, c, args.reps, seed=0))
    t_k_rr = timed(lambda: run_round_robin(pol, RewardTable(GaussianBandit([0, -0.05, -0.1, -0.2, -0.4]), 200, 0),
                                           np.zeros((200, 5)), np.random.default_rng(0)), repeat=1)
    print(f"two arms, gap {gap}, c {c:g}, {args.reps} replications")
    print(f"  simulate (two-arm difference walk): {t_fast:8.3f} s  = {args.reps / t_fast:10.0f} reps/s")
    print(f"  simulate (general round-robin)     : {t_general:8.3f} s  = {args.reps / t_general:10.0f} reps/s")
    print(f"  plain episode loop (per rep)       : {per_rep_loop:8.4f} s  = {1 / per_rep_loop:10.0f} reps/s")
    print(f"  speed-up vectorised / loop         : {per_rep_loop * args.reps / t_fast:8.0f}x (fast path), "
          f"{per_rep_loop * args.reps / t_general:.0f}x (general)")
    print(f"five arms, {args.reps} replications: {t_k:.3f} s; 200 replications {t_k_rr:.3f} s")


if __name__ == "__main__":
    main()
