"""CPU and wall time of every test folder against its 60 s CPU budget (issue #59), one folder per pytest process.

Usage::

    python benchmarks/test_budget.py            # every folder under tests/, writes tests/contracts/test_budget.json
    python benchmarks/test_budget.py scm rspool # only these (the JSON keeps the others' last figures)

Each folder runs as ``python -m pytest -q tests/<folder>`` with ``NEURIPS25_REQUIRE_ALL=1`` (as ``make test``
runs it); its CPU time is the child's user + system time (``resource.getrusage(RUSAGE_CHILDREN)``), so a test
that starts a subprocess counts too. The load average at the start and end of each folder is kept beside its
figures: a time taken while other jobs share the machine is an upper bound, not a test of the budget.
``docs/contracts.md`` renders the JSON (``tests/contracts/contract_table.py --write``).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "contracts" / "test_budget.json"
BUDGET_CPU_S = 60.0


def folders() -> list[str]:
    return sorted(p.name for p in (ROOT / "tests").iterdir() if p.is_dir() and any(p.glob("test_*.py")))


def measure(folder: str) -> dict:
    """Run one test folder in a child pytest; its CPU (user + sys), wall, exit code and the load around it."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    env = dict(os.environ, NEURIPS25_REQUIRE_ALL="1")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"tests/{folder}"],
                          cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    tail = [ln for ln in proc.stdout.splitlines() if re.match(r"^=* ?\d+ (passed|failed)", ln)]
    return {"cpu_s": round(cpu, 1), "wall_s": round(wall, 1), "exit_code": proc.returncode,
            "result": tail[-1].strip("= ") if tail else "", "load_start": round(load0, 2),
            "load_end": round(os.getloadavg()[0], 2)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("folders", nargs="*", help="test folders (default: all)")
    args = p.parse_args(argv)
    chosen = args.folders or folders()
    unknown = sorted(set(chosen) - set(folders()))
    if unknown:
        p.error(f"unknown test folder(s): {', '.join(unknown)}; known: {', '.join(folders())}")
    data = json.loads(OUT.read_text()) if OUT.is_file() else {}
    data.setdefault("folders", {})
    for folder in chosen:
        row = measure(folder)
        data["folders"][folder] = row
        mark = "" if row["cpu_s"] <= BUDGET_CPU_S else "  OVER BUDGET"
        print(f"{folder:22s} {row['cpu_s']:7.1f} s CPU {row['wall_s']:7.1f} s wall  load {row['load_start']:.1f}"
              f"->{row['load_end']:.1f}  {row['result']}{mark}", flush=True)
    data["measured_at"] = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    data["cpus"] = os.cpu_count()
    data["budget_cpu_s"] = BUDGET_CPU_S
    OUT.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    total = sum(r["cpu_s"] for r in data["folders"].values())
    print(f"total {total:.0f} s CPU over {len(data['folders'])} folders -> {OUT.relative_to(ROOT)}")
    return 0 if all(r["exit_code"] == 0 for r in data["folders"].values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
