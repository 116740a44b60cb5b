"""Diagnosis of the causal-LM claim (c5): a learning-rate sweep per initialiser, the rate picked on validation.

Not part of the reproduction. The quick c5 run compares LoRA, PiSSA, EVA and a control at one rate (2e-3), and
its loss curves suggest that the verdict follows the rate, not the initialisation. This script trains LoRA,
EVA and the control (EVA's ranks and scaling with random orthonormal A rows, :func:`llm.randomise_directions`)
on SmolLM2-135M-Instruct at every rate of a grid, with the quick c5 setting otherwise (batches of 2 word
problems, one batch order per seed shared by all), picks each initialiser's rate by its answer loss on
held-out *validation* problems, and reports, at that rate, the training loss over the last 10 steps and the
exact match on separate *test* problems. Seeds run one after another and every run prints a line, so a
partial run is usable.

    python -m neurips25.eva.lr_sweep [--seeds 0 1] [--steps 20] [--lrs 5e-4 1e-3 2e-3]
"""

from __future__ import annotations

import argparse
import copy
import json
import time
import warnings

import numpy as np
import torch

from neurips25.eva import llm
from neurips25.eva.baselines import make_lora_model
from neurips25.eva.reproduce import LM_TARGETS, _no_labels


def sweep(seeds, steps: int, lrs, batch_size: int = 2, n_train: int = 120, n_val: int = 16, n_test: int = 16,
          eva_batches: int = 2, eva_batch_size: int = 8, rank: int = 8, log=print) -> list[dict]:
    """One row per (seed, initialiser, rate): training-window loss, validation loss, test loss and EM."""
    from neurips25.pretrained import load_smollm2, load_smollm2_tokenizer

    tok, base = load_smollm2_tokenizer(), load_smollm2()
    rows = []
    for s in seeds:
        prompts, answers = llm.word_problems(n_train + n_val + n_test, s)
        split = {"train": slice(0, n_train), "val": slice(n_train, n_train + n_val),
                 "test": slice(n_train + n_val, None)}
        enc = {k: llm.encode_lm(prompts[v], answers[v], tok, batch_size) for k, v in split.items()}
        order = np.random.default_rng(s).permutation(len(enc["train"]))
        n_eva = eva_batch_size * eva_batches
        eva_data = _no_labels(llm.encode_lm(prompts[:n_eva], answers[:n_eva], tok, eva_batch_size))
        models = {}
        for init in ("lora", "eva"):
            torch.manual_seed(s)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                models[init] = make_lora_model(copy.deepcopy(base), init, rank=rank, lora_alpha=float(rank),
                                               target_modules=LM_TARGETS,
                                               dataloader=eva_data if init == "eva" else None, rho=2.0,
                                               max_batches=eva_batches, progress=False)
        models["control"] = copy.deepcopy(models["eva"])
        llm.randomise_directions(models["control"], s)
        for lr in lrs:
            for init, m0 in models.items():
                t0 = time.process_time()
                pm = copy.deepcopy(m0)
                losses = llm.train_lora(pm, enc["train"], steps, lr, order)
                val_loss, val_em = llm.answer_loss_and_exact_match(pm, enc["val"])
                test_loss, test_em = llm.answer_loss_and_exact_match(pm, enc["test"])
                row = {"seed": s, "init": init, "lr": lr, "loss_window": float(np.mean(losses[-10:])),
                       "loss_all": float(np.mean(losses)), "val_loss": val_loss, "val_em": val_em,
                       "test_loss": test_loss, "test_em": test_em, "curve": losses,
                       "cpu_s": time.process_time() - t0}
                rows.append(row)
                log(json.dumps({k: (round(v, 4) if isinstance(v, float) else v) for k, v in row.items()
                                if k != "curve"}))
                del pm
    return rows


def best_by_validation(rows: list[dict]) -> dict:
    """Per seed and initialiser, the row of the rate with the lowest validation answer loss."""
    best: dict = {}
    for r in rows:
        key = (r["seed"], r["init"])
        if key not in best or r["val_loss"] < best[key]["val_loss"]:
            best[key] = r
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--lrs", type=float, nargs="+", default=[5e-4, 1e-3, 2e-3])
    args = ap.parse_args()
    rows = sweep(args.seeds, args.steps, args.lrs, log=lambda m: print(m, flush=True))
    best = best_by_validation(rows)
    for (s, init), r in sorted(best.items()):
        print(f"seed {s} {init:8s} best lr {r['lr']:.0e}: loss(last 10) {r['loss_window']:.4f} "
              f"val {r['val_loss']:.4f} test loss {r['test_loss']:.4f} EM {100 * r['test_em']:.1f}%")


if __name__ == "__main__":
    main()
