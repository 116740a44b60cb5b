"""ShoeFit speed and memory: cached reference stream vs recomputed, LayeredRefAttnProcessor vs stock FLUX.

    python benchmarks/shoefit.py [--views 4] [--steps 20] [--batch 16] [--reps 5]

1. Sampling with :class:`ShoeFitPipeline`: the reference stream run once per call (cached keys / values) against
   recomputing it at every Euler step (target of issue #22: >= 1.5x faster at 4 views). The two must agree to
   1e-5 (checked here too).
2. One forward pass of a tiny ``FluxTransformer2DModel`` (2 double + 1 single block, 64 image + 64 text tokens)
   with :class:`LayeredRefAttnProcessor` (shoe mask on half the tokens) against the stock ``FluxAttnProcessor``:
   time and memory ratios (memory = bytes allocated during the pass, torch profiler).

The two legs of each comparison are **interleaved** (each repetition runs both, the order alternating) and
repeated; the ratio reported is of the medians, with the range of the per-repetition ratios, single-threaded.
On a shared machine the spread says how far to trust the median.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from diffusers import FlowMatchEulerDiscreteScheduler, FluxTransformer2DModel
from diffusers.models.transformers.transformer_flux import FluxAttnProcessor

from neurips25.shoefit import LayeredRefAttnProcessor, MVShoesLite, ShoeFitPipeline, ShoeFitTransformer
from neurips25.shoefit.rope import multiview_rope_ids


def interleaved(legs: dict, reps: int) -> dict:
    """Seconds per repetition for each leg; every repetition runs each leg once, the order rotating."""
    names, times, outs = list(legs), {k: [] for k in legs}, {}
    for r in range(reps):
        for name in names[r % len(names):] + names[:r % len(names)]:
            t = time.perf_counter()
            outs[name] = legs[name]()
            times[name].append(time.perf_counter() - t)
    return times, outs


def ratio_line(times: dict, slow: str, fast: str) -> tuple[float, float, float]:
    """Median(slow) / median(fast) and the range of the per-repetition ratios."""
    per = [a / b for a, b in zip(times[slow], times[fast])]
    return statistics.median(times[slow]) / statistics.median(times[fast]), min(per), max(per)


def allocated_bytes(fn):
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], profile_memory=True) as prof:
        fn()
    return sum(max(e.self_cpu_memory_usage, 0) for e in prof.key_averages())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--views", type=int, default=4)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    torch.manual_seed(0)

    data = MVShoesLite(args.batch, seed=0, res=24, views=args.views, split="test")
    model = ShoeFitTransformer(sample_size=24, patch_size=4, num_layers=2, num_attention_heads=4,
                               attention_head_dim=16, axes_dims_rope=(4, 6, 6), layered=True).eval()
    pipe = ShoeFitPipeline(model, FlowMatchEulerDiscreteScheduler())
    pipe.set_progress_bar_config(disable=True)
    lat = torch.randn(args.batch, 3, 24, 24)

    def sample(cache):
        return pipe(data.ref_views, data.model_image, data.mask, args.steps, latents=lat, cache_reference=cache)

    times, outs = interleaved({"cached": lambda: sample(True), "recomputed": lambda: sample(False)}, args.reps)
    diff = float((outs["cached"] - outs["recomputed"]).abs().max())
    r, lo, hi = ratio_line(times, "recomputed", "cached")
    print(f"sampling, {args.views} views, {args.steps} steps, batch {args.batch} "
          f"({args.reps} interleaved repetitions):")
    print(f"  cached {statistics.median(times['cached']) * 1e3:.0f} ms, recomputed "
          f"{statistics.median(times['recomputed']) * 1e3:.0f} ms (medians): speed-up {r:.2f}x "
          f"[per repetition {lo:.2f}-{hi:.2f}] (target >= 1.5x), max |diff| {diff:.1e}")

    flux = FluxTransformer2DModel(patch_size=1, in_channels=16, num_layers=2, num_single_layers=1,
                                  attention_head_dim=16, num_attention_heads=4, joint_attention_dim=32,
                                  pooled_projection_dim=16, axes_dims_rope=(4, 6, 6)).eval()
    B, n = args.batch, 64
    x, enc = torch.randn(B, n, 16), torch.randn(B, n, 32)
    pooled, ts = torch.randn(B, 16), torch.full((B,), 0.5)
    img_ids, txt_ids = multiview_rope_ids(1, 8, 8)[0], multiview_rope_ids(1, 8, 8)[1]
    shoe = (torch.arange(n) < n // 2).float().expand(B, n)

    def forward(kw):
        with torch.no_grad():
            return flux(x, enc, pooled, ts, img_ids, txt_ids, return_dict=False, joint_attention_kwargs=kw)[0]

    stock_proc = {name: FluxAttnProcessor() for name in flux.attn_processors}
    layered_proc = {name: LayeredRefAttnProcessor(64) for name in flux.attn_processors}  # one per layer

    def stock():
        flux.set_attn_processor(dict(stock_proc))  # diffusers pops the dict it is given
        return forward(None)

    def layered():
        flux.set_attn_processor(dict(layered_proc))
        return forward({"shoe_mask": shoe})

    times, _ = interleaved({"stock": stock, "layered": layered}, 2 * args.reps)
    m_stock, m_layer = allocated_bytes(stock), allocated_bytes(layered)
    r, lo, hi = ratio_line(times, "layered", "stock")
    print(f"FLUX forward, batch {B}, {n} image + {n} text tokens ({2 * args.reps} interleaved repetitions):")
    print(f"  stock FluxAttnProcessor {statistics.median(times['stock']) * 1e3:.1f} ms, {m_stock / 2**20:.1f} MiB")
    print(f"  LayeredRefAttnProcessor {statistics.median(times['layered']) * 1e3:.1f} ms, {m_layer / 2**20:.1f} MiB")
    print(f"  ratios layered/stock: time {r:.2f}x [per repetition {lo:.2f}-{hi:.2f}], memory {m_layer / m_stock:.2f}x")


if __name__ == "__main__":
    main()
