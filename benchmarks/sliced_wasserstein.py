"""Benchmark: our sliced_wasserstein against POT's ot.sliced_wasserstein_distance, same run, same projections.

Targets (issue 9): on 10k x 2 samples our time <= 1.2x POT's; report the seconds of fit + transform of
SlicedWassersteinFPCA on 200 distributions of 500 points, with the v2 defaults (issue 32: M = 201, robust
bandwidth, unit-free location) against the v1 settings in the same run. Times are the best of several
repeats, in CPU seconds of this process as well as wall seconds (the machine is shared, so ratios and CPU
times matter, absolute wall times do not).

Run: python benchmarks/sliced_wasserstein.py
"""

from __future__ import annotations

import time

import numpy as np

from neurips25.sliced_wasserstein import (
    LQDTransform,
    SlicedWassersteinFPCA,
    directions,
    gaussian_family,
    sliced_wasserstein,
)


def best_of(fn, repeats: int = 7, clock=time.perf_counter) -> float:
    times = []
    for _ in range(repeats):
        t0 = clock()
        fn()
        times.append(clock() - t0)
    return min(times)


def main() -> None:
    import ot

    rng = np.random.default_rng(0)
    print("sliced_wasserstein vs POT (same projections, best of 7)")
    print(f"{'case':<34}{'ours (s)':>10}{'POT (s)':>10}{'ratio':>8}  {'|diff|':>8}")
    for n_a, n_b, J in [(10_000, 10_000, 50), (10_000, 10_000, 200), (10_000, 7_000, 50)]:
        a = rng.normal(size=(n_a, 2))
        b = rng.normal(size=(n_b, 2)) * [1.5, 0.5] + 1.0
        D = directions(2, J, kind="random", seed=1)
        P = np.ascontiguousarray(D.T)
        ours = best_of(lambda: sliced_wasserstein(a, b, dirs=D))  # noqa: B023
        pot = best_of(lambda: ot.sliced_wasserstein_distance(a, b, projections=P))  # noqa: B023
        diff = abs(sliced_wasserstein(a, b, dirs=D) - ot.sliced_wasserstein_distance(a, b, projections=P))
        target = "  (target <= 1.2)" if n_a == n_b == 10_000 and J == 50 else ""
        case = f"{n_a} vs {n_b} x 2, J={J}"
        print(f"{case:<34}{ours:>10.4f}{pot:>10.4f}{ours / pot:>8.2f}  {diff:>8.1e}{target}")

    fam = gaussian_family(200, 500, seed=0)
    print("\nSlicedWassersteinFPCA fit + transform, 200 distributions x 500 points, J=90 (best of 3)")
    print(f"  {'setting':<44}{'CPU (s)':>9}{'wall (s)':>10}")
    v1 = dict(n_quantiles=101, bandwidth="scott", slice_transform=LQDTransform(location_weight=1.0))
    cpu = {}
    settings = [("lqd, v2 defaults (M=201, robust, auto weight)", {}),
                ("lqd, v1 settings (M=101, Scott, weight 1)", v1),
                ("quantile, M=201", dict(slice_transform="quantile"))]
    for label, kw in settings:
        est = SlicedWassersteinFPCA(n_components=3, **kw)
        job = lambda: est.fit(fam.samples).transform(fam.samples)  # noqa: B023, E731
        cpu[label] = best_of(job, repeats=3, clock=time.process_time)
        print(f"  {label:<44}{cpu[label]:>9.2f}{best_of(job, repeats=1):>10.2f}")
    keys = list(cpu)
    print(f"  v2 / v1 CPU ratio: {cpu[keys[0]] / cpu[keys[1]]:.2f}")


if __name__ == "__main__":
    main()
