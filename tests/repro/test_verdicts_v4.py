"""Verdicts v4 (issue #58): one test per attack of the v3 audit (../shared/reviews/verdicts-v3-audit.md).

Each of these passed the v3 machinery (the attack worked) and must fail now."""

import json
import math
import subprocess
import sys

import numpy as np
import pytest

from neurips25.repro import ledger
from neurips25.repro.aggregate import combine_claims
from neurips25.repro.claims import (
    Claim,
    Control,
    Criterion,
    Figures,
    Outcome,
    Precondition,
    Unmeasured,
    Verdict,
    measure,
    validate_outcome,
)

NEG = Control.negative("trivial", "a do-nothing method")
POS = Control.positive("oracle", "told the answer")


def claim(rule=None, controls=(NEG,), **kw):
    kw.setdefault("kind", "headline")
    kw.setdefault("instance", "reduced")
    return Claim("c1", "the method wins", rule or Criterion.at_least("x", 5.0), controls=list(controls),
                 no_positive_control=kw.pop("npc", "none exists"), **kw)


# --- 1. the seal -------------------------------------------------------------------------------------------
def test_verdict_is_not_a_constructor_argument():
    with pytest.raises(TypeError):
        claim(verdict="reproduced", decided_by="machinery")
    with pytest.raises(TypeError):
        claim(reason="trust me")


def test_unrecorded_claim_never_validates():
    c = claim()
    object.__setattr__(c, "verdict", Verdict.REPRODUCED)  # even forced past the seal
    object.__setattr__(c, "decided_by", "machinery")
    with pytest.raises(RuntimeError):
        validate_outcome(Outcome([c]), hand_verdicts_allowed=False)


def test_from_dict_headline_without_criterion_is_refused():
    forged = Claim.from_dict({"id": "c1", "statement": "s", "criterion": "whatever", "kind": "headline",
                              "verdict": "reproduced", "decided_by": "machinery"})
    assert forged.verdict is Verdict.REPRODUCED  # readable ...
    with pytest.raises(RuntimeError, match="rebuilt"):
        validate_outcome(Outcome([forged]), hand_verdicts_allowed=False)  # ... never accepted
    with pytest.raises(RuntimeError):
        forged.record({"x": 9}, controls={})
    # a real recorded claim, round-tripped, is refused too (its rule is not serialised)
    real = claim().record({"x": 9.0}, controls={"trivial": {"x": 0.0}})
    with pytest.raises(RuntimeError, match="rebuilt"):
        validate_outcome(Outcome([Claim.from_dict(real.to_dict())]), hand_verdicts_allowed=False)


def test_recorded_claim_is_sealed():
    c = claim().record({"x": 1.0}, controls={"trivial": {"x": 0.0}})
    assert c.verdict is Verdict.NOT_REPRODUCED
    for field, value in (("verdict", Verdict.REPRODUCED), ("reason", "x"), ("decided_by", "hand"),
                         ("key_value", 9), ("measured", {}), ("kind", "check"), ("criterion", "x >= 0")):
        with pytest.raises(AttributeError, match="sealed"):
            setattr(c, field, value)
    c.note = "notes stay free text"
    with pytest.raises(RuntimeError, match="already recorded"):
        c.record({"x": 9.0}, controls={"trivial": {"x": 0.0}})


def test_validate_recomputes_the_verdict_from_the_figures():
    c = claim().record({"x": 1.0}, controls={"trivial": {"x": 0.0}})
    object.__setattr__(c, "verdict", Verdict.REPRODUCED)  # tampered past the seal
    with pytest.raises(RuntimeError, match="differs"):
        validate_outcome(Outcome([c]), hand_verdicts_allowed=False)


def test_figures_handed_over_are_copied():
    figs = {"x": 9.0}
    c = claim().record(figs, controls={"trivial": {"x": 0.0}})
    figs["x"] = 0.0  # changing the caller's dict later changes nothing
    validate_outcome(Outcome([c]), hand_verdicts_allowed=False)
    assert c.verdict is Verdict.REPRODUCED


def test_headline_without_negative_control_or_instance_is_refused():
    with pytest.raises(ValueError, match="negative"):
        claim(controls=())
    with pytest.raises(ValueError, match="instance"):
        Claim("c1", "s", Criterion.at_least("x", 1), kind="supporting", controls=[NEG], no_positive_control="n")
    with pytest.raises(ValueError, match="instance_note"):
        claim(instance="stand-in")
    with pytest.raises(ValueError, match="instance must be one of"):
        claim(instance="toy")
    ok = claim(instance="stand-in", instance_note="a toy trained here; says nothing about the paper's model")
    assert ok.instance == "stand-in"


# --- 4. rules read figures through the machinery -------------------------------------------------------------
@pytest.mark.parametrize("bad", [float("nan"), float("inf"), np.float64("nan"), None])
def test_custom_rule_on_nan_is_inconclusive(bad):
    rule = Criterion("gap >= 5", "gap", lambda m: m["gap"] >= 5)
    c = claim(rule).record({"gap": bad}, controls={"trivial": {"gap": 0.0}})
    assert c.verdict is Verdict.INCONCLUSIVE  # v3: not_reproduced


def test_missing_figure_and_nested_nan_are_unmeasured():
    rule = Criterion("every dataset >= 0", "per", lambda m: all(v >= 0 for v in m["per"]))
    c = claim(rule).record({"per": [1.0, float("nan")]}, controls={"trivial": {"per": [-1.0, -1.0]}})
    assert c.verdict is Verdict.INCONCLUSIVE
    c2 = claim(Criterion("a + b > 1", "a", lambda m: m["a"] + m["b"] > 1)).record(
        {"a": 3.0}, controls={"trivial": {"a": 0.0, "b": 0.0}})
    assert c2.verdict is Verdict.INCONCLUSIVE
    f = Figures({"a": {"b": float("nan")}, "c": 1})
    with pytest.raises(Unmeasured):
        f["a"]
    assert f.get("zz", 7) == 7 and f["c"] == 1


def test_precondition_on_nan_is_unmet():
    pre = Precondition("baseline learned", lambda m: m["base"] > 0.3)
    c = claim(preconditions=[pre]).record({"x": 9.0, "base": float("nan")}, controls={"trivial": {"x": 0.0}})
    assert c.verdict is Verdict.INCONCLUSIVE and "precondition" in c.reason


def test_unmeasured_positive_control_reads_not_measured():
    c = claim(controls=(NEG, POS)).record({"x": 9.0}, controls={"trivial": {"x": 0.0}, "oracle": None})
    assert c.verdict is Verdict.INCONCLUSIVE
    assert "not measured" in c.reason and "fails" not in c.reason
    row = next(r for r in c.control_results if r["name"] == "oracle")
    assert row["passes"] is None and row["provenance"] == "not measured"
    assert "oracle - (not measured)" in c.summary


# --- 5. seeds and copies ------------------------------------------------------------------------------------
def _d(cid, verdict):
    return {"id": cid, "statement": "s", "kind": "headline", "verdict": verdict, "measured": {}, "summary": ""}


def test_combining_seeds_takes_the_union_of_claim_ids():
    merged = combine_claims({0: [_d("c1", "reproduced")],
                             1: [_d("c1", "reproduced"), _d("c2", "reproduced")]})
    by_id = {c["id"]: c for c in merged}
    assert set(by_id) == {"c1", "c2"}  # v3 dropped c2
    assert by_id["c2"]["verdict"] == "inconclusive"
    assert "missing at seed 0" in by_id["c2"]["reason"]
    assert by_id["c1"]["verdict"] == "reproduced"


def test_control_provenance_is_recorded():
    def oracle_run(n):
        return {"x": float(n)}

    ours = {"x": 9.0}
    c = claim(controls=(NEG, POS)).record(ours, controls={"trivial": {"x": 9.0}, "oracle": measure(oracle_run, 7)})
    rows = {r["name"]: r for r in c.control_results}
    assert rows["oracle"]["provenance"].startswith("ran ") and "oracle_run" in rows["oracle"]["provenance"]
    assert "not tracked" in rows["trivial"]["provenance"]
    assert "equals the method's" in rows["trivial"]["provenance"]  # a copied figure is visible
    c2 = claim().record(ours, controls={"trivial": ours})
    assert "SAME object" in c2.control_results[0]["provenance"]


# --- the machinery's own criteria ---------------------------------------------------------------------------
def test_interval_criteria():
    above = Criterion.interval("lo", "hi", 0.0)
    assert above({"lo": 0.1, "hi": 0.3}) is True and above({"lo": -0.2, "hi": -0.1}) is False
    assert above({"lo": -0.1, "hi": 0.3}) is None and above({"lo": float("nan"), "hi": 1}) is None
    below = Criterion.interval("lo", "hi", 1.0, side="below")
    assert below({"lo": 0.1, "hi": 0.9}) is True and below({"lo": 1.0, "hi": 2}) is False
    within = Criterion.interval("lo", "hi", 0.03, side="within", band=0.02)
    assert within({"lo": 0.02, "hi": 0.04}) is True
    assert within({"lo": 0.06, "hi": 0.09}) is False
    assert within({"lo": 0.0, "hi": 0.09}) is None
    with pytest.raises(ValueError, match="band"):
        Criterion.interval("lo", "hi", 0.0, side="within")


def test_count_criterion_and_its_key_figure():
    crit = Criterion.count_at_least("wins", 3)
    assert crit({"wins": {"a": True, "b": True, "c": np.bool_(True), "d": False}}) is True
    assert crit({"wins": {"a": True, "b": None, "c": None, "d": False}}) is None
    assert crit({"wins": [True, False, False, None]}) is False
    c = claim(crit).record({"wins": {"a": True, "b": True, "c": True}},
                           controls={"trivial": {"wins": {"a": False, "b": False, "c": True}}})
    assert c.verdict is Verdict.REPRODUCED and c.key_value == 3
    assert c.control_results[0]["key_value"] == 1


def test_bootstrap_interval_feeds_an_interval_criterion():
    from neurips25.repro.intervals import bootstrap_interval

    rng = np.random.default_rng(0)
    a = rng.normal(1.0, 0.1, 30)
    b = a - 0.5 + rng.normal(0, 0.05, 30)
    iv = bootstrap_interval(a, b, n_boot=500)
    assert 0.45 < iv["lo"] < iv["estimate"] < iv["hi"] < 0.55
    assert Criterion.interval("lo", "hi", 0.0)(iv) is True
    with pytest.raises(ValueError, match="paired"):
        bootstrap_interval(a, b[:3])
    assert math.isclose(bootstrap_interval(a)["estimate"], float(a.mean()))


# --- the ledger -----------------------------------------------------------------------------------------------
def test_fingerprint_sees_a_threshold_hidden_in_a_rule():
    a = claim(Criterion("gap big", "gap", lambda m: m["gap"] >= 5))
    b = claim(Criterion("gap big", "gap", lambda m: m["gap"] >= 4))
    assert ledger.fingerprint(a) != ledger.fingerprint(b)
    assert ledger.fingerprint(a) == ledger.fingerprint(claim(Criterion("gap big", "gap", lambda m: m["gap"] >= 5)))


def test_ledger_register_then_check(tmp_path):
    data = {"version": 1, "claims": {}}
    code = {"m/c1": ledger.fingerprint(claim())}
    assert ledger.differences(code, data) == {"m/c1": ["unregistered"]}
    ledger.register(code, data, why="first registration", commit="abc1234")
    assert ledger.differences(code, data) == {}
    changed = {"m/c1": ledger.fingerprint(claim(Criterion.at_least("x", 4.0)))}
    diff = ledger.differences(changed, data)
    assert set(diff["m/c1"]) >= {"criterion", "threshold"}
    ledger.register(changed, data, why="bar lowered", after_runs="quick seeds 0, 1")
    hist = data["claims"]["m/c1"]["history"]
    assert [h["event"] for h in hist] == ["registered", "changed"]
    assert hist[1]["old"]["threshold"] == ">= 5" and hist[1]["new"]["threshold"] == ">= 4"
    text = ledger.change_text(data, "m/c1")
    assert "registered at abc1234" in text and "after runs at quick seeds 0, 1" in text
    with pytest.raises(ValueError, match="why"):
        ledger.register(changed, data, why=" ")


def test_claims_check_passes_on_the_committed_tree():
    out = subprocess.run([sys.executable, "-m", "neurips25", "claims", "--check"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]


def test_claims_check_names_an_edited_criterion(tmp_path, monkeypatch, capsys):
    """Editing one criterion without the ledger makes --check fail and name the claim."""
    data = ledger.load()
    cid = "dbcare/c2_uniform_mi"
    data["claims"][cid]["current"]["criterion"] += " (edited)"
    fake = tmp_path / "criteria_ledger.json"
    fake.write_text(json.dumps(data))
    monkeypatch.setattr(ledger, "LEDGER_PATH", fake)
    from neurips25.cli import main

    assert main(["claims", "--check", "dbcare"]) == 1
    assert cid in capsys.readouterr().err  # the claim is named


def test_undecided_negative_control_does_not_pass_but_unmeasured_is_inconclusive():
    """An interval criterion: a null negative control's interval straddles the bar (undecided) - it has not met
    the bar, so it fails as it must; a negative whose figure is NaN could not be measured: inconclusive."""
    crit = Criterion.interval("lo", "hi", 0.0)
    c = claim(crit).record({"lo": 0.1, "hi": 0.3}, controls={"trivial": {"lo": -0.1, "hi": 0.1}})
    assert c.verdict is Verdict.REPRODUCED
    row = c.control_results[0]
    assert row["outcome"] == "undecided" and row["passes"] is False and row["as_expected"] is True
    validate_outcome(Outcome([c]), hand_verdicts_allowed=False)
    c2 = claim(crit).record({"lo": 0.1, "hi": 0.3}, controls={"trivial": {"lo": float("nan"), "hi": 0.1}})
    assert c2.verdict is Verdict.INCONCLUSIVE and "could not be measured" in c2.reason
    c3 = claim(crit, controls=(NEG, POS)).record({"lo": 0.1, "hi": 0.3}, controls={
        "trivial": {"lo": -0.1, "hi": -0.05}, "oracle": {"lo": -0.1, "hi": 0.4}})
    assert c3.verdict is Verdict.INCONCLUSIVE and "does not pass" in c3.reason


def test_all_of_is_a_three_valued_and_over_its_parts():
    from neurips25.repro.claims import Criterion

    both = Criterion.all_of(Criterion.count_at_least("tasks", 2), Criterion.at_least("ratio", 0.9))
    assert both.key == "tasks_count" and "AND" in both.text and ">= 2" in both.threshold
    assert both.outcome({"tasks": [True, True, False], "ratio": 0.95}) == "pass"
    assert both.outcome({"tasks": [True, True, False], "ratio": 0.5}) == "fail"
    assert both.outcome({"tasks": [True, False, False], "ratio": 0.95}) == "fail"
    assert both.outcome({"tasks": [True, None, False], "ratio": 0.95}) == "undecided"
    assert both.outcome({"tasks": [True, True], "ratio": float("nan")}) == "unmeasured"
    assert both.outcome({"tasks": [False, False], "ratio": float("nan")}) == "fail"  # AND with a failed part
    with pytest.raises(TypeError):
        Criterion.all_of(both)
