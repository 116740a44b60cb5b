"""Price of fairness at scale: transversal markets, C = 6 groups, as ratios to one warm rank evaluation.

    python benchmarks/fair_matroid.py [--n 10000] [--n-alloc 2000]

The anchor is one Hopcroft-Karp rank evaluation of the whole market (warm: median of 5, imports and
first-call costs excluded). Reported: ``price_of_fairness`` (exactly 2^C - 1 = 63 rank calls, counted)
on the n-agent market, and on the smaller ``n_alloc`` market the rounded-down integral allocation (one
max-flow) and the fair lottery (LP column generation + one max-flow per allocation in its support),
each in units of that market's warm rank evaluation.
"""

from __future__ import annotations

import argparse
import statistics
import time

from neurips25.fair_matroid import (
    er_market,
    fair_lottery,
    integral_fair_allocation,
    price_of_fairness,
    random_coloring,
)


def warm_rank(M) -> float:
    M.rank()
    times = []
    for _ in range(5):
        t = time.perf_counter()
        M.rank()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def timed(fn, *args):
    t = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--n-alloc", type=int, default=2_000)
    ap.add_argument("--C", type=int, default=6)
    args = ap.parse_args()
    probs = [1 / args.C] * args.C

    M = er_market(args.n, args.n, 3.0 / args.n, seed=0)
    groups = random_coloring(M.elements, probs, seed=0)
    unit = warm_rank(M)
    calls = 0
    inner = M._rank

    def counted(S):
        nonlocal calls
        calls += 1
        return inner(S)

    M._rank = counted
    pof, t_pof = timed(price_of_fairness, M, groups)
    print(f"transversal market {args.n} x {args.n}, mean degree 3, C = {args.C} (shared machine timings)")
    print(f"  warm full rank evaluation: {unit * 1e3:.1f} ms")
    print(f"  price_of_fairness: {t_pof:.3f} s = {t_pof / unit:.1f} warm ranks ({calls} rank calls; "
          f"2^C - 1 = {2**args.C - 1}); PoF = {pof:.4f}")

    Ma = er_market(args.n_alloc, args.n_alloc, 3.0 / args.n_alloc, seed=1)
    ga = random_coloring(Ma.elements, probs, seed=1)
    unit_a = warm_rank(Ma)
    A, t_int = timed(integral_fair_allocation, Ma, ga)
    L, t_lot = timed(fair_lottery, Ma, ga)
    print(f"transversal market {args.n_alloc} x {args.n_alloc}: warm rank {unit_a * 1e3:.1f} ms")
    print(f"  integral_fair_allocation (max-flow): {t_int:.2f} s = {t_int / unit_a:.0f} warm ranks, |A| = {len(A)}")
    print(f"  fair_lottery: {t_lot:.2f} s = {t_lot / unit_a:.0f} warm ranks, {len(L.weights)} allocations, "
          f"max |E counts - lambda* u| = {L.max_count_error:.1e}, lottery PoF {L.pof:.4f}, "
          f"integral PoF {L.integral_pof:.4f}")


if __name__ == "__main__":
    main()
