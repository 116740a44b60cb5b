"""The reproduction runs end to end at smoke scale and judges every claim."""

from neurips25.repro.runner import run_one


def test_smoke_reproduction(tmp_path):
    res = run_one("behavior_injection", "smoke", 0, str(tmp_path))
    assert res["status"] == "ok", res["error"]
    by_id = {c["id"]: c for c in res["claims"]}
    v3 = {"c2_rl_gain_smollm2", "c3_mechanism_smollm2", "c4_filler_control_smollm2"}
    assert set(by_id) == {"c1_influence_identity", "c1b_first_order", "c2_rl_gain", "c3_mechanism",
                          "c4_filler_control"} | v3
    assert all(c["verdict"] != "pending" and c["summary"] for c in res["claims"])
    # the stand-in's headline is judged here; SmolLM2's (issue #60) only at the paper scale, unmeasured here
    assert [c["kind"] for c in res["claims"]].count("headline") == 2
    assert all(by_id[i]["verdict"] == "inconclusive" and "judged at the paper scale" in by_id[i]["reason"]
               for i in v3)
    assert res["figures"] == ["figures/rl_curves_alpha_hist.png"]
    # verdicts v3 (#48) / v4 (#58): the machinery judged every claim
    assert all(c["decided_by"] == "machinery" for c in res["claims"])
    # c1 is decided at smoke too: no rollout of the untrained model earns a reward, so binary rewards are planted
    c1 = by_id["c1_influence_identity"]
    assert c1["verdict"] == "reproduced" and c1["measured"]["details"]["planted_rewards"] is True
    assert {r["name"]: r["passes"] for r in c1["control_results"]} == {"no_std": False}
    c1b = by_id["c1b_first_order"]
    assert c1b["verdict"] == "reproduced"
    assert {r["name"]: r["passes"] for r in c1b["control_results"]} == {"shuffled_pairs": False}
    # c2 reads inconclusive with its reason when plain SFT / plain RL gain fail the preconditions
    c2 = by_id["c2_rl_gain"]
    assert c2["verdict"] == "inconclusive" and "plain's RL gain > 0" in c2["reason"]
    # c4 is not judged while c2's margin does not pass (it would hold vacuously)
    assert "c2's BRIDGE margin passes" in by_id["c4_filler_control"]["reason"]


def test_arm_task_does_not_depend_on_what_ran_before():
    """One ctx.map runs every (seed, arm): on Ray in any order and worker, so a record is a function of its
    item alone (the torch RNG state another arm left behind must not leak in)."""
    import dataclasses

    import numpy as np
    import torch

    from neurips25.behavior_injection.model import build_tokenizer
    from neurips25.behavior_injection.reproduce import CONFIGS, _arm_task, pretrain, seed_splits

    cfg = dataclasses.replace(CONFIGS["smoke"], n_sft=60, sft_steps=3, rl_steps=1, n_eval=6, n_probe=4, n_rl=40)
    split = lambda s: seed_splits(cfg, s)
    tok = build_tokenizer(split(0).task.vocabulary())
    base = pretrain(cfg, tok, 0)
    item = (cfg, split(0), tok, base, "plain", 0)
    first, _ = _arm_task(item)
    torch.manual_seed(123)
    _arm_task((cfg, split(1), tok, base, "bridge", 1))  # another seed's arm, its RNG use, in between
    again, _ = _arm_task(item)
    for key in ("sft_acc_id", "rl_acc_id", "rl_acc_ood", "co_influence", "rl_reward_curve"):
        assert np.array_equal(first[key], again[key], equal_nan=True), key
    np.testing.assert_array_equal(first["alpha_probe"], again["alpha_probe"])
    # the sampled probe rollouts themselves (the plain arm keeps its groups for the influence check)
    assert [g.rollouts.texts for g in first["_groups"]] == [g.rollouts.texts for g in again["_groups"]]


def test_run_config_rejects_a_non_config(tmp_path):
    import pytest

    from neurips25.behavior_injection.reproduce import run_config

    with pytest.raises(TypeError, match="`cfg` must be a behavior_injection Config"):
        run_config({"seeds": 1}, 0, tmp_path)
