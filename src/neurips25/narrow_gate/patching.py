"""Activation patching at one token position (the paper's steering test, Sec. 4.3).

Base run on an image of class A, source run on an image of class B: the residual of the source run at the
[EOI] position after layer ``l`` overwrites the base run's (``patch_residual``), or the hidden state entering
attention in layers ``l..L`` is overwritten (``patch_attention_input``); the next-token prediction then tells
whether the image semantics travelled through that single position.
"""

from __future__ import annotations

import contextlib
import numbers

import torch
from torch import nn

from neurips25.narrow_gate.knockout import cached_length
from neurips25.narrow_gate.layers import attention_module, decoder_layers, resolve_layers
from neurips25.narrow_gate.recorder import ResidualRecorder


def _source_value(source, layer: int, position: int, site: str) -> torch.Tensor:
    if isinstance(source, ResidualRecorder):
        if source.site != site:
            raise ValueError(f"source recorder holds site {source.site!r}; this patch needs site {site!r}")
        return source.at(layer, position)
    if isinstance(source, torch.Tensor):
        if source.ndim not in (1, 2):
            raise ValueError(f"source tensor must have shape (batch, d) or (d,); got {tuple(source.shape)}")
        if not torch.isfinite(source).all():
            raise ValueError("source tensor has NaN or inf values")
        return source
    raise TypeError(f"source must be a ResidualRecorder or a tensor; got {type(source).__name__}")


def _write(h: torch.Tensor, position: int, value: torch.Tensor, past: int | None = None) -> torch.Tensor:
    """Write ``value`` at absolute ``position`` of this call's rows (``past`` tokens are already cached).

    Under ``generate`` a position in the cache was patched when it was computed (its keys and values carry the
    patch); a position not reached yet is patched when it arrives. Without a cache a position past the end is
    an error, not a silent no-op.
    """
    if past is None:  # not told about a cache: only a longer-than-position call can hold it
        past = 0 if h.shape[1] > position else None
        if past is None:
            return h
    row = position - past
    if row < 0:
        return h
    if row >= h.shape[1]:
        if past == 0:
            raise ValueError(f"position {position} is outside the sequence of length {h.shape[1]}")
        return h
    position = row
    value = value.to(h.dtype).to(h.device)
    if value.ndim == 2 and value.shape[0] not in (1, h.shape[0]):
        raise ValueError(f"source batch {value.shape[0]} does not match the run's batch {h.shape[0]}")
    if value.shape[-1] != h.shape[-1]:
        raise ValueError(f"source width {value.shape[-1]} does not match the hidden size {h.shape[-1]}")
    h = h.clone()
    h[:, position] = value
    return h


def _check_position(position, name="position"):
    if not isinstance(position, numbers.Integral) or isinstance(position, bool) or position < 0:
        raise ValueError(f"{name} must be a non-negative int; got {position!r}")
    return int(position)


@contextlib.contextmanager
def patch_residual(model: nn.Module, position: int, layer: int, source):
    """Overwrite the residual after decoder ``layer`` at ``position`` with ``source``'s value.

    ``source`` is a :class:`ResidualRecorder` of the source run (site "output", recording ``layer``) or a
    tensor (batch, d) / (d,).
    """
    position = _check_position(position)
    blocks = decoder_layers(model)
    (layer,) = resolve_layers(layer, len(blocks), "layer")
    value = _source_value(source, layer, position, "output")

    def fn(module, args, kwargs, output):
        past = cached_length(kwargs, layer)
        h = output[0] if isinstance(output, (tuple, list)) else output
        if past is not None and past > 0:
            past -= h.shape[1]  # this layer has already cached the call's own tokens
        h = _write(h, position, value, past)
        return (h, *output[1:]) if isinstance(output, (tuple, list)) else h
    handle = blocks[layer].register_forward_hook(fn, with_kwargs=True)
    try:
        yield
    finally:
        handle.remove()


@contextlib.contextmanager
def patch_attention_input(model: nn.Module, position: int, layers, source):
    """Overwrite the hidden state entering attention at ``position`` in every layer of ``layers``.

    ``source`` is a :class:`ResidualRecorder` with ``site="attn_input"`` recording those layers.
    """
    position = _check_position(position)
    blocks = decoder_layers(model)
    idx = resolve_layers(layers, len(blocks))
    values = {i: _source_value(source, i, position, "attn_input") for i in idx}
    handles = []

    def make(i):
        def fn(module, args, kwargs):
            past = cached_length(kwargs, i)  # this layer has not cached the call yet
            if "hidden_states" in kwargs:
                kwargs = dict(kwargs, hidden_states=_write(kwargs["hidden_states"], position, values[i], past))
                return args, kwargs
            return (_write(args[0], position, values[i], past), *args[1:]), kwargs
        return fn
    try:
        for i in idx:
            handles.append(attention_module(blocks[i]).register_forward_pre_hook(make(i), with_kwargs=True))
        yield
    finally:
        for h in handles:
            h.remove()
