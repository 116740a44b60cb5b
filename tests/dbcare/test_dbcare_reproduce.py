"""The DBCARE reproduction runs end to end at smoke scale; its verdicts come from the machinery (issue #44)."""

import pytest

from neurips25.dbcare.reproduce import declare_claims
from neurips25.repro import Scale
from neurips25.repro.runner import run_one


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    res = run_one("dbcare", "smoke", 0, str(tmp_path_factory.mktemp("dbcare")))
    assert res["status"] == "ok", res["error"]
    return res


def test_smoke_reproduction(smoke):
    by_id = {c["id"]: c for c in smoke["claims"]}
    assert set(by_id) == {"c1_upper_bound", "c2_uniform_mi", "c3a_sr_minimax", "c3b_sr_competitive",
                          "c4_hopeless", "c4b_hopeless_risk", "c5_k_arm"}
    assert [c["id"] for c in smoke["claims"] if c["kind"] == "headline"] == ["c2_uniform_mi"]
    assert all(c["decided_by"] == "machinery" and c["summary"] for c in smoke["claims"])
    # the upper bound is checked only where it can bind, and the no-elimination control breaks it
    c1 = by_id["c1_upper_bound"]
    assert 0 < c1["measured"]["method"]["checkable_points"] < c1["measured"]["details"]["grid_points"]
    assert c1["verdict"] == "reproduced"
    assert c1["measured"]["controls"]["no_elimination"]["violations"] > 0
    assert smoke["figures"] == ["figures/risk_vs_gap.png"]


def test_controls_have_the_declared_roles_and_are_judged(smoke):
    by_id = {c["id"]: c for c in smoke["claims"]}
    roles = {cid: {r["name"]: r["role"] for r in c["control_results"]} for cid, c in by_id.items()}
    assert roles["c3a_sr_minimax"] == {"guess": "negative", "no_elimination": "negative", "gap_oracle": "positive"}
    assert roles["c4_hopeless"] == {"budget_blind": "negative"}
    assert roles["c4b_hopeless_risk"] == {"budget_blind": "negative", "uniform_at_budget": "positive"}
    # guessing breaks the minimax SR bound; the budget-blind method over-samples on hopeless instances
    res = {cid: {r["name"]: r for r in c["control_results"]} for cid, c in by_id.items()}
    assert res["c3a_sr_minimax"]["guess"]["passes"] is False
    assert res["c4_hopeless"]["budget_blind"]["passes"] is False
    assert res["c4b_hopeless_risk"]["budget_blind"]["passes"] is False
    # v4: the positive control of the risk part is run, and its figure is guess + ~1/e (it can fail)
    c4b = by_id["c4b_hopeless_risk"]["measured"]["controls"]["uniform_at_budget"]
    assert 0.25 < c4b["worst_excess"] < 0.5
    assert all(r["provenance"].startswith("ran ") for c in by_id.values() for r in c["control_results"])
    assert by_id["c5_k_arm"]["instance"] == "stand-in" and by_id["c2_uniform_mi"]["instance"] == "reduced"
    # smoke's fixed-confidence cap is below c5's criterion: the precondition leaves c5 inconclusive
    assert by_id["c5_k_arm"]["verdict"] == "inconclusive" and "precondition" in by_id["c5_k_arm"]["reason"]


def test_a_broken_method_fails_the_claims(smoke):
    """Hand the no-elimination control's figures in as the method's: c1 and c2 must not read reproduced."""
    by_id = {c["id"]: c for c in smoke["claims"]}
    for claim in declare_claims(Scale.SMOKE):
        if claim.id not in ("c1_upper_bound", "c2_uniform_mi"):
            continue
        ctl = by_id[claim.id]["measured"]["controls"]
        claim.record(ctl["no_elimination"], controls=ctl)
        assert claim.measured["method_passes"] is False and claim.verdict.value != "reproduced", claim.id


def test_a_control_that_passes_makes_the_claim_vacuous(smoke):
    c3a = next(c for c in declare_claims(Scale.SMOKE) if c.id == "c3a_sr_minimax")
    ctl = dict(smoke["claims"][[c["id"] for c in smoke["claims"]].index("c3a_sr_minimax")]["measured"]["controls"])
    method = {"worst_over_bound": 0.5}
    ctl["guess"] = {"worst_over_bound": 0.4}  # a guess that met the bound would make the claim vacuous
    c3a.record(method, controls=ctl)
    assert c3a.verdict.value == "inconclusive" and "vacuous" in c3a.reason and "guess" in c3a.reason
