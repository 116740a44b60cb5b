"""Verdicts v3 (issue #44): the machinery applies one criterion to the method and its controls."""

import json

import numpy as np
import pytest

from neurips25.repro import Claim, Control, Criterion, Outcome, Precondition, Verdict, decide
from neurips25.repro.aggregate import combine_claims
from neurips25.repro.claims import validate_outcome

NEG = Control.negative("constant", "predicts a constant")
POS = Control.positive("oracle", "knows the answer")


def claim(kind="headline", controls=(NEG, POS), **kw):
    kw.setdefault("instance", "reduced")
    return Claim("c1", "the method beats the baseline", kind=kind, criterion=Criterion.at_least("gain", 0.05),
                 controls=controls, **kw)


def test_method_passes_negative_fails_positive_passes_is_reproduced():
    c = claim().record({"gain": 0.1}, controls={"constant": {"gain": 0.0}, "oracle": {"gain": 0.3}})
    assert c.verdict is Verdict.REPRODUCED and c.decided_by == "machinery"
    assert [r["as_expected"] for r in c.control_results] == [True, True]


def test_passing_negative_control_makes_it_vacuous():
    c = claim().record({"gain": 0.1}, controls={"constant": {"gain": 0.2}, "oracle": {"gain": 0.3}})
    assert c.verdict is Verdict.INCONCLUSIVE and "vacuous" in c.reason and "constant" in c.reason


def test_failing_method_with_failing_positive_control_is_inconclusive():
    c = claim().record({"gain": 0.0}, controls={"constant": {"gain": 0.0}, "oracle": {"gain": 0.01}})
    assert c.verdict is Verdict.INCONCLUSIVE and "cannot show" in c.reason


def test_failing_method_with_passing_positive_control_is_not_reproduced():
    c = claim().record({"gain": 0.0}, controls={"constant": {"gain": 0.0}, "oracle": {"gain": 0.3}})
    assert c.verdict is Verdict.NOT_REPRODUCED and "oracle" in c.reason


def test_missing_negative_control_is_refused():
    with pytest.raises(ValueError, match="negative control"):
        claim(controls=(POS,))
    with pytest.raises(ValueError, match="negative control"):
        claim(kind="supporting", controls=())


def test_no_positive_control_needs_a_reason():
    with pytest.raises(ValueError, match="no_positive_control"):
        claim(controls=(NEG,))
    c = claim(controls=(NEG,), no_positive_control="no oracle exists for this bound")
    c.record({"gain": 0.0}, controls={"constant": {"gain": 0.0}})
    assert c.verdict is Verdict.NOT_REPRODUCED and "no oracle exists" in c.reason


def test_a_check_may_have_no_control():
    c = Claim("c0", "identity", kind="check", criterion=Criterion.at_most("err", 1e-6)).record({"err": 1e-9})
    assert c.verdict is Verdict.REPRODUCED


def test_unmeasured_figures_are_inconclusive():
    c = claim().record({"gain": float("nan")}, controls={"constant": {"gain": 0.0}, "oracle": {"gain": 0.3}})
    assert c.verdict is Verdict.INCONCLUSIVE
    c = claim().record(None, controls={"constant": None, "oracle": None}, unmeasured="the solver diverged")
    assert c.verdict is Verdict.INCONCLUSIVE and "diverged" in c.reason
    c = claim().record({"gain": 0.1}, controls={"constant": None, "oracle": {"gain": 0.3}})
    assert c.verdict is Verdict.INCONCLUSIVE and "constant" in c.reason


def test_precondition_gates_the_verdict():
    c = claim(preconditions=[Precondition("plain gain > 0", lambda m: m["plain_gain"] > 0)])
    c.record({"gain": 0.1, "plain_gain": -0.01}, controls={"constant": {"gain": 0.0}, "oracle": {"gain": 0.3}})
    assert c.verdict is Verdict.INCONCLUSIVE and "plain gain > 0" in c.reason


def test_controls_measured_must_match_the_declared_ones():
    with pytest.raises(ValueError, match="missing"):
        claim().record({"gain": 0.1}, controls={"constant": {"gain": 0.0}})
    with pytest.raises(ValueError, match="undeclared"):
        claim().record({"gain": 0.1}, controls={"constant": {"gain": 0}, "oracle": {"gain": 1}, "x": {"gain": 0}})


def test_hand_judgement_is_refused_for_a_criterion_claim_and_by_the_runner_check():
    with pytest.raises(RuntimeError, match="record"):
        claim().judge(True)
    old = Claim("c1", "old form", criterion="gain >= 0.05", kind="headline").judge(True)
    validate_outcome(Outcome([old]), hand_verdicts_allowed=True)
    with pytest.raises(RuntimeError, match="not judged by the machinery"):
        validate_outcome(Outcome([old]), hand_verdicts_allowed=False)


def test_runner_refuses_hand_verdicts_from_a_migrated_method(monkeypatch):
    from neurips25.repro import registry

    monkeypatch.delitem(registry.HAND_VERDICTS, "dbcare", raising=False)
    assert not registry.hand_verdicts_allowed("dbcare")
    assert registry.hand_verdicts_allowed("fake_plugin_method")  # not a built-in: a test fake or a plugin
    assert all(registry.hand_verdicts_allowed(s) for s in registry.HAND_VERDICTS)


def test_numpy_figures_and_json_round_trip():
    c = claim().record({"gain": np.float32(0.1)}, controls={"constant": {"gain": np.float64(0.0)},
                                                             "oracle": {"gain": np.int64(1)}})
    assert c.verdict is Verdict.REPRODUCED
    d = json.loads(json.dumps(c.to_dict()))
    assert d["key"] == "gain" and d["threshold"] == ">= 0.05" and d["control_results"][0]["passes"] is False
    again = Claim.from_dict(d)
    assert again.verdict is Verdict.REPRODUCED and again.decided_by == "machinery"


def test_interval_criterion():
    crit = Criterion.interval_above("lo", "hi", 0.0)
    assert crit({"lo": 0.1, "hi": 0.2}) is True
    assert crit({"lo": -0.3, "hi": -0.1}) is False
    assert crit({"lo": -0.1, "hi": 0.2}) is None


def test_decide_is_the_one_rule():
    assert decide(True, {"n": False}, {"p": True})[0] is Verdict.REPRODUCED
    assert decide(True, {"n": True}, {"p": True})[0] is Verdict.INCONCLUSIVE
    assert decide(False, {"n": False}, {"p": False})[0] is Verdict.INCONCLUSIVE
    assert decide(False, {"n": True}, {}, no_positive_control="none")[0] is Verdict.NOT_REPRODUCED


def test_seeds_combine_key_figures_and_reasons():
    a = claim().record({"gain": 0.1}, controls={"constant": {"gain": 0.0}, "oracle": {"gain": 0.3}}).to_dict()
    b = claim().record({"gain": 0.0}, controls={"constant": {"gain": 0.0}, "oracle": {"gain": 0.3}}).to_dict()
    merged = combine_claims({0: [a], 1: [b]})[0]
    assert merged["verdict"] == "unstable" and "seed 1: not reproduced" in merged["reason"]
    assert merged["key_spread"]["n"] == 2 and merged["per_seed"]["1"]["key_value"] == 0.0
    assert merged["per_seed"]["0"]["controls"]["constant"]["passes"] is False


def test_report_shows_method_and_controls_side_by_side(tmp_path, monkeypatch):
    from neurips25.repro import registry
    from neurips25.repro.report import controls_text, method_figure, seed_cell, verdict_text

    c = claim().record({"gain": 0.1}, controls={"constant": {"gain": 0.2}, "oracle": {"gain": 0.3}}).to_dict()
    assert "constant: 0.2 (passes: UNEXPECTED" in controls_text(c)
    assert method_figure(c).startswith("0.1")
    assert "vacuous" in verdict_text(c)
    merged = combine_claims({0: [c], 1: [c]})[0]
    assert seed_cell(merged, 1).startswith("gain 0.1: inconclusive")
    old = Claim("c1", "old", criterion="x", kind="check").judge(True).to_dict()
    # every builtin method has migrated (HAND_VERDICTS is empty); a method still listed there is marked so
    monkeypatch.setitem(registry.HAND_VERDICTS, "scm", 47)
    assert "set by hand" in verdict_text(old, "scm") and "#47" in verdict_text(old, "scm")
    monkeypatch.delitem(registry.HAND_VERDICTS, "scm")
    assert "#47" not in verdict_text(old, "scm")


def test_finite_figure_reads_numpy_scalars_and_refuses_the_rest():
    import numpy as np

    from neurips25.repro import finite_figure

    figs = {"a": np.float32(0.5), "b": np.int64(3), "c": float("nan"), "d": True, "e": "1.0"}
    assert finite_figure(figs, "a") == 0.5 and finite_figure(figs, "b") == 3.0
    assert all(finite_figure(figs, k) is None for k in ("c", "d", "e", "missing"))
