"""Quick-scale wall and CPU time of every method against its ceiling, and `make demo` against 75 minutes.

Usage::

    python benchmarks/reproduce_budget.py                  # run every usable method at quick scale, then report
    python benchmarks/reproduce_budget.py dbcare fml       # only these
    python benchmarks/reproduce_budget.py --run runs/X     # report on a finished run directory (e.g. make demo's)

Ceilings are each issue's quick-scale limit on an idle 2-core machine (``repro.registry.QUICK_BUDGET_S``).
Times taken while other jobs share the machine are not a test of the ceiling: the load average at the start
and end is printed beside the table so a reader can tell.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
from pathlib import Path

from neurips25.repro.registry import METHODS
from neurips25.repro.runner import run_methods
from neurips25.repro.store import RunDir

DEMO_BUDGET_S = 75 * 60


def elapsed_s(results: dict[str, dict], config: dict) -> float | None:
    """Wall time of the whole run: the length of the union of the units' [finish - wall, finish] intervals.

    Units that ran in parallel overlap, so this is less than the sum of their wall times; a directory that
    was partly re-run later (``--force``) does not count the gap between the two runs, which measuring from
    the directory's creation did."""
    intervals = []
    for r in results.values():
        try:
            end = dt.datetime.fromisoformat(r["finished_at"]).timestamp()
            intervals.append((end - float(r["wall_s"]), end))
        except (KeyError, ValueError, TypeError):
            return None
    if not intervals:
        return None
    total, cur_start, cur_end = 0.0, *sorted(intervals)[0]
    for start, end in sorted(intervals)[1:]:
        if start > cur_end:
            total += cur_end - cur_start
            cur_start, cur_end = start, end
        else:
            cur_end = max(cur_end, end)
    return total + cur_end - cur_start


def table(results: dict[str, dict], elapsed: float | None = None) -> tuple[list[str], bool]:
    lines = [f"{'method':<20} {'wall s':>8} {'CPU s':>8} {'ceiling s':>10} {'wall/ceiling':>13}  verdict",
             "-" * 72]
    ok_all, total = True, 0.0
    for slug, res in results.items():
        ceiling = METHODS[slug].quick_budget_s if slug in METHODS else None
        wall, cpu = res.get("wall_s", float("nan")), res.get("cpu_s")
        total += wall
        ratio = wall / ceiling if ceiling else float("nan")
        within = res.get("status") == "ok" and ceiling is not None and wall <= ceiling
        ok_all &= within
        status = "within" if within else ("ERROR" if res.get("status") != "ok" else "OVER")
        cpu_text = "-" if cpu is None else f"{cpu:8.0f}"
        lines.append(f"{slug:<20} {wall:8.0f} {cpu_text:>8} {ceiling or float('nan'):10.0f} {ratio:13.2f}  {status}")
    lines.append("-" * 72)
    run_s = total if elapsed is None else elapsed
    within_demo = run_s <= DEMO_BUDGET_S
    if elapsed is not None:
        lines.append(f"{'sum of walls':<20} {total:8.0f}   (units overlapped: see the run's elapsed time below)")
    label = "all methods" if elapsed is None else "run elapsed"
    lines.append(f"{label:<20} {run_s:8.0f} {'':>8} {DEMO_BUDGET_S:10.0f} {run_s / DEMO_BUDGET_S:13.2f}  "
                 f"{'within' if within_demo else 'OVER'}")
    return lines, ok_all and within_demo


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("slugs", nargs="*", help="methods (default: every usable one)")
    p.add_argument("--run", help="report on this finished run directory instead of running")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    load0 = os.getloadavg()
    if args.run:
        results = RunDir(args.run).results()
        if args.slugs:
            results = {s: r for s, r in results.items() if s in args.slugs}
        if not results:
            print(f"no results in {args.run}", file=sys.stderr)
            return 2
    else:
        slugs = args.slugs or [m.slug for m in METHODS.values() if m.usable()]
        out = Path("runs") / ("budget-" + dt.datetime.now().strftime("%Y%m%d-%H%M%S"))
        results = run_methods(slugs, scale="quick", seed=args.seed, out=out)
    config = RunDir(args.run).config() if args.run else RunDir(out).config()
    parallel = int(config.get("jobs", 1) or 1) > 1 or config.get("executor") == "ray"
    lines, ok = table(results, elapsed_s(results, config) if parallel else None)
    print("\n".join(lines))
    print(f"load average (1 min) at start {load0[0]:.2f}, at end {os.getloadavg()[0]:.2f} on {os.cpu_count()} "
          "cores; ceilings hold for an idle machine")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
