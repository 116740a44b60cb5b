"""Benchmark: rollout throughput with vs without the KV cache, and the GRPO step's time breakdown.

Target (issue #19): >= 10x tokens/s with the KV cache at 40 new tokens. TRL is not installed here, so the
comparison of our GRPO step with TRL's ``GRPOTrainer`` on the same batch is skipped (reported as such).

    .venv/bin/python benchmarks/behavior_injection.py
"""

from __future__ import annotations

import importlib.util
import json
import time

import numpy as np
import torch

from neurips25.behavior_injection import GRPO, MiniIGSM, build_tokenizer, sample_rollouts, tiny_llama


def main(n_queries: int = 16, group: int = 8, new_tokens: int = 40, repeats: int = 2) -> dict:
    torch.manual_seed(0)
    task = MiniIGSM(n_ops=(2, 3), mod=11, distractors=(0, 0), seed=0)
    tok = build_tokenizer(task.vocabulary())
    model = tiny_llama(len(tok), d_model=64, n_layers=2, n_heads=4, seed=0, tokenizer=tok)
    qs = task.samples(n_queries)
    prompts = [q.question for q in qs]
    out = {}
    for cache in (True, False):
        best = float("inf")
        for _ in range(repeats):
            t = time.perf_counter()
            ro = sample_rollouts(model, tok, prompts, group, new_tokens, use_cache=cache)
            best = min(best, time.perf_counter() - t)
        n_tok = int(ro.completion_mask.sum())
        out["with_cache" if cache else "without_cache"] = {"seconds": best, "tokens": n_tok,
                                                            "tokens_per_s": n_tok / best}
    out["kv_cache_speedup"] = out["with_cache"]["tokens_per_s"] / out["without_cache"]["tokens_per_s"]
    tr = GRPO(model, tok, group_size=group, max_new_tokens=new_tokens)
    rng = np.random.default_rng(0)
    reward = lambda q, c: float(rng.random() < 0.5)  # random binary rewards: every group informative
    steps = [tr.step(qs, reward, prompt_of=lambda q: q.question) for _ in range(3)]
    out["grpo_step_s"] = {k: float(np.median([s[k] for s in steps])) for k in ("time_rollout", "time_reward",
                                                                              "time_update")}
    out["trl"] = ("installed: comparison not implemented" if importlib.util.find_spec("trl")
                  else "not installed: comparison skipped")
    out["target_kv_speedup"] = 10.0
    return out


if __name__ == "__main__":
    torch.set_num_threads(1)
    print(json.dumps(main(), indent=2))
