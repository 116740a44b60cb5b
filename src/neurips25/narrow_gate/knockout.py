r"""Attention knockout: remove chosen query->key edges of the attention matrix in chosen layers.

The paper's causal test (Sec. 4; official ``ablate_attn_mat_hook``) zeroes entries :math:`a^{l,h}_{qk}` of the
post-softmax attention matrix for queries :math:`q \in Q` and keys :math:`k \in K` in every head of the layers
:math:`l \in \mathcal{L}`, without renormalising the rows::

    weights = softmax(q k^T * scale + mask)            # eager attention
    weights[:, :, Q, K] = 0                             # mode="zero_post_softmax" (the paper's)
    scores[:, :, Q, K] = -inf before the softmax        # mode="mask_pre_softmax" (rows renormalised)

It is implemented as a Hugging Face attention function registered under ``"narrow_gate_knockout"`` with
``AttentionInterface`` (and an eager mask under the same name with ``AttentionMaskInterface``): inside
:func:`attention_knockout` the decoder's config switches to it, every attention layer dispatches to it, and
the layer index (``module.layer_idx`` / its position in the layer list) selects the edges. Layers with no
edges compute exactly the eager attention. Models whose attention does not dispatch through the interface
fall back to swapping their module's ``eager_attention_forward`` for the duration of the context.
"""

from __future__ import annotations

import contextlib
import numbers
import sys

import torch
from torch import nn

from neurips25.narrow_gate.layers import attention_module, decoder_layers, resolve_layers

ATTENTION_NAME = "narrow_gate_knockout"
MODES = ("zero_post_softmax", "mask_pre_softmax")

#: id(attention module) -> list of (queries, keys, mode) active on it
_ACTIVE: dict[int, list[tuple]] = {}


def _position_mask(spec, batch: int, length: int, name: str) -> torch.Tensor:
    """(batch or 1, length) bool mask from positions, 'all' or a (batch, seq) bool tensor."""
    if isinstance(spec, str):
        return torch.ones(1, length, dtype=torch.bool)
    if isinstance(spec, torch.Tensor) and spec.dtype == torch.bool:
        if spec.ndim == 1:
            spec = spec[None]
        if spec.ndim != 2 or spec.shape[-1] != length or spec.shape[0] not in (1, batch):
            raise ValueError(f"{name} mask must have shape (batch, seq) = ({batch}, {length}); got {tuple(spec.shape)}")
        return spec
    mask = torch.zeros(1, length, dtype=torch.bool)
    if spec:
        pos = torch.tensor(spec)
        if int(pos.max()) >= length:
            raise ValueError(f"{name} position {int(pos.max())} is outside the sequence of length {length}")
        mask[0, pos] = True
    return mask


def _edges(specs, batch: int, q_len: int, k_len: int, device) -> dict[str, torch.Tensor | None]:
    """Combined (b, q_len, k_len) edge masks per mode for the current call (queries are the last q_len)."""
    out = {m: None for m in MODES}
    for queries, keys, mode in specs:
        q = _position_mask(queries, batch, k_len, "queries")[:, k_len - q_len:]
        k = _position_mask(keys, batch, k_len, "keys")
        e = (q[:, :, None] & k[:, None, :]).to(device)
        out[mode] = e if out[mode] is None else (out[mode] | e)
    return out


def _layer_index(module: nn.Module) -> int | None:
    idx = getattr(module, "layer_idx", None)
    return int(idx) if isinstance(idx, numbers.Integral) else None


def knockout_attention_forward(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
    """Eager attention with the active knockouts of ``module`` applied (the registered attention function).

    Shapes as in transformers' ``eager_attention_forward``: query (b, h, q, d), key / value (b, h_kv, k, d),
    additive ``attention_mask`` (b, 1, q, k). Returns (attn_output (b, q, h, d), attn_weights (b, h, q, k)).
    """
    n_rep = query.shape[1] // key.shape[1]
    if n_rep > 1:
        key = key.repeat_interleave(n_rep, dim=1)
        value = value.repeat_interleave(n_rep, dim=1)
    if scaling is None:
        scaling = query.shape[-1] ** -0.5
    attn_weights = torch.matmul(query, key.transpose(2, 3)) * scaling
    if attention_mask is not None:
        attn_weights = attn_weights + attention_mask
    specs = _ACTIVE.get(id(module))
    edges = _edges(specs, query.shape[0], query.shape[2], key.shape[2], query.device) if specs else None
    if edges is not None and edges["mask_pre_softmax"] is not None:
        attn_weights = attn_weights.masked_fill(edges["mask_pre_softmax"][:, None], torch.finfo(attn_weights.dtype).min)
    attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query.dtype)
    if edges is not None and edges["zero_post_softmax"] is not None:
        attn_weights = attn_weights.masked_fill(edges["zero_post_softmax"][:, None], 0.0)
    attn_weights = nn.functional.dropout(attn_weights, p=dropout, training=module.training)
    attn_output = torch.matmul(attn_weights, value)
    attn_output = attn_output.transpose(1, 2).contiguous()
    return attn_output, attn_weights


_REGISTERED = False


def register_knockout_attention() -> str:
    """Register the knockout attention (and an eager mask) with transformers under ``ATTENTION_NAME``."""
    global _REGISTERED
    if not _REGISTERED:
        from transformers import AttentionInterface

        AttentionInterface.register(ATTENTION_NAME, knockout_attention_forward)
        try:
            from transformers.masking_utils import AttentionMaskInterface, eager_mask

            AttentionMaskInterface.register(ATTENTION_NAME, eager_mask)
        except ImportError:  # older transformers build the eager mask for any non-sdpa name
            pass
        _REGISTERED = True
    return ATTENTION_NAME


def _dispatches_through_interface(attn: nn.Module) -> bool:
    mod = sys.modules.get(type(attn).__module__)
    return mod is not None and hasattr(mod, "ALL_ATTENTION_FUNCTIONS") and hasattr(attn, "config")


def _check_positions(value, name: str):
    if isinstance(value, str):
        if value != "all":
            raise ValueError(f"{name} must be 'all', positions or a (batch, seq) bool mask; got {value!r}")
        return value
    if isinstance(value, torch.Tensor) and value.dtype == torch.bool:
        return value.detach().cpu()
    if isinstance(value, numbers.Integral):
        value = [value]
    if isinstance(value, torch.Tensor):
        value = value.reshape(-1).tolist()
    out = []
    for v in value:
        if not isinstance(v, numbers.Integral) or isinstance(v, bool) or v < 0:
            raise ValueError(f"{name} must hold non-negative integer positions; got {v!r}")
        out.append(int(v))
    return tuple(sorted(set(out)))


@contextlib.contextmanager
def attention_knockout(model: nn.Module, queries, keys, layers="all", mode: str = "zero_post_softmax",
                       backend: str = "auto"):
    """Knock out attention from ``queries`` to ``keys`` in ``layers`` (all heads) while the context is open.

    Parameters
    ----------
    model : nn.Module
        A Hugging Face decoder or VLM (Llama, Chameleon, Llava's language model, the toys here).
    queries, keys : "all", iterable of int, or bool tensor (batch, seq)
        Query rows and key columns whose edges are removed; positions index the merged sequence.
    layers : "all", int or iterable of int
        Decoder layers to intervene on.
    mode : {"zero_post_softmax", "mask_pre_softmax"}
        Zero the post-softmax weights without renormalising (the paper's hook), or mask the logits.
    backend : {"auto", "interface", "eager_patch"}
        The registered attention function, or swapping the modeling module's ``eager_attention_forward``.

    The model (its config's attention implementation, its modules) is restored on exit, also after an
    exception. Example::

        with attention_knockout(model, queries=spans.text_after_image(), keys=[spans.eoi], layers="all"):
            logits = model(input_ids).logits
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}; got {mode!r}")
    if backend not in ("auto", "interface", "eager_patch"):
        raise ValueError(f"backend must be 'auto', 'interface' or 'eager_patch'; got {backend!r}")
    queries = _check_positions(queries, "queries")
    keys = _check_positions(keys, "keys")
    blocks = decoder_layers(model)
    idx = resolve_layers(layers, len(blocks))
    attns = [attention_module(b) for b in blocks]
    for i, a in enumerate(attns):
        if _layer_index(a) is not None and _layer_index(a) != i:
            raise ValueError(f"attention module of decoder layer {i} reports layer_idx {_layer_index(a)}")
    if backend == "auto":
        backend = "interface" if all(_dispatches_through_interface(a) for a in attns) else "eager_patch"
    saved_configs, saved_funcs = [], []
    for i in idx:
        _ACTIVE.setdefault(id(attns[i]), []).append((queries, keys, mode))
    try:
        if backend == "interface":
            name = register_knockout_attention()
            seen = {}
            for a in attns:
                cfg = getattr(a, "config", None)
                if cfg is None:
                    raise ValueError(f"attention module {type(a).__name__} has no config; use backend='eager_patch'")
                seen[id(cfg)] = cfg
            for cfg in seen.values():
                saved_configs.append((cfg, cfg._attn_implementation))
                cfg._attn_implementation = name
        else:
            mods = {type(a).__module__: sys.modules.get(type(a).__module__) for a in attns}
            for mname, mod in mods.items():
                if mod is None or not hasattr(mod, "eager_attention_forward"):
                    raise ValueError(f"cannot knock out attention in {mname}: it neither dispatches through "
                                     "transformers' AttentionInterface nor defines eager_attention_forward")
                saved_funcs.append((mod, mod.eager_attention_forward))
                mod.eager_attention_forward = knockout_attention_forward
            for a in attns:
                cfg = getattr(a, "config", None)
                if cfg is not None and getattr(cfg, "_attn_implementation", "eager") != "eager":
                    saved_configs.append((cfg, cfg._attn_implementation))
                    cfg._attn_implementation = "eager"
        yield
    finally:
        for cfg, impl in reversed(saved_configs):
            cfg._attn_implementation = impl
        for mod, fn in reversed(saved_funcs):
            mod.eager_attention_forward = fn
        for i in idx:
            lst = _ACTIVE.get(id(attns[i]), [])
            if lst:
                lst.pop()
            if not lst:
                _ACTIVE.pop(id(attns[i]), None)
