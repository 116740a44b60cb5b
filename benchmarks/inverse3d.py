"""3DID solver speed: seconds per shape vs grid, scaling exponent against N log N, GFLOP/s vs matmul peak.

    python benchmarks/inverse3d.py [--steps 60] [--threads 1]

For each grid the solver runs ``--steps`` time steps around a sphere (timed after one warm-up call) and the
per-shape time is scaled to the reproduction's 350 steps. The scaling exponent is the slope of log(time)
against log(N) (N cells); pure FFT cost would give the slope of N log N over the same grids. Achieved GFLOP/s
counts the real-to-complex FFTs (12 per step, ``2.5 N log2 N`` flops each) and the pointwise work
(~150 flops per cell per step), against the measured single-precision matmul rate on the same threads.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
import torch

from neurips25.inverse3d import BrinkmanSpectralNS, sphere_sdf, voxelize

GRIDS = [(24, 12, 12), (32, 16, 16), (40, 20, 20), (48, 24, 24), (64, 32, 32)]


def matmul_gflops(n=1024, repeat=5):
    a, b = torch.randn(n, n), torch.randn(n, n)
    a @ b
    best = min(_timed(lambda: a @ b) for _ in range(repeat))
    return 2 * n**3 / best / 1e9


def _timed(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def flops_per_step(n_cells):
    return 12 * 2.5 * n_cells * math.log2(n_cells) + 150 * n_cells


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    peak = matmul_gflops()
    rows = []
    for g in GRIDS:
        ns = BrinkmanSpectralNS(grid=g, steps=args.steps)
        occ = voxelize(sphere_sdf((2.5, 2.0, 2.0), 0.5), ns.grid, ns.h)
        ns.solve(occ, return_fields=False)
        t = min(_timed(lambda ns=ns, occ=occ: ns.solve(occ, return_fields=False)) for _ in range(2))
        n = int(np.prod(g))
        rows.append((g, n, t / args.steps, flops_per_step(n) / (t / args.steps) / 1e9))
    n = np.array([r[1] for r in rows], float)
    t = np.array([r[2] for r in rows])
    slope = np.polyfit(np.log(n), np.log(t), 1)[0]
    nlogn = np.polyfit(np.log(n), np.log(n * np.log(n)), 1)[0]
    print(f"threads {args.threads}; matmul peak {peak:.1f} GFLOP/s (fp32, 1024^3)")
    print(f"{'grid':>14} {'cells':>8} {'ms/step':>9} {'s/shape(350)':>13} {'GFLOP/s':>8} {'of peak':>8}")
    for g, cells, per, gf in rows:
        print(f"{str(g):>14} {cells:8d} {per * 1e3:9.2f} {per * 350:13.2f} {gf:8.2f} {gf / peak:8.1%}")
    print(f"scaling exponent time ~ N^{slope:.2f}; N log N over these grids ~ N^{nlogn:.2f} "
          f"(ratio {slope / nlogn:.2f})")


if __name__ == "__main__":
    main()
