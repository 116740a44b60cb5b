"""Finding the decoder layers and their attention modules in any Hugging Face decoder or VLM."""

from __future__ import annotations

import numbers

from torch import nn


def decoder_layers(model: nn.Module) -> nn.ModuleList:
    """The decoder's layer list: ``model.get_decoder().layers``, else the largest ``layers``/``h``/``blocks`` list.

    Raises ``ValueError`` naming the model class when it has no decoder layers.
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch nn.Module; got {type(model).__name__}")
    get = getattr(model, "get_decoder", None)
    if callable(get):
        try:
            dec = get()
        except Exception:  # noqa: BLE001 - some wrappers raise when they have no decoder
            dec = None
        layers = getattr(dec, "layers", None)
        if isinstance(layers, nn.ModuleList) and len(layers) > 0:
            return layers
    best = None
    for name, mod in model.named_modules():
        if isinstance(mod, nn.ModuleList) and name.split(".")[-1] in ("layers", "h", "blocks") and len(mod) > 0:
            if best is None or len(mod) > len(best):
                best = mod
    if best is None:
        raise ValueError(f"model {type(model).__name__} has no decoder layers (looked for get_decoder().layers and a "
                         "ModuleList named layers / h / blocks)")
    return best


def attention_module(layer: nn.Module) -> nn.Module:
    """The self-attention block of one decoder layer (``self_attn``, ``attn`` or ``attention``)."""
    for name in ("self_attn", "attn", "attention", "self_attention"):
        mod = getattr(layer, name, None)
        if isinstance(mod, nn.Module):
            return mod
    raise ValueError(f"decoder layer {type(layer).__name__} has no self-attention module (self_attn / attn)")


def resolve_layers(layers, n_layers: int, name: str = "layers") -> list[int]:
    """``"all"``, an int or an iterable of ints -> a sorted list of valid layer indices (negative allowed)."""
    if isinstance(layers, str):
        if layers != "all":
            raise ValueError(f"{name} must be 'all', an int or ints; got {layers!r}")
        return list(range(n_layers))
    if isinstance(layers, numbers.Integral):
        layers = [layers]
    out = []
    for layer in layers:
        if not isinstance(layer, numbers.Integral) or isinstance(layer, bool):
            raise TypeError(f"{name} must hold ints; got {layer!r}")
        idx = int(layer) + n_layers if layer < 0 else int(layer)
        if not 0 <= idx < n_layers:
            raise ValueError(f"{name} index {int(layer)} out of range for a model with {n_layers} decoder layers")
        out.append(idx)
    return sorted(set(out))
