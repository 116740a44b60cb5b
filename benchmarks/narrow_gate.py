"""Overhead of the narrow-gate hooks on a tiny Llama, as ratios in one run.

    python benchmarks/narrow_gate.py [--layers 4 --seq 80 --batch 16]

Workload: a random-init LlamaForCausalLM (d = 128, 4 layers, 4 heads; the toy VLMs' decoder) on a batch of
16 sequences of 80 tokens, no grad, one thread; legs interleaved and repeated (``--rounds``). Each line is a
forward pass compared with the model's own
attention (anchor: ``attn_implementation="eager"``, which is what any attention-weight hook needs; SDPA is
printed for reference):

- registered knockout attention with an empty edge set / with text->[EOI] edges in all layers (target <= 1.5x),
  in both modes;
- the eager-patch fallback backend;
- ``generate`` (16 new tokens, KV cache) under a growing ``From(p)`` knockout against plain ``generate``;
- ``ResidualRecorder`` on every layer (the residuals are copied to CPU float32).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from transformers import LlamaConfig, LlamaForCausalLM

from neurips25.narrow_gate import From, ResidualRecorder, attention_knockout


def timed(fn, repeat: int) -> float:
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
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    torch.set_num_threads(1)
    ids = torch.randint(0, 96, (args.batch, args.seq), generator=torch.Generator().manual_seed(0))
    eoi, text = args.seq - 10, list(range(args.seq - 9, args.seq))
    eager, sdpa = model("eager", args.layers), model("sdpa", args.layers)

    def knock(keys, backend="auto", mode="mask_pre_softmax"):
        def fn():
            with attention_knockout(eager, text, keys, "all", mode=mode, backend=backend):
                eager(ids)
        return fn

    def record():
        with ResidualRecorder(eager):
            eager(ids)

    def generate(queries=None):
        prompt = ids[:2, :40]
        kw = dict(attention_mask=torch.ones_like(prompt), max_new_tokens=16, do_sample=False)

        def fn():
            if queries is None:
                eager.generate(prompt, **kw)
                return
            with attention_knockout(eager, queries, [20], "all"):
                eager.generate(prompt, **kw)
        return fn

    legs = {"eager attention (anchor)": lambda: eager(ids), "sdpa attention (reference)": lambda: sdpa(ids),
            "knockout, empty edge set": knock([]),
            "knockout, text->[EOI], all layers": knock([eoi]),
            "knockout, zero_post_softmax": knock([eoi], mode="zero_post_softmax"),
            "knockout, eager-patch fallback": knock([eoi], "eager_patch"),
            "ResidualRecorder, all layers": record}
    gen = {"generate 16 tokens (anchor)": generate(), "generate, knockout From(p)": generate(From(30))}
    for fn in [*legs.values(), *gen.values()]:
        fn()  # warm-up
    ratios = {k: [] for k in [*legs, *gen]}
    for r in range(args.rounds):  # legs interleaved, order rotated each round; a ratio per round
        names = list(legs)[r % len(legs):] + list(legs)[:r % len(legs)]
        t = {k: timed(legs[k], args.repeat) for k in names}
        for k in legs:
            ratios[k].append(t[k] / t["eager attention (anchor)"])
        g = {k: timed(gen[k], max(1, args.repeat // 5)) for k in (list(gen) if r % 2 == 0 else list(gen)[::-1])}
        for k in gen:
            ratios[k].append(g[k] / g["generate 16 tokens (anchor)"])
    print(f"tiny Llama d=128, {args.layers} layers, batch {args.batch} x {args.seq} tokens, 1 thread; {args.rounds} "
          f"interleaved rounds, median of {args.repeat} passes each; ratio to the anchor: median [min, max] of rounds")
    for name, rs in ratios.items():
        target = "  (target <= 1.5x)" if name.startswith("knockout, text") else ""
        print(f"{name:38s} {np.median(rs):5.2f}x [{min(rs):.2f}, {max(rs):.2f}]{target}")


if __name__ == "__main__":
    main()
