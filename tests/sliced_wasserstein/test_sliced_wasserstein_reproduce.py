"""Smoke reproduction: runs end to end, judges every claim, writes figures."""

from neurips25.repro.runner import run_one


def test_smoke_reproduction(tmp_path):
    res = run_one("sliced_wasserstein", "smoke", 0, str(tmp_path))
    assert res["status"] == "ok", res["error"]
    claims = {c["id"]: c for c in res["claims"]}
    assert len(claims) == 7 and all(c["verdict"] != "pending" and c["summary"] for c in claims.values())
    kinds = [c["kind"] for c in res["claims"]]
    assert kinds.count("headline") == 1 and claims["c5_nhanes_shape"]["kind"] == "headline"
    assert claims["c1_isometry"]["verdict"] == "reproduced"  # exact at any scale
    assert "figures/convergence.png" in res["figures"]
