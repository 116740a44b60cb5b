"""3DID solver speed: seconds per shape by grid, the step against its previous form, GFLOP/s vs matmul peak.

    python benchmarks/inverse3d.py [--steps 40] [--repeats 3] [--threads 1]

Two legs per grid, interleaved (A B A B ...) and repeated so that load drift on a shared machine hits both
alike: **A** the production :meth:`BrinkmanSpectralNS.solve`; **B** the same solve with the previous step,
which inverse-transformed ``u_hat`` for the nonlinear term although the step already had ``u`` (3 more FFTs a
step). The reported time is the median over repeats; the ratio is median(B) / median(A). Per-shape times are
scaled to the reproduction's 350 steps. The scaling exponent is the slope of log(time) against log(N);
pure FFT cost would give the slope of N log N over the same grids. GFLOP/s counts 12 real FFTs a step
(``2.5 N log2 N`` flops each) and ~150 flops per cell of pointwise work, against the fp32 matmul rate.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
import torch

from neurips25.inverse3d import BrinkmanSpectralNS, solid_mask, sphere_sdf, voxelize

# the design grids (48x24x24 quick / paper, 64x32x32 the second grid) and c1's sphere grids (12 and 16 cells/D)
GRIDS = [(24, 12, 12), (32, 16, 16), (48, 24, 24), (64, 32, 32), (96, 48, 48), (128, 64, 64)]


class PreviousStep(BrinkmanSpectralNS):
    """The solver as it was before the step reused ``u`` (recomputes it from ``u_hat``)."""

    def _rhs_hat(self, u_hat, u=None):
        return super()._rhs_hat(u_hat, None)


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
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    peak = matmul_gflops()
    rows = []
    for g in GRIDS:
        legs = {"A": BrinkmanSpectralNS(grid=g, steps=args.steps, cfl=0.25),
                "B": PreviousStep(grid=g, steps=args.steps, cfl=0.25)}
        occ = solid_mask(voxelize(sphere_sdf((2.5, 2.0, 2.0), 0.5), g, legs["A"].h))
        drags = {k: ns.solve(occ, return_fields=False).drag for k, ns in legs.items()}  # warm-up + agreement
        times = {"A": [], "B": []}
        for _ in range(args.repeats):
            for k, ns in legs.items():
                times[k].append(_timed(lambda ns=ns, occ=occ: ns.solve(occ, return_fields=False)) / args.steps)
        a, b = float(np.median(times["A"])), float(np.median(times["B"]))
        n = int(np.prod(g))
        rows.append((g, n, a, b, flops_per_step(n) / a / 1e9, abs(drags["A"] / drags["B"] - 1),
                     (min(times["A"]), max(times["A"]))))
    n = np.array([r[1] for r in rows], float)
    t = np.array([r[2] for r in rows])
    slope = np.polyfit(np.log(n), np.log(t), 1)[0]
    nlogn = np.polyfit(np.log(n), np.log(n * np.log(n)), 1)[0]
    print(f"threads {args.threads}; matmul peak {peak:.1f} GFLOP/s (fp32, 1024^3); {args.repeats} interleaved repeats")
    print(f"{'grid':>14} {'cells':>8} {'A ms/step':>10} {'A range':>14} {'B ms/step':>10} {'B/A':>6} "
          f"{'s/shape(350)':>13} {'GFLOP/s':>8} {'of peak':>8} {'|dA/dB-1|':>10}")
    for g, cells, a, b, gf, dd, (lo, hi) in rows:
        print(f"{str(g):>14} {cells:8d} {a * 1e3:10.2f} {f'{lo * 1e3:.2f}-{hi * 1e3:.2f}':>14} {b * 1e3:10.2f} "
              f"{b / a:6.2f} {a * 350:13.2f} {gf:8.2f} {gf / peak:8.1%} {dd:10.1e}")
    print(f"scaling exponent time ~ N^{slope:.2f}; N log N over these grids ~ N^{nlogn:.2f} "
          f"(ratio {slope / nlogn:.2f})")


if __name__ == "__main__":
    main()
