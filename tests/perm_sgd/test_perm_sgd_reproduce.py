"""Smoke reproduction: runs end to end, judges every claim, writes its figures."""

from neurips25.repro.runner import run_one


def test_smoke_reproduction(tmp_path):
    res = run_one("perm_sgd", "smoke", 0, str(tmp_path))
    assert res["status"] == "ok", res["error"]
    assert [c["id"] for c in res["claims"]] == ["c1", "c2", "c3", "c4", "c5"]
    assert all(c["verdict"] != "pending" for c in res["claims"])
    figures = {f.split("/")[-1] for f in res["figures"]}
    assert {"order_error_vs_n.png", "pl_error.png", "federated.png"} <= figures
    slopes = res["metrics"]["order_error"]["slopes"]
    assert slopes["GraB"] < slopes["RR"] < slopes["IG (sorted)"]
