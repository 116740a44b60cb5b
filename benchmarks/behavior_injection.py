"""Benchmark: rollout throughput with vs without the KV cache, and the GRPO step's time breakdown.

Target (issue #19): >= 10x tokens/s with the KV cache at 40 new tokens, measured at two model sizes: the
reproduction's quick model (d=64, L=2, 85k parameters) and the size of the issue's research note (d=128, L=4,
663k; the note's "0.8M-parameter" model, ~16x measured there). The uncached path re-encodes the whole prefix at
every step, so its cost grows with the model's per-token compute, while at 85k parameters both paths are
dominated by transformers' per-step Python. Where TRL is installed
(``neurips25[rl]``), our GRPO loss + backward is timed against TRL's ``GRPOTrainer.compute_loss`` + backward
on the same batch (rollouts, advantages, ``pi_old``), after checking the two agree.

    .venv/bin/python benchmarks/behavior_injection.py
"""

from __future__ import annotations

import importlib.util
import json
import time

import numpy as np
import torch

from neurips25.behavior_injection import GRPO, MiniIGSM, build_tokenizer, sample_rollouts, tiny_llama

SIZES = {"quick_d64_L2": (64, 2), "note_d128_L4": (128, 4)}


def kv_cache_ratio(model, tok, prompts, group, new_tokens, repeats) -> dict:
    """Best-of-``repeats`` rollout throughput with and without the KV cache, the two paths alternating."""
    best = {c: [float("inf"), float("inf")] for c in (True, False)}
    cpus = {True: [], False: []}
    n_tok = {}
    for _ in range(repeats):
        for cache in (True, False):  # interleaved legs
            torch.manual_seed(0)  # the same sampled tokens on both paths
            t, c = time.perf_counter(), time.process_time()
            ro = sample_rollouts(model, tok, prompts, group, new_tokens, use_cache=cache)
            wall, cpu = time.perf_counter() - t, time.process_time() - c
            best[cache] = [min(best[cache][0], wall), min(best[cache][1], cpu)]
            cpus[cache].append(cpu)
            n_tok[cache] = int(ro.completion_mask.sum())
    out = {("with_cache" if c else "without_cache"): {"seconds": w, "cpu_seconds": cp, "tokens": n_tok[c],
                                                      "tokens_per_s": n_tok[c] / w, "tokens_per_cpu_s": n_tok[c] / cp}
           for c, (w, cp) in best.items()}
    out["parameters"] = sum(p.numel() for p in model.parameters())
    # wall-clock ratio, and the CPU-time ratio (1 thread: robust to other processes on a shared machine)
    out["kv_cache_speedup"] = out["with_cache"]["tokens_per_s"] / out["without_cache"]["tokens_per_s"]
    out["kv_cache_speedup_cpu"] = out["with_cache"]["tokens_per_cpu_s"] / out["without_cache"]["tokens_per_cpu_s"]
    out["kv_cache_speedup_cpu_median"] = float(np.median(cpus[False]) / np.median(cpus[True]))
    out["repeats"] = repeats
    return out


def main(n_queries: int = 16, group: int = 8, new_tokens: int = 40, repeats: int = 3) -> dict:
    torch.manual_seed(0)
    task = MiniIGSM(n_ops=(2, 3), mod=11, distractors=(0, 0), seed=0)
    tok = build_tokenizer(task.vocabulary())
    qs = task.samples(n_queries)
    prompts = [q.question for q in qs]
    out = {"kv_cache": {}}
    models = {name: tiny_llama(len(tok), d_model=d, n_layers=L, n_heads=4, seed=0, tokenizer=tok)
              for name, (d, L) in SIZES.items()}
    for name, m in models.items():
        out["kv_cache"][name] = kv_cache_ratio(m, tok, prompts, group, new_tokens, repeats)
    model = models["quick_d64_L2"]  # the GRPO breakdown and the TRL comparison use the reproduction's quick model
    tr = GRPO(model, tok, group_size=group, max_new_tokens=new_tokens)
    rng = np.random.default_rng(0)
    reward = lambda q, c: float(rng.random() < 0.5)  # random binary rewards: every group informative
    steps = [tr.step(qs, reward, prompt_of=lambda q: q.question) for _ in range(3)]
    out["grpo_step_s"] = {k: float(np.median([s[k] for s in steps])) for k in ("time_rollout", "time_reward",
                                                                              "time_update")}
    out["trl"] = trl_comparison(model, tok, prompts, group, new_tokens) if importlib.util.find_spec("trl") \
        else "not installed: comparison skipped"
    out["target_kv_speedup"] = 10.0
    return out


def trl_comparison(model, tok, prompts, group, new_tokens, repeats: int = 5) -> dict:
    """Loss + backward on one batch: ours vs TRL's GRPOTrainer (loss_type "grpo"); agreement first."""
    from neurips25.behavior_injection.grpo import completion_logprobs, grpo_objective
    from neurips25.behavior_injection.trl_check import build_trl_trainer, trl_loss_crosscheck

    torch.manual_seed(1)
    ro = sample_rollouts(model, tok, prompts, group, new_tokens)
    adv = torch.randn(len(prompts) * group, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        old = completion_logprobs(model, ro.prompt_ids, ro.prompt_mask, ro.completion_ids, ro.completion_mask)
    t = time.perf_counter()
    trainer = build_trl_trainer(model, tok, prompts, group, max_new_tokens=new_tokens)
    t_build = time.perf_counter() - t
    check = trl_loss_crosscheck(model, tok, ro, adv, old_logp=old, trainer=trainer)
    model.train()
    trainer.current_gradient_accumulation_steps = 1
    inputs = {"prompt_ids": ro.prompt_ids, "prompt_mask": ro.prompt_mask, "completion_ids": ro.completion_ids,
              "completion_mask": ro.completion_mask, "advantages": adv, "old_per_token_logps": old}

    def ours():
        lp = completion_logprobs(model, ro.prompt_ids, ro.prompt_mask, ro.completion_ids, ro.completion_mask)
        (-grpo_objective(lp, old, adv, ro.completion_mask)).backward()

    def theirs():
        trainer.compute_loss(model, inputs).backward()

    # the two legs interleaved (ours, TRL, ours, TRL, ...), so load on a shared machine hits both alike
    samples = {"ours": [], "trl": []}
    for _ in range(repeats):
        for name, fn in (("ours", ours), ("trl", theirs)):
            model.zero_grad(set_to_none=True)
            t = time.process_time()
            fn()
            samples[name].append(time.process_time() - t)
    model.zero_grad(set_to_none=True)
    model.eval()
    times = {k: {"min_cpu_s": float(np.min(v)), "median_cpu_s": float(np.median(v))} for k, v in samples.items()}
    return {"loss_abs_diff": check["abs_diff"], "grad_rel_diff": check["grad_rel_diff"],
            "loss_backward_cpu_s": times, "trl_over_ours_min": times["trl"]["min_cpu_s"] / times["ours"]["min_cpu_s"],
            "trl_over_ours_median": times["trl"]["median_cpu_s"] / times["ours"]["median_cpu_s"],
            "repeats": repeats, "trl_trainer_build_s": t_build}


if __name__ == "__main__":
    torch.set_num_threads(1)
    print(json.dumps(main(), indent=2))
