"""Smoke reproduction: runs end to end, judges every claim, writes figures."""

from neurips25.repro.runner import run_one


def test_smoke_reproduction(tmp_path):
    res = run_one("sliced_wasserstein", "smoke", 0, str(tmp_path))
    assert res["status"] == "ok", res["error"]
    assert len(res["claims"]) == 5
    assert all(c["verdict"] != "pending" for c in res["claims"])
    assert "figures/convergence.png" in res["figures"]
