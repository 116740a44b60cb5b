"""LayeredRefAttention in a stock diffusers transformer: one processor per layer, and their weights reloaded.

``model.set_attn_processor(LayeredRefAttnProcessor(dim))`` installs *one* instance in every attention layer, so
the (gamma, beta) modulation is tied across layers and ``save_pretrained`` refuses the shared tensors. The
installer builds one processor per layer (the processor warns when it finds itself shared).

Each processor is an ``nn.Module`` set as ``attn.processor``, so ``save_pretrained`` writes its weights under
``<layer>.processor.*``. A stock ``FluxTransformer2DModel.from_pretrained`` builds plain ``FluxAttnProcessor`` s
and drops those weights (a single "weights not used" log line): :func:`load_layered_ref_attention` loads the
model, rebuilds the processors of the saved layers (their mode read from the saved keys) and restores their
weights by value.

Accelerate hooks (``enable_model_cpu_offload`` puts one on the transformer) are left in place: installing
touches only ``attn.processor``. Install before ``enable_sequential_cpu_offload`` (its per-module hooks do not
cover modules added afterwards).
"""

from __future__ import annotations

import json
import os
import warnings

import torch

from neurips25.shoefit.attention import MODES, LayeredRefAttnProcessor

_SUFFIX = ".processor"
_WEIGHTS = "diffusion_pytorch_model"


def _attention(transformer, name: str):
    return transformer.get_submodule(name[: -len(_SUFFIX)])


def _place(proc: LayeredRefAttnProcessor, attn) -> LayeredRefAttnProcessor:
    w = attn.to_q.weight
    device = torch.device("cpu") if w.device.type == "meta" else w.device
    return proc.to(device=device, dtype=w.dtype).train(attn.training)


def _layer_names(transformer, layers):
    procs = getattr(transformer, "attn_processors", None)
    if not isinstance(procs, dict):
        raise ValueError(f"transformer must be a diffusers model with attention processors (attn_processors, "
                         f"set_attn_processor), e.g. FluxTransformer2DModel; got {type(transformer).__name__}")
    names = list(procs)
    if layers is None:
        return names
    if isinstance(layers, str) or not all(isinstance(n, str) for n in layers):
        raise ValueError("layers must be a list of processor names from transformer.attn_processors")
    unknown = [n for n in layers if n not in procs]
    if unknown:
        raise ValueError(f"layers {unknown} are not attention processors of the transformer; names look like "
                         f"{names[:2]}")
    return list(layers)


def install_layered_ref_attention(transformer, mode: str = "modulate", one_way: bool = False,
                                  layers=None) -> dict[str, LayeredRefAttnProcessor]:
    """Install one fresh :class:`LayeredRefAttnProcessor` in each attention layer; returns ``{name: processor}``.

    ``layers``: names from ``transformer.attn_processors`` (default: all); the other layers keep their
    processors. Each processor takes the width of its own attention and the dtype / device of its weights.
    At initialisation the model computes what it computed before (zero-initialised modulation).
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}; got {mode!r}")
    names = _layer_names(transformer, layers)
    procs = {}
    for name in names:
        attn = _attention(transformer, name)
        procs[name] = _place(LayeredRefAttnProcessor(attn.out_dim, mode, one_way=one_way), attn)
    current = dict(transformer.attn_processors)
    current.update(procs)
    transformer.set_attn_processor(current)  # diffusers pops the entries of the dict it is given
    return procs


def _weight_files(path: str, variant) -> list[str]:
    stem = _WEIGHTS if variant is None else f"{_WEIGHTS}.{variant}"
    single, index = os.path.join(path, f"{stem}.safetensors"), os.path.join(path, f"{stem}.safetensors.index.json")
    if os.path.isfile(single):
        return [single]
    if os.path.isfile(index):
        with open(index) as f:
            shards = sorted(set(json.load(f)["weight_map"].values()))
        return [os.path.join(path, s) for s in shards]
    if os.path.isfile(os.path.join(path, f"{stem}.bin")):
        return [os.path.join(path, f"{stem}.bin")]
    raise ValueError(f"no {stem}.safetensors, sharded index or .bin in {path!r} (a local save_pretrained "
                     f"directory is required)")


def _processor_state(files: list[str]) -> tuple[dict[str, dict[str, torch.Tensor]], set[str]]:
    """``{layer name: processor state dict}`` and the other keys of the checkpoint (read lazily)."""
    from safetensors import safe_open

    per_layer, others = {}, set()
    for file in files:
        if file.endswith(".bin"):
            state = torch.load(file, map_location="cpu", weights_only=True)
            items = ((k, lambda k=k, s=state: s[k]) for k in state)
        else:
            handle = safe_open(file, framework="pt")
            items = ((k, lambda k=k, h=handle: h.get_tensor(k)) for k in handle.keys())
        for key, get in items:
            head, sep, tail = key.partition(_SUFFIX + ".")
            if sep:
                per_layer.setdefault(head + _SUFFIX, {})[tail] = get()
            else:
                others.add(key)
    return per_layer, others


def _mode_of(name: str, state: dict) -> str:
    keys = set(state)
    if keys == {"to_mod.weight", "to_mod.bias"}:
        return "modulate"
    if keys == {"to_bg.weight", "to_bg.bias", "gate"}:
        return "gated_add"
    raise ValueError(f"saved processor weights of {name} have keys {sorted(keys)}, not a LayeredRefAttnProcessor's")


def load_layered_ref_attention(pretrained_model_name_or_path, model_cls=None, *, one_way: bool = False,
                               subfolder: str | None = None, variant: str | None = None, **from_pretrained_kwargs):
    """``model_cls.from_pretrained(path, ...)`` with the saved per-layer LayeredRefAttention processors restored.

    ``model_cls`` defaults to ``FluxTransformer2DModel``; other keywords (``torch_dtype``, ...) go to its
    ``from_pretrained``. Layers saved with a processor get a fresh one of the saved mode, loaded strictly by
    value and cast to the layer's dtype / device; ``one_way`` is not a weight and is given again (default
    False, a stock FLUX's joint attention). A checkpoint with no processor weights raises. Local directories
    only (what ``save_pretrained`` wrote).
    """
    if model_cls is None:
        from diffusers import FluxTransformer2DModel as model_cls
    path = os.fspath(pretrained_model_name_or_path)
    if not os.path.isdir(path):
        raise ValueError(f"pretrained_model_name_or_path must be a local save_pretrained directory; got {path!r}")
    folder = path if subfolder is None else os.path.join(path, subfolder)
    per_layer, others = _processor_state(_weight_files(folder, variant))
    if not per_layer:
        raise ValueError(f"{folder!r} holds no LayeredRefAttention processor weights (keys '<layer>.processor.*'); "
                         f"load it with {model_cls.__name__}.from_pretrained")
    from diffusers.utils import logging as dlogging

    level = dlogging.get_verbosity()
    dlogging.set_verbosity_error()  # the stock loader's "weights not used" line is about the processors restored here
    try:
        kwargs = dict(from_pretrained_kwargs, subfolder=subfolder, variant=variant)
        model = model_cls.from_pretrained(path, **{k: v for k, v in kwargs.items() if v is not None})
    finally:
        dlogging.set_verbosity(level)
    unused = sorted(others - set(model.state_dict()))
    if unused:
        warnings.warn(f"checkpoint weights not used by {model_cls.__name__}: {unused[:5]}"
                      f"{' ...' if len(unused) > 5 else ''}", UserWarning, stacklevel=2)
    names = _layer_names(model, None)
    missing = [n for n in per_layer if n not in names]
    if missing:
        raise ValueError(f"saved processors for {missing} but {model_cls.__name__} has no such attention layers")
    procs = {}
    for name, state in per_layer.items():
        attn = _attention(model, name)
        proc = LayeredRefAttnProcessor(attn.out_dim, _mode_of(name, state), one_way=one_way)
        proc.load_state_dict(state, strict=True)
        procs[name] = _place(proc, attn)
    current = dict(model.attn_processors)
    current.update(procs)
    model.set_attn_processor(current)
    return model
