"""The reproduction runs end to end at smoke scale and judges every claim."""

from neurips25.repro.runner import run_one


def test_smoke_reproduction(tmp_path):
    res = run_one("behavior_injection", "smoke", 0, str(tmp_path))
    assert res["status"] == "ok", res["error"]
    by_id = {c["id"]: c for c in res["claims"]}
    assert set(by_id) == {"c1_influence_identity", "c2_rl_gain", "c3_mechanism", "c4_filler_control"}
    assert all(c["verdict"] != "pending" and c["summary"] for c in res["claims"])
    assert [c["kind"] for c in res["claims"]].count("headline") == 1
    assert res["figures"] == ["figures/rl_curves_alpha_hist.png"]
