"""Fake methods for the Ray executor tests, importable by Ray workers (PYTHONPATH = this folder)."""

import os
import time
from pathlib import Path

from neurips25.repro import Claim, Outcome, register

STATE = Path(os.environ.get("RAY_FAKE_STATE", "/tmp"))


@register("ray_quick", title="a quick deterministic fake")
def run_quick(scale, seed, out):
    import numpy as np

    x = float(np.random.default_rng(seed).normal())
    (out / "figures" / "x.png").write_bytes(b"png")
    return Outcome([Claim("c1", "x", "any", kind="headline").judge(True, {"x": x}, summary=f"x {x:.3f}")])


@register("ray_victim", title="its worker is killed on the first attempt")
def run_victim(scale, seed, out):
    attempt = STATE / f"victim_attempt_{seed}"
    if not attempt.exists():
        attempt.write_text(str(os.getpid()))
        time.sleep(120)  # the test kills this worker process now
    return [Claim("c1", "survived", "any", kind="headline").judge(True, {"seed": seed})]


def burn(item):
    """CPU-bound work of a fixed amount (for ctx.map and throughput)."""
    seed, n = item
    acc = 0
    for i in range(n):
        acc = (acc * 31 + i + seed) % 1000003
    return acc


FANOUT_N = 4_000_000  # per item: ~0.3 s of CPU on this machine, well above a unit's own share


@register("ray_fanout", title="fans out inside the reproduction with ctx.map")
def run_fanout(scale, seed, out, ctx):
    vals = ctx.map(burn, [(seed + k, FANOUT_N) for k in range(4)])
    return [Claim("c1", "fan-out", "any", kind="headline").judge(True, {"vals": vals, "ctx": ctx.kind})]


@register("ray_burn", title="a fixed amount of CPU work")
def run_burn(scale, seed, out):
    n = int(os.environ.get("RAY_FAKE_BURN", "3000000"))
    return [Claim("c1", "burn", "any", kind="check").judge(True, {"acc": burn((seed, n))})]
