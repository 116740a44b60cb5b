"""Reproduction of ShoeFit's claims (NeurIPS 2025) on MVShoesLite: issue #51's criteria, judged by the machinery.

The paper's numbers are not known (only the abstract is public), so every criterion is relative. Issue #22
fixed c1-c5; issue #51 reworked the data (product views that do not describe themselves, targets misaligned
in scale and translation, a leak regime) and the criteria below, all fixed before any run with them. Each
claim is declared in :func:`declare_claims` with its controls; ``Claim.record`` sets the verdict (verdicts v3).
One run trains at one seed; the runner combines seeds (``--seed 0`` and ``--seed 1``).

1. c1_exactness (check): RoPE == diffusers' FluxPosEmbed (<= 1e-6); LayeredRefAttnProcessor at init ==
   FluxAttnProcessor in a FluxTransformer2DModel (<= 1e-6); (h, w) shift and views permuted with their ids
   leave the output unchanged (<= 1e-5). Negative controls: a non-zero modulation; views permuted alone.
2. c2_multiview (headline): on side-pose test targets (the visible side is absent from view 0), four views with
   the view axis (C) beat one view (A) by >= 1.5 dB shoe-region PSNR **and** four views at shared 2D positions
   (B) by >= 0.5 dB: the gain needs the view axis, not just more pixels. Negative control: C given another
   shoe's views. Positive control: copying the product view nearest the pose (a zero-parameter oracle) against
   copying view 0 and against copying a side view chosen by a coin flip (what a model that cannot tell the
   views apart can do): the instance can show both margins.
3. c3_view_axis (supporting): C - B >= 0.5 dB alone. Negative control: C with its view ids collapsed to 1 at
   inference. Positive control: the same copy oracle (nearest vs a coin-flip side view).
4. c4_colour (supporting, one-sided): on the "leak" split (matte shoes, saturated out-of-distribution
   backgrounds), D (C + LayeredRefAttention) cuts C's background-colour leak slope by >= 30%:
   ``1 - slope_D / slope_C >= 0.3``. Precondition: C leaks (its slope's 95% bootstrap interval lies above 0);
   until it does, the verdict is inconclusive with that reason. Negative control (verdicts v4): C retrained from
   another seed, whose "cut" is seed noise and must stay below 30% (v3's control, D with its modulation zeroed, is
   a broken model and passed). No positive control (no model is known to cut the leak).
5. c5_cache (check): sampling with the cached reference stream equals recomputing it (<= 1e-5) and is faster.
   Negative control: the same weights with two-way joint attention (stock FLUX).

Every empirical claim is a stand-in: a 24 px pixel-space DiT trained here from scratch on generated MVShoesLite,
not FLUX fine-tuned on MVShoes (neither offline). Verdicts v4 (issue #58): ``declare_claims(scale)``, controls
computed through ``measure``, rules read figures through the machinery (a NaN figure is inconclusive).

Variants: (A) view 0 only; (B) 4 views, all at v = 1; (C) 4 views, v = 1..4; (D) C + LayeredRefAttention
(modulate); (E, paper scale) D with a gated additive background branch. Pixel space (no VAE), 24 px, 4 px patches.
"""

from __future__ import annotations

import functools
import time
from pathlib import Path

import numpy as np
import torch

from neurips25.repro import (
    Claim,
    Control,
    Criterion,
    Figures,
    LocalContext,
    Outcome,
    Precondition,
    Scale,
    measure,
    progress,
    register,
)
from neurips25.repro.intervals import bootstrap_interval
from neurips25.shoefit.attention import LayeredRefAttnProcessor
from neurips25.shoefit.baselines import copy_view_baseline, nearest_view_index
from neurips25.shoefit.data import MVShoesLite
from neurips25.shoefit.metrics import contamination_slope, masked_psnr, side_color_accuracy
from neurips25.shoefit.model import ShoeFitTransformer
from neurips25.shoefit.pipeline import ShoeFitPipeline, rectified_flow_loss
from neurips25.shoefit.rope import MultiViewRoPE, multiview_rope_ids

RES = 24
MODEL = dict(sample_size=RES, patch_size=4, num_layers=2, num_attention_heads=4, attention_head_dim=16,
             axes_dims_rope=(4, 6, 6))
VARIANTS = {  # name -> (number of views, extra config)
    "A_single_view": (1, {}),
    "B_shared_2d": (4, {"share_view_ids": True}),
    "C_view_axis": (4, {}),
    "D_layered": (4, {"layered": True, "layered_mode": "modulate"}),
    "E_gated_add": (4, {"layered": True, "layered_mode": "gated_add"}),
    "T_true_view": (1, {}),  # c2's learned positive control: A's model given the view nearest the true pose
}
#: the positive control of c2 / c3: the single-view model (A's architecture) conditioned on the product view
#: nearest the target's true pose, so the unseen side's true view is its input; it must learn to render it
TRUE_VIEW = "T_true_view"


def variant_refs(name: str, ref_views: torch.Tensor, azimuth: torch.Tensor) -> torch.Tensor:
    """The reference views variant ``name`` is conditioned on: the first V views, or (``T_true_view``) the one
    view nearest each item's true azimuth, ``(B, 1, 3, S, S)``."""
    if name == TRUE_VIEW:
        idx = nearest_view_index(azimuth)
        return ref_views[torch.arange(len(idx)), idx][:, None]
    return ref_views[:, :VARIANTS[name][0]]


# ----- c1: exactness --------------------------------------------------------------------------
def exactness(seed: int) -> dict:
    from diffusers import FluxTransformer2DModel
    from diffusers.models.transformers.transformer_flux import FluxAttnProcessor, FluxPosEmbed

    g = torch.Generator().manual_seed(seed)
    img, ref = multiview_rope_ids(4, 6, 6)
    ids = torch.cat([ref, img])
    axes = (4, 6, 6)
    ours, theirs = MultiViewRoPE(10000, axes, head_dim=16)(ids), FluxPosEmbed(10000, list(axes))(ids)
    rope_err = max(float((a - b).abs().max()) for a, b in zip(ours, theirs))

    flux = FluxTransformer2DModel(patch_size=1, in_channels=8, num_layers=1, num_single_layers=1,
                                  attention_head_dim=16, num_attention_heads=2, joint_attention_dim=24,
                                  pooled_projection_dim=8, axes_dims_rope=axes).eval()
    B, n_img, n_txt = 2, 36, 12
    x = torch.randn(B, n_img, 8, generator=g)
    enc = torch.randn(B, n_txt, 24, generator=g)
    pooled, ts = torch.randn(B, 8, generator=g), torch.tensor([0.3, 0.7])
    img_ids, txt_ids = multiview_rope_ids(1, 6, 6)[0], torch.zeros(n_txt, 3)
    shoe = (torch.rand(B, n_img, generator=g) > 0.6).float()

    def call(**kw):
        with torch.no_grad():
            return flux(x, enc, pooled, ts, img_ids, txt_ids, return_dict=False, **kw)[0]

    flux.set_attn_processor(FluxAttnProcessor())
    stock = call()
    flux.set_attn_processor(LayeredRefAttnProcessor(32))
    layered = call(joint_attention_kwargs={"shoe_mask": shoe})
    drop_in_err = float((stock - layered).abs().max())
    broken = LayeredRefAttnProcessor(32)
    torch.nn.init.normal_(broken.to_mod.weight, std=0.05, generator=g)
    flux.set_attn_processor(broken)
    control_err = float((stock - call(joint_attention_kwargs={"shoe_mask": shoe})).abs().max())
    # translation invariance of (h, w): shifting every image id by a constant
    flux.set_attn_processor(LayeredRefAttnProcessor(32))
    shifted = img_ids.clone()
    shifted[:, 1:] += 5
    with torch.no_grad():
        moved = flux(x, enc, pooled, ts, shifted, txt_ids + torch.tensor([0.0, 5.0, 5.0]), return_dict=False,
                     joint_attention_kwargs={"shoe_mask": shoe})[0]
    shift_err = float((moved - layered).abs().max())

    # permuting the views together with their ids (ShoeFitTransformer, random weights, layered)
    torch.manual_seed(seed)
    model = ShoeFitTransformer(**MODEL, layered=True).eval()
    for blk in model.blocks:
        torch.nn.init.normal_(blk.attn.processor.to_mod.weight, std=0.05)
    data = MVShoesLite(2, seed=seed, split="test", res=RES)
    z = torch.randn(2, 3, RES, RES, generator=g)
    perm = [2, 0, 3, 1]
    with torch.no_grad():
        base = model(z, data.model_image, data.mask, data.ref_views, torch.tensor([0.5, 0.5]))
        with_ids = model(z, data.model_image, data.mask, data.ref_views[:, perm], torch.tensor([0.5, 0.5]),
                         view_ids=[p + 1 for p in perm])
        alone = model(z, data.model_image, data.mask, data.ref_views[:, perm], torch.tensor([0.5, 0.5]))
    return {"rope_vs_FluxPosEmbed": rope_err, "layered_init_vs_FluxAttnProcessor": drop_in_err,
            "hw_shift": shift_err, "view_permutation_with_ids": float((base - with_ids).abs().max()),
            "control_nonzero_modulation": control_err,
            "control_view_permutation_alone": float((base - alone).abs().max())}


# ----- training and evaluation -----------------------------------------------------------------
def train_variant(name: str, train: MVShoesLite, steps: int, batch: int, lr: float, seed: int,
                  desc: str = "") -> ShoeFitTransformer:
    extra = VARIANTS[name][1]
    torch.manual_seed(seed)
    model = ShoeFitTransformer(**MODEL, **extra)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / 50) * (
        0.1 + 0.9 * 0.5 * (1 + np.cos(np.pi * s / steps))))
    g = torch.Generator().manual_seed(seed)
    n = len(train)
    model.train()
    for _ in progress(range(steps), desc=desc or name):
        idx = torch.randint(0, n, (batch,), generator=g)
        b = {k: train.__dict__[k][idx] for k in ("target", "model_image", "mask", "ref_views")}
        loss = rectified_flow_loss(model, b, g, ref_views=variant_refs(name, b["ref_views"], train.azimuth[idx]))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
    return model.eval()


def sample(model: ShoeFitTransformer, test: MVShoesLite, views: int, steps: int, seed: int, *, refs=None,
           view_ids=None, cache=True) -> torch.Tensor:
    from diffusers import FlowMatchEulerDiscreteScheduler

    pipe = ShoeFitPipeline(model, FlowMatchEulerDiscreteScheduler())
    pipe.set_progress_bar_config(disable=True)
    refs = test.ref_views[:, :views] if refs is None else refs
    out = []
    for i in range(0, len(test), 64):
        g = torch.Generator().manual_seed(seed + i)
        sl = slice(i, i + 64)
        out.append(pipe(refs[sl], test.model_image[sl], test.mask[sl], steps, g, view_ids=view_ids,
                        cache_reference=cache))
    return torch.cat(out)


def evaluate(pred: torch.Tensor, test: MVShoesLite) -> dict:
    psnr = masked_psnr(pred, test.target, test.mask)
    acc = side_color_accuracy(pred, test.side_label, test.visible_side, test.side_color_id)
    slope = contamination_slope(pred, test.target, test.bg_mean, test.mask)
    return {"psnr": float(psnr.mean()), "psnr_se": float(psnr.std() / np.sqrt(len(psnr))),
            "side_color_acc": float(np.nanmean(acc.numpy())), "leak_slope": slope,
            "psnr_per_item": psnr.numpy()}


def _grid_figure(preds: dict, test: MVShoesLite, out: Path, k: int = 6) -> None:
    from matplotlib.figure import Figure

    cols = ["product views", "model image", *preds, "ground truth"]
    fig = Figure(figsize=(1.4 * (len(cols) + 3), 1.5 * k))
    to_img = lambda x: ((x.permute(1, 2, 0).numpy() + 1) / 2).clip(0, 1)  # noqa: E731
    for r in range(k):
        row = [np.concatenate([to_img(test.ref_views[r, v]) for v in range(test.views)], 1),
               to_img(test.model_image[r]), *[to_img(p[r]) for p in preds.values()], to_img(test.target[r])]
        for c, im in enumerate(row):
            ax = fig.add_subplot(k, len(cols), r * len(cols) + c + 1)
            ax.imshow(im, interpolation="nearest")
            ax.set_xticks([]), ax.set_yticks([])
            if r == 0:
                ax.set_title(cols[c], fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "figures" / "samples.png", dpi=110)


@functools.lru_cache(maxsize=3)
def _dataset(n: int, seed: int, split: str) -> MVShoesLite:
    """One process's copy of a split (the arms of a seed share it; rebuilt, not shipped, on a Ray worker)."""
    return MVShoesLite(n, seed=seed, res=RES, split=split)


def _arm_task(item: tuple) -> dict:
    """One arm (a ``ctx.map`` item): train variant ``name`` at seed ``s``, sample the test and leak sets.

    ``item = (name, s, n_train, n_test, n_leak, steps, batch, lr, sample_steps, test_seed)``; returns the metrics,
    the samples, the weights (for the controls, which run in the caller) and the training CPU seconds.
    """
    name, s, n_train, n_test, n_leak, steps, batch, lr, sample_steps, test_seed = item
    train = _dataset(n_train, s, "train")
    t0 = time.process_time()
    model = train_variant(name, train, steps, batch, lr, s, desc=f"{name} seed {s}")
    t_train = time.process_time() - t0
    test, leak = _dataset(n_test, test_seed, "test"), _dataset(n_leak, test_seed, "leak")
    pred = sample(model, test, 1, sample_steps, test_seed, refs=variant_refs(name, test.ref_views, test.azimuth))
    pred_leak = sample(model, leak, 1, sample_steps, test_seed, refs=variant_refs(name, leak.ref_views, leak.azimuth))
    return {**evaluate(pred, test), "leak_slope_leakset": contamination_slope(pred_leak, leak.target, leak.bg_mean,
                                                                             leak.mask),
            "pred": pred, "pred_leak": pred_leak, "state": model.state_dict(), "train_cpu_s": t_train}


def slope_interval(pred: torch.Tensor, data: MVShoesLite, seed: int, n: int = 1000) -> tuple[float, float]:
    """95% bootstrap interval (over items) of :func:`contamination_slope` on ``data``."""
    rng = np.random.default_rng(seed)
    m = len(data)
    vals = [contamination_slope(pred[idx], data.target[idx], data.bg_mean[idx], data.mask[idx])
            for idx in (torch.from_numpy(rng.integers(0, m, m)) for _ in range(n))]
    vals = np.array([v for v in vals if np.isfinite(v)])
    if len(vals) < n // 2:
        return float("nan"), float("nan")
    return float(np.quantile(vals, 0.025)), float(np.quantile(vals, 0.975))


def _rebuild(name: str, state: dict) -> ShoeFitTransformer:
    model = ShoeFitTransformer(**MODEL, **VARIANTS[name][1])
    model.load_state_dict(state)
    return model.eval()


C2_MIN_OVER_A, C2_MIN_OVER_B, C4_MIN_CUT = 1.5, 0.5, 0.3
EXACT_TOL = {"rope_vs_FluxPosEmbed": 1e-6, "layered_init_vs_FluxAttnProcessor": 1e-6, "hw_shift": 1e-5,
             "view_permutation_with_ids": 1e-5}
STAND_IN = ("a 24 px pixel-space DiT (2 layers, no VAE) trained here from scratch on generated MVShoesLite, "
            "standing in for FLUX fine-tuned on MVShoes (neither offline): a verdict says whether the mechanism "
            "shows in a tiny from-scratch model, not whether ShoeFit works on FLUX; at 10k steps no variant renders "
            "the unseen side's colour above chance")


def _with_worst(figs: dict) -> dict:
    """Add ``worst_over_tolerance``: the largest of the four c1 errors divided by its tolerance."""
    return {**figs, "worst_over_tolerance": max(figs[k] / t for k, t in EXACT_TOL.items())}


def declare_claims(scale: Scale | None = None) -> list[Claim]:
    """The five claims with their criteria and controls (issue #51; c4's control replaced in verdicts v4)."""
    copy_oracle = Control.positive(
        "copy_nearest_view", "zero-parameter oracle: the product view nearest the true pose, warped onto the mask's "
        "bounding box and lit by the known scene light, against the same copy of view 0 (for C - A) and of a side "
        "view picked by a coin flip (for C - B)")
    where = dict(instance="stand-in", instance_note=STAND_IN)
    return [
        Claim("c1_exactness", "the multi-view 3D RoPE and LayeredRefAttention are exact drop-ins for diffusers' FLUX "
              "parts", kind="check",
              criterion=Criterion("RoPE vs FluxPosEmbed <= 1e-6; LayeredRefAttnProcessor at init vs FluxAttnProcessor "
                                  "<= 1e-6; (h, w) shift <= 1e-5; views permuted with ids <= 1e-5",
                                  "worst_over_tolerance", lambda m: all(m[k] <= t for k, t in EXACT_TOL.items()),
                                  "<= 1 (each error within its tolerance)"),
              controls=[Control.negative("nonzero_modulation", "the processor with a non-zero (gamma, beta) layer"),
                        Control.negative("view_permutation_alone", "views permuted without their ids")]),
        Claim("c2_multiview", "multi-view conditioning with 3D RoPE handles viewpoint misalignment: the extra views "
              "supply the unseen side, told apart by the view axis", kind="headline",
              paper_value="not known (abstract only)",
              criterion=Criterion(f"side-pose targets misaligned in scale and translation, views that do not describe "
                                  f"themselves: shoe-region PSNR of C (4 views, view axis) - A (view 0) >= "
                                  f"{C2_MIN_OVER_A} dB and C - B (4 views, shared 2D ids) >= {C2_MIN_OVER_B} dB",
                                  "gain_over_A_dB", lambda m: (m["gain_over_A_dB"] >= C2_MIN_OVER_A
                                                               and m["gain_over_B_dB"] >= C2_MIN_OVER_B),
                                  f">= {C2_MIN_OVER_A} (and C - B >= {C2_MIN_OVER_B})"),
              controls=[Control.negative("wrong_shoe", "C given another shoe's product views"), copy_oracle,
                        Control.positive(TRUE_VIEW, "learned: A's single-view model, trained and sampled with the "
                                         "product view nearest the true pose (the unseen side's true view) in place "
                                         "of view 0, at the run's budget; its gains over A and B")],
              preconditions=[Precondition(
                  "the instance can render the unseen side: the true-view model's side-colour accuracy on the "
                  "side-pose test set >= that of copying the nearest product view (zero parameters)",
                  lambda m: m["true_view_side_acc"] >= m["copy_nearest_side_acc"])], **where),
        Claim("c3_view_axis", "the view axis matters: four views sharing 2D positions are worse", kind="supporting",
              criterion=Criterion.at_least("gain_over_B_dB", C2_MIN_OVER_B,
                                           f"PSNR(C) - PSNR(B: all views at v = 1) >= {C2_MIN_OVER_B} dB"),
              controls=[Control.negative("ids_collapsed", "C with its view ids collapsed to 1 at inference"),
                        copy_oracle], **where),
        Claim("c4_colour", "LayeredRefAttention (background modulates footwear latents) counters background-induced "
              "colour distortion", kind="supporting", paper_value="not known (abstract only)",
              criterion=Criterion.at_least("leak_cut", C4_MIN_CUT, (
                  f"leak split (matte shoes, saturated out-of-distribution backgrounds): 1 - slope_D / slope_C >= "
                  f"{C4_MIN_CUT} (D cuts C's background-colour leak by >= 30%; one-sided)")),
              preconditions=[Precondition("C leaks: the 95% bootstrap interval of C's leak slope lies above 0",
                                          lambda m: m["leak_C_low"] > 0)],
              controls=[Control.negative("C_other_seed", "C (no LayeredRefAttention) retrained from another seed in "
                                         "D's place: its cut of C's leak is seed-to-seed noise and must stay below "
                                         "the bar")],
              no_positive_control="no model is known to cut the leak; the precondition shows there is one to cut",
              **where),
        Claim("c5_cache", "the reference stream, never noised and read one way, can be cached across sampling steps",
              kind="check", criterion=Criterion("cached vs recomputed samples <= 1e-5 and cached faster",
                                                "max_abs_diff",
                                                lambda m: m["max_abs_diff"] <= 1e-5 and m["speedup"] > 1.0, "<= 1e-5"),
              controls=[Control.negative("two_way", "the same weights with two-way joint attention (stock FLUX)")]),
    ]


def _gains(psnr: np.ndarray, pa: np.ndarray, pb: np.ndarray) -> dict:
    return {"gain_over_A_dB": float(psnr.mean() - pa.mean()), "gain_over_B_dB": float(psnr.mean() - pb.mean())}


def copy_oracle_figures(test: MVShoesLite, seed: int) -> dict:
    """c2 / c3's positive control: copy the nearest view vs copying view 0 (C - A) and a coin-flip side (C - B)."""
    preds = {c: copy_view_baseline(test, c, seed=seed) for c in ("nearest", "view0", "random_side")}
    copies = {c: _psnr(p, test).mean() for c, p in preds.items()}
    acc = {c: float(np.nanmean(side_color_accuracy(p, test.side_label, test.visible_side, test.side_color_id)))
           for c, p in preds.items()}
    return {"gain_over_A_dB": float(copies["nearest"] - copies["view0"]),
            "gain_over_B_dB": float(copies["nearest"] - copies["random_side"]),
            "copy_psnr": {k: float(v) for k, v in copies.items()}, "copy_side_acc": acc}


def wrong_shoe_figures(model, test, sample_steps, seed, pa, pb) -> dict:
    """c2's negative control: C sampled with another shoe's product views."""
    return _gains(_psnr(sample(model, test, 4, sample_steps, seed, refs=test.ref_views.roll(1, 0)), test), pa, pb)


def ids_collapsed_figures(model, test, sample_steps, seed, pb) -> dict:
    """c3's negative control: C with its view ids collapsed to 1 at inference."""
    collapsed = _psnr(sample(model, test, 4, sample_steps, seed, view_ids=[1, 1, 1, 1]), test)
    return {"gain_over_B_dB": float(collapsed.mean() - pb.mean())}


def cache_figures(model, sub, sample_steps, seed) -> dict:
    """c5: cached vs recomputed reference stream, the largest difference and the speed-up.

    The two are timed interleaved, three times each, and the fastest of each is kept: one timing of each on a
    loaded 2-core machine could read a speed-up below 1 from another job's burst (seen in a smoke test)."""
    times: dict[bool, list[float]] = {True: [], False: []}
    out = {}
    for _ in range(3):
        for cache in (True, False):
            t0 = time.perf_counter()
            out[cache] = sample(model, sub, 4, sample_steps, seed, cache=cache)
            times[cache].append(time.perf_counter() - t0)
    t_cached, t_fresh = min(times[True]), min(times[False])
    return {"max_abs_diff": float((out[True] - out[False]).abs().max()), "speedup": t_fresh / t_cached,
            "t_cached_s": t_cached, "t_recomputed_s": t_fresh}


def two_way_figures(model, sub, sample_steps, seed) -> dict:
    """c5's negative control: the same weights with stock two-way joint attention (the reference reads the target)."""
    for blk in model.blocks:
        blk.attn.processor.one_way = False
    try:
        return cache_figures(model, sub, sample_steps, seed)
    finally:
        for blk in model.blocks:
            blk.attn.processor.one_way = True


def _psnr(pred, data) -> np.ndarray:
    return masked_psnr(pred, data.target, data.mask).numpy()


@register("shoefit")
def run(scale: Scale, seed: int, out: Path, ctx=None) -> Outcome:
    n_train = scale.pick(smoke=32, quick=1500, paper=6000)
    n_test = scale.pick(smoke=8, quick=128, paper=600)
    n_leak = scale.pick(smoke=8, quick=96, paper=300)
    steps = scale.pick(smoke=4, quick=1000, paper=10000)
    batch = scale.pick(smoke=4, quick=16, paper=16)
    sample_steps = scale.pick(smoke=2, quick=10, paper=20)
    variants = scale.pick(smoke=["A_single_view", "B_shared_2d", "C_view_axis", "D_layered"],
                          quick=["A_single_view", "B_shared_2d", "C_view_axis", "D_layered"],
                          paper=[v for v in VARIANTS if v != TRUE_VIEW])
    lr = 2e-3
    note = (f"scale={scale}, seed {seed}: {n_train} train / {n_test} side-pose test / {n_leak} leak triplets at {RES} "
            f"px (symmetric views, targets misaligned in scale and translation), {steps} training steps at batch "
            f"{batch}, {sample_steps} Euler steps; variants {variants}; pixel space, no VAE, trained from scratch")
    (out / "figures").mkdir(parents=True, exist_ok=True)
    claims = declare_claims(scale)

    # c1
    ex = measure(exactness, seed)
    exact = {k: ex[k] for k in EXACT_TOL}
    claims[0].record(_with_worst(exact), controls={
        "nonzero_modulation": Figures(_with_worst({**exact, "layered_init_vs_FluxAttnProcessor":
                                                   ex["control_nonzero_modulation"]}), ex.provenance),
        "view_permutation_alone": Figures(_with_worst({**exact, "view_permutation_with_ids":
                                                       ex["control_view_permutation_alone"]}), ex.provenance)})

    # the arms: independent given the seed, so ctx.map runs them here locally and as parallel tasks on Ray; c4's
    # control is C retrained from another seed (its training draw and init), tested on this seed's sets
    ctx = ctx if ctx is not None else LocalContext()
    arm = (n_train, n_test, n_leak, steps, batch, lr, sample_steps, seed)
    done = ctx.map(_arm_task, [(name, seed, *arm) for name in variants], desc="arms")
    other_c = measure(_arm_task, ("C_view_axis", seed + 1, *arm))
    other_slope = other_c.raw()["leak_slope_leakset"]
    # c2's learned positive control: A's model given the true pose's view, trained at this run's budget
    true_view = measure(_arm_task, (TRUE_VIEW, seed, *arm))
    tv = true_view.raw()
    test, leak = _dataset(n_test, seed, "test"), _dataset(n_leak, seed, "leak")
    results, models, t_train = {}, {}, {}
    for name, r in zip(variants, done):
        models[name] = _rebuild(name, r.pop("state"))
        t_train[name] = r.pop("train_cpu_s")
        results[name] = r
    A, B, C = (results[k] for k in ("A_single_view", "B_shared_2d", "C_view_axis"))

    # c2 (headline): the wrong-shoe control, the copy-nearest-view oracle and the true-view model (positive); the
    # precondition (issue #62, registered after numbers were seen): the true-view model renders the unseen side
    # at least as well as the zero-parameter copy of that view
    pa, pb, pc = A["psnr_per_item"], B["psnr_per_item"], C["psnr_per_item"]
    copy_fig = measure(copy_oracle_figures, test, seed)
    can_render = {"true_view_side_acc": tv["side_color_acc"],
                  "copy_nearest_side_acc": copy_fig.raw()["copy_side_acc"]["nearest"]}
    claims[1].record({**_gains(pc, pa, pb), **can_render}, note=note, controls={
        "wrong_shoe": measure(wrong_shoe_figures, models["C_view_axis"], test, sample_steps, seed, pa, pb),
        "copy_nearest_view": copy_fig,
        TRUE_VIEW: Figures({**_gains(tv["psnr_per_item"], pa, pb), **can_render}, true_view.provenance)}, details={
        "interval95_C_minus_A": bootstrap_interval(pc, pa, seed=seed),
        "interval95_C_minus_B": bootstrap_interval(pc, pb, seed=seed),
        "interval95_true_view_minus_A": bootstrap_interval(tv["psnr_per_item"], pa, seed=seed),
        "psnr": {**{k: v["psnr"] for k, v in results.items()}, TRUE_VIEW: tv["psnr"]},
        "side_color_acc": {**{k: v["side_color_acc"] for k, v in results.items()}, TRUE_VIEW: tv["side_color_acc"]},
        "copy_side_color_acc": copy_fig.raw()["copy_side_acc"]})

    # c3: the view axis alone
    claims[2].record({"gain_over_B_dB": float(pc.mean() - pb.mean())}, note=note, controls={
        "ids_collapsed": measure(ids_collapsed_figures, models["C_view_axis"], test, sample_steps, seed, pb),
        "copy_nearest_view": copy_fig}, details={"C": C["psnr"], "B": B["psnr"]})

    # c4: the one-sided leak cut on the leak split, D vs C; the control is another seed's C in D's place
    sl = {k: results[k]["leak_slope_leakset"] for k in results}
    lo_c, hi_c = slope_interval(C["pred_leak"], leak, seed)
    lc = sl["C_view_axis"]

    def cut(x):  # defined for any non-zero C slope; without a positive one the precondition decides (inconclusive)
        return float(1 - x / lc) if np.isfinite(lc) and lc != 0 else float("nan")

    claims[3].record({"leak_cut": cut(sl["D_layered"]), "leak_C_low": lo_c}, controls={
        "C_other_seed": Figures({"leak_cut": cut(other_slope), "leak_C_low": lo_c},
                                other_c.provenance)}, note=note + (
        ". Slope: shoe-region colour error (pred - GT, [0, 1] units) on the background mean colour; the GT contains "
        "the physical scene tint, so a faithful render has slope 0, a model copying background colour a positive "
        "one"), details={"leak_slope": sl, "leak_slope_C_other_seed": other_slope,
                         "leak_C_interval95": [lo_c, hi_c],
                         "leak_slope_on_test_split": {k: v["leak_slope"] for k, v in results.items()}})

    # c5: caching
    sub = MVShoesLite(min(n_test, 16), seed=seed + 7, res=RES, split="test")
    cache = measure(cache_figures, models["C_view_axis"], sub, sample_steps, seed)
    claims[4].record(cache, controls={"two_way": measure(two_way_figures, models["C_view_axis"], sub, sample_steps,
                                                         seed)})

    _grid_figure({**{k: v["pred"] for k, v in results.items()}, TRUE_VIEW: tv["pred"],
                  "copy nearest view": copy_view_baseline(test, "nearest", seed=seed)}, test, out)
    metrics = {k: {m: v[m] for m in ("psnr", "psnr_se", "side_color_acc", "leak_slope", "leak_slope_leakset")}
               for k, v in results.items()}
    metrics["copy_baseline_psnr"] = copy_fig.raw()["copy_psnr"]
    metrics[TRUE_VIEW] = {m: tv[m] for m in ("psnr", "psnr_se", "side_color_acc", "leak_slope", "leak_slope_leakset")}
    metrics["copy_baseline_side_acc"] = copy_fig.raw()["copy_side_acc"]
    metrics["train_cpu_s"] = {**t_train, TRUE_VIEW: tv["train_cpu_s"], "C_other_seed": other_c.raw()["train_cpu_s"]}
    metrics["test_k_env_mean"] = float(test.k_env.mean())
    return Outcome(claims, metrics=metrics, notes=note)


def sweep(steps_list, variants=("A_single_view", "C_view_axis", "D_layered"), seed: int = 0, n_train: int = 1500,
          n_test: int = 128, batch: int = 16, sample_steps: int = 10, test_seed: int | None = None,
          save: Path | None = None) -> dict:
    """Diagnosis: the quick measurements at other training lengths (shoe PSNR, side-colour accuracy, leak).

    ``seed`` drives the training set and the model; ``test_seed`` (default ``seed``) the test set and the sampling
    noise, as the base seed does in ``run``. With ``save``, each arm's metrics and per-item PSNR go to
    ``save/<variant>@<steps>_b<batch>_s<seed>.npz`` as soon as it is done (so a partial sweep is usable).
    """
    test_seed = seed if test_seed is None else test_seed
    train = MVShoesLite(n_train, seed=seed, res=RES, split="train")
    test = MVShoesLite(n_test, seed=test_seed, res=RES, split="test")
    rows = {}
    for steps in steps_list:
        for name in variants:
            t0 = time.process_time()
            model = train_variant(name, train, steps, batch, 2e-3, seed, desc=f"{name} {steps} steps")
            t_train = time.process_time() - t0
            r = evaluate(sample(model, test, 1, sample_steps, test_seed,
                                refs=variant_refs(name, test.ref_views, test.azimuth)), test)
            rows[f"{name}@{steps}"] = {**{k: v for k, v in r.items() if k != "psnr_per_item"}, "train_cpu_s": t_train}
            print(f"{name} {steps} steps (batch {batch}, seed {seed}): "
                  + ", ".join(f"{k} {v:.3f}" for k, v in rows[f"{name}@{steps}"].items()), flush=True)
            if save is not None:
                Path(save).mkdir(parents=True, exist_ok=True)
                np.savez(Path(save) / f"{name}@{steps}_b{batch}_s{seed}.npz", psnr_per_item=r["psnr_per_item"],
                         **{k: v for k, v in rows[f"{name}@{steps}"].items()})
    return rows


if __name__ == "__main__":  # python -m neurips25.shoefit.reproduce 1500 A_single_view,C_view_axis [batch seed save]
    import sys

    a = sys.argv[1:]
    sweep([int(s) for s in a[0].split(",")], tuple(a[1].split(",")) if len(a) > 1 else
          ("A_single_view", "C_view_axis", "D_layered"), batch=int(a[2]) if len(a) > 2 else 16,
          seed=int(a[3]) if len(a) > 3 else 0, test_seed=0, save=Path(a[4]) if len(a) > 4 else None)
