"""Overhead of the narrow-gate hooks on a tiny Llama, as ratios in one run.

    python benchmarks/narrow_gate.py [--layers 4 --seq 80 --batch 16]

Workload: a random-init LlamaForCausalLM (d = 128, 4 layers, 4 heads; the toy VLMs' decoder) on a batch of
16 sequences of 80 tokens, no grad, one thread. Each line is a forward pass compared with the model's own
attention (anchor: ``attn_implementation="eager"``, which is what any attention-weight hook needs; SDPA is
printed for reference):

- registered knockout attention with an empty edge set / with text->[EOI] edges in all layers (target <= 1.5x);
- the eager-patch fallback backend;
- ``ResidualRecorder`` on every layer (the residuals are copied to CPU float32).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from transformers import LlamaConfig, LlamaForCausalLM

from neurips25.narrow_gate import ResidualRecorder, attention_knockout


def timed(fn, repeat: int) -> float:
    fn()
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return float(np.median(ts))


def model(impl: str, layers: int) -> LlamaForCausalLM:
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=96, hidden_size=128, intermediate_size=256, num_hidden_layers=layers,
                      num_attention_heads=4, num_key_value_heads=4, attn_implementation=impl)
    return LlamaForCausalLM(cfg).eval()


@torch.no_grad()
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--seq", type=int, default=80)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--repeat", type=int, default=30)
    args = ap.parse_args()
    torch.set_num_threads(1)
    ids = torch.randint(0, 96, (args.batch, args.seq), generator=torch.Generator().manual_seed(0))
    eoi, text = args.seq - 10, list(range(args.seq - 9, args.seq))
    eager, sdpa = model("eager", args.layers), model("sdpa", args.layers)

    def knock(keys, backend="auto"):
        def fn():
            with attention_knockout(eager, text, keys, "all", backend=backend):
                eager(ids)
        return fn

    def record():
        with ResidualRecorder(eager):
            eager(ids)

    anchor = timed(lambda: eager(ids), args.repeat)
    rows = {"eager attention (anchor)": anchor, "sdpa attention (reference)": timed(lambda: sdpa(ids), args.repeat),
            "knockout, empty edge set": timed(knock([]), args.repeat),
            "knockout, text->[EOI], all layers": timed(knock([eoi]), args.repeat),
            "knockout, eager-patch fallback": timed(knock([eoi], "eager_patch"), args.repeat),
            "ResidualRecorder, all layers": timed(record, args.repeat)}
    print(f"tiny Llama d=128, {args.layers} layers, batch {args.batch} x {args.seq} tokens, 1 thread, median of "
          f"{args.repeat}")
    for name, t in rows.items():
        target = "  (target <= 1.5x)" if name.startswith("knockout, text") else ""
        print(f"{name:38s} {1e3 * t:8.2f} ms  {t / anchor:5.2f}x{target}")


if __name__ == "__main__":
    main()
