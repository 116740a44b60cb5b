"""Smoke reproduction: runs end to end at smoke scale and judges every claim."""

from neurips25.repro.runner import run_one


def test_smoke_reproduction(tmp_path):
    res = run_one("ctsketch", "smoke", 0, str(tmp_path))
    assert res["status"] == "ok", res["error"]
    assert len(res["claims"]) == 6
    assert all(c["verdict"] != "pending" for c in res["claims"])
    c1 = next(c for c in res["claims"] if c["id"] == "c1_exactness")
    assert c1["verdict"] == "reproduced"  # exactness does not depend on the scale
    assert {"accuracy_vs_n.png", "rank_tradeoff.png", "contraction_cost_vs_n.png"} <= {
        f.split("/")[-1] for f in res["figures"]
    }
    assert all(c["decided_by"] == "machinery" for c in res["claims"])  # no verdict set by hand (issue 44)
    c1_ctl = c1["control_results"][0]
    assert c1_ctl["name"] == "rank1" and c1_ctl["passes"] is False  # the rank-1 control really fails
    # c2 is judged at N = 1,024 only (paper scale): at smoke the method and its controls are not measured
    c2 = next(c for c in res["claims"] if c["id"] == "c2_scale")
    assert c2["verdict"] == "inconclusive" and all(r["provenance"] == "not measured" for r in c2["control_results"])
    assert all(c["instance"] == "reduced" for c in res["claims"] if c["kind"] != "check")
    c3 = next(c for c in res["claims"] if c["id"] == "c3_cost")
    assert c3["control_results"][0]["provenance"].startswith("ran ")
    c4 = next(c for c in res["claims"] if c["id"] == "c4_rank")
    assert set(c4["measured"]["controls"]["shuffled_table"]) >= set(c4["measured"]["method"])


def test_controls_gate_the_verdicts():
    # guards the v2 review: c3 / c5 printed a literal "fails" and c4 compared rank 1 with itself
    from neurips25.ctsketch.reproduce import declare_claims

    def claim(cid):
        return next(c for c in declare_claims("quick") if c.id == cid)

    rank = {"acc_gain": 0.5, "err_top": 1e-12, "err_monotone": True, "time_ratio": 3.0}
    assert claim("c4_rank").record(rank, controls={"shuffled_table": {**rank, "acc_gain": 0.0}}).verdict == "reproduced"
    vac = claim("c4_rank").record(rank, controls={"shuffled_table": rank})
    assert vac.verdict == "inconclusive" and "shuffled_table" in vac.reason
    # c3: judged against N log N; the dense-convolution control (~N^2) fails it by its slope, and would make a
    # pass vacuous if its slope looked N log N too (e.g. timing dominated by per-call overhead)
    c3 = claim("c3_cost").record({"excess_slope": -0.04, "min_acc_timed": 0.9},
                                 controls={"dense_convolution": {"excess_slope": 0.8}})
    assert c3.verdict == "reproduced"
    vac = claim("c3_cost").record({"excess_slope": -0.04, "min_acc_timed": 0.9},
                                  controls={"dense_convolution": {"excess_slope": 0.05}})
    assert vac.verdict == "inconclusive" and "vacuous" in vac.reason
    c3 = claim("c3_cost").record({"excess_slope": -0.04, "min_acc_timed": 0.2},
                                 controls={"dense_convolution": {"excess_slope": 0.8}})
    assert c3.verdict == "inconclusive" and "precondition" in c3.reason
    # c5: a failing gap is "not reproduced" only because the supervised control clears it
    c5 = claim("c5_sampling").record({"gap": 0.1, "n_learns": 1},
                                     controls={"reinforce_fresh_seed": {"gap": 0.0}, "supervised": {"gap": 0.8}})
    assert c5.verdict == "not_reproduced"
    # a fresh REINFORCE seed clearing the gap over REINFORCE means the gap measures seed noise: vacuous
    vac = claim("c5_sampling").record({"gap": 0.5, "n_learns": 1},
                                      controls={"reinforce_fresh_seed": {"gap": 0.4}, "supervised": {"gap": 0.8}})
    assert vac.verdict == "inconclusive" and "vacuous" in vac.reason
    c5 = claim("c5_sampling").record({"gap": 0.1, "n_learns": 1},
                                     controls={"reinforce_fresh_seed": {"gap": 0.0}, "supervised": {"gap": 0.1}})
    assert c5.verdict == "inconclusive"


def test_excess_slope_is_zero_for_n_log_n_and_one_for_n_squared_log():
    import numpy as np

    from neurips25.ctsketch.reproduce import excess_slope

    ns = np.array([16, 64, 256, 1024])
    assert abs(excess_slope(ns, 3 * ns * np.log2(ns))) < 1e-9
    assert abs(excess_slope(ns, ns**2 * np.log2(ns)) - 1) < 1e-9
