"""The c5-only entry point: per-seed files, resuming, and the verdict on synthetic per-seed results."""

import json

import pytest

from neurips25.eva import c5_run

INITS = ["lora", "pissa", "olora", "eva", "control"]


def _seed(seed, loss, em, n_test=10):
    res = {i: {"loss_window": [loss[i]], "test_loss": [loss[i]], "exact_match": [em[i]], "curve": [[loss[i]]]}
           for i in INITS}
    res.update(seed=seed, params={"eva": 1, "lora": 1}, seconds={}, cpu_s=1.0, wall_s=2.0,
               config={"inits": INITS, "n_test": n_test, "steps": 50, "model": "smollm2"})
    return res


def test_verdicts_follow_the_criterion_and_the_control():
    base = {"lora": 1.0, "pissa": 1.1, "olora": 1.2}
    em = {"lora": 0.2, "pissa": 0.2, "olora": 0.2, "eva": 0.3, "control": 0.1}
    good = [_seed(s, {**base, "eva": 0.8, "control": 1.3}, em) for s in (0, 1)]
    out = c5_run.summarise(good)
    assert out["verdict"] == "reproduced" and out["control_passes"] is False
    assert out["decided_by"] == "machinery"  # the reproduction's declared claim, judged by decide()
    assert out["paired_loss_gaps"]["lora_minus_eva"]["mean"] == pytest.approx(0.2)
    assert out["exact_match"]["eva"]["hits"] == 6 and out["exact_match"]["eva"]["n"] == 20
    lo, hi = out["exact_match"]["eva"]["wilson95_pct"]
    assert lo < 30 < hi
    # the control passing as well makes it inconclusive; EVA above LoRA fails
    ctl = [_seed(s, {**base, "eva": 0.8, "control": 0.7}, {**em, "control": 0.4}) for s in (0, 1)]
    assert c5_run.summarise(ctl)["verdict"] == "inconclusive"
    bad = [_seed(s, {**base, "eva": 1.05, "control": 1.3}, em) for s in (0, 1)]
    assert c5_run.summarise(bad)["verdict"] == "not reproduced"
    # the claim's precondition: no held-out answer right anywhere -> inconclusive (the hand rule said reproduced)
    zero = [_seed(s, {**base, "eva": 0.8, "control": 1.3}, {i: 0.0 for i in INITS}) for s in (0, 1)]
    out = c5_run.summarise(zero)
    assert out["verdict"] == "inconclusive" and "exact match is measurable" in out["reason"]


def test_single_seed_has_no_interval_and_empty_input_is_rejected():
    one = c5_run.summarise([_seed(0, {"lora": 1.0, "pissa": 1.0, "olora": 1.0, "eva": 0.9, "control": 1.1},
                                  {i: 0.1 for i in INITS})])
    assert one["loss_window"]["eva"]["ci95"] is None
    with pytest.raises(ValueError, match="per_seed"):
        c5_run.merge([])


def test_smoke_run_writes_one_file_per_seed_and_resumes(tmp_path, capsys):
    c5_run.main(["--scale", "smoke", "--seeds", "0", "--out", str(tmp_path)])
    first = json.loads((tmp_path / "seed_0.json").read_text())
    assert set(INITS) - {"olora"} <= set(first) and first["cpu_s"] > 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["seeds"] == [0] and summary["verdict"] in {"reproduced", "not reproduced", "inconclusive"}
    c5_run.main(["--scale", "smoke", "--seeds", "0", "--out", str(tmp_path)])
    assert "exists, skipped" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        c5_run.main(["--scale", "smoke", "--seeds", "0", "0", "--out", str(tmp_path)])
