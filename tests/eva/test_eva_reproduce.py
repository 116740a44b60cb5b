"""Smoke-scale reproduction: runs end to end, every claim judged by the machinery against its controls."""

import json

import pytest

from neurips25.eva.reproduce import _c3_window, _lm_window, claim_c4, claim_c5, declare_claims
from neurips25.repro.runner import run_one


def test_smoke_reproduction(tmp_path):
    res = run_one("eva", "smoke", 0, str(tmp_path))
    assert res["status"] == "ok", res["error"]
    claims = json.loads((tmp_path / "eva" / "result.json").read_text())["claims"]
    by_id = {c["id"]: c for c in claims}
    assert [c["id"] for c in claims] == ["c1", "c2", "c3", "c4", "c4_budget", "c5"]
    assert all(c.get("summary") for c in claims)
    assert all(c["verdict"] != "pending" and c["decided_by"] == "machinery" for c in claims)
    assert by_id["c1"]["verdict"] == "reproduced"  # agreement with PEFT holds even on the tiny model
    # issue 44: the random tiny Llama answers no problem (0% vs 0%): the headline cannot read "reproduced"
    assert by_id["c5"]["verdict"] == "inconclusive" and "exact match is measurable" in by_id["c5"]["reason"]
    assert by_id["c4_budget"]["verdict"] == "reproduced"
    assert all(r["role"] == "negative" for c in claims for r in c["control_results"])
    # v4: every control's figures were computed by code run here (measure), never handed over as a dict
    assert all(r["provenance"].startswith("ran ") for c in claims for r in c["control_results"])
    assert {c["id"]: c["instance"] for c in claims if c["kind"] != "check"} == {
        "c2": "stand-in", "c3": "stand-in", "c4": "stand-in", "c5": "reduced"}  # c5 on GSM-Symbolic (#60)
    assert (tmp_path / "eva" / "figures" / "loss_curves.png").is_file()


def test_loss_windows_are_valid_below_ten_steps():
    # issue 44: c3's window was (steps - 10, steps), negative below 10 steps ("loss@-1-8" at smoke)
    assert _c3_window(8) == (0, 8) and _c3_window(25) == (15, 25) and _c3_window(300) == (40, 50)
    assert _lm_window(6) == (0, 6) and _lm_window(50) == (40, 50)


def test_controls_gate_c5_and_c4():
    good = {"loss_gap": 0.05, "em_pct": 20.0, "em_lora_pct": 15.0, "loss": 1.0}
    bad = {"loss_gap": -0.05, "em_pct": 10.0, "em_lora_pct": 15.0, "loss": 1.1}
    assert claim_c5((40, 50), 3).record(good, controls={"random_directions": bad}).verdict == "reproduced"
    vac = claim_c5((40, 50), 3).record(good, controls={"random_directions": good})
    assert vac.verdict == "inconclusive" and "vacuous" in vac.reason
    zero = dict(good, em_pct=0.0, em_lora_pct=0.0)  # 0% vs 0% passes "EM >= LoRA" vacuously: precondition
    assert claim_c5((0, 6), 2).record(zero, controls={"random_directions": bad}).verdict == "inconclusive"
    assert claim_c5((40, 50), 3).record(bad, controls={"random_directions": bad}).verdict == "not_reproduced"
    fewer = {"llm_relative_change_pct": -1.0, "minilm_relative_change_pct": -8.0}
    more = {"llm_relative_change_pct": 1.3, "minilm_relative_change_pct": -8.0}  # the v2 review's SmolLM2 figure
    assert claim_c4().record(fewer, controls={"random_tokens": more}).verdict == "reproduced"
    assert claim_c4().record(more, controls={"random_tokens": more}).verdict == "not_reproduced"
    assert claim_c4().record(fewer, controls={"random_tokens": fewer}).verdict == "inconclusive"
    with pytest.raises(ValueError, match="controls measured must be exactly the declared ones"):
        claim_c4().record(fewer, controls={})


def test_a_nan_loss_is_inconclusive_not_a_failure():
    # v3 audit: `m["loss_gap"] > 0` read a diverged run (NaN) as "not reproduced"
    nan = {"loss_gap": float("nan"), "em_pct": 10.0, "em_lora_pct": 5.0, "loss": float("nan")}
    bad = {"loss_gap": -0.05, "em_pct": 10.0, "em_lora_pct": 15.0, "loss": 1.1}
    c5 = claim_c5().record(nan, controls={"random_directions": bad})
    assert c5.verdict == "inconclusive"
    claims = {c.id: c for c in declare_claims()}
    assert claims["c3"].rule({"loss_gap": float("nan"), "acc_gap_pts": 0.0}) is None
    assert claims["c5"].criterion == claim_c5((0, 6), 2).criterion  # the same text at every scale
