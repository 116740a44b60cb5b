"""Throughput of the Ray executor against the local ones on the same independent units, in one run.

    python benchmarks/ray_executor.py [--method vfs] [--units 8] [--scale smoke]

The units are (method, seed) for seeds 0..N-1. Timed: the local serial executor, local worker processes
(--jobs 2) and a 2-CPU local Ray instance (startup timed apart: a cluster is started once for many units).
Target: Ray's wall time <= 1.2x the local executor's with the same parallelism (2 processes).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

from neurips25.repro.executors import RayExecutor
from neurips25.repro.runner import run_methods


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--method", default="vfs")
    p.add_argument("--units", type=int, default=8)
    p.add_argument("--scale", default="smoke")
    args = p.parse_args(argv)
    seeds = list(range(args.units))
    quiet = dict(echo=lambda s: None)
    with tempfile.TemporaryDirectory() as tmp:
        kw = dict(scale=args.scale, seeds=seeds, **quiet)
        serial = timed(lambda: run_methods([args.method], out=f"{tmp}/serial", **kw))
        jobs2 = timed(lambda: run_methods([args.method], out=f"{tmp}/jobs2", jobs=2, **kw))
        ex = RayExecutor(num_cpus=2)
        start = timed(ex._init)
        ray_wall = timed(lambda: run_methods([args.method], out=f"{tmp}/ray", executor=ex, **kw))
        ex.shutdown()
    print(f"{args.units} units of {args.method} at scale {args.scale}; load average {os.getloadavg()[0]:.2f} "
          f"on {os.cpu_count()} cores")
    print(f"  local serial          {serial:7.1f} s")
    print(f"  local --jobs 2        {jobs2:7.1f} s")
    print(f"  ray, 2 CPUs           {ray_wall:7.1f} s  (+ {start:.1f} s to start the local instance)")
    ratio = ray_wall / jobs2
    print(f"  ray / local --jobs 2  {ratio:7.2f}  (target <= 1.2: {'met' if ratio <= 1.2 else 'NOT met'})")
    print(f"  ray / local serial    {ray_wall / serial:7.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
