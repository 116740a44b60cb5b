"""Smoke reproduction: runs end to end, every claim judged by the machinery against its controls."""

import pytest

from neurips25.repro import Claim, Control, Criterion, Precondition, Scale
from neurips25.repro.runner import run_one
from neurips25.sliced_wasserstein.reproduce import _convergence_rule, _nhanes_shape_rule, declare_claims


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    return run_one("sliced_wasserstein", "smoke", 0, str(tmp_path_factory.mktemp("sw")))


def test_smoke_reproduction(smoke):
    assert smoke["status"] == "ok", smoke["error"]
    claims = {c["id"]: c for c in smoke["claims"]}
    assert len(claims) == 8 and all(c["verdict"] != "pending" and c["summary"] for c in claims.values())
    assert all(c["decided_by"] == "machinery" for c in claims.values())
    kinds = [c["kind"] for c in smoke["claims"]]
    assert kinds.count("headline") == 1 and claims["c5_nhanes_shape"]["kind"] == "headline"
    assert claims["c1_isometry"]["verdict"] == "reproduced"  # exact at any scale
    assert "figures/convergence.png" in smoke["figures"]
    # every control carries the method's keys, so the one criterion applies to both
    for c in claims.values():
        method = c["measured"]["method"]
        for name, figs in c["measured"]["controls"].items():
            assert figs is None or set(method) <= set(figs) | {"within_v2_bar_10pct"}, (c["id"], name)


def test_headline_takes_no_verdict_at_smoke(smoke):
    # two reference draws cannot give a 99th percentile: the precondition keeps the headline inconclusive
    c5 = {c["id"]: c for c in smoke["claims"]}["c5_nhanes_shape"]
    assert c5["verdict"] == "inconclusive" and "precondition" in c5["reason"]


def _c5_like():
    return Claim("c5", "shape beyond the mean", kind="headline", instance="reduced",
                 criterion=Criterion("(A) or (B)", "B_shape_index", _nhanes_shape_rule),
                 controls=[Control.negative("mean_only", "fresh mean-only draw")],
                 no_positive_control="none",
                 preconditions=[Precondition(">= 50 draws", lambda m: m["n_reference_draws"] >= 50)])


def figs(index, margin=0.0, bar=1.5, n=50):
    return {"B_shape_index": index, "B_bar": bar, "A_margin_over_best_baseline": margin, "n_reference_draws": n}


def test_c5_mean_only_control_gates_the_verdict():
    ok = _c5_like().record(figs(4.8), controls={"mean_only": figs(0.9)})
    assert ok.verdict == "reproduced"
    # the same method figures, but the mean-only control passes the bar too: vacuous, not reproduced
    vac = _c5_like().record(figs(4.8), controls={"mean_only": figs(1.6)})
    assert vac.verdict == "inconclusive" and "vacuous" in vac.reason
    # (A) alone passes a control whose margin is large
    vac_a = _c5_like().record(figs(0.5, margin=0.05), controls={"mean_only": figs(0.5, margin=0.03)})
    assert vac_a.verdict == "inconclusive"


def test_rules_decide_nothing_on_missing_figures():
    # v4: rules read a Figures view; a missing or NaN figure makes the criterion undecided
    def crit(rule):
        return Criterion("rule", "x", rule)

    assert crit(_nhanes_shape_rule)({"B_shape_index": 2.0}) is None
    assert crit(_convergence_rule)({"loglog_slope": -0.5}) is None
    assert crit(_convergence_rule)({"loglog_slope": -0.5, "monotone": True, "eigenfunction_error_ratio": 0.5}) is True
    assert crit(_convergence_rule)({"loglog_slope": float("nan"), "monotone": True,
                                    "eigenfunction_error_ratio": 0.5}) is None
    assert crit(_convergence_rule)({"loglog_slope": -0.5, "monotone": False, "eigenfunction_error_ratio": 0.5}) is False


def test_c2b_is_also_judged_at_the_oracle_itself_and_c6_positive_is_on_nhanes(smoke):
    claims = {c["id"]: c for c in smoke["claims"]}
    strict, c2b = claims["c2b_strict_oracle_kde"], claims["c2b_inverse_from_samples"]
    assert strict["threshold"] == "<= 1" and c2b["threshold"] == "<= 1.2"
    assert strict["key_value"] == c2b["key_value"]
    c6 = {r["name"]: r for r in claims["c6_nhanes_valid_modes"]["control_results"]}
    assert set(c6) == {"v1_inversion", "nhanes_gaussian"} and c6["nhanes_gaussian"]["provenance"].startswith("ran ")
    for c in declare_claims(Scale.QUICK):
        assert c.kind.value == "check" or c.instance == "reduced"
