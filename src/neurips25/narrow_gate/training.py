"""Training the two toy VLMs on ShapesWorld (the experiment's models; not needed to use the toolkit).

- Native toy: next-token loss on image codes and text, over image->caption, image->question/answer and
  caption->image sequences (``generation=False``: the ablation, image->text only with loss on text only).
- Adapter toy (LLaVA recipe): pretrain the text LM on text-only caption + question/answer sequences, then
  train the patch encoder + projector on image->text sequences with loss on text tokens only, the LM frozen
  (``lm="frozen"``) or trained along (``lm="tuned"``).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import torch

from neurips25.narrow_gate.data import ATTRIBUTES, Batch, Vocab, patches
from neurips25.narrow_gate.knockout import attention_knockout
from neurips25.narrow_gate.tokenizer import PatchKMeansTokenizer
from neurips25.narrow_gate.toy import (
    TEXT_LEN,
    AdapterToyVLM,
    NativeToyVLM,
    caption_first,
    image_first,
    text_tokens,
)
from neurips25.repro import progress


@dataclasses.dataclass
class TrainConfig:
    """Optimisation settings shared by both toys."""

    steps: int = 1500
    batch: int = 32
    lr: float = 3e-3
    warmup: int = 50
    weight_decay: float = 0.01

    def __post_init__(self):
        if self.steps < 1 or self.batch < 1 or not self.lr > 0:
            raise ValueError(f"steps, batch must be >= 1 and lr > 0; got {self.steps}, {self.batch}, {self.lr}")


def _optimise(model, params, step_loss, cfg: TrainConfig, desc: str) -> list[float]:
    opt = torch.optim.AdamW(params, lr=cfg.lr, betas=(0.9, 0.98), weight_decay=cfg.weight_decay)

    def lr_at(s):
        if s < cfg.warmup:
            return (s + 1) / cfg.warmup
        return 0.5 * (1 + math.cos(math.pi * (s - cfg.warmup) / max(1, cfg.steps - cfg.warmup))) * 0.95 + 0.05
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_at)
    model.train()
    losses = []
    for s in progress(range(cfg.steps), desc=desc):
        loss = step_loss(s)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
    model.eval()
    return losses


def _subset(batch: Batch, idx: np.ndarray) -> Batch:
    return Batch(batch.images[idx], {k: v[idx] for k, v in batch.attrs.items()})


def _mixed_text(vocab: Vocab, b: Batch, rng) -> np.ndarray:
    """Half captions, half questions (uniform over the four attributes)."""
    cap = text_tokens(vocab, b, "caption")
    qa = text_tokens(vocab, b, "qa", rng.integers(0, len(ATTRIBUTES), len(b)))
    return np.where((rng.random(len(b)) < 0.5)[:, None], cap, qa)


def _labels(ids: torch.Tensor, text_only_from: int | None) -> torch.Tensor:
    lab = ids.clone()
    lab[ids == 0] = -100
    if text_only_from is not None:
        lab[:, :text_only_from] = -100
    return lab


def train_native(model: NativeToyVLM, data: Batch, tokenizer: PatchKMeansTokenizer, cfg: TrainConfig, seed: int,
                 generation: bool = True, gate_through_eoi: bool = False,
                 shuffled_captions: float = 0.0) -> list[float]:
    """Train the native toy; returns the loss curve.

    ``gate_through_eoi`` (the positive control of the reproduction): in the image-first rows of every batch the
    text after the image may not attend to the image tokens in any layer (``mask_pre_softmax`` knockout), so it
    can read the image only through [EOI]; caption-first rows are left alone. Evaluate such a model under the
    same wiring (``reproduce.routed_through_eoi``). ``shuffled_captions`` is the fraction of image-first
    captions whose four words come in a random order, so the word predicted at [EOI] may be any attribute: a
    direct training signal for [EOI] to carry every attribute (used with ``gate_through_eoi``).
    """
    if not 0.0 <= float(shuffled_captions) <= 1.0:
        raise ValueError(f"shuffled_captions must be a fraction in [0, 1]; got {shuffled_captions!r}")
    vocab, rng = Vocab(), np.random.default_rng(seed)
    codes = tokenizer.encode(data.images) + model.config.narrow_gate_n_words
    n_img = codes.shape[1]
    torch.manual_seed(seed)

    def step(s):
        idx = rng.integers(0, len(data), cfg.batch)
        b = _subset(data, idx)
        text = _mixed_text(vocab, b, rng)
        if shuffled_captions > 0:
            rows = np.flatnonzero((text[:, 4] == vocab["<eos>"]) & (rng.random(len(b)) < shuffled_captions))
            order = np.argsort(rng.random((len(rows), 4)), axis=1)
            text[rows, :4] = np.take_along_axis(text[rows, :4], order, 1)
        i2t = image_first(vocab, codes[idx], text)
        if generation:
            t2i = caption_first(vocab, codes[idx], b)
            is_t2i = torch.from_numpy(rng.random(cfg.batch) < 1 / 3)
            ids = torch.where(is_t2i[:, None], t2i, i2t)
            lab = _labels(ids, None)
        else:
            is_t2i = torch.zeros(cfg.batch, dtype=torch.bool)
            ids = i2t
            lab = _labels(ids, n_img + 3)
        if not gate_through_eoi:
            return model(input_ids=ids, labels=lab).loss
        seq = ids.shape[1]
        queries = torch.zeros(cfg.batch, seq, dtype=torch.bool)
        queries[~is_t2i, n_img + 3:] = True  # text after the image, image-first rows only
        keys = torch.zeros(1, seq, dtype=torch.bool)
        keys[0, 2:n_img + 2] = True  # the image tokens of the image-first layout
        with attention_knockout(model, queries, keys, "all", mode="mask_pre_softmax"):
            return model(input_ids=ids, labels=lab).loss
    params = [p for p in model.parameters() if p.requires_grad]
    return _optimise(model, params, step, cfg, "native toy")


def pretrain_text_lm(model: AdapterToyVLM, data: Batch, cfg: TrainConfig, seed: int) -> list[float]:
    """Stage 0 of the adapter toy: a text LM on ``[bos] caption question answer [eos]``."""
    vocab, rng = Vocab(), np.random.default_rng(seed)
    lm = model.language_model
    torch.manual_seed(seed)

    def step(s):
        b = _subset(data, rng.integers(0, len(data), cfg.batch))
        cap = text_tokens(vocab, b, "caption")[:, :4]
        qa = text_tokens(vocab, b, "qa", rng.integers(0, len(ATTRIBUTES), len(b)))[:, :3]
        ids = torch.from_numpy(np.concatenate([np.full((len(b), 1), vocab["<bos>"]), cap, qa], 1))
        return lm(input_ids=ids, labels=_labels(ids, None)).loss
    return _optimise(model, list(lm.parameters()), step, cfg, "adapter text LM")


def train_adapter(model: AdapterToyVLM, data: Batch, patch: int, cfg: TrainConfig, seed: int,
                  lm: str = "frozen", normalise_pixels: bool = True) -> list[float]:
    """Stage 1 of the adapter toy: encoder + projector (and the LM when ``lm="tuned"``), loss on text only.

    ``normalise_pixels`` fits the encoder's per-channel pixel standardisation on ``data`` first (the image
    processor's normalisation; ``False`` keeps identity, the setting that trains to chance)."""
    if lm not in ("frozen", "tuned"):
        raise ValueError(f"lm must be 'frozen' or 'tuned'; got {lm!r}")
    vocab, rng = Vocab(), np.random.default_rng(seed + 1)
    pix = patches(data.images, patch)
    n_img = pix.shape[1]
    if normalise_pixels:
        model.vision.fit_pixel_norm(data.images)
    for p in model.language_model.parameters():
        p.requires_grad_(lm == "tuned")
    torch.manual_seed(seed + 1)

    def step(s):
        idx = rng.integers(0, len(data), cfg.batch)
        b = _subset(data, idx)
        inp = model.inputs(pix[idx], _mixed_text(vocab, b, rng))
        return model(**inp, labels=_labels(inp["input_ids"], n_img + 3)).loss
    params = [p for p in model.parameters() if p.requires_grad]
    losses = _optimise(model, params, step, cfg, "adapter projector")
    for p in model.language_model.parameters():
        p.requires_grad_(True)
    return losses


__all__ = ["TrainConfig", "train_native", "pretrain_text_lm", "train_adapter", "TEXT_LEN"]
