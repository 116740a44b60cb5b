"""Speed of PGD-MOO sampling and training, against the unguided sampler timed in the same run.

    python benchmarks/pref_diffusion.py [--hidden 512] [--steps 200] [--repeats 3]

Prints, as ratios (absolute times on a shared machine are noisy):
- guided / unguided time to sample 256 designs at equal widths (the paper's 512), with the reused reference
  utility (the default; issue 30 target: <= 3.0x) and with the reference recomputed every step (the
  official code's cost), plus a half-width preference network;
- a breakdown of one guided step (noise predictor, utility at the reference, utility + input gradient);
- training throughput of the prior (designs / s) and of the preference model (pairs / s);
- the surrogate + NSGA-II baseline's search time relative to PGD sampling.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch

from neurips25.pref_diffusion import (
    MultiHeadSurrogateNSGA2,
    PreferenceGuidedDiffusion,
    make_offline_task,
)


def timeit(fn, repeats: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--steps", type=int, default=200, help="reverse-chain length (same for both samplers)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    task = make_offline_task("zdt1", n=2000, seed=0)
    X, Y = task.X, task.Y
    common = dict(sample_steps=args.steps, hidden=args.hidden, random_state=0, bounds=(task.xl, task.xu))

    t0 = time.perf_counter()
    model = PreferenceGuidedDiffusion(epochs=2, preference_epochs=2, patience=2, **common).fit(X, Y)
    fit_s = time.perf_counter() - t0
    # training throughput, measured on one epoch of each network
    t0 = time.perf_counter()
    PreferenceGuidedDiffusion(epochs=1, guidance_scale=0.0, **common).fit(X, Y)
    prior_rate = len(X) / (time.perf_counter() - t0)
    t0 = time.perf_counter()
    PreferenceGuidedDiffusion(epochs=1, preference_epochs=1, patience=1, **common).fit(X, Y, prior=model)
    pair_rate = 0.9 * len(X) / (time.perf_counter() - t0)

    unguided = timeit(lambda: model.sample(256, guidance_scale=0.0), args.repeats)
    guided = timeit(lambda: model.sample(256), args.repeats)
    exact = PreferenceGuidedDiffusion(**{**model.get_params(), "reuse_reference": False})
    for attr in ("ddpm_", "eps_model_", "preference_model_", "reference_", "x_min_", "x_max_", "xl_", "xu_",
                 "n_features_in_"):
        setattr(exact, attr, getattr(model, attr))
    guided_exact = timeit(lambda: exact.sample(256), args.repeats)
    half = PreferenceGuidedDiffusion(
        epochs=1, preference_epochs=1, patience=1, preference_hidden=args.hidden // 2, **common
    ).fit(X, Y, prior=model)
    guided_half = timeit(lambda: half.sample(256), args.repeats)

    # one step, by component
    n, t = 256, torch.full((256,), 500)
    x = torch.randn(n, X.shape[1])
    g_fn = model._guidance(reuse_reference=False)
    pref = model.preference_model_
    for p in pref.parameters():  # as during sampling: input gradients only
        p.requires_grad_(False)
    with torch.no_grad():
        eps_t = timeit(lambda: model.eps_model_(x, t), 20)
        ref_t = timeit(lambda: pref.utility(x, t), 20)
    grad_t = timeit(lambda: g_fn(x, x, t), 20) - ref_t
    for p in pref.parameters():
        p.requires_grad_(True)

    mh = MultiHeadSurrogateNSGA2(hidden=args.hidden, epochs=1, bounds=(task.xl, task.xu), random_state=0).fit(
        X, Y
    )
    nsga = timeit(lambda: mh.sample(256), 1)

    print(
        f"PGD-MOO sampling benchmark: 256 designs, {args.steps}-step chain, hidden {args.hidden}, "
        f"{args.threads} thread(s), median of {args.repeats}"
    )
    print(f"  unguided sampling              {unguided:8.3f} s   (anchor)")
    print(
        f"  guided, reused reference       {guided:8.3f} s   ratio {guided / unguided:5.2f}x"
        "  (target <= 3.0x)"
    )
    print(f"  guided, reference recomputed   {guided_exact:8.3f} s   ratio {guided_exact / unguided:5.2f}x")
    print(
        f"  guided, preference width {args.hidden // 2:<4d}  {guided_half:8.3f} s   ratio "
        f"{guided_half / unguided:5.2f}x"
    )
    print(
        f"  one step: eps_theta {eps_t * 1e3:.2f} ms | utility at reference {ref_t / eps_t:.2f}x | "
        f"utility + input gradient {grad_t / eps_t:.2f}x (units of one eps_theta pass)"
    )
    print(
        f"  training throughput: prior {prior_rate:,.0f} designs/s, preference {pair_rate:,.0f} pairs/s "
        f"(one epoch each; full tiny fit {fit_s:.1f} s)"
    )
    print(
        f"  multi-head surrogate NSGA-II search (50 gen): {nsga:.3f} s = {nsga / guided:.2f}x guided sampling"
    )


if __name__ == "__main__":
    np.set_printoptions(precision=3)
    main()
