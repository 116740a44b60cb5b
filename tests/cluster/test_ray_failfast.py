"""Issue #53: the Ray executor fails fast: a wrong ``--address`` and an impossible resource request are errors
within seconds (each test < 40 s), before any progress line; nothing hangs on "still running"."""

import importlib
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("ray", reason="Ray is not installed (pip install 'neurips25[cluster]')")

from neurips25.repro import Claim, Outcome, register  # noqa: E402
from neurips25.repro.executors import RESOURCES, RayExecutor, Resources, _host_port  # noqa: E402
from neurips25.repro.registry import METHODS, unregister  # noqa: E402
from neurips25.repro.runner import run_methods  # noqa: E402
from neurips25.repro.store import code_identity  # noqa: E402


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_a_closed_address_errors_at_once_before_the_run_starts(tmp_path):
    port = closed_port()
    t0 = time.perf_counter()
    with pytest.raises(ConnectionError, match=rf"no Ray cluster at --address 127.0.0.1:{port}: cannot open"):
        run_methods(["dbcare"], scale="smoke", out=tmp_path / "run", echo=lambda line: None,
                    executor=RayExecutor(address=f"127.0.0.1:{port}", connect_timeout_s=5))
    assert time.perf_counter() - t0 < 10
    assert not (tmp_path / "run").exists()  # no config, no environment, no progress


def test_an_address_that_answers_but_is_not_ray_errors_within_the_timeout(tmp_path):
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(16)
    held = []

    def accept():  # answer the TCP handshake and say nothing, like a port that is not Ray's
        try:
            while True:
                held.append(srv.accept())
        except OSError:  # closed at the end of the test
            pass

    threading.Thread(target=accept, daemon=True).start()
    port = srv.getsockname()[1]
    t0 = time.perf_counter()
    # in a child process: the abandoned ray.init must not keep the CLI from exiting
    out = subprocess.run([sys.executable, "-m", "neurips25", "reproduce", "dbcare", "--scale", "smoke",
                          "--executor", "ray", "--address", f"127.0.0.1:{port}", "--connect-timeout", "4",
                          "--out", str(tmp_path / "run")], capture_output=True, text=True, timeout=60,
                         env=os.environ | {"NEURIPS25_QUIET": "1"})
    took = time.perf_counter() - t0
    srv.close()
    assert out.returncode == 2, out.stdout + out.stderr
    assert f"could not connect to the Ray cluster at --address 127.0.0.1:{port} within 4 s" in out.stderr
    assert "started at scale" not in out.stdout and "still running" not in out.stdout
    assert not (tmp_path / "run").exists()
    assert took < 40


def test_address_parsing_and_bad_arguments():
    assert _host_port("10.0.0.1:6379") == ("10.0.0.1", 6379)
    assert _host_port("ray://head:10001") == ("head", 10001)
    assert _host_port("head") == ("head", 6379)
    assert _host_port("auto") is None
    with pytest.raises(ValueError, match="address must look like host:port"):
        _host_port("head:port")
    with pytest.raises(ValueError, match="connect_timeout_s must be a positive number"):
        RayExecutor(address="auto", connect_timeout_s=0)
    with pytest.raises(ValueError, match="address must be a non-empty string"):
        RayExecutor(address="  ")


def test_infeasible_names_the_request_and_the_largest_node():
    ex = RayExecutor.__new__(RayExecutor)
    nodes = [{"host": "small", "address": "10.0.0.2", "cpus": 8.0, "memory_gb": 2.0, "gpus": 0.0},
             {"host": "big", "address": "10.0.0.1", "cpus": 4.0, "memory_gb": 5.5, "gpus": 0.0}]
    assert ex.infeasible("dbcare", nodes) is None  # 1 CPU, 2 GB: either node
    why = ex.infeasible("eva", nodes)  # 6 GB: no node
    assert "eva's request of 1 CPU, 6 GB memory and 0 GPU" in why
    assert "the largest node, big (10.0.0.1), has 4 CPU, 5.5 GB memory and 0 GPU" in why
    assert "no live node" in ex.infeasible("eva", [])


@pytest.fixture
def impossible():
    @register("fake_huge", title="asks for more memory than any node has")
    def run(scale, seed, out):
        return Outcome([Claim("c1", "never runs", "any", kind="headline").judge(True, {})])

    RESOURCES["fake_huge"] = Resources(memory_gb=1000.0)
    yield "fake_huge"
    RESOURCES.pop("fake_huge", None)
    unregister("fake_huge")


def test_an_impossible_request_is_an_error_naming_it_and_the_largest_node(tmp_path, impossible):
    here = str(Path(__file__).parent)
    sys.path.insert(0, here)
    import ray_fakes  # a feasible unit beside it, importable by the workers

    registered_before = "ray_quick" in METHODS
    importlib.reload(ray_fakes)  # registers ray_quick again if another module unregistered it
    t0 = time.perf_counter()
    ex = RayExecutor(num_cpus=1, modules={"ray_quick": "ray_fakes"}, runtime_env={"env_vars": {
        "PYTHONPATH": os.pathsep.join([here, os.environ.get("PYTHONPATH", "")]), "NEURIPS25_QUIET": "1"}})
    try:
        lines = []
        # heartbeat 20 s: at 5 s one "still running" line appeared under load while Ray started; 20 s (with the
        # 40 s limit below) still catches a run that hangs on the impossible request
        both = run_methods([impossible, "ray_quick"], scale="smoke", out=tmp_path, executor=ex, echo=lines.append,
                           heartbeat_s=20)
        nodes = ex.nodes()
    finally:
        ex.shutdown()
        sys.path.remove(here)
        if not registered_before:  # leave the registry as this test found it; a later import registers again
            for slug in ("ray_quick", "ray_victim", "ray_fanout", "ray_burn"):
                unregister(slug)
            sys.modules.pop("ray_fakes", None)
    took = time.perf_counter() - t0
    res, ok = both[impossible], both["ray_quick"]
    assert ok["status"] == "ok", ok["error"]  # the feasible unit ran, with where it ran
    assert ok["provenance"]["executor"] == "ray" and ok["provenance"]["ray_node"]["id"]
    assert ok["provenance"]["code"] == code_identity()
    assert res["status"] == "error"
    assert "no node of the Ray cluster can meet fake_huge's request of 1 CPU, 1000 GB memory" in res["error"]
    assert f"the largest node, {nodes[0]['host']}" in res["error"] and "GB memory" in res["error"]
    assert not any("still running" in line for line in lines), lines
    assert took < 40
