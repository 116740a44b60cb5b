"""chemcot c5 alone (issue #58): the arm cache that lets the two-hour paper-scale c5 resume arm by arm, and the
c5_run entry point's plumbing (the LoRA arms themselves are tested in test_chemcot_llm.py)."""

import json

import pytest

from neurips25.chemcot import c5_run
from neurips25.chemcot.reproduce import _configs, _kept, c5_arm_cache


def test_arm_cache_is_keyed_by_config_seed_and_precision(tmp_path):
    cfg = _configs()["quick"]
    a = c5_arm_cache(tmp_path, cfg, 0, "bfloat16")
    assert a == c5_arm_cache(tmp_path, cfg, 0, "bfloat16") and a.is_dir()
    others = {c5_arm_cache(tmp_path, cfg, 1, "bfloat16"), c5_arm_cache(tmp_path, cfg, 0, "float32"),
              c5_arm_cache(tmp_path, _configs()["paper"], 0, "bfloat16")}
    assert a not in others and len(others) == 3


def test_a_finished_arm_is_read_back_not_recomputed(tmp_path):
    calls = []

    def arm():
        calls.append(1)
        return {"pass": 0.25, "seed": 3}

    assert _kept(tmp_path, "cot_s3", arm) == {"pass": 0.25, "seed": 3}
    assert _kept(tmp_path, "cot_s3", arm) == {"pass": 0.25, "seed": 3} and len(calls) == 1
    assert json.loads((tmp_path / "cot_s3.json").read_text())["pass"] == 0.25
    assert not list(tmp_path.glob("*.tmp"))
    assert _kept(None, "cot_s3", arm) and len(calls) == 2  # no cache: always computed


def test_c5_run_records_the_claim_from_the_arms_and_combines_seeds(tmp_path, monkeypatch):
    torch = pytest.importorskip("torch")
    import neurips25.pretrained as pretrained

    seen = {}

    def fake_c5(cfg, seed, lm, tok, out, held, arm_cache=None):
        seen[seed] = (arm_cache, len(held))
        runs = [{"pass": 0.3 + 0.1 * seed}, {"pass": 0.35}]
        fig = lambda gain: {"gain_min": gain, "gain_mean": gain, "before_pass": 0.1, "n_heldout": 60,  # noqa: E731
                            "pass_per_seed": [r["pass"] for r in runs], "parse_rate_per_seed": [1.0, 1.0]}
        return fig(0.2), fig(0.0), {"n_heldout": 60, "n_train_traces": 90}

    monkeypatch.setattr(c5_run, "_c5", fake_c5)
    monkeypatch.setattr(pretrained, "load_smollm2", lambda: torch.nn.Linear(1, 1))
    monkeypatch.setattr(pretrained, "load_smollm2_tokenizer", lambda: None)
    monkeypatch.setattr(c5_run, "generate_suite", lambda *a, **k: [])
    c5_run.main(["--scale", "quick", "--seeds", "0", "1", "--out", str(tmp_path)])
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["seeds"] == [0, 1]
    (claim,) = summary["claims"]
    assert claim["id"] == "c5_cot_lora" and claim["verdict"] == "reproduced"  # gain 0.2 >= 0.1, control 0.0 fails
    assert all(cache.parent == tmp_path / f"seed_{s}-work" for s, (cache, _) in seen.items())
    assert json.loads((tmp_path / "seed_0.json").read_text())["claims"][0]["decided_by"] == "machinery"


def test_c5_run_refuses_what_it_cannot_run(tmp_path):
    with pytest.raises(ValueError, match="`seed` must be an int >= 0"):
        c5_run.run_seed("paper", -1, tmp_path)
    with pytest.raises(ValueError, match="c5 is not run at scale smoke"):
        c5_run.run_seed("smoke", 0, tmp_path)
