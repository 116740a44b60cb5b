"""behavior_injection v3: BRIDGE on a real pretrained LM (SmolLM2-135M-Instruct + LoRA) and a real task with its
verifier (reasoning-gym Countdown or GSM-Symbolic), issue #60.

Per paired seed and arm (plain, BRIDGE, filler): LoRA SFT on the arm's worked solutions; greedy held-out accuracy
by the verifier and the RL-readiness statistics of the SFT model (rollout accuracy alpha per probe query,
informativeness, share of all-equal groups, co-influence on the LoRA parameters); GRPO with the same budget for
every arm; greedy held-out accuracy again. The records have the keys :func:`reproduce.judge_claims` reads, so the
same criteria decide c2 - c4.

Resumable: every stage writes its result into ``work`` (``sft.safetensors`` + ``sft.json``, ``sft_eval.json``,
GRPO checkpoints every ``chunk`` steps with the optimiser moments and both random states, ``rl_eval.json``); a
killed run restarts from the last finished stage or chunk and gives the same numbers as an uninterrupted one.
No pickle: tensors go to safetensors, the rest to JSON.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from pathlib import Path

import numpy as np

from neurips25.behavior_injection.grpo import GRPO, sample_rollouts, score_rollouts
from neurips25.behavior_injection.influence import co_influence, frac_zero_std, informativeness, sample_groups
from neurips25.behavior_injection.rg_tasks import RG_TASKS
from neurips25.behavior_injection.sft import sft_train
from neurips25.behavior_injection.smollm2 import lora_policy


@dataclasses.dataclass(frozen=True)
class V3Config:
    """Every knob of the v3 experiment (smoke / calibration / paper are instances)."""

    task: str = "countdown"
    n_numbers: int = 3  # Countdown only
    arms: tuple[str, ...] = ("plain", "bridge", "filler")
    p: float = 0.5  # BRIDGE's per-step injection probability (exploration and exploitation)
    model: str = "smollm2"  # or "tiny": a random 2-layer Llama with SmolLM2's tokenizer (tests)
    rank: int = 16
    n_sft: int = 2000
    sft_steps: int = 200
    sft_batch: int = 8
    sft_lr: float = 3e-4
    n_rl: int = 1000
    rl_steps: int = 40
    rl_queries: int = 8
    group_size: int = 8
    rl_lr: float = 3e-5
    max_new_tokens: int = 64
    temperature: float = 1.0
    n_eval: int = 128
    n_probe: int = 16
    probe_n: int = 8
    chunk: int = 5  # GRPO steps between checkpoints

    def __post_init__(self):
        if self.task not in RG_TASKS:
            raise ValueError(f"`task` must be one of {tuple(RG_TASKS)}, got {self.task!r}")
        if self.model not in ("smollm2", "tiny"):
            raise ValueError(f"`model` must be 'smollm2' or 'tiny', got {self.model!r}")
        if "plain" not in self.arms:
            raise ValueError(f"`arms` must include 'plain' (the criteria compare every arm with it), got {self.arms}")


def make_task(cfg: V3Config, seed: int):
    cls = RG_TASKS[cfg.task]
    return cls(n_numbers=cfg.n_numbers, seed=seed) if cfg.task == "countdown" else cls(seed=seed)


def v3_splits(cfg: V3Config, seed: int) -> dict:
    """SFT / RL / probe / evaluation items of one paired seed, each from its own reasoning-gym seed; the task
    whose verifier scores them is ``splits["task"]``."""
    ss = np.random.SeedSequence([60, seed]).generate_state(4)
    tasks = [make_task(cfg, int(s) % (2**31)) for s in ss]
    return {"task": tasks[3], "sft": tasks[0].samples(cfg.n_sft), "rl": tasks[1].samples(cfg.n_rl),
            "probe": tasks[2].samples(cfg.n_probe), "eval": tasks[3].samples(cfg.n_eval)}


def load_base(cfg: V3Config, seed: int = 0):
    """(tokenizer, base model): SmolLM2-135M-Instruct, or a random tiny Llama with SmolLM2's tokenizer."""
    from neurips25.pretrained import load_smollm2, load_smollm2_tokenizer

    tok = load_smollm2_tokenizer()
    if cfg.model == "smollm2":
        return tok, load_smollm2()
    import torch
    import transformers

    torch.manual_seed(seed)
    conf = transformers.LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                    num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=512,
                                    bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
                                    tie_word_embeddings=True)
    return tok, transformers.LlamaForCausalLM(conf).eval()


# --- checkpoints (safetensors + JSON, written atomically) ------------------------------------------------------
def _atomic_json(path: Path, obj) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(obj))
    os.replace(tmp, path)


def save_trainable(model, path: Path, extra: dict | None = None) -> None:
    """The trainable parameters (the LoRA adapters) and ``extra`` tensors to one safetensors file."""
    from safetensors.torch import save_file

    t = {n: p.detach().contiguous().clone() for n, p in model.named_parameters() if p.requires_grad}
    t.update(extra or {})
    tmp = path.with_suffix(".tmp")
    save_file(t, str(tmp))
    os.replace(tmp, path)


def load_trainable(model, path: Path) -> dict:
    """Load what :func:`save_trainable` wrote into ``model``; returns the file's other tensors."""
    import torch
    from safetensors.torch import load_file

    t = load_file(str(path))
    names = {n for n, p in model.named_parameters() if p.requires_grad}
    missing = names - set(t)
    if missing:
        raise ValueError(f"checkpoint {path.name} lacks {len(missing)} trainable tensors (first: {sorted(missing)[0]})")
    with torch.no_grad():
        for n, p in model.named_parameters():
            if n in names:
                p.copy_(t[n])
    return {k: v for k, v in t.items() if k not in names}


def _opt_tensors(model, opt) -> dict:
    out = {}
    for n, p in model.named_parameters():
        st = opt.state.get(p)
        if st:
            out[f"opt::{n}::exp_avg"] = st["exp_avg"].contiguous()
            out[f"opt::{n}::exp_avg_sq"] = st["exp_avg_sq"].contiguous()
            out[f"opt::{n}::step"] = st["step"].reshape(1).float()
    return out


def _restore_opt(model, opt, extra: dict) -> None:
    for n, p in model.named_parameters():
        if f"opt::{n}::exp_avg" in extra:
            opt.state[p] = {"exp_avg": extra[f"opt::{n}::exp_avg"].clone(),
                            "exp_avg_sq": extra[f"opt::{n}::exp_avg_sq"].clone(),
                            "step": extra[f"opt::{n}::step"].reshape(()).clone()}


# --- evaluation --------------------------------------------------------------------------------------------
def greedy_hits_rg(model, tok, task, problems, max_new_tokens: int, batch: int = 32) -> np.ndarray:
    """Per-item greedy correctness by the task's verifier (0/1)."""
    hits = []
    for s in range(0, len(problems), batch):
        qs = problems[s:s + batch]
        ro = sample_rollouts(model, tok, [q.question for q in qs], 1, max_new_tokens, greedy=True)
        r, _ = score_rollouts(ro, qs, task.reward)
        hits.extend(r[:, 0])
    return np.array(hits, dtype=np.int8)


def _cpu() -> float:
    return time.process_time()


def run_arm_v3(cfg: V3Config, splits: dict, tok, base, arm: str, seed: int, work: Path, log=print) -> dict:
    """One arm of one paired seed, resuming from whatever ``work`` holds."""
    import copy

    import torch

    work.mkdir(parents=True, exist_ok=True)
    task = splits["task"]
    model = lora_policy(copy.deepcopy(base), rank=cfg.rank, seed=seed)
    rec: dict = {}
    # 1. SFT on the arm's worked solutions ------------------------------------------------------------------
    if (work / "sft.json").is_file():
        load_trainable(model, work / "sft.safetensors")
        rec.update(json.loads((work / "sft.json").read_text()))
    else:
        rng = np.random.default_rng(seed + 7)
        comps = [task.completion(q, arm, rng, cfg.p) for q in splits["sft"]]
        t = _cpu()
        losses = sft_train(model, tok, [q.question for q in splits["sft"]], comps, cfg.sft_steps, cfg.sft_batch,
                           cfg.sft_lr, warmup=max(1, cfg.sft_steps // 10), seed=seed, desc=f"SFT {arm}")
        sft = {"sft_loss_curve": losses, "sft_loss_last": float(np.mean(losses[-10:])), "sft_cpu_s": _cpu() - t,
               "behaviour_content": task.rl_ready_stats(splits["sft"], comps),
               "sft_example": comps[0]}
        save_trainable(model, work / "sft.safetensors")
        _atomic_json(work / "sft.json", sft)
        rec.update(sft)
    # 2. the SFT model: held-out accuracy and RL-readiness ---------------------------------------------------
    if (work / "sft_eval.json").is_file():
        ev = json.loads((work / "sft_eval.json").read_text())
    else:
        t = _cpu()
        hits = greedy_hits_rg(model, tok, task, splits["eval"], cfg.max_new_tokens)
        torch.manual_seed(seed + 11)
        groups = sample_groups(model, tok, splits["probe"], task.reward, lambda q: q.question, cfg.probe_n,
                               cfg.max_new_tokens, cfg.temperature)
        alpha = np.array([g.alpha for g in groups])
        ci = co_influence(model, groups)
        ev = {"sft_hits_id": hits.tolist(), "sft_acc_id": float(hits.mean()), "alpha_probe": alpha.tolist(),
              "informativeness": informativeness(alpha), "frac_zero_std": frac_zero_std(alpha),
              "co_influence": ci["mean"], "co_influence_cosine": ci["cosine"], "n_informative": len(ci["index"]),
              "sampled_acc_probe": float(alpha.mean()), "sft_eval_cpu_s": _cpu() - t,
              "sft_sample": groups[0].rollouts.texts[0] if groups else ""}
        _atomic_json(work / "sft_eval.json", ev)
    rec.update(ev)
    log(f"v3 {arm} seed {seed}: SFT acc {ev['sft_acc_id']:.3f}, probe alpha mean {ev['sampled_acc_probe']:.3f}, "
        f"informativeness {ev['informativeness']:.3f}")
    # 3. GRPO, checkpointed every cfg.chunk steps -------------------------------------------------------------
    trainer = GRPO(model, tok, group_size=cfg.group_size, lr=cfg.rl_lr, max_new_tokens=cfg.max_new_tokens,
                   temperature=cfg.temperature)
    state = {"step": 0, "curve": [], "zero": [], "cpu_s": 0.0, "rng": None}
    ck = work / "grpo.json"
    if ck.is_file():
        state = json.loads(ck.read_text())
        extra = load_trainable(model, work / "grpo.safetensors")
        _restore_opt(model, trainer.opt, extra)
        torch.set_rng_state(extra["torch_rng"].to(torch.uint8))
    else:
        torch.manual_seed(seed + 17)
    rng = np.random.default_rng(seed + 17)
    if state["rng"] is not None:
        rng.bit_generator.state = state["rng"]
    while state["step"] < cfg.rl_steps:
        t = _cpu()
        for _ in range(min(cfg.chunk, cfg.rl_steps - state["step"])):
            qs = [splits["rl"][i] for i in rng.choice(len(splits["rl"]), cfg.rl_queries, replace=False)]
            st = trainer.step(qs, task.reward, prompt_of=lambda q: q.question)
            state["curve"].append(st["reward_mean"])
            state["zero"].append(st["frac_reward_zero_std"])
            state["step"] += 1
        state["cpu_s"] += _cpu() - t
        state["rng"] = rng.bit_generator.state
        save_trainable(model, work / "grpo.safetensors", {**_opt_tensors(model, trainer.opt),
                                                            "torch_rng": torch.get_rng_state().clone()})
        _atomic_json(ck, state)
        log(f"v3 {arm} seed {seed}: GRPO step {state['step']}/{cfg.rl_steps}, batch reward "
            f"{np.mean(state['curve'][-cfg.chunk:]):.3f}")
    # 4. after RL ------------------------------------------------------------------------------------------
    if (work / "rl_eval.json").is_file():
        rl = json.loads((work / "rl_eval.json").read_text())
    else:
        hits = greedy_hits_rg(model, tok, task, splits["eval"], cfg.max_new_tokens)
        rl = {"rl_hits_id": hits.tolist(), "rl_acc_id": float(hits.mean())}
        _atomic_json(work / "rl_eval.json", rl)
    rec.update(rl)
    nan = float("nan")
    rec.update(gain_id=rec["rl_acc_id"] - rec["sft_acc_id"], rl_reward_curve=state["curve"],
               rl_frac_zero_std_curve=state["zero"], grpo_cpu_s=state["cpu_s"],
               # no OOD split and no reference chain on these tasks: the stand-in's extra columns stay empty
               sft_acc_ood=nan, rl_acc_ood=nan, gain_ood=nan, sft_chain_id=nan, rl_chain_id=nan, gain_chain_id=nan,
               lucky_frac_probe=nan)
    rec["alpha_probe"] = np.array(rec["alpha_probe"])
    log(f"v3 {arm} seed {seed}: RL acc {rec['rl_acc_id']:.3f} (gain {rec['gain_id']:+.3f})")
    return rec


def influence_stage(cfg: V3Config, splits: dict, tok, base, seed: int, work: Path, checks) -> dict:
    """c1 / c1b on the plain SFT model (its LoRA parameters, float64), on the probe groups it samples (the same
    seeded groups as its readiness statistics); ``checks(model, groups, n_groups, seed)`` is the reproduction's
    :func:`~neurips25.behavior_injection.reproduce.influence_checks`. Cached in ``work/influence.json``."""
    import copy

    import torch

    f = work / "influence.json"
    if f.is_file():
        return _restore_figures(json.loads(f.read_text()))
    model = lora_policy(copy.deepcopy(base), rank=cfg.rank, seed=seed)
    load_trainable(model, work / "plain" / "sft.safetensors")
    torch.manual_seed(seed + 11)
    groups = sample_groups(model, tok, splits["probe"], splits["task"].reward, lambda q: q.question, cfg.probe_n,
                           cfg.max_new_tokens, cfg.temperature)
    out = checks(model, groups[:6], 6, seed)
    out = json.loads(json.dumps(out, default=_jsonable))
    _atomic_json(f, out)
    return _restore_figures(out)


def _restore_figures(d: dict) -> dict:
    """Measured controls read back from JSON as :class:`~neurips25.repro.claims.Figures` with their provenance."""
    from neurips25.repro.claims import Figures

    return {k: Figures(v["__figures__"], v["provenance"]) if isinstance(v, dict) and "__figures__" in v else v
            for k, v in d.items()}


def _jsonable(o):
    if hasattr(o, "raw"):  # a measured control's figures (repro.claims.Figures)
        return {"__figures__": o.raw(), "provenance": getattr(o, "provenance", "")}
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, np.generic):
        return o.item()
    raise TypeError(f"not JSON: {type(o).__name__}")


def run_v3(cfg: V3Config, seed: int, work: Path, log=print, checks=None) -> tuple[list[dict], dict | None]:
    """Every arm of paired seed ``seed`` (one seed a run, as the paper scale runs); returns ``([{arm: record}],
    influence)`` (influence None without ``checks``)."""
    tok, base = load_base(cfg, seed)
    splits = v3_splits(cfg, seed)
    work = Path(work) / f"v3-seed{seed}"
    work.mkdir(parents=True, exist_ok=True)
    _atomic_json(work / "config.json", dataclasses.asdict(cfg))
    recs = {}
    infl = None
    for arm in cfg.arms:
        recs[arm] = run_arm_v3(cfg, splits, tok, base, arm, seed, work / arm, log)
        if arm == "plain" and checks is not None:
            infl = influence_stage(cfg, splits, tok, base, seed, work, checks)
    return [recs], infl
