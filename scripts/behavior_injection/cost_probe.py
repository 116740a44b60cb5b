"""CPU cost of behavior_injection v3 on SmolLM2-135M-Instruct (issue #60): SFT step, rollout tokens/s, GRPO step,
full fine-tuning vs LoRA, on Countdown worked solutions. One torch thread; CPU seconds (process time).

    OMP_NUM_THREADS=1 python scripts/behavior_injection/cost_probe.py --out cost.json [--reps 2]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch


def cpu() -> float:
    return time.process_time()


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--prompts", type=int, default=8)
    ap.add_argument("--group", type=int, default=4)
    ap.add_argument("--new-tokens", type=int, default=48)
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    from neurips25.behavior_injection.grpo import GRPO, sample_rollouts
    from neurips25.behavior_injection.rg_tasks import RGCountdown
    from neurips25.behavior_injection.sft import sft_train
    from neurips25.behavior_injection.smollm2 import lora_policy
    from neurips25.pretrained import load_smollm2, load_smollm2_tokenizer

    tok = load_smollm2_tokenizer()
    task = RGCountdown(seed=123)
    probs = task.samples(64)
    prompts, comps = [p.question for p in probs], [p.completion for p in probs]
    out: dict = {"batch": args.batch, "prompts": args.prompts, "group": args.group, "new_tokens": args.new_tokens,
                 "torch_threads": torch.get_num_threads()}
    ntok = [len(tok(p + c).input_ids) + 1 for p, c in zip(prompts, comps)]
    out["sft_tokens_per_pair_mean"] = float(np.mean(ntok))
    for mode in ("lora", "full"):
        model = load_smollm2()
        if mode == "lora":
            model = lora_policy(model, rank=16)
        n_train = sum(p.numel() for p in model.parameters() if p.requires_grad)
        t = cpu()
        sft_train(model, tok, prompts, comps, steps=args.reps, batch_size=args.batch, lr=1e-4, warmup=1, seed=0,
                  desc=f"SFT {mode}")
        sft_s = (cpu() - t) / args.reps
        torch.manual_seed(0)
        t = cpu()
        ro = sample_rollouts(model, tok, prompts[:args.prompts], args.group, args.new_tokens, temperature=1.0)
        roll_s = cpu() - t
        gen = int(ro.completion_mask.sum())
        trainer = GRPO(model, tok, group_size=args.group, lr=1e-5, max_new_tokens=args.new_tokens)
        t = cpu()
        st = trainer.step(probs[:args.prompts], task.reward, prompt_of=lambda q: q.question)
        step_s = cpu() - t
        out[mode] = {"trainable_params": int(n_train), "sft_step_cpu_s": sft_s,
                     "sft_tokens_per_cpu_s": args.batch * float(np.mean(ntok)) / sft_s,
                     "rollout_cpu_s": roll_s, "rollout_tokens": gen, "rollout_tokens_per_cpu_s": gen / roll_s,
                     "grpo_step_cpu_s": step_s, "grpo_completion_len": st["completion_len"],
                     "grpo_reward_mean": st["reward_mean"]}
        print(mode, json.dumps(out[mode]), flush=True)
        del model, trainer
    with open(args.out, "w") as fh:
        json.dump(out, fh, indent=1)


if __name__ == "__main__":
    main()
