r"""Attention knockout: remove chosen query->key edges of the attention matrix in chosen layers.

The paper's causal test (Sec. 4; official ``ablate_attn_mat_hook``) removes entries :math:`a^{l,h}_{qk}` of the
attention matrix for queries :math:`q \in Q` and keys :math:`k \in K` in every head of the layers
:math:`l \in \mathcal{L}`. Two interventions::

    scores[:, :, Q, K] = -inf before the softmax        # mode="mask_pre_softmax" (default; rows renormalised)
    weights = softmax(scores); weights[:, :, Q, K] = 0  # mode="zero_post_softmax" (the paper's hook, no renorm)

Only ``mask_pre_softmax`` is an information block. With ``zero_post_softmax`` the row normaliser still holds
:math:`\exp(q \cdot k_j)`, so the other weights of the row depend on the knocked-out key: the token leaks
(0.02-2.5% of the signal on tiny random Llama / Llava / Chameleon / Qwen2-VL; measured in the tests).

Exactness on every class: the knockout never re-implements attention. It is a Hugging Face attention function
registered under ``"narrow_gate_knockout"`` (``AttentionInterface``; an eager mask under the same name with
``AttentionMaskInterface``) that calls the model's *own* ``eager_attention_forward`` (from the attention
module's modeling file) with every argument it was given (``softcap``, ``sinks``, ``sliding_window``,
``scaling``, ...). ``mask_pre_softmax`` adds the edges to the additive mask the model's function receives;
``zero_post_softmax`` zeroes them in the weights the model's function returns and recomputes ``weights @ V``.
A layer (or a call) with no edges returns the model's own result untouched. A class whose modeling file has no
``eager_attention_forward`` is refused by name. Models whose attention does not dispatch through the interface
fall back to swapping their module's ``eager_attention_forward`` for the duration of the context.

Positions index the whole sequence. Under ``generate`` with a KV cache a call sees only the new queries and
the cached keys (a sliding-window layer keeps only the last keys): the absolute position of every row and
column comes from the cache length read by a pre-hook on the first decoder layer. Query and key sets may be
symbolic and grow with the sequence: :class:`From` (``From(p)``: every position ``>= p``) and
:class:`Generated` (every position past the prompt: the first forward of each ``generate`` call of ``model``, of
each forward that starts an empty cache, else the first forward inside the context),
combined with ``|`` (``From(p) | [3, 4]``).
"""

from __future__ import annotations

import contextlib
import functools
import numbers
import sys

import torch
from torch import nn

from neurips25.narrow_gate.layers import attention_module, decoder_layers, resolve_layers

ATTENTION_NAME = "narrow_gate_knockout"
MODES = ("mask_pre_softmax", "zero_post_softmax")

#: id(attention module) -> list of (queries, keys, mode, state) active on it
_ACTIVE: dict[int, list[tuple]] = {}
#: modeling module name -> its own eager attention function, while the eager-patch backend has swapped it
_ORIGINAL: dict[str, object] = {}


# ----- position sets -----------------------------------------------------------------------------------
class PositionSet:
    """A set of sequence positions that may grow with the sequence (symbolic under ``generate``)."""

    def mask(self, length: int, state: _State) -> torch.Tensor:  # (1 or batch, length) bool
        raise NotImplementedError

    def __or__(self, other) -> PositionSet:
        return AnyOf(self, other)

    __ror__ = __or__


class From(PositionSet):
    """Every position ``>= start``: the text after the image *and* every token generated after it."""

    def __init__(self, start: numbers.Integral):
        if not isinstance(start, numbers.Integral) or isinstance(start, bool) or start < 0:
            raise ValueError(f"From start must be a non-negative int; got {start!r}")
        self.start = int(start)

    def mask(self, length, state):
        m = torch.zeros(1, length, dtype=torch.bool)
        m[0, self.start:] = True
        return m

    def __repr__(self):
        return f"From({self.start})"


class Generated(PositionSet):
    """Every generated position: those past the prompt.

    The prompt is reset by every ``generate`` call of the model given to :func:`attention_knockout` and by every
    forward that starts an empty cache; without either (a hand-written loop with ``use_cache=False``) it is the
    first forward inside the context.
    """

    def mask(self, length, state):
        m = torch.zeros(1, length, dtype=torch.bool)
        if state.prompt is not None:
            m[0, state.prompt:] = True
        return m

    def __repr__(self):
        return "Generated()"


class AnyOf(PositionSet):
    """The union of position sets (``a | b``)."""

    def __init__(self, *parts):
        self.parts = tuple(_check_positions(p, "queries/keys") for p in parts)

    def mask(self, length, state):
        out = None
        for p in self.parts:
            m = _position_mask(p, 1, length, "positions", state)
            out = m if out is None else (out | m)
        return out

    def __repr__(self):
        return " | ".join(map(repr, self.parts))


class _State:
    """Absolute length of the current call's sequence and the prompt length, per knockout context."""

    def __init__(self):
        self.end: int | None = None  # absolute length once the current call's tokens are in
        self.prompt: int | None = None


def _position_mask(spec, batch: int, length: int, name: str, state: _State) -> torch.Tensor:
    """(batch or 1, length) bool mask from 'all', positions, a position set or a (batch, seq) bool tensor."""
    if isinstance(spec, str):
        return torch.ones(1, length, dtype=torch.bool)
    if isinstance(spec, PositionSet):
        return spec.mask(length, state)
    if isinstance(spec, torch.Tensor) and spec.dtype == torch.bool:
        if spec.ndim == 1:
            spec = spec[None]
        if spec.ndim != 2 or spec.shape[-1] != length or spec.shape[0] not in (1, batch):
            raise ValueError(f"{name} mask must have shape (batch, seq) = ({batch}, {length}); got "
                             f"{tuple(spec.shape)} (a bool mask covers a fixed length: under generate use From(p) "
                             "or Generated())")
        return spec
    mask = torch.zeros(1, length, dtype=torch.bool)
    if spec:
        pos = torch.tensor(spec)
        if int(pos.max()) >= length:
            raise ValueError(f"{name} position {int(pos.max())} is outside the sequence of length {length}")
        mask[0, pos] = True
    return mask


def _edges(specs, batch: int, q_len: int, k_len: int, device) -> dict[str, torch.Tensor | None]:
    """Combined (b, q_len, k_len) edge masks per mode for the current call.

    Queries are the last ``q_len`` positions of the absolute sequence; keys its last ``k_len`` positions (a
    sliding-window cache) or, when the cache is longer than the sequence (a static cache), its first ones.
    """
    out = {m: None for m in MODES}
    for queries, keys, mode, state in specs:
        end = state.end if state.end is not None and state.end >= q_len else k_len
        total = max(end, k_len)
        q = _position_mask(queries, batch, total, "queries", state)[:, end - q_len:end]
        k0 = max(end - k_len, 0)
        k = _position_mask(keys, batch, total, "keys", state)[:, k0:k0 + k_len]
        e = (q[:, :, None] & k[:, None, :])
        if not bool(e.any()):
            continue
        e = e.to(device)
        out[mode] = e if out[mode] is None else (out[mode] | e)
    return out


def _layer_index(module: nn.Module) -> int | None:
    idx = getattr(module, "layer_idx", None)
    return int(idx) if isinstance(idx, numbers.Integral) else None


def own_eager_attention(module: nn.Module):
    """The eager attention function of ``module``'s own modeling file (refused by class name when absent)."""
    name = type(module).__module__
    fn = _ORIGINAL.get(name)
    if fn is None:
        fn = getattr(sys.modules.get(name), "eager_attention_forward", None)
    if fn is None or fn is knockout_attention_forward:
        raise ValueError(f"attention knockout does not support {type(module).__name__} ({name}): its modeling file "
                         "has no eager_attention_forward to call, so the knockout could not be exact")
    return fn


def _repeat(value: torch.Tensor, n_heads: int) -> torch.Tensor:
    n_rep = n_heads // value.shape[1]
    return value.repeat_interleave(n_rep, dim=1) if n_rep > 1 else value


def knockout_attention_forward(module, query, key, value, attention_mask, *args, **kwargs):
    """The registered attention function: the model's own eager attention with the active knockouts.

    Shapes as in transformers' ``eager_attention_forward``: query (b, h, q, d), key / value (b, h_kv, k, d),
    additive ``attention_mask`` (b, 1, q, k). Every other argument (``scaling``, ``dropout``, ``softcap``,
    ``sinks``, ``sliding_window``, ...) is passed on untouched. Returns (attn_output (b, q, h, d), attn_weights).
    """
    own = own_eager_attention(module)
    specs = _ACTIVE.get(id(module))
    edges = _edges(specs, query.shape[0], query.shape[2], key.shape[2], query.device) if specs else None
    pre = None if edges is None else edges["mask_pre_softmax"]
    post = None if edges is None else edges["zero_post_softmax"]
    if pre is not None:
        b, q_len, k_len = query.shape[0], query.shape[2], key.shape[2]
        if attention_mask is None:
            attention_mask = torch.zeros(b, 1, q_len, k_len, dtype=query.dtype, device=query.device)
        else:
            attention_mask = attention_mask[:, :, :, :k_len]
        if attention_mask.dtype == torch.bool:  # True = attend
            attention_mask = attention_mask & ~pre[:, None]
        else:
            attention_mask = attention_mask.masked_fill(pre[:, None], torch.finfo(attention_mask.dtype).min)
    out, weights = own(module, query, key, value, attention_mask, *args, **kwargs)
    if post is not None:
        if weights is None:
            raise ValueError(f"{type(module).__name__}'s eager attention returned no weights; zero_post_softmax "
                             "needs them (use mode='mask_pre_softmax')")
        weights = weights.masked_fill(post[:, None], 0.0)
        out = torch.matmul(weights, _repeat(value, weights.shape[1]).to(weights.dtype)).transpose(1, 2).contiguous()
        out = out.to(query.dtype)
    return out, weights


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
    if isinstance(value, PositionSet):
        return value
    if isinstance(value, str):
        if value != "all":
            raise ValueError(f"{name} must be 'all', positions, From(p) / Generated() or a (batch, seq) bool mask; "
                             f"got {value!r}")
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


def cached_length(kwargs: dict, layer: int = 0) -> int | None:
    """Length held by the cache of ``layer`` (0 without a cache); None when the call is not told about a cache."""
    names = [k for k in ("past_key_values", "past_key_value", "layer_past", "cache") if k in kwargs]
    names += [k for k, v in kwargs.items() if k not in names and hasattr(v, "get_seq_length")]
    for k in names:
        past = kwargs[k]
        if past is None:
            return 0
        if hasattr(past, "get_seq_length"):
            try:
                return int(past.get_seq_length(layer))
            except TypeError:
                return int(past.get_seq_length())
    return None


def _has_cache(kwargs: dict) -> bool:
    """Whether the call carries a cache object (a fresh one has length 0), not merely ``past_key_values=None``."""
    return any(hasattr(v, "get_seq_length") for v in kwargs.values())


@contextlib.contextmanager
def attention_knockout(model: nn.Module, queries, keys, layers="all", mode: str = "mask_pre_softmax",
                       backend: str = "auto"):
    """Knock out attention from ``queries`` to ``keys`` in ``layers`` (all heads) while the context is open.

    Parameters
    ----------
    model : nn.Module
        A Hugging Face decoder or VLM (Llama, Mistral, Qwen2, Gemma2, Phi3, GPT-2, Chameleon, Llava's and
        Qwen2-VL's language models, the toys here).
    queries, keys : "all", iterable of int, From(p), Generated(), a union of those, or a bool tensor (batch, seq)
        Query rows and key columns whose edges are removed; positions index the merged sequence. Under
        ``generate`` use :class:`From` / :class:`Generated` for sets that grow with the generated tokens (a
        tuple of positions stays those positions).
    layers : "all", int or iterable of int
        Decoder layers to intervene on.
    mode : {"mask_pre_softmax", "zero_post_softmax"}
        Mask the logits (default: an information block), or zero the post-softmax weights without
        renormalising (the paper's hook; the key still leaks through the row normaliser).
    backend : {"auto", "interface", "eager_patch"}
        The registered attention function, or swapping the modeling module's ``eager_attention_forward``.

    Notes
    -----
    The model (its config's attention implementation, its modules) is restored on exit, also after an
    exception. Example::

        with attention_knockout(model, queries=From(spans.eoi + 1), keys=[spans.eoi], layers="all"):
            out = model.generate(input_ids, max_new_tokens=20)
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}; got {mode!r}")
    if backend not in ("auto", "interface", "eager_patch"):
        raise ValueError(f"backend must be 'auto', 'interface' or 'eager_patch'; got {backend!r}")
    queries = _check_positions(queries, "queries")
    keys = _check_positions(keys, "keys")
    blocks = decoder_layers(model)
    idx = resolve_layers(layers, len(blocks))
    if not idx:
        raise ValueError("layers is empty: name at least one decoder layer (or 'all')")
    attns = [attention_module(b) for b in blocks]
    for i, a in enumerate(attns):
        if _layer_index(a) is not None and _layer_index(a) != i:
            raise ValueError(f"attention module of decoder layer {i} reports layer_idx {_layer_index(a)}")
    for a in attns:
        own_eager_attention(a)  # refuse unsupported classes before touching the model
    if backend == "auto":
        backend = "interface" if all(_dispatches_through_interface(a) for a in attns) else "eager_patch"
    state = _State()

    def track(module, args, kwargs):
        h = args[0] if args else kwargs.get("hidden_states")
        past = cached_length(kwargs, 0)  # layer 0 has not cached this call yet
        if isinstance(h, torch.Tensor) and h.ndim >= 2 and past is not None:
            state.end = past + h.shape[1]
            # a forward that starts an empty cache starts a new sequence: it is that sequence's prompt
            if state.prompt is None or (past == 0 and _has_cache(kwargs)):
                state.prompt = state.end

    own_generate = vars(model).get("generate")
    bound = getattr(model, "generate", None)

    @functools.wraps(bound)
    def generate(*args, **kwargs):  # every generate call has its own prompt (also with use_cache=False)
        state.prompt = None
        return bound(*args, **kwargs)

    saved_configs, saved_funcs = [], []
    hook = blocks[0].register_forward_pre_hook(track, with_kwargs=True)
    for i in idx:
        _ACTIVE.setdefault(id(attns[i]), []).append((queries, keys, mode, state))
    try:
        if callable(bound):
            model.generate = generate
        if backend == "interface":
            name = register_knockout_attention()
            seen = {}
            for a in attns:
                seen[id(a.config)] = a.config
            for cfg in seen.values():
                saved_configs.append((cfg, cfg._attn_implementation))
                cfg._attn_implementation = name
        else:
            mods = {type(a).__module__: sys.modules.get(type(a).__module__) for a in attns}
            for mname, mod in mods.items():
                if mname in _ORIGINAL:  # an outer eager-patch context already swapped it
                    continue
                saved_funcs.append((mname, mod, mod.eager_attention_forward))
                _ORIGINAL[mname] = mod.eager_attention_forward
                mod.eager_attention_forward = knockout_attention_forward
            for a in attns:
                cfg = getattr(a, "config", None)
                if cfg is not None and getattr(cfg, "_attn_implementation", "eager") != "eager":
                    saved_configs.append((cfg, cfg._attn_implementation))
                    cfg._attn_implementation = "eager"
        yield
    finally:
        hook.remove()
        if own_generate is not None:
            model.generate = own_generate
        else:
            vars(model).pop("generate", None)
        for cfg, impl in reversed(saved_configs):
            cfg._attn_implementation = impl
        for mname, mod, fn in reversed(saved_funcs):
            mod.eager_attention_forward = fn
            _ORIGINAL.pop(mname, None)
        for i in idx:
            lst = _ACTIVE.get(id(attns[i]), [])
            if lst:
                lst.pop()
            if not lst:
                _ACTIVE.pop(id(attns[i]), None)
