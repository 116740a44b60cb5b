"""Issue #53: inverse3d's flow solves live in the runner's cache folder, so a killed unit re-runs with them cached."""

import os
import signal
import subprocess
import sys
import time

import pytest

from neurips25.repro.doctor import diagnose
from neurips25.repro.runner import run_methods

if not diagnose("inverse3d").usable:
    pytest.skip("needs the inverse3d extra (pip install \"neurips25[inverse3d]\")", allow_module_level=True)


@pytest.mark.slow
def test_a_killed_inverse3d_unit_reruns_with_its_solves_cached(tmp_path, monkeypatch):
    monkeypatch.delenv("NEURIPS25_INVERSE3D_CACHE", raising=False)
    out = tmp_path / "run"
    cache = out / "inverse3d" / "cache"
    env = {k: v for k, v in os.environ.items() if k != "NEURIPS25_INVERSE3D_CACHE"}
    proc = subprocess.Popen([sys.executable, "-m", "neurips25", "reproduce", "inverse3d", "--scale", "smoke",
                             "--out", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True, env=env)
    try:
        deadline = time.monotonic() + 150
        while time.monotonic() < deadline and len(list(cache.glob("*.npz"))) < 4 and proc.poll() is None:
            time.sleep(0.1)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the whole unit, mid-run
        proc.wait()
    cached = {p.name for p in cache.glob("*.npz")}
    assert len(cached) >= 4, "the killed run solved too few shapes before the kill"
    assert not (out / "inverse3d" / "result.json").exists()  # it was killed before it finished

    res = run_methods(["inverse3d"], scale="smoke", out=out, echo=lambda line: None)["inverse3d"]
    assert res["status"] == "ok", res["error"]
    hits, misses = res["metrics"]["cache"]["hits"], res["metrics"]["cache"]["misses"]
    assert hits >= len(cached)  # every solve the killed unit finished is read back, not solved again
    assert misses >= 1 and cached < {p.name for p in cache.glob("*.npz")}  # the rest was solved and added
