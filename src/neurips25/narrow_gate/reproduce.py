"""Reproduction of the narrow-gate study (Serra et al., NeurIPS 2025, arXiv 2412.06646), criteria of issue #21.

No pretrained VLM exists offline, so the mechanics are checked on tiny random Hugging Face Llama and
Chameleon models and the findings on two toy VLMs trained here on ShapesWorld (same Llama decoder, same
delimiters): a native toy (k-means image codes in the vocabulary, trained to generate images and text) and
an adapter toy (text LM first, then a patch encoder + projector; the LLaVA recipe). Criteria (fixed in the
issue before any run; means over seeds: 1 at quick, 3 at paper):

1. c1_knockout_exact (check): ``mask_pre_softmax`` knockout of key j for all queries equals an explicit 4-D
   mask (max |logit diff| < 1e-5) on tiny random Llama and Chameleon; an empty key set is bit-identical to
   the unhooked model; ``zero_post_softmax`` rows no longer sum to 1 exactly where edges were removed.
   Control: deleting token j from the input (the naive knockout) must miss the 1e-5 tolerance.
2. c2_narrow_gate (headline): native toy: text->[EOI] knockout in all layers drops task accuracy (mean of
   caption and VQA accuracy) by >= 40 points while 10 random image tokens drop it <= 5; adapter toy: [EOI]
   knockout drops <= 10, all-image knockout >= 40. Control: the adapter toy under the native criterion.
3. c3_attention_share (supporting): native [EOI] share of text->image attention >= 0.5 in at least half of
   the layers; adapter's largest single-position share <= 0.3 in at least half of the layers (our reading:
   the same "half of the layers" as the native side). Controls: each toy under the other's criterion.
4. c4_steering (supporting): patching the [EOI] residual of a class-B image into a class-A run after the
   middle layer (index L//2 - 1) flips the native toy's colour / shape answer to B in >= 70% of pairs vs <= 20%
   for the adapter toy. Control: the native toy patched at a random image position instead.
5. c5_residual_gap (supporting): the native toy's image-text cosine is below the adapter's in every layer of
   the last third.
Paper scale adds the ablation (native toy without the image-generation loss) and both 16 and 64 image tokens.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import torch

from neurips25.narrow_gate.analysis import knockout_sweep
from neurips25.narrow_gate.data import ATTRIBUTES, ShapesWorld
from neurips25.narrow_gate.knockout import attention_knockout
from neurips25.narrow_gate.metrics import cross_modal_attention_share, modality_cosine, neighborhood_overlap
from neurips25.narrow_gate.patching import patch_residual
from neurips25.narrow_gate.recorder import ResidualRecorder, attention_weights
from neurips25.narrow_gate.tasks import ToyEval
from neurips25.narrow_gate.tokenizer import PatchKMeansTokenizer
from neurips25.narrow_gate.toy import AdapterToyVLM, NativeToyVLM
from neurips25.narrow_gate.training import TrainConfig, pretrain_text_lm, train_adapter, train_native
from neurips25.repro import Claim, Outcome, Scale, progress, register
from neurips25.repro.intervals import mean_interval

IMAGE_SIZE = 24


# ----- c1: mechanics on tiny random HF models -------------------------------------------------------
def _tiny_llama():
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                      num_key_value_heads=2, attn_implementation="eager")
    return LlamaForCausalLM(cfg).eval()


def _tiny_chameleon():
    from transformers import ChameleonConfig, ChameleonForConditionalGeneration

    vocab = {"<image>": 3, "<racm3:break>": 4, "<eoss>": 5, **{f"IMGIMG{chr(65 + i)}Z": 10 + i for i in range(8)}}
    vq = {"embed_dim": 8, "num_embeddings": 8, "base_channels": 32, "channel_multiplier": [1], "num_res_blocks": 1,
          "latent_channels": 8, "resolution": 8, "attn_resolutions": []}
    cfg = ChameleonConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                          num_attention_heads=4, num_key_value_heads=4, vocabulary_map=vocab, vq_config=vq,
                          attn_implementation="eager")
    return ChameleonForConditionalGeneration(cfg).eval()


@torch.no_grad()
def knockout_mechanics(seed: int) -> dict:
    """The exactness measurements of c1 on both tiny models."""
    out = {}
    for name, build in (("llama", _tiny_llama), ("chameleon", _tiny_chameleon)):
        torch.manual_seed(seed)
        m = build()
        S, j = 12, 5
        ids = torch.randint(6, 64, (2, S), generator=torch.Generator().manual_seed(seed))
        ref = m(input_ids=ids).logits
        with attention_knockout(m, "all", [], "all"):
            empty = m(input_ids=ids).logits
        with attention_knockout(m, "all", [j], "all", mode="mask_pre_softmax"):
            ko = m(input_ids=ids).logits
        keep = torch.tril(torch.ones(S, S, dtype=torch.bool))
        keep[:, j] = False
        keep[0, 0] = True
        mask = torch.zeros(2, 1, S, S).masked_fill(~keep, torch.finfo(torch.float32).min)
        explicit = m(input_ids=ids, attention_mask=mask).logits
        rows = [p for p in range(S) if p != j]  # position j itself has no other positions to compare with
        naive = m(input_ids=torch.cat([ids[:, :j], ids[:, j + 1:]], 1)).logits  # deleting the token
        with attention_knockout(m, [7, 9], [j], "all"):
            w = attention_weights(m, {"input_ids": ids})
        sums = w.sum(-1)  # (L, B, H, S)
        edited = torch.zeros(S, dtype=torch.bool)
        edited[[7, 9]] = True
        out[name] = {
            "mask_vs_explicit_max_abs": float((ko - explicit)[:, rows].abs().max()),
            "empty_bit_identical": bool(torch.equal(empty, ref)),
            "zero_rows_below_one": bool((sums[..., edited] < 1 - 1e-6).all()),
            "other_rows_sum_to_one": float((sums[..., ~edited] - 1).abs().max()),
            "effect_of_knockout_max_abs": float((ko - ref).abs().max()),
            "control_delete_token_max_abs": float((naive[:, j:] - explicit[:, j + 1:]).abs().max()),
        }
    return out


# ----- the toys ----------------------------------------------------------------------------------
def settings(scale: Scale) -> dict:
    return scale.pick(
        smoke=dict(layers=2, n_train=300, n_eval=24, n_pairs=16, steps=25, lm_steps=10, adapter_steps=25,
                   patches=(6,), n_seeds=1, ablation=False, kmeans_fit=200, n_draws=1),
        quick=dict(layers=4, n_train=8000, n_eval=256, n_pairs=128, steps=900, lm_steps=300, adapter_steps=900,
                   patches=(6,), n_seeds=1, ablation=False, kmeans_fit=2000, n_draws=3),
        # 16 image tokens: 3 seeds with the ablation; 64 image tokens: 1 seed, fewer steps (about 4x the cost a step)
        paper=dict(layers=4, n_train=20000, n_eval=256, n_pairs=256, steps=1500, lm_steps=600, adapter_steps=1500,
                   patches=(6, 3), n_seeds=3, ablation=True, kmeans_fit=4000, n_draws=3,
                   by_patch={3: dict(n_seeds=1, steps=1200, adapter_steps=1200, ablation=False)}),
    )


def _pairs(world: ShapesWorld, n: int, seed: int):
    """Base images (class A) and source images whose colour and shape both differ (class B)."""
    rng = np.random.default_rng(seed)
    base = world.sample(n, rng=rng)
    colour = (base.attrs["colour"] + rng.integers(1, 4, n)) % 4
    shape = (base.attrs["shape"] + rng.integers(1, 4, n)) % 4
    src = world.sample(n, rng=rng, colour=colour, shape=shape, size=base.attrs["size"], where=base.attrs["where"])
    return base, src


@torch.no_grad()
def steering(model, base_ev: ToyEval, src_ev: ToyEval, position_fn, layers) -> dict:
    """Flip rate (%) of the colour / shape answers to the source's, patching after each layer."""
    q_rows = np.isin(base_ev.question, [list(ATTRIBUTES).index("colour"), list(ATTRIBUTES).index("shape")])
    truth_src = np.concatenate([src_ev.batch.attrs[a] for a in ATTRIBUTES])
    with ResidualRecorder(model, layers) as rec:
        model(**src_ev.qa)
    out = {}
    for layer in layers:
        pos = position_fn()
        with patch_residual(model, pos, layer, rec.at(layer, pos)):
            pred = base_ev.qa_predictions()
        out[layer] = float(100 * (pred[q_rows] == truth_src[q_rows]).mean())
    return out


def _use_eager(model):
    cfg = model.language_model.config if isinstance(model, AdapterToyVLM) else model.config
    cfg._attn_implementation = "eager"


def study(model, ev: ToyEval, base_ev: ToyEval, src_ev: ToyEval, seed: int, n_draws: int = 3) -> dict:
    """Every measurement on one trained toy."""
    _use_eager(model)
    spans = ev.spans
    L = len(model.get_decoder().layers)
    acc = ev.accuracy()
    sweep = knockout_sweep(model, lambda: ev.accuracy()["task"], spans,
                           targets=("eoi", "all_image", "random_image_10", "last_image", "boi"),
                           start_layers=list(range(L)), n_draws=n_draws, seed=seed)
    attn = attention_weights(model, ev.qa)
    share = cross_modal_attention_share(attn, spans)
    with ResidualRecorder(model) as rec:
        model(**ev.qa)
    res = rec.residuals
    cos = modality_cosine(res, spans, text=spans.text_after_image())
    labels = np.tile(ev.batch.label, len(ATTRIBUTES))
    k = min(10, len(labels) - 1)
    overlap = {"eoi": [neighborhood_overlap(res[layer, :, spans.eoi].numpy(), labels, k) for layer in range(L)],
               "image_mean": [neighborhood_overlap(res[layer][:, list(spans.image)].mean(1).numpy(), labels, k)
                              for layer in range(L)],
               "answer_query": [neighborhood_overlap(res[layer, :, spans.eoi + 1].numpy(), labels, k)
                                for layer in range(L)]}
    rng = np.random.default_rng(seed + 7)
    mid = max(0, L // 2 - 1)
    steer_eoi = steering(model, base_ev, src_ev, lambda: spans.eoi, list(range(L)))
    steer_rand = steering(model, base_ev, src_ev, lambda: int(rng.choice(spans.image)), [mid])
    return {"accuracy": acc, "sweep": sweep, "share": {k2: v.tolist() for k2, v in share.items()},
            "cosine": {k2: v.tolist() for k2, v in cos.items()}, "overlap": overlap, "steer_eoi": steer_eoi,
            "steer_random_image": steer_rand, "mid_layer": mid, "n_layers": L}


def train_pair(world: ShapesWorld, cfg: dict, patch: int, seed: int, ablation: bool) -> dict:
    """Train native and adapter toys (and the ablation) for one seed and image length; measure them."""
    cfg = {**cfg, **cfg.get("by_patch", {}).get(patch, {})}
    ablation = ablation and cfg["ablation"]
    rng = np.random.default_rng(seed)
    data = world.sample(cfg["n_train"], rng=rng)
    ev_batch = world.sample(cfg["n_eval"], rng=rng)
    base, src = _pairs(world, cfg["n_pairs"], seed + 1000)
    n_img = (IMAGE_SIZE // patch) ** 2
    tok = PatchKMeansTokenizer(patch, 64, seed=seed).fit(data.images[:cfg["kmeans_fit"]])
    tc = TrainConfig(steps=cfg["steps"])
    out, timing = {}, {}

    def native(generation):
        torch.manual_seed(seed)
        m = NativeToyVLM.create(64, n_img, layers=cfg["layers"])
        t = time.process_time()
        loss = train_native(m, data, tok, tc, seed, generation=generation)
        timing["native" if generation else "ablation"] = time.process_time() - t
        evs = [ToyEval.build(m, b, tok) for b in (ev_batch, base, src)]
        return {**study(m, *evs, seed, cfg["n_draws"]), "final_loss": float(np.mean(loss[-20:]))}
    out["native"] = native(True)
    if ablation:
        out["ablation_no_generation"] = native(False)
    torch.manual_seed(seed)
    a = AdapterToyVLM.create(patch * patch * 3, n_img, layers=cfg["layers"])
    t = time.process_time()
    pretrain_text_lm(a, data, TrainConfig(steps=cfg["lm_steps"]), seed)
    loss = train_adapter(a, data, patch, TrainConfig(steps=cfg["adapter_steps"]), seed, lm="tuned")
    timing["adapter"] = time.process_time() - t
    evs = [ToyEval.build(a, b, patch=patch) for b in (ev_batch, base, src)]
    out["adapter"] = {**study(a, *evs, seed, cfg["n_draws"]), "final_loss": float(np.mean(loss[-20:]))}
    out["train_cpu_s"] = timing
    return out


def _mean_ci(xs) -> tuple[float, float]:
    """Mean over seeds and the half width of its 95% Student-t interval (NaN for one seed)."""
    iv = mean_interval(xs)
    return iv.mean, iv.half


def _fmt(m, h):
    return f"{m:.1f}" if not np.isfinite(h) else f"{m:.1f}+-{h:.1f}"


# ----- figures -----------------------------------------------------------------------------------
def _figure(runs: dict, out: Path) -> None:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(15, 4.2))
    axes = [fig.add_subplot(1, 4, i + 1) for i in range(4)]
    for (tag, run), ls in zip(runs.items(), ("-", "--", ":", "-.")):
        for toy, colour in (("native", "C0"), ("adapter", "C1"), ("ablation_no_generation", "C2")):
            if toy not in run:
                continue
            r = run[toy]
            L = np.arange(r["n_layers"])
            lab = f"{toy} {tag}"
            axes[0].plot(L, r["share"]["eoi"], ls, color=colour, marker="o", label=lab)
            axes[1].plot(L, r["cosine"]["cross"], ls, color=colour, marker="o", label=lab)
            axes[2].plot(L, [r["steer_eoi"][str(i)] if str(i) in r["steer_eoi"] else r["steer_eoi"][i] for i in L],
                         ls, color=colour, marker="o", label=lab)
            sw = r["sweep"]
            axes[3].plot(L, [sw["eoi"][i] for i in L], ls, color=colour, marker="o", label=f"{lab}: [EOI]")
            axes[3].plot(L, [sw["all_image"][i] for i in L], ls, color=colour, marker="x", alpha=0.5,
                         label=f"{lab}: all image")
    titles = ("[EOI] share of text->image attention", "image-text residual cosine",
              "[EOI] patching: flip rate to source (%)", "task accuracy, knockout from layer L to last")
    for ax, t in zip(axes, titles):
        ax.set_title(t, fontsize=9)
        ax.set_xlabel("layer")
    axes[3].legend(fontsize=6)
    axes[0].legend(fontsize=6)
    fig.tight_layout()
    (out / "figures").mkdir(parents=True, exist_ok=True)
    fig.savefig(out / "figures" / "narrow_gate_layers.png", dpi=110)


# ----- the reproduction ----------------------------------------------------------------------------
@register("narrow_gate")
def run(scale, seed, out):
    scale = Scale.parse(scale)
    out = Path(out)
    cfg = settings(scale)
    claims = [
        Claim("c1_knockout_exact", "The knockout removes exactly the chosen attention edges (the paper's tool).",
              "mask_pre_softmax == explicit 4-D mask (< 1e-5) and empty key set bit-identical, on tiny random "
              "Llama and Chameleon; zero_post_softmax rows < 1 exactly where edited", kind="check"),
        Claim("c2_narrow_gate", "Native VLMs route image information to text through a single post-image token: "
              "ablating it significantly deteriorates image understanding; non-native models spread it.",
              "native: [EOI] knockout drop >= 40 pts and 10 random image tokens <= 5; adapter: [EOI] <= 10, "
              "all image >= 40", paper_value="'substantial performance collapse across all tasks' for Chameleon / "
              "Emu3 with [EOI] ablated; nearly harmless for LLaVA-like models (numbers not available here)",
              kind="headline"),
        Claim("c3_attention_share", "In native models the [EOI] column carries most text->image attention; "
              "non-native models spread it over many image tokens.",
              "native [EOI] share >= 0.5 in >= half the layers; adapter max single-position share <= 0.3 in >= half "
              "the layers", kind="supporting"),
        Claim("c4_steering", "Token-level interventions at [EOI] steer image semantics and the downstream text.",
              "[EOI] residual patch after layer L//2-1 flips colour/shape answer to the source in >= 70% (native) "
              "vs <= 20% (adapter)", kind="supporting"),
        Claim("c5_residual_gap", "Image and text embeddings are more separated in the residual stream of native "
              "models.", "native image-text cosine < adapter's in every layer of the last third",
              kind="supporting"),
    ]

    mech = knockout_mechanics(seed)
    ok1 = all(v["mask_vs_explicit_max_abs"] < 1e-5 and v["empty_bit_identical"] and v["zero_rows_below_one"]
              and v["other_rows_sum_to_one"] < 1e-5 for v in mech.values())
    ctrl1 = min(v["control_delete_token_max_abs"] for v in mech.values())
    worst = max(v["mask_vs_explicit_max_abs"] for v in mech.values())
    claims[0].judge(ok1 and ctrl1 >= 1e-5, mech, summary=(
        f"max |mask knockout - explicit 4-D mask| {worst:.1e} (needs < 1e-5), empty set bit-identical "
        f"{all(v['empty_bit_identical'] for v in mech.values())}, edited rows < 1 "
        f"{all(v['zero_rows_below_one'] for v in mech.values())}; control (delete the token) {ctrl1:.1e}"))

    world = ShapesWorld(IMAGE_SIZE)
    seeds = [seed + i for i in range(cfg["n_seeds"])]
    runs, per = {}, {}
    by_patch = cfg.get("by_patch", {})
    jobs = [(p, s) for p in cfg["patches"] for s in seeds[:by_patch.get(p, {}).get("n_seeds", len(seeds))]]
    for patch, s in progress(jobs, desc="toy VLMs"):
        r = train_pair(world, cfg, patch, s, cfg["ablation"])
        runs.setdefault(f"N={(IMAGE_SIZE // patch) ** 2}", []).append(r)
        per[f"N={(IMAGE_SIZE // patch) ** 2} seed={s}"] = r

    def agg(fn, toy, tag):
        return _mean_ci([fn(r[toy]) for r in runs[tag]])

    def drop(target):
        return lambda r: r["sweep"]["baseline"] - r["sweep"][target][0]

    c2, c3, c4, c5 = {}, {}, {}, {}
    pass2 = pass3 = pass4 = pass5 = True
    ctrl2 = ctrl3 = ctrl4 = False
    for tag in runs:
        nd_eoi, nd_rand = agg(drop("eoi"), "native", tag), agg(drop("random_image_10"), "native", tag)
        ad_eoi, ad_all = agg(drop("eoi"), "adapter", tag), agg(drop("all_image"), "adapter", tag)
        nd_all = agg(drop("all_image"), "native", tag)
        base_n, base_a = agg(lambda r: r["sweep"]["baseline"], "native", tag), agg(
            lambda r: r["sweep"]["baseline"], "adapter", tag)
        ok = nd_eoi[0] >= 40 and nd_rand[0] <= 5 and ad_eoi[0] <= 10 and ad_all[0] >= 40
        pass2 &= ok
        ctrl2 |= ad_eoi[0] >= 40 and agg(drop("random_image_10"), "adapter", tag)[0] <= 5
        c2[tag] = {"native_baseline": base_n, "native_drop_eoi": nd_eoi, "native_drop_random10": nd_rand,
                   "native_drop_all_image": nd_all, "adapter_baseline": base_a, "adapter_drop_eoi": ad_eoi,
                   "adapter_drop_all_image": ad_all,
                   "adapter_drop_random10": agg(drop("random_image_10"), "adapter", tag), "passed": ok}

        def frac_layers(toy, key, cond, tag=tag):
            return float(np.mean([np.mean([cond(x) for x in r[toy]["share"][key]]) for r in runs[tag]]))
        n_eoi_half = frac_layers("native", "eoi", lambda x: x >= 0.5)
        a_max_ok = frac_layers("adapter", "max_single", lambda x: x <= 0.3)
        ok = n_eoi_half >= 0.5 and a_max_ok >= 0.5
        pass3 &= ok
        ctrl3 |= frac_layers("adapter", "eoi", lambda x: x >= 0.5) >= 0.5 or frac_layers(
            "native", "max_single", lambda x: x <= 0.3) >= 0.5
        c3[tag] = {"native_eoi_share": np.mean([r["native"]["share"]["eoi"] for r in runs[tag]], 0),
                   "adapter_eoi_share": np.mean([r["adapter"]["share"]["eoi"] for r in runs[tag]], 0),
                   "adapter_max_single": np.mean([r["adapter"]["share"]["max_single"] for r in runs[tag]], 0),
                   "native_max_single": np.mean([r["native"]["share"]["max_single"] for r in runs[tag]], 0),
                   "native_frac_layers_eoi_ge_0.5": n_eoi_half, "adapter_frac_layers_max_le_0.3": a_max_ok,
                   "passed": ok}
        mid = runs[tag][0]["native"]["mid_layer"]
        n_flip = agg(lambda r, mid=mid: r["steer_eoi"][mid], "native", tag)
        a_flip = agg(lambda r, mid=mid: r["steer_eoi"][mid], "adapter", tag)
        n_rand = agg(lambda r, mid=mid: r["steer_random_image"][mid], "native", tag)
        ok = n_flip[0] >= 70 and a_flip[0] <= 20
        pass4 &= ok
        ctrl4 |= n_rand[0] >= 70
        c4[tag] = {"layer": mid, "native_flip": n_flip, "adapter_flip": a_flip, "control_native_random_image": n_rand,
                   "native_by_layer": np.mean([list(r["native"]["steer_eoi"].values()) for r in runs[tag]], 0),
                   "adapter_by_layer": np.mean([list(r["adapter"]["steer_eoi"].values()) for r in runs[tag]], 0),
                   "passed": ok}
        L = runs[tag][0]["native"]["n_layers"]
        last = list(range(L - max(1, L // 3), L))
        n_cos = np.mean([r["native"]["cosine"]["cross"] for r in runs[tag]], 0)
        a_cos = np.mean([r["adapter"]["cosine"]["cross"] for r in runs[tag]], 0)
        ok = bool(all(n_cos[i] < a_cos[i] for i in last))
        pass5 &= ok
        c5[tag] = {"last_third_layers": last, "native_cross": n_cos, "adapter_cross": a_cos, "passed": ok}

    t0 = next(iter(runs))
    g = c2[t0]
    claims[1].judge(pass2 and not ctrl2, c2, note="task accuracy = mean of caption and VQA accuracy (%), "
                    "teacher-forced; drops in points; knockout = text after the image -> key set, all layers, "
                    "zero_post_softmax (the paper's hook)", summary=(
                        f"{t0}: native [EOI] drop {_fmt(*g['native_drop_eoi'])} (needs >= 40), random-10 drop "
                        f"{_fmt(*g['native_drop_random10'])} (<= 5); adapter [EOI] drop {_fmt(*g['adapter_drop_eoi'])} "
                        f"(<= 10), all-image drop {_fmt(*g['adapter_drop_all_image'])} (>= 40); base acc native "
                        f"{g['native_baseline'][0]:.0f}, adapter {g['adapter_baseline'][0]:.0f}; control (adapter "
                        f"under the native criterion) [EOI] drop {g['adapter_drop_eoi'][0]:.1f}"))
    g = c3[t0]
    claims[2].judge(pass3 and not ctrl3, c3, summary=(
        f"{t0}: native [EOI] share per layer {np.round(g['native_eoi_share'], 2).tolist()} "
        f"({g['native_frac_layers_eoi_ge_0.5']:.0%} of layers >= 0.5, needs >= 50%); adapter max single share "
        f"{np.round(g['adapter_max_single'], 2).tolist()} "
        f"({g['adapter_frac_layers_max_le_0.3']:.0%} <= 0.3, needs >= 50%); control adapter [EOI] share "
        f"{np.round(g['adapter_eoi_share'], 2).tolist()}"))
    g = c4[t0]
    claims[3].judge(pass4 and not ctrl4, c4, summary=(
        f"{t0}: [EOI] patch after layer {g['layer']}: native flips {_fmt(*g['native_flip'])}% (needs >= 70), adapter "
        f"{_fmt(*g['adapter_flip'])}% (needs <= 20); control native random image position "
        f"{g['control_native_random_image'][0]:.1f}%"))
    g = c5[t0]
    claims[4].judge(pass5, c5, summary=(
        f"{t0}: image-text cosine in layers {g['last_third_layers']}: native "
        f"{np.round(g['native_cross'][g['last_third_layers']], 3).tolist()} vs adapter "
        f"{np.round(g['adapter_cross'][g['last_third_layers']], 3).tolist()} (native must be lower)"))

    _figure({tag: rs[0] for tag, rs in runs.items()}, out)
    metrics = {"settings": cfg, "seeds": seeds, "mechanics": mech, "runs": per}
    if cfg["ablation"]:
        with_abl = {tag: rs for tag, rs in runs.items() if "ablation_no_generation" in rs[0]}
        metrics["ablation_no_generation"] = {tag: {
            "drop_eoi": _mean_ci([drop("eoi")(r["ablation_no_generation"]) for r in rs]),
            "drop_random10": _mean_ci([drop("random_image_10")(r["ablation_no_generation"]) for r in rs]),
            "drop_all_image": _mean_ci([drop("all_image")(r["ablation_no_generation"]) for r in rs]),
            "baseline": _mean_ci([r["ablation_no_generation"]["sweep"]["baseline"] for r in rs]),
            "eoi_share": np.mean([r["ablation_no_generation"]["share"]["eoi"] for r in rs], 0)}
            for tag, rs in with_abl.items()}
    return Outcome(claims, metrics=metrics, notes=(
        f"Toy VLMs trained here on ShapesWorld ({scale} scale: {cfg['layers']} layers, d=128, {cfg['steps']} steps, "
        f"image tokens {[(IMAGE_SIZE // p) ** 2 for p in cfg['patches']]}, {len(seeds)} seed(s)); no pretrained VLM "
        "exists offline, so nothing here is a measurement of Chameleon / Emu3 / LLaVA."))
