"""The two toy VLMs, built on Hugging Face classes so the toolkit runs on them as on a downloaded model.

Both have the same Llama decoder (size, depth, heads) and the same delimiters, and read the same layout::

    [bos] [boi] img_1 .. img_N [eoi] text ...        image -> text (caption or question + answer)
    [bos] caption [boi] img_1 .. img_N [eoi] [eos]    text -> image (native toy only)

- :class:`NativeToyVLM` (Chameleon-like): a ``LlamaForCausalLM`` whose vocabulary is the word vocabulary
  followed by the K k-means image codes; image positions hold code ids, trained with next-token loss on
  image and text tokens (it generates images and text).
- :class:`AdapterToyVLM` (LLaVA-like): a ``PreTrainedModel`` holding a text ``LlamaForCausalLM`` pretrained
  on text first, a small patch encoder and an MLP projector; image positions hold ``<image>`` placeholders
  whose embeddings are replaced by the projected patch features (LLaVA's merge); loss on text only.
"""

from __future__ import annotations

import numbers

import numpy as np
import torch
from torch import nn
from transformers import LlamaConfig, LlamaForCausalLM, PretrainedConfig, PreTrainedModel

from neurips25.narrow_gate.data import ATTRIBUTES, Batch, Vocab
from neurips25.narrow_gate.positions import ModalitySpans, spans_from_input_ids

CAPTION = ("colour", "shape", "size", "where")
TEXT_LEN = 5  # caption words + [eos], or question + answer + [eos] + 2 pads


def decoder_config(vocab_size: int, hidden: int = 128, layers: int = 4, heads: int = 4, max_len: int = 128,
                   attn_implementation: str = "sdpa") -> LlamaConfig:
    """The Llama decoder both toys share."""
    for name, v in (("hidden", hidden), ("layers", layers), ("heads", heads)):
        if not isinstance(v, numbers.Integral) or v < 1:
            raise ValueError(f"{name} must be a positive int; got {v!r}")
    if hidden % heads:
        raise ValueError(f"hidden {hidden} must be divisible by heads {heads}")
    return LlamaConfig(vocab_size=vocab_size, hidden_size=hidden, intermediate_size=2 * hidden,
                       num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=heads,
                       max_position_embeddings=max_len, tie_word_embeddings=True, pad_token_id=0, bos_token_id=1,
                       eos_token_id=2, attn_implementation=attn_implementation)


def text_tokens(vocab: Vocab, batch: Batch, kind: str, question: np.ndarray | None = None) -> np.ndarray:
    """(n, TEXT_LEN) text after the image: a caption, or question + answer (padded)."""
    n = len(batch)
    out = np.zeros((n, TEXT_LEN), dtype=np.int64)
    if kind == "caption":
        for j, a in enumerate(CAPTION):
            out[:, j] = np.array(vocab.answer_ids(a))[batch.attrs[a]]
        out[:, 4] = vocab["<eos>"]
    elif kind == "qa":
        attrs = list(ATTRIBUTES)
        question = np.zeros(n, dtype=np.int64) if question is None else np.asarray(question)
        for i in range(n):
            a = attrs[int(question[i])]
            out[i, 0] = vocab[f"q-{a}"]
            out[i, 1] = vocab.answer_ids(a)[int(batch.attrs[a][i])]
        out[:, 2] = vocab["<eos>"]
    else:
        raise ValueError(f"kind must be 'caption' or 'qa'; got {kind!r}")
    return out


def image_first(vocab: Vocab, image_ids: np.ndarray, text: np.ndarray) -> torch.Tensor:
    """[bos] [boi] image ids [eoi] text -> LongTensor (n, N + 3 + TEXT_LEN)."""
    n = len(image_ids)
    head = np.tile([vocab["<bos>"], vocab["<boi>"]], (n, 1))
    return torch.from_numpy(np.concatenate([head, image_ids, np.full((n, 1), vocab["<eoi>"]), text], 1))


def caption_first(vocab: Vocab, image_ids: np.ndarray, batch: Batch) -> torch.Tensor:
    """[bos] caption [boi] image ids [eoi] [eos] (same length as :func:`image_first`)."""
    cap = text_tokens(vocab, batch, "caption")[:, :4]
    n = len(image_ids)
    seq = [np.full((n, 1), vocab["<bos>"]), cap, np.full((n, 1), vocab["<boi>"]), image_ids,
           np.tile([vocab["<eoi>"], vocab["<eos>"]], (n, 1))]
    return torch.from_numpy(np.concatenate(seq, 1))


class NativeToyVLM(LlamaForCausalLM):
    """A Chameleon-like native toy: one Llama decoder over words + K image codes.

    Build with :meth:`create`; image positions of its inputs hold ids ``n_words .. n_words + n_codes - 1``.
    """

    @classmethod
    def create(cls, n_codes: int, n_image_tokens: int, hidden: int = 128, layers: int = 4, heads: int = 4,
               attn_implementation: str = "sdpa") -> NativeToyVLM:
        vocab = Vocab()
        cfg = decoder_config(len(vocab) + n_codes, hidden, layers, heads, max_len=n_image_tokens + 16,
                             attn_implementation=attn_implementation)
        cfg.narrow_gate_n_words, cfg.narrow_gate_n_codes = len(vocab), int(n_codes)
        cfg.narrow_gate_n_image = int(n_image_tokens)
        return cls(cfg)

    @property
    def vocab(self) -> Vocab:
        return Vocab()

    @property
    def image_token_ids(self) -> range:
        w = self.config.narrow_gate_n_words
        return range(w, w + self.config.narrow_gate_n_codes)

    def spans(self, input_ids: torch.Tensor) -> ModalitySpans:
        v = self.vocab
        return spans_from_input_ids(input_ids, self.image_token_ids, boi_id=v["<boi>"], eoi_id=v["<eoi>"],
                                    ignore_ids=[v["<bos>"], v["<pad>"]])

    def inputs(self, codes: np.ndarray, text: np.ndarray) -> dict:
        """Model inputs for image-first sequences from k-means codes (n, N) and text (n, TEXT_LEN)."""
        return {"input_ids": image_first(self.vocab, codes + self.config.narrow_gate_n_words, text)}


class AdapterToyConfig(PretrainedConfig):
    """Config of :class:`AdapterToyVLM`: the text decoder's ``LlamaConfig`` plus the vision side."""

    model_type = "narrow_gate_adapter_toy"
    sub_configs = {"text_config": LlamaConfig}

    def __init__(self, text_config=None, patch_dim: int = 27, n_patches: int = 64, vision_dim: int = 64,
                 image_token_id: int = 5, **kwargs):
        if isinstance(text_config, dict):
            text_config = LlamaConfig(**text_config)
        self.text_config = text_config if text_config is not None else decoder_config(len(Vocab()))
        self.patch_dim, self.n_patches, self.vision_dim = int(patch_dim), int(n_patches), int(vision_dim)
        self.image_token_id = int(image_token_id)
        super().__init__(**kwargs)


class PatchEncoder(nn.Module):
    """A one-block ViT over raw patches: per-channel pixel standardisation (the image processor's
    ``(x - mean) / std``, as CLIP's), linear embedding + learned positions + a transformer encoder layer.

    ``pixel_mean`` / ``pixel_std`` (one value per RGB channel) are buffers, set from training images by
    :meth:`fit_pixel_norm`; without the standardisation the raw [0, 1] pixels of a mostly dark image give
    features dominated by the embedding bias and the adapter does not train (measured: chance accuracy).
    """

    def __init__(self, patch_dim: int, n_patches: int, dim: int):
        super().__init__()
        if patch_dim % 3:
            raise ValueError(f"patch_dim must be patch * patch * 3 (RGB); got {patch_dim}")
        self.embed = nn.Linear(patch_dim, dim)
        self.pos = nn.Parameter(torch.randn(n_patches, dim) * 0.02)
        self.block = nn.TransformerEncoderLayer(dim, 4, 2 * dim, dropout=0.0, batch_first=True, norm_first=True)
        self.register_buffer("pixel_mean", torch.zeros(3))
        self.register_buffer("pixel_std", torch.ones(3))

    @torch.no_grad()
    def fit_pixel_norm(self, pixels) -> None:
        """Per-channel mean and std from patches (n, N, patch_dim) or images (n, H, W, 3)."""
        x = torch.as_tensor(np.asarray(pixels), dtype=torch.float32).reshape(-1, 3)
        self.pixel_mean.copy_(x.mean(0))
        self.pixel_std.copy_(x.std(0).clamp_min(1e-3))

    def forward(self, x):
        shape = x.shape
        x = ((x.reshape(*shape[:-1], -1, 3) - self.pixel_mean) / self.pixel_std).reshape(shape)
        return self.block(self.embed(x) + self.pos)


class AdapterToyVLM(PreTrainedModel):
    """A LLaVA-like adapter toy: text LM + patch encoder + MLP projector, image features merged at ``<image>``."""

    config_class = AdapterToyConfig
    base_model_prefix = "narrow_gate_adapter"
    _supports_attention_backend = True
    _supports_sdpa = True

    def __init__(self, config: AdapterToyConfig):
        super().__init__(config)
        h = config.text_config.hidden_size
        self.language_model = LlamaForCausalLM(config.text_config)
        self.vision = PatchEncoder(config.patch_dim, config.n_patches, config.vision_dim)
        self.projector = nn.Sequential(nn.Linear(config.vision_dim, h), nn.GELU(), nn.Linear(h, h))
        self.post_init()
        # the LM keeps HF's std-0.02 init; the vision side gets PyTorch's default (fan-in) init: with std 0.02 the
        # projected features are ~1e-3 and nearly equal across images, and training collapses to a constant bias
        for mod in [*self.vision.modules(), *self.projector.modules()]:
            if hasattr(mod, "reset_parameters") and mod is not self.vision.block:
                mod.reset_parameters()
        self.vision.block.self_attn._reset_parameters()

    @classmethod
    def create(cls, patch_dim: int, n_image_tokens: int, hidden: int = 128, layers: int = 4, heads: int = 4,
               attn_implementation: str = "sdpa") -> AdapterToyVLM:
        vocab = Vocab()
        text = decoder_config(len(vocab), hidden, layers, heads, max_len=n_image_tokens + 16,
                              attn_implementation=attn_implementation)
        return cls(AdapterToyConfig(text, patch_dim=patch_dim, n_patches=n_image_tokens,
                                    image_token_id=vocab["<image>"]))

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, std=0.02)
            if module.bias is not None:
                nn.init.zeros_(module.bias)

    @property
    def vocab(self) -> Vocab:
        return Vocab()

    def get_decoder(self):
        return self.language_model.model

    def get_input_embeddings(self):
        return self.language_model.get_input_embeddings()

    def spans(self, input_ids: torch.Tensor) -> ModalitySpans:
        v = self.vocab
        return spans_from_input_ids(input_ids, self.config.image_token_id, boi_id=v["<boi>"], eoi_id=v["<eoi>"],
                                    ignore_ids=[v["<bos>"], v["<pad>"]])

    def inputs(self, patch_values: np.ndarray, text: np.ndarray) -> dict:
        """Model inputs for image-first sequences from patches (n, N, patch_dim) and text (n, TEXT_LEN)."""
        n, N, _ = patch_values.shape
        ids = image_first(self.vocab, np.full((n, N), self.config.image_token_id), text)
        return {"input_ids": ids, "pixel_values": torch.from_numpy(np.ascontiguousarray(patch_values))}

    def merge(self, input_ids: torch.Tensor, pixel_values: torch.Tensor | None) -> torch.Tensor:
        emb = self.get_input_embeddings()(input_ids)
        where = input_ids == self.config.image_token_id
        if pixel_values is None:
            if bool(where.any()):
                raise ValueError("input_ids hold <image> placeholders but pixel_values is None")
            return emb
        if pixel_values.ndim != 3 or pixel_values.shape[-1] != self.config.patch_dim:
            raise ValueError(f"pixel_values must have shape (batch, n_patches, {self.config.patch_dim}); got "
                             f"{tuple(pixel_values.shape)}")
        feats = self.projector(self.vision(pixel_values.to(emb.dtype)))
        if int(where.sum()) != feats.shape[0] * feats.shape[1]:
            raise ValueError(f"input_ids hold {int(where.sum())} <image> placeholders but pixel_values give "
                             f"{feats.shape[0] * feats.shape[1]} image features")
        emb = emb.clone()
        emb[where] = feats.reshape(-1, feats.shape[-1])
        return emb

    def forward(self, input_ids=None, pixel_values=None, attention_mask=None, labels=None, **kwargs):
        return self.language_model(inputs_embeds=self.merge(input_ids, pixel_values), attention_mask=attention_mask,
                                   labels=labels, **kwargs)
