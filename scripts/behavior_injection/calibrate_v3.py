"""Calibration of behavior_injection v3 (issue #60): plain LoRA SFT of SmolLM2-135M-Instruct on reasoning-gym
worked solutions, greedy held-out accuracy by the verifier at a few SFT steps, on a data seed kept apart from the
judged seeds (100). Picks the SFT length that puts plain SFT in c2's band [0.3, 0.7] before any judged run.

    OMP_NUM_THREADS=1 python scripts/behavior_injection/calibrate_v3.py --out calib.json \
        [--task countdown] [--steps 200] [--at 25 50 100 150 200] [--lr 5e-4] [--n-eval 64]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--task", default="countdown")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--at", type=int, nargs="+", default=[25, 50, 100, 150, 200])
    ap.add_argument("--lr", type=float, default=5e-4)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--rank", type=int, default=16)
    ap.add_argument("--n-eval", type=int, default=64)
    ap.add_argument("--data-seed", type=int, default=100)
    args = ap.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    from neurips25.behavior_injection import v3 as V3
    from neurips25.behavior_injection.sft import sft_train
    from neurips25.behavior_injection.smollm2 import lora_policy

    cfg = V3.V3Config(task=args.task, n_sft=2000, n_rl=1, n_probe=1, n_eval=args.n_eval, rank=args.rank,
                      sft_lr=args.lr, sft_batch=args.batch, sft_steps=args.steps)
    tok, base = V3.load_base(cfg)
    splits = V3.v3_splits(cfg, args.data_seed)
    task = splits["task"]
    model = lora_policy(base, rank=cfg.rank, seed=args.data_seed)
    out = {"config": dataclasses.asdict(cfg), "data_seed": args.data_seed, "points": []}
    cpu0 = time.process_time()
    sft_cpu = [0.0]
    t_last = [time.process_time()]

    def at(step, m):
        sft_cpu[0] += time.process_time() - t_last[0]
        if step in args.at:
            t = time.process_time()
            hits = V3.greedy_hits_rg(m, tok, task, splits["eval"], cfg.max_new_tokens)
            ro = V3.sample_rollouts(m, tok, [splits["eval"][0].question], 1, cfg.max_new_tokens, greedy=True)
            pt = {"step": step, "acc": float(hits.mean()), "n_eval": len(hits), "sft_cpu_s": sft_cpu[0],
                  "eval_cpu_s": time.process_time() - t, "example": ro.texts[0]}
            out["points"].append(pt)
            print(json.dumps(pt), flush=True)
            with open(args.out, "w") as fh:
                json.dump(out, fh, indent=1)
        t_last[0] = time.process_time()

    h0 = V3.greedy_hits_rg(model, tok, task, splits["eval"][:16], cfg.max_new_tokens)
    out["base_acc_16"] = float(h0.mean())
    print("base", out["base_acc_16"], flush=True)
    t_last[0] = time.process_time()
    losses = sft_train(model, tok, [q.question for q in splits["sft"]], [q.completion for q in splits["sft"]],
                       cfg.sft_steps, cfg.sft_batch, cfg.sft_lr, warmup=max(1, cfg.sft_steps // 10),
                       seed=args.data_seed, desc="calibration SFT", callback=at)
    out["losses"] = losses
    out["total_cpu_s"] = time.process_time() - cpu0
    with open(args.out, "w") as fh:
        json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
