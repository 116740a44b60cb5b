"""Machinery v2: thread caps in force whatever the import order, CPU time, claim kinds, progress lines,
and a run killed with SIGKILL mid-method that resumes without touching what finished."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from neurips25.repro import Claim, register
from neurips25.repro.claims import describe_claims, headline_verdict, kind_counts
from neurips25.repro.registry import unregister
from neurips25.repro.runner import run_methods

# A script that registers fake methods, then runs the CLI: the subprocess is a fresh interpreter, as a user's is.
FAKES = textwrap.dedent('''
    import json, os, subprocess, sys, time
    from pathlib import Path
    if os.environ.get("IMPORT_TORCH_FIRST"):
        import torch
        torch.set_num_threads(2)
    from neurips25.repro import Claim, Outcome, register
    from neurips25.cli import main

    STATE = Path(os.environ["FAKE_STATE"])

    @register("fake_threads", title="records the thread settings in force")
    def run_threads(scale, seed, out):
        import torch
        from threadpoolctl import threadpool_info
        child = subprocess.run([sys.executable, "-c", "import os; print(os.environ.get('OMP_NUM_THREADS'))"],
                               capture_output=True, text=True, check=True).stdout.strip()
        seen = {"torch": torch.get_num_threads(), "pools": [p["num_threads"] for p in threadpool_info()],
                "child_omp": child}
        ok = seen["torch"] == 1 and all(n == 1 for n in seen["pools"]) and child == "1"
        return [Claim("c1", "threads capped", "all 1", kind="check").judge(ok, seen)]

    @register("fake_first", title="deterministic, finishes")
    def run_first(scale, seed, out):
        import numpy as np
        x = np.random.default_rng(seed).normal(size=5)
        (STATE / "first_runs").open("a").write("x")
        return Outcome([Claim("c1", "sum", "any", kind="headline").judge(True, {"sum": float(x.sum())})])

    @register("fake_second", title="killed on its first run")
    def run_second(scale, seed, out):
        import numpy as np
        if os.environ.get("HANG"):
            (out / "figures" / "stale.png").write_bytes(b"half-written by the killed run")
            (STATE / "second_started").touch()
            time.sleep(600)
        y = np.random.default_rng(seed + 1).normal(size=3)
        return Outcome([Claim("c1", "mean", "any", kind="headline").judge(True, {"mean": float(y.mean())})])

    @register("fake_third", title="runs after the killed one")
    def run_third(scale, seed, out):
        return [Claim("c1", "ok", "any", kind="check").judge(True, {"v": seed})]

    sys.exit(main(sys.argv[1:]))
''')


def _run_script(tmp_path, args, env_extra=None, wait=True):
    script = tmp_path / "fakes.py"
    script.write_text(FAKES)
    state = tmp_path / "state"
    state.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "IMPORT_TORCH_FIRST", "HANG")}
    env.update({"FAKE_STATE": str(state), **(env_extra or {})})
    cmd = [sys.executable, str(script), *args]
    if wait:
        return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=240)
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


@pytest.mark.parametrize("torch_first", [False, True])
def test_thread_caps_in_force_inside_a_reproduction_whatever_the_import_order(tmp_path, torch_first):
    env = {"IMPORT_TORCH_FIRST": "1"} if torch_first else {}
    proc = _run_script(tmp_path, ["reproduce", "fake_threads", "--scale", "smoke", "--out", str(tmp_path / "r")],
                       env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    res = json.loads((tmp_path / "r" / "fake_threads" / "result.json").read_text())
    claim = res["claims"][0]
    assert claim["verdict"] == "reproduced", claim["measured"]
    assert claim["measured"]["child_omp"] == "1"
    # torch is None at entry for a numpy-only method (not imported for it); the claim saw it capped anyway
    assert res["threads"]["torch"] in (None, 1) and res["threads"]["env"]["OMP_NUM_THREADS"] == "1"


def test_runner_restores_thread_settings_after_a_method(tmp_path):
    import torch

    torch.set_num_threads(2)
    seen = {}

    @register("fake_cap", title="sees the cap")
    def run_cap(scale, seed, out):
        seen["torch"], seen["omp"] = torch.get_num_threads(), os.environ.get("OMP_NUM_THREADS")
        return [Claim("c1", "x", "y", kind="check").judge(True)]

    try:
        run_methods(["fake_cap"], scale="smoke", out=tmp_path / "r", echo=lambda s: None)
    finally:
        unregister("fake_cap")
    assert seen == {"torch": 1, "omp": "1"}
    assert torch.get_num_threads() == 2 and os.environ.get("OMP_NUM_THREADS") != "1"


def test_kill_mid_method_then_resume_reruns_only_the_unfinished_one(tmp_path):
    out = tmp_path / "run"
    args = ["reproduce", "fake_first", "fake_second", "fake_third", "--scale", "smoke", "--out", str(out)]
    proc = _run_script(tmp_path, args, {"HANG": "1"}, wait=False)
    deadline = time.time() + 120
    while not (tmp_path / "state" / "second_started").exists():
        assert proc.poll() is None, proc.stdout.read()
        assert time.time() < deadline, "fake_second never started"
        time.sleep(0.1)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    first = out / "fake_first" / "result.json"
    assert first.is_file() and not (out / "fake_second" / "result.json").exists()
    assert not (out / "fake_third" / "result.json").exists()
    before = first.read_bytes()
    first_mtime = first.stat().st_mtime_ns

    resumed = _run_script(tmp_path, args)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "fake_first: already finished" in resumed.stdout
    assert first.read_bytes() == before and first.stat().st_mtime_ns == first_mtime  # untouched
    assert (tmp_path / "state" / "first_runs").read_text() == "x"  # ran once in all
    assert not (out / "fake_second" / "figures" / "stale.png").exists()  # the re-run started clean
    assert json.loads((out / "fake_second" / "result.json").read_text())["figures"] == []

    clean = _run_script(tmp_path, ["reproduce", "fake_first", "fake_second", "fake_third", "--scale", "smoke",
                                   "--out", str(tmp_path / "clean")])
    assert clean.returncode == 0, clean.stdout + clean.stderr
    for slug in ("fake_first", "fake_second", "fake_third"):
        a = json.loads((out / slug / "result.json").read_text())["claims"]
        b = json.loads((tmp_path / "clean" / slug / "result.json").read_text())["claims"]
        assert a == b, slug


def test_cpu_time_is_recorded_beside_wall_time(tmp_path):
    @register("fake_busy", title="burns CPU")
    def run_busy(scale, seed, out):
        t = time.process_time()
        while time.process_time() - t < 0.3:
            sum(range(1000))
        time.sleep(0.2)
        return [Claim("c1", "x", "y", kind="check").judge(True)]

    try:
        res = run_methods(["fake_busy"], scale="smoke", out=tmp_path / "r", echo=lambda s: None)["fake_busy"]
    finally:
        unregister("fake_busy")
    assert res["cpu_s"] >= 0.25 and res["wall_s"] >= res["cpu_s"] + 0.1


def test_progress_lines_without_a_terminal(tmp_path):
    @register("fake_slow", title="takes a moment")
    def run_slow(scale, seed, out):
        time.sleep(0.35)
        return [Claim("c1", "x", "y", kind="headline").judge(False, summary="x 1; needs 2")]

    lines = []
    try:
        run_methods(["fake_slow"], scale="smoke", out=tmp_path / "r", echo=lines.append, heartbeat_s=0.1)
    finally:
        unregister("fake_slow")
    assert lines[0].startswith("  fake_slow: started")
    assert any("still running" in ln and "elapsed" in ln for ln in lines)
    assert "headline: not reproduced" in lines[-1] and "s wall" in lines[-1] and "CPU" in lines[-1]


def test_claim_kinds_required_validated_and_counted_apart():
    with pytest.raises(TypeError):
        Claim("c1", "s", "k")  # kind is required
    with pytest.raises(ValueError, match="claim kind must be one of headline, supporting, check"):
        Claim("c1", "s", "k", kind="main")
    claims = [Claim("h", "s", "k", kind="headline").judge(False),
              Claim("s1", "s", "k", kind="supporting").judge(True),
              Claim("s2", "s", "k", kind="supporting").judge(None),
              Claim("k1", "s", "k", kind="check").judge(True), Claim("k2", "s", "k", kind="check").judge(True)]
    # four of five reproduced, but the headline failed: the line says so first
    assert describe_claims(claims) == "headline: not reproduced; supporting 1/2; checks 2/2"
    assert kind_counts(claims) == {"headline": (0, 1), "supporting": (1, 2), "check": (2, 2)}
    assert headline_verdict([c.to_dict() for c in claims[1:]]) == "none"
    d = claims[0].to_dict()
    assert d["kind"] == "headline" and Claim.from_dict(d).kind.value == "headline"
    legacy = {k: v for k, v in d.items() if k != "kind"}
    assert Claim.from_dict(legacy).kind.value == "supporting"
    with pytest.raises(TypeError, match="summary must be a str"):
        Claim("c", "s", "k", kind="check").judge(True, summary=3)


def test_a_claim_that_flips_between_seeds_is_unstable_not_reproduced(tmp_path):
    @register("fake_flip", title="passes on even seeds only")
    def run_flip(scale, seed, out):
        return [Claim("c1", "x", "y", kind="headline").judge(seed % 2 == 0, {"v": float(seed)}),
                Claim("c2", "z", "w", kind="check").judge(True, {"v": 1.0})]

    try:
        res = run_methods(["fake_flip"], scale="smoke", seeds=[0, 1, 2], out=tmp_path / "r",
                          echo=lambda s: None)["fake_flip"]
    finally:
        unregister("fake_flip")
    c1, c2 = res["claims"]
    assert c1["verdict"] == "unstable" and c1["agreement"] == "2/3 reproduced"
    assert c1["spread"]["v"]["mean"] == pytest.approx(1.0) and c1["spread"]["v"]["sd"] == pytest.approx(1.0)
    assert c2["verdict"] == "reproduced" and c2["agreement"] == "3/3 reproduced"
    assert describe_claims(res["claims"]).startswith("headline: unstable")
    from neurips25.repro.report import render_report

    md, page = render_report(tmp_path / "r")
    text = md.read_text()
    assert "| c1 | reproduced | not reproduced | reproduced | 2/3 reproduced |" in text
    assert "agreement" in page.read_text()
