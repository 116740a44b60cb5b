"""The Ray executor: same claims as a local run, a killed worker retried, fan-out inside a reproduction,
several seeds combined. Skipped where Ray is not installed (the `cluster` extra); CI installs it."""

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'neurips25[cluster]')")

from neurips25.repro.executors import RayExecutor  # noqa: E402
from neurips25.repro.registry import METHODS, unregister  # noqa: E402
from neurips25.repro.runner import run_methods  # noqa: E402

HERE = Path(__file__).parent
FAKES = {s: "ray_fakes" for s in ("ray_quick", "ray_victim", "ray_fanout", "ray_burn")}


@pytest.fixture(scope="module")
def ray_executor(tmp_path_factory):
    state = tmp_path_factory.mktemp("ray_state")
    os.environ["RAY_FAKE_STATE"] = str(state)
    sys.path.insert(0, str(HERE))
    import ray_fakes  # noqa: F401  (registers the fakes in the driver too)

    pythonpath = os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])
    ex = RayExecutor(num_cpus=2, runtime_env={"env_vars": {"PYTHONPATH": pythonpath, "RAY_FAKE_STATE": str(state),
                                                           "NEURIPS25_QUIET": "1"}}, modules=FAKES)
    ex.state = state
    yield ex
    ex.shutdown()
    sys.path.remove(str(HERE))
    for slug in FAKES:
        unregister(slug)


TIMING = re.compile(r"(_s|_ms|_sec|seconds|time|times|_per_s|speedup|ratio_time)$", re.I)


def _untimed(value):
    """A measurement without its wall-clock figures (they differ between any two runs, local or not)."""
    if isinstance(value, dict):
        return {k: _untimed(v) for k, v in value.items() if not TIMING.search(str(k))}
    if isinstance(value, list):
        return [_untimed(v) for v in value]
    return value


def _claims(out, slug):
    claims = json.loads((Path(out) / slug / "result.json").read_text())["claims"]
    return [{"id": c["id"], "kind": c["kind"], "verdict": c["verdict"], "measured": _untimed(c["measured"])}
            for c in claims]


def test_same_claims_as_the_local_executor_for_three_methods(tmp_path, ray_executor):
    slugs = [s for s in ("vfs", "pref_diffusion", "fair_matroid") if METHODS[s].usable()]
    local = run_methods(slugs, scale="smoke", seed=1, out=tmp_path / "local", echo=lambda s: None)
    remote = run_methods(slugs, scale="smoke", seed=1, out=tmp_path / "ray", executor=ray_executor,
                         echo=lambda s: None)
    for slug in slugs:
        assert local[slug]["status"] == "ok" and remote[slug]["status"] == "ok", slug
        assert remote[slug]["executor"] == "ray"
        assert _claims(tmp_path / "local", slug) == _claims(tmp_path / "ray", slug), slug
        assert sorted(p.name for p in (tmp_path / "ray" / slug / "figures").iterdir()) == \
            sorted(p.name for p in (tmp_path / "local" / slug / "figures").iterdir())


def test_killed_worker_is_retried_and_nothing_finished_is_lost(tmp_path, ray_executor):
    state = ray_executor.state

    def killer():
        marker = state / "victim_attempt_0"
        deadline = time.time() + 120
        while not marker.exists() and time.time() < deadline:
            time.sleep(0.1)
        time.sleep(0.5)
        os.kill(int(marker.read_text()), signal.SIGKILL)

    t = threading.Thread(target=killer)
    t.start()
    res = run_methods(["ray_quick", "ray_victim"], scale="smoke", out=tmp_path / "r", executor=ray_executor,
                      echo=lambda s: None)
    t.join()
    assert res["ray_quick"]["status"] == "ok"
    assert res["ray_victim"]["status"] == "ok"  # retried on a fresh worker
    assert (tmp_path / "r" / "ray_quick" / "figures" / "x.png").read_bytes() == b"png"
    before = (tmp_path / "r" / "ray_quick" / "result.json").read_bytes()
    lines = []
    run_methods(["ray_quick", "ray_victim"], scale="smoke", out=tmp_path / "r", executor=ray_executor,
                echo=lines.append)
    assert sum("already finished" in ln for ln in lines) == 2
    assert (tmp_path / "r" / "ray_quick" / "result.json").read_bytes() == before


def test_ctx_map_fans_out_as_ray_tasks_with_local_results(tmp_path, ray_executor):
    local = run_methods(["ray_fanout"], scale="smoke", seed=2, out=tmp_path / "l", echo=lambda s: None)
    remote = run_methods(["ray_fanout"], scale="smoke", seed=2, out=tmp_path / "r", executor=ray_executor,
                         echo=lambda s: None)
    ml, mr = local["ray_fanout"]["claims"][0]["measured"], remote["ray_fanout"]["claims"][0]["measured"]
    assert ml["ctx"] == "local" and mr["ctx"] == "ray" and ml["vals"] == mr["vals"]
    # the unit's CPU includes its tasks' (they ran in other worker processes): not just the driver's share.
    # Compared with the tasks' work itself, measured here (the local unit's CPU also holds its process's start-up,
    # which on a fast CPU is as large as the work)
    import ray_fakes

    t0 = time.process_time()
    for k in range(4):
        ray_fakes.burn((2 + k, ray_fakes.FANOUT_N))
    work = time.process_time() - t0
    cr = remote["ray_fanout"]["cpu_s"]
    assert cr >= 0.6 * work, (cr, work)


def test_several_seeds_on_ray_match_local_and_are_combined(tmp_path, ray_executor):
    kw = dict(scale="smoke", seeds=[0, 1, 2], echo=lambda s: None)
    local = run_methods(["ray_quick"], out=tmp_path / "l", **kw)["ray_quick"]
    remote = run_methods(["ray_quick"], out=tmp_path / "r", executor=ray_executor, **kw)["ray_quick"]
    assert local["seeds"] == [0, 1, 2] and local["claims"] == remote["claims"]
    c = local["claims"][0]
    assert c["agreement"] == "3/3 reproduced" and set(c["per_seed"]) == {"0", "1", "2"}
    assert c["spread"]["x"]["n"] == 3
    for s in (0, 1, 2):
        assert (tmp_path / "r" / "ray_quick" / f"seed-{s}" / "result.json").is_file()


# A plugin module of fake methods and a driver that runs the CLI with it, both written by the test: Ray's
# workers import the module from PYTHONPATH, as they would a user's plugin.
KILL_FAKES = '''
import os, time
from pathlib import Path
from neurips25.repro import Claim, register

STATE = Path(os.environ["KILL_STATE"])

@register("rk_first", title="finishes before the driver is killed")
def run_first(scale, seed, out):
    with (STATE / "first_runs").open("a") as f:
        f.write("x")
    return [Claim("c1", "ok", "any", kind="headline").judge(True, {"seed": seed}, summary="ok")]

@register("rk_slow", title="still running when the driver is killed")
def run_slow(scale, seed, out):
    if os.environ.get("KILL_HANG"):
        (STATE / "slow_started").touch()
        time.sleep(300)
    return [Claim("c1", "ok", "any", kind="headline").judge(True, {"seed": seed}, summary="ok")]

@register("rk_last", title="queued behind the others")
def run_last(scale, seed, out):
    return [Claim("c1", "ok", "any", kind="check").judge(True, {"seed": seed}, summary="ok")]
'''
DRIVER = '''
import sys
import killfakes  # noqa: F401  (registers the plugin methods)
from neurips25.cli import main
sys.exit(main(sys.argv[1:]))
'''


def _driver(tmp_path, out, hang):
    (tmp_path / "killfakes.py").write_text(KILL_FAKES)
    (tmp_path / "driver.py").write_text(DRIVER)
    state = tmp_path / "state"
    state.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k != "KILL_HANG"}
    env.update({"KILL_STATE": str(state), "PYTHONPATH": os.pathsep.join([str(tmp_path), env.get("PYTHONPATH", "")]),
                **({"KILL_HANG": "1"} if hang else {})})
    cmd = [sys.executable, str(tmp_path / "driver.py"), "reproduce", "rk_first", "rk_slow", "rk_last",
           "--scale", "smoke", "--executor", "ray", "--jobs", "2", "--out", str(out)]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)


def test_driver_killed_mid_run_then_rerun_finishes_only_what_is_missing(tmp_path):
    out = tmp_path / "run"
    proc = _driver(tmp_path, out, hang=True)
    first = out / "rk_first" / "result.json"
    deadline = time.time() + 180
    try:
        while not (first.is_file() and (tmp_path / "state" / "slow_started").exists()):
            assert proc.poll() is None, proc.stdout.read()
            assert time.time() < deadline, "the driver never got rk_first done and rk_slow started"
            time.sleep(0.2)
        os.kill(proc.pid, signal.SIGKILL)  # the driver alone dies, as on a crash
        proc.wait(timeout=30)
    finally:
        try:  # then the local Ray instance it started (same session), so no worker sleeps on
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert not (out / "rk_slow" / "result.json").exists()
    finished = {slug: (out / slug / "result.json") for slug in ("rk_first", "rk_last")}
    finished = {slug: (p.read_bytes(), p.stat().st_mtime_ns) for slug, p in finished.items() if p.is_file()}
    assert "rk_first" in finished

    rerun = _driver(tmp_path, out, hang=False)
    text, _ = rerun.communicate(timeout=240)
    assert rerun.returncode == 0, text
    for slug, (data, mtime) in finished.items():  # what finished before the kill is skipped, untouched
        p = out / slug / "result.json"
        assert f"{slug}: already finished" in text and p.read_bytes() == data and p.stat().st_mtime_ns == mtime
    assert (tmp_path / "state" / "first_runs").read_text() == "x"  # ran once in all
    for slug in ("rk_slow", "rk_last"):
        res = json.loads((out / slug / "result.json").read_text())
        assert res["status"] == "ok" and res["executor"] == "ray", res
