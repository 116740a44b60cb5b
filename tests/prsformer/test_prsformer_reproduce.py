"""Smoke reproduction: runs end to end, judges every claim, writes the figure."""

from neurips25.repro.runner import run_one


def test_smoke_reproduction(tmp_path):
    res = run_one("prsformer", "smoke", 0, str(tmp_path))
    assert res["status"] == "ok", res["error"]
    assert [c["id"] for c in res["claims"]] == ["c1_exactness", "c2_scaling", "c3_ldpred", "c4_multi",
                                                 "c5_additive"]
    assert all(c["verdict"] != "pending" for c in res["claims"])
    assert res["claims"][0]["verdict"] == "reproduced"  # exactness holds at every scale
    assert res["figures"] == ["figures/auroc_gap_vs_n.png"]
