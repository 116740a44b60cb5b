"""Benchmark: our sliced_wasserstein against POT's ot.sliced_wasserstein_distance, same run, same projections.

Targets (issue 9): on 10k x 2 samples our time <= 1.2x POT's; report the seconds of fit + transform of
SlicedWassersteinFPCA on 200 distributions of 500 points. Times are the best of several repeats (the
machine is shared, so ratios matter, absolute times do not).

Run: python benchmarks/sliced_wasserstein.py
"""

from __future__ import annotations

import time

import numpy as np

from neurips25.sliced_wasserstein import (
    SlicedWassersteinFPCA,
    directions,
    gaussian_family,
    sliced_wasserstein,
)


def best_of(fn, repeats: int = 7) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
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
    print("\nSlicedWassersteinFPCA fit + transform, 200 distributions x 500 points, J=90, M=101 (best of 3)")
    for tr in ("lqd", "quantile"):
        est = SlicedWassersteinFPCA(n_components=3, slice_transform=tr)
        sec = best_of(lambda: est.fit(fam.samples).transform(fam.samples), repeats=3)  # noqa: B023
        print(f"  slice_transform={tr!r:<12} {sec:.2f} s")


if __name__ == "__main__":
    main()
