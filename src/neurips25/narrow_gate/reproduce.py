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
   Positive control (issue #62): ``trained_gate``, a native toy trained under a regime whose training attention
   mask lets the text after the image read the image only through [EOI], measured with no mask, exactly as the
   method is (it replaced ``gated_toy``, the same weights measured inside that mask, which showed only that the
   measurement sees a wired gate; the masked numbers are kept as a detail). c2b's negative control and c4's
   positive control are the same ``trained_gate``.
3. c3_attention_share (supporting): native [EOI] share of text->image attention >= 0.5 in at least half of
   the layers; adapter's largest single-position share <= 0.3 in at least half of the layers (our reading:
   the same "half of the layers" as the native side). Controls: each toy under the other's criterion (negative);
   a native toy *trained* to route text->image attention through [EOI] (an attention-share penalty in its loss,
   no mask in training or evaluation: it can fail) in the native role (positive; verdicts v4 replaced the
   hand-masked gated toy, whose share is 1 by construction).
4. c4_steering (supporting): patching the [EOI] residual of a class-B image into a class-A run after the
   middle layer (index L//2 - 1) flips the native toy's colour / shape answer to B in >= 70% of pairs vs <= 20%
   for the adapter toy. Control: the native toy patched at a random image position instead.
5. c5_residual_gap (supporting): the native toy's image-text cosine is below the adapter's in every layer of
   the last third.
Every empirical claim is a stand-in (no pretrained native VLM is offline): a verdict is about these toys.
Paper scale adds the ablation (native toy without the image-generation loss) and both 16 and 64 image tokens.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import torch

from neurips25.narrow_gate.analysis import knockout_sweep
from neurips25.narrow_gate.data import ATTRIBUTES, ShapesWorld, Vocab
from neurips25.narrow_gate.knockout import ATTENTION_NAME, From, attention_knockout
from neurips25.narrow_gate.metrics import cross_modal_attention_share, modality_cosine, neighborhood_overlap
from neurips25.narrow_gate.patching import patch_residual
from neurips25.narrow_gate.recorder import ResidualRecorder, attention_weights
from neurips25.narrow_gate.tasks import ToyEval
from neurips25.narrow_gate.tokenizer import PatchKMeansTokenizer
from neurips25.narrow_gate.toy import AdapterToyVLM, NativeToyVLM
from neurips25.narrow_gate.training import TrainConfig, pretrain_text_lm, train_adapter, train_native
from neurips25.repro import (
    Claim,
    Control,
    Criterion,
    Figures,
    Outcome,
    Precondition,
    Scale,
    measure,
    progress,
    register,
)
from neurips25.repro.intervals import mean_interval

IMAGE_SIZE = 24
#: fraction of the gated control's image-first captions trained in a random word order (reconstructed, see
#: ``train_native(shuffled_captions=...)``)
SHUFFLED = 0.75


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


def _tiny_gemma2():
    from transformers import Gemma2Config, Gemma2ForCausalLM

    cfg = Gemma2Config(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                       num_key_value_heads=2, head_dim=8, attn_logit_softcapping=5.0, final_logit_softcapping=30.0,
                       query_pre_attn_scalar=8, sliding_window=4, attn_implementation="eager")
    m = Gemma2ForCausalLM(cfg).eval()
    with torch.no_grad():  # large q/k so the softcap (tanh) is far from identity
        for layer in m.model.layers:
            layer.self_attn.q_proj.weight.mul_(8.0)
            layer.self_attn.k_proj.weight.mul_(8.0)
    return m


@torch.no_grad()
def knockout_mechanics(seed: int) -> dict:
    """The exactness measurements of c1 on tiny random Llama, Chameleon and Gemma2 (softcap, sliding window)."""
    out = {}
    for name, build in (("llama", _tiny_llama), ("chameleon", _tiny_chameleon), ("gemma2", _tiny_gemma2)):
        torch.manual_seed(seed)
        m = build()
        S, j = 12, 5
        ids = torch.randint(6, 64, (2, S), generator=torch.Generator().manual_seed(seed))
        ref = m(input_ids=ids).logits
        with attention_knockout(m, "all", [], "all"):
            empty = m(input_ids=ids).logits
        with attention_knockout(m, "all", [j], "all", mode="mask_pre_softmax"):
            ko = m(input_ids=ids).logits
        pad = torch.ones_like(ids)
        pad[:, j] = 0  # oracle: the model's own padding mask removes key j for every query, in every layer
        explicit = m(input_ids=ids, attention_mask=pad).logits
        rows = [p for p in range(S) if p != j]  # position j itself has no other positions to compare with
        naive = m(input_ids=torch.cat([ids[:, :j], ids[:, j + 1:]], 1)).logits  # deleting the token
        edit = [6, 8]  # both within Gemma2's sliding window (4) of key j
        with attention_knockout(m, edit, [j], "all", mode="zero_post_softmax"):
            w = attention_weights(m, {"input_ids": ids})
        sums = w.sum(-1)  # (L, B, H, S)
        edited = torch.zeros(S, dtype=torch.bool)
        edited[edit] = True
        other = ids.clone()
        other[:, j] = (ids[:, j] + 11) % 58 + 6
        signal = float((m(input_ids=ids).logits - m(input_ids=other).logits)[:, rows].abs().max())
        leak = {}
        for mode in ("mask_pre_softmax", "zero_post_softmax"):
            with attention_knockout(m, "all", [j], "all", mode=mode):
                leak[mode] = float((m(input_ids=ids).logits - m(input_ids=other).logits)[:, rows].abs().max())
        out[name] = {
            "mask_vs_explicit_max_abs": float((ko - explicit)[:, rows].abs().max()),
            "empty_max_abs": float((empty - ref).abs().max()),
            "zero_rows_below_one": bool((sums[..., edited] < 1 - 1e-6).all()),
            "other_rows_sum_to_one": float((sums[..., ~edited] - 1).abs().max()),
            "effect_of_knockout_max_abs": float((ko - ref).abs().max()),
            "control_delete_token_max_abs": float((naive[:, j:] - explicit[:, j + 1:]).abs().max()),
            "token_change_signal": signal,
            "token_change_under_mask_pre_softmax": leak["mask_pre_softmax"],
            "token_change_under_zero_post_softmax": leak["zero_post_softmax"],
            "zero_post_softmax_leak_fraction": leak["zero_post_softmax"] / max(signal, 1e-12),
        }
    return out


# ----- the toys ----------------------------------------------------------------------------------
def settings(scale: Scale) -> dict:
    return scale.pick(
        smoke=dict(layers=2, n_train=300, n_eval=24, n_pairs=16, steps=25, lm_steps=10, adapter_steps=25,
                   patches=(6,), n_seeds=1, ablation=False, kmeans_fit=200, n_draws=1, gated_steps=25,
                   gated_shuffled_captions=SHUFFLED),
        quick=dict(layers=4, n_train=8000, n_eval=256, n_pairs=128, steps=900, lm_steps=300, adapter_steps=900,
                   patches=(6,), n_seeds=1, ablation=False, kmeans_fit=2000, n_draws=3,
                   # 2500 (was 1500): the gated positive control was undertrained at seeds 1-2 with 1500
                   gated_steps=2500, gated_shuffled_captions=SHUFFLED),
        # 16 image tokens: 3 seeds with the ablation; 64 image tokens: 1 seed, fewer steps (about 4x the cost a step)
        paper=dict(layers=4, n_train=20000, n_eval=256, n_pairs=256, steps=1500, lm_steps=600, adapter_steps=1500,
                   patches=(6, 3), n_seeds=3, ablation=True, kmeans_fit=4000, n_draws=3, gated_steps=2500,
                   gated_shuffled_captions=SHUFFLED,
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
    if cfg._attn_implementation != ATTENTION_NAME:  # inside a knockout (the gated toy's wiring) it is eager already
        cfg._attn_implementation = "eager"


def random_target(n_image: int) -> str:
    """The random-token control scaled with the image: about 1% of it, as 10 of 1024 in the paper (>= 1 token)."""
    return f"random_image_{max(1, round(0.01 * n_image))}"


def study(model, ev: ToyEval, base_ev: ToyEval, src_ev: ToyEval, seed: int, n_draws: int = 3,
          full: bool = True) -> dict:
    """Every measurement on one trained toy (``full=False``: the knockout, share and steering readouts only)."""
    _use_eager(model)
    spans = ev.spans
    L = len(model.get_decoder().layers)
    acc = ev.accuracy()
    rand = random_target(len(spans.image))
    targets = ("eoi", "all_image", rand, "last_image", "boi") if full else ("eoi", "all_image", rand)
    sweep = knockout_sweep(model, lambda: ev.accuracy()["task_text"], spans, targets=targets,
                           start_layers=list(range(L)) if full else [0, 1], n_draws=n_draws, seed=seed,
                           mode="mask_pre_softmax")
    sweep["random_target"] = rand
    attn = attention_weights(model, ev.qa)
    share = cross_modal_attention_share(attn, spans)
    mid = max(0, L // 2 - 1)
    steer_eoi = steering(model, base_ev, src_ev, lambda: spans.eoi, list(range(L)))
    out = {"accuracy": acc, "sweep": sweep, "share": {k2: v.tolist() for k2, v in share.items()},
           "steer_eoi": steer_eoi, "mid_layer": mid, "n_layers": L}
    if not full:
        return out
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
    steer_rand = steering(model, base_ev, src_ev, lambda: int(rng.choice(spans.image)), [mid])
    return {**out, "cosine": {k2: v.tolist() for k2, v in cos.items()}, "overlap": overlap,
            "steer_random_image": steer_rand}


@torch.no_grad()
def residual_cosine(model, ev: ToyEval) -> list[float]:
    """Per-layer image-text cosine of a toy (the c5 readout; also run on the untrained toys, its control)."""
    _use_eager(model)
    spans = ev.spans
    with ResidualRecorder(model) as rec:
        model(**ev.qa)
    return modality_cosine(rec.residuals, spans, text=spans.text_after_image())["cross"].tolist()


def routed_through_eoi(model, n_image: int):
    """The positive control's wiring: text after the image may not attend to image tokens, only to [EOI].

    Layout ``[bos] [boi] image(2..N+1) [eoi](N+2) text(N+3..)``: every text query (generated ones too) loses its
    edges to the N image tokens in every layer; [EOI] still reads the image. Training applies the same wiring to
    the image-first rows (``train_native(gate_through_eoi=True)``); evaluation runs inside this context.
    """
    return attention_knockout(model, From(n_image + 3), list(range(2, n_image + 2)), "all", mode="mask_pre_softmax")


#: weight of the attention-share penalty that trains c3's positive control (fixed before any run with it)
GATE_PENALTY = 1.0


def penalise_attention_off_eoi(model, n_image: int, weight: float = GATE_PENALTY):
    """Wrap ``model.forward`` so a training loss adds ``weight x (1 - [EOI]'s share)`` of the text->image attention.

    Image-first rows only (``[bos] [boi] image [eoi] text``): text queries after the image, keys [BOI]..[EOI].
    Nothing is masked: the model may still attend to every image token, and whether its attention ends up on
    [EOI] is learned (c3's positive control can fail). Returns a function that removes the wrapper.
    """
    orig, boi = model.forward, Vocab()["<boi>"]

    def forward(*args, **kw):
        if kw.get("labels") is None:
            return orig(*args, **kw)
        out = orig(*args, **{**kw, "output_attentions": True})
        rows = kw["input_ids"][:, 1] == boi
        if rows.any():
            share = [a[rows][:, :, n_image + 3:, n_image + 2] / a[rows][:, :, n_image + 3:, 1:n_image + 3].sum(-1)
                     .clamp_min(1e-9) for a in out.attentions]
            out.loss = out.loss + weight * (1 - torch.stack(share).mean())
        return out

    model.forward = forward
    return lambda: model.__dict__.pop("forward", None)


def learned_gate_share(world_data, ev_batch, tok, cfg: dict, n_img: int, seed: int) -> dict:
    """c3's positive control: a native toy trained with :func:`penalise_attention_off_eoi`, its [EOI] share measured
    without any mask (fraction of layers with share >= 0.5, and the share per layer)."""
    torch.manual_seed(seed)
    m = NativeToyVLM.create(64, n_img, layers=cfg["layers"])
    _use_eager(m)
    undo = penalise_attention_off_eoi(m, n_img)
    try:
        train_native(m, world_data, tok, TrainConfig(steps=cfg["steps"]), seed, generation=True)
    finally:
        undo()
    ev = ToyEval.build(m, ev_batch, tok)
    share = cross_modal_attention_share(attention_weights(m, ev.qa), ev.spans)["eoi"]
    return {"eoi_frac": float(np.mean(share >= 0.5)), "eoi_share": share.tolist(),
            "task_accuracy": ev.accuracy()["task_text"]}


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

    torch.manual_seed(seed)
    untrained_n = NativeToyVLM.create(64, n_img, layers=cfg["layers"])
    torch.manual_seed(seed)
    untrained_a = AdapterToyVLM.create(patch * patch * 3, n_img, layers=cfg["layers"])
    untrained_a.vision.fit_pixel_norm(data.images)
    out["untrained_cosine"] = {"native": residual_cosine(untrained_n, ToyEval.build(untrained_n, ev_batch, tok)),
                               "adapter": residual_cosine(untrained_a, ToyEval.build(untrained_a, ev_batch,
                                                                                     patch=patch))}

    def native(generation):
        torch.manual_seed(seed)
        m = NativeToyVLM.create(64, n_img, layers=cfg["layers"])
        t = time.process_time()
        loss = train_native(m, data, tok, tc, seed, generation=generation)
        timing["native" if generation else "ablation"] = time.process_time() - t
        evs = [ToyEval.build(m, b, tok) for b in (ev_batch, base, src)]
        return {**study(m, *evs, seed, cfg["n_draws"]), "final_loss": float(np.mean(loss[-20:]))}
    out["native"] = native(True)
    # positive control: a native toy (same recipe: image codes, text, caption->image) wired so that the text
    # after the image reads the image only through [EOI], with shuffled captions giving [EOI] a direct signal
    # on every attribute (v2 trained image->text only with canonical captions for 600 steps: it learned colour
    # alone, base 36%, so its [EOI] knockout could drop at most ~5 points; 1500 steps of that recipe: base 40%)
    torch.manual_seed(seed)
    g = NativeToyVLM.create(64, n_img, layers=cfg["layers"])
    t = time.process_time()
    loss = train_native(g, data, tok, TrainConfig(steps=cfg["gated_steps"]), seed, generation=True,
                        gate_through_eoi=True, shuffled_captions=cfg["gated_shuffled_captions"])
    timing["gated"] = time.process_time() - t
    # issue #62: the positive control is the trained model measured as the method is, with no mask at measurement
    # time (``trained_gate``); the same weights inside the hand-set evaluation mask (``gated``) are kept as a detail
    evs = [ToyEval.build(g, b, tok) for b in (ev_batch, base, src)]
    out["trained_gate"] = {**study(g, *evs, seed, cfg["n_draws"], full=False),
                           "final_loss": float(np.mean(loss[-20:]))}
    with routed_through_eoi(g, n_img):
        evs = [ToyEval.build(g, b, tok) for b in (ev_batch, base, src)]
        out["gated"] = {**study(g, *evs, seed, cfg["n_draws"], full=False), "final_loss": float(np.mean(loss[-20:]))}
    t = time.process_time()
    lg = measure(learned_gate_share, data, ev_batch, tok, cfg, n_img, seed)
    out["learned_gate"] = {**lg.raw(), "provenance": lg.provenance}
    timing["learned_gate"] = time.process_time() - t
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
STAND_IN = ("toy VLMs (4 layers, ~0.7M parameters) trained here from scratch on one-object ShapesWorld images, "
            "standing in for Chameleon / Emu3 (native) and LLaVA (adapter), none offline: a verdict says whether the "
            "effect forms in such a toy, not whether a pretrained VLM has it; nothing here confirms or refutes the "
            "gate in Chameleon / Emu3. The knockout toolkit itself is exact on the real model classes (c1 and the "
            "contract rows), so it can be pointed at a real VLM")


def declare_claims(scale=None) -> list:
    """The six claims with their criteria and controls (issue #21; c3's positive control replaced in verdicts v4)."""
    where = dict(instance="stand-in", instance_note=STAND_IN)
    return [
        Claim("c1_knockout_exact", "The knockout removes exactly the chosen attention edges (the paper's tool).",
              Criterion.at_most("max_abs_vs_oracle", 1e-5, "max |logit diff| of mask_pre_softmax vs the model's own "
                                "padding mask, and of an empty knockout vs the unhooked model, <= 1e-5 on tiny random "
                                "Llama, Chameleon and Gemma2 (softcap 5, sliding window 4)"),
              kind="check",
              controls=[Control.negative("delete_token", "the naive knockout: delete token j from the input")],
              preconditions=[Precondition("zero_post_softmax rows < 1 exactly where edges were removed",
                                          lambda m: m["zero_rows_ok"]),
                             Precondition("the knockout changes the logits", lambda m: m["knockout_effect"] > 1e-4)]),
        Claim("c2_narrow_gate", "Native VLMs route image information to text through a single post-image token: "
              "ablating it significantly deteriorates image understanding.",
              Criterion("native toy, knockout from layer 1 to the last (text after the image -> key set): [EOI] "
                        "drop >= 40 points and ~1% random image tokens drop <= 5 points", "eoi_drop",
                        lambda m: m["eoi_drop"] >= 40 and m["random_drop"] <= 5, ">= 40 and random <= 5"),
              paper_value="'substantial performance collapse across all tasks' for Chameleon / Emu3 with [EOI] "
              "ablated (numbers not available here)", kind="headline",
              controls=[Control.negative("adapter_toy", "the adapter (LLaVA-like) toy under the same criterion"),
                        Control.positive("trained_gate", "a native toy trained under a regime that routes the image "
                                         "through [EOI] (in training, text after the image cannot attend to image "
                                         "tokens, only to [EOI]: the training attention mask), measured as the method "
                                         "is, with no mask at measurement time")],
              preconditions=[Precondition("the toy solves the task (text accuracy >= 60%)",
                                          lambda m: m["baseline"] >= 60)], **where),
        Claim("c2b_adapter_distributed", "Non-native models spread image-to-text communication: [EOI] knockout is "
              "nearly harmless while knocking out all image tokens destroys performance.",
              Criterion("adapter toy, knockout from layer 1 on: [EOI] drop <= 10 points and all-image drop >= 40",
                        "all_image_drop", lambda m: m["eoi_drop"] <= 10 and m["all_image_drop"] >= 40,
                        "[EOI] <= 10 and all image >= 40"),
              paper_value="nearly harmless [EOI] ablation for LLaVA-like models (numbers not available here)",
              kind="supporting",
              controls=[Control.negative("trained_gate", "the toy trained under the [EOI]-only regime (no mask at "
                                         "measurement time) under the same criterion")],
              no_positive_control="no model here spreads the image over many tokens by construction; the adapter "
                                  "toy is the only distributed candidate",
              preconditions=[Precondition("the toy solves the task (text accuracy >= 60%)",
                                          lambda m: m["baseline"] >= 60)], **where),
        Claim("c3_attention_share", "In native models the [EOI] column carries most text->image attention; "
              "non-native models spread it over many image tokens.",
              Criterion("native [EOI] share >= 0.5 in >= half the layers and adapter max single-position share "
                        "<= 0.3 in >= half the layers", "native_eoi_frac",
                        lambda m: m["native_eoi_frac"] >= 0.5 and m["adapter_max_frac"] >= 0.5, ">= 0.5 and >= 0.5"),
              kind="supporting",
              controls=[Control.negative("swapped", "each toy under the other's criterion"),
                        Control.positive("learned_gate", "a native toy trained with an attention-share penalty "
                                         "toward [EOI] (no mask in training or evaluation) in the native role")],
              **where),
        Claim("c4_steering", "Token-level interventions at [EOI] steer image semantics and the downstream text.",
              Criterion("[EOI] residual patch after layer L//2-1 flips the colour/shape answer to the source in "
                        ">= 70% (native) and <= 20% (adapter)", "native_flip",
                        lambda m: m["native_flip"] >= 70 and m["adapter_flip"] <= 20, ">= 70 and adapter <= 20"),
              kind="supporting",
              controls=[Control.negative("random_image_position", "the native toy patched at a random image "
                                         "position instead of [EOI]"),
                        Control.positive("trained_gate", "the toy trained under the [EOI]-only regime, patched at "
                                         "[EOI], no mask at measurement time")], **where),
        Claim("c5_residual_gap", "Image and text embeddings are more separated in the residual stream of native "
              "models.",
              Criterion.at_most("max_gap", 0.0, "native image-text cosine < adapter's in every layer of the last "
                                "third (max over those layers of native - adapter < 0)", strict=True),
              kind="supporting",
              controls=[Control.negative("untrained_toys", "the same two architectures at initialisation")],
              no_positive_control="no toy separates the modalities by construction", **where),
    ]


@register("narrow_gate")
def run(scale, seed, out):
    scale = Scale.parse(scale)
    out = Path(out)
    cfg = settings(scale)
    claims = declare_claims(scale)

    mech_m = measure(knockout_mechanics, seed)
    mech = mech_m.raw()
    claims[0].record(
        {"max_abs_vs_oracle": max(max(v["mask_vs_explicit_max_abs"], v["empty_max_abs"]) for v in mech.values()),
         "zero_rows_ok": all(v["zero_rows_below_one"] for v in mech.values()),
         "knockout_effect": min(v["effect_of_knockout_max_abs"] for v in mech.values())},
        controls={"delete_token": Figures({"max_abs_vs_oracle": min(v["control_delete_token_max_abs"]
                                                                    for v in mech.values())}, mech_m.provenance)},
        details=mech)

    world = ShapesWorld(IMAGE_SIZE)
    seeds = [seed + i for i in range(cfg["n_seeds"])]
    runs, per, provs = {}, {}, []
    by_patch = cfg.get("by_patch", {})
    jobs = [(p, s) for p in cfg["patches"] for s in seeds[:by_patch.get(p, {}).get("n_seeds", len(seeds))]]
    for patch, s in progress(jobs, desc="toy VLMs"):
        rm = measure(train_pair, world, cfg, patch, s, cfg["ablation"])
        r, provs = rm.raw(), provs + [rm.provenance]
        runs.setdefault(f"N={(IMAGE_SIZE // patch) ** 2}", []).append(r)
        per[f"N={(IMAGE_SIZE // patch) ** 2} seed={s}"] = r

    def mean(fn, tag):
        return float(np.mean([fn(r) for r in runs[tag]]))

    def drop(toy, target, start):
        def f(r):
            sw = r[toy]["sweep"]
            return sw["baseline"] - sw[sw["random_target"] if target == "random" else target][start]
        return f

    def share_frac(toy, key, cond):
        return lambda r: float(np.mean([cond(x) for x in r[toy]["share"][key]]))

    tables = {}
    for tag in runs:
        t = {}
        for toy in ("native", "adapter", "gated", "trained_gate"):
            t[toy] = {"baseline": mean(lambda r, toy=toy: r[toy]["sweep"]["baseline"], tag),
                      **{f"{tg}_drop_from_{st}": mean(drop(toy, tg, st), tag)
                         for tg in ("eoi", "random", "all_image") for st in (0, 1)},
                      "eoi_frac": mean(share_frac(toy, "eoi", lambda x: x >= 0.5), tag),
                      "max_frac": mean(share_frac(toy, "max_single", lambda x: x <= 0.3), tag),
                      "eoi_share": np.mean([r[toy]["share"]["eoi"] for r in runs[tag]], 0).tolist(),
                      "max_single": np.mean([r[toy]["share"]["max_single"] for r in runs[tag]], 0).tolist()}
            mid = runs[tag][0][toy]["mid_layer"]
            t[toy]["flip"] = mean(lambda r, toy=toy, mid=mid: r[toy]["steer_eoi"][mid], tag)
            t[toy]["flip_by_layer"] = np.mean([list(r[toy]["steer_eoi"].values()) for r in runs[tag]], 0).tolist()
        mid = runs[tag][0]["native"]["mid_layer"]
        t["native"]["flip_random_position"] = mean(lambda r, mid=mid: r["native"]["steer_random_image"][mid], tag)
        L = runs[tag][0]["native"]["n_layers"]
        last = list(range(L - max(1, L // 3), L))
        for toy, get in (("trained", lambda r, k: r[k]["cosine"]["cross"]),
                         ("untrained", lambda r, k: r["untrained_cosine"][k])):
            n_cos = np.mean([get(r, "native") for r in runs[tag]], 0)
            a_cos = np.mean([get(r, "adapter") for r in runs[tag]], 0)
            t[f"cosine_{toy}"] = {"native": n_cos.tolist(), "adapter": a_cos.tolist(), "last_third": last,
                                  "max_gap": float(max(n_cos[i] - a_cos[i] for i in last))}
        t["random_target"] = runs[tag][0]["native"]["sweep"]["random_target"]
        t["learned_gate"] = {"eoi_frac": mean(lambda r: r["learned_gate"]["eoi_frac"], tag),
                             "eoi_share": np.mean([r["learned_gate"]["eoi_share"] for r in runs[tag]], 0).tolist(),
                             "task_accuracy": mean(lambda r: r["learned_gate"]["task_accuracy"], tag),
                             "provenance": runs[tag][0]["learned_gate"]["provenance"]}
        tables[tag] = t

    t0 = next(iter(runs))
    g = tables[t0]

    def gate_figs(toy):
        x = g[toy]
        return {"eoi_drop": x["eoi_drop_from_1"], "random_drop": x["random_drop_from_1"], "baseline": x["baseline"],
                "eoi_drop_from_0": x["eoi_drop_from_0"], "random_drop_from_0": x["random_drop_from_0"]}
    n, a, q, tg = g["native"], g["adapter"], g["gated"], g["trained_gate"]
    prov = "; ".join(provs)
    claims[1].record(gate_figs("native"), controls={"adapter_toy": Figures(gate_figs("adapter"), prov),
                                                    "trained_gate": Figures(gate_figs("trained_gate"), prov)},
                     details=tables, note=(
                         "task = mean of caption and VQA accuracy (%) over predictions made at text positions after "
                         "the image (teacher-forced; the caption's first word, predicted at [EOI], left out); knockout "
                         f"mask_pre_softmax, text after the image -> key set, layers 1..L-1; random set = "
                         f"{g['random_target']} (~1% of the image, >= 1); layer 0 reported apart (there [EOI]'s input "
                         "is its embedding, the same for every image)"))

    def spread_figs(toy):
        x = g[toy]
        return {"eoi_drop": x["eoi_drop_from_1"], "all_image_drop": x["all_image_drop_from_1"],
                "baseline": x["baseline"], "eoi_drop_from_0": x["eoi_drop_from_0"]}
    claims[2].record(spread_figs("adapter"), controls={"trained_gate": Figures(spread_figs("trained_gate"), prov)},
                     details={"gated_toy_eval_mask": spread_figs("gated")})
    lg = g["learned_gate"]
    claims[3].record({"native_eoi_frac": n["eoi_frac"], "adapter_max_frac": a["max_frac"]}, controls={
        "swapped": Figures({"native_eoi_frac": a["eoi_frac"], "adapter_max_frac": n["max_frac"]}, prov),
        "learned_gate": Figures({"native_eoi_frac": lg["eoi_frac"], "adapter_max_frac": a["max_frac"]},
                                lg["provenance"])},
        details={"native_eoi_share": n["eoi_share"], "adapter_max_single": a["max_single"],
                 "learned_gate": lg, "gated_toy_eoi_share_by_construction": q["eoi_share"],
                 "trained_gate_eoi_share_no_mask": tg["eoi_share"]})
    claims[4].record({"native_flip": n["flip"], "adapter_flip": a["flip"]}, controls={
        "random_image_position": Figures({"native_flip": n["flip_random_position"], "adapter_flip": a["flip"]}, prov),
        "trained_gate": Figures({"native_flip": tg["flip"], "adapter_flip": a["flip"]}, prov)},
        details={"gated_toy_eval_mask_flip": q["flip"], "trained_gate_flip_by_layer": tg["flip_by_layer"]})
    ct, cu = g["cosine_trained"], g["cosine_untrained"]
    claims[5].record({"max_gap": ct["max_gap"]}, controls={"untrained_toys": Figures({"max_gap": cu["max_gap"]}, prov)},
                     details={"trained": ct, "untrained": cu})

    _figure({tag: rs[0] for tag, rs in runs.items()}, out)
    metrics = {"settings": cfg, "seeds": seeds, "mechanics": mech, "runs": per}
    if cfg["ablation"]:
        with_abl = {tag: rs for tag, rs in runs.items() if "ablation_no_generation" in rs[0]}
        metrics["ablation_no_generation"] = {tag: {
            "drop_eoi_from_1": _mean_ci([drop("ablation_no_generation", "eoi", 1)(r) for r in rs]),
            "drop_eoi_from_0": _mean_ci([drop("ablation_no_generation", "eoi", 0)(r) for r in rs]),
            "drop_random_from_1": _mean_ci([drop("ablation_no_generation", "random", 1)(r) for r in rs]),
            "drop_all_image_from_1": _mean_ci([drop("ablation_no_generation", "all_image", 1)(r) for r in rs]),
            "baseline": _mean_ci([r["ablation_no_generation"]["sweep"]["baseline"] for r in rs]),
            "eoi_share": np.mean([r["ablation_no_generation"]["share"]["eoi"] for r in rs], 0)}
            for tag, rs in with_abl.items()}
    return Outcome(claims, metrics=metrics, notes=(
        f"Toy VLMs trained here on ShapesWorld ({scale} scale: {cfg['layers']} layers, d=128, {cfg['steps']} steps, "
        f"image tokens {[(IMAGE_SIZE // p) ** 2 for p in cfg['patches']]}, {len(seeds)} seed(s)); no pretrained VLM "
        "exists offline, so nothing here is a measurement of Chameleon / Emu3 / LLaVA."))
