"""The DBCARE reproduction runs end to end at smoke scale, with the claims of issue #25."""

from neurips25.repro.runner import run_one


def test_smoke_reproduction(tmp_path):
    res = run_one("dbcare", "smoke", 0, str(tmp_path))
    assert res["status"] == "ok", res["error"]
    by_id = {c["id"]: c for c in res["claims"]}
    assert set(by_id) == {"c1_upper_bound", "c2_uniform_mi", "c3a_sr_minimax", "c3b_sr_competitive",
                          "c4_hopeless", "c5_k_arm"}
    assert [c["id"] for c in res["claims"] if c["kind"] == "headline"] == ["c2_uniform_mi"]
    assert all(c["verdict"] != "pending" and c["summary"] for c in res["claims"])
    # the upper bound is checked only where it can bind, and the no-elimination control breaks it
    m = by_id["c1_upper_bound"]["measured"]
    assert 0 < m["checkable_points"] < m["grid_points"] and m["control_no_elimination_violations"] > 0
    assert by_id["c1_upper_bound"]["verdict"] == "reproduced"
    # controls fail their criteria: guessing breaks the minimax SR bound, succ. elimination over-samples
    sr = by_id["c3a_sr_minimax"]["measured"]["0.0001"]
    assert sr["guess"] > sr["bound"]
    assert all(v["control_risk_over_guess"] > 1.2 or v["control_pulls_over_K_Nstar"] > 3
               for v in by_id["c4_hopeless"]["measured"].values())
    assert res["figures"] == ["figures/risk_vs_gap.png"]
