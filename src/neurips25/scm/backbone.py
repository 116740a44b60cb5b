"""Causal backbones for the monitor: calling convention, a tiny decoder for tests, layer truncation.

A backbone is any causal LM that, called as ``backbone(input_ids=..., attention_mask=..., cache=...,
use_cache=..., output_hidden_states=True)``, returns an output with ``last_hidden_state`` (a
``transformers`` base model such as ``LlamaModel``) or ``hidden_states`` (a ``...ForCausalLM``), and a KV
cache in ``cache`` / ``past_key_values`` for streaming.
"""

from __future__ import annotations

import copy
import numbers

import torch

from neurips25.extras import require


def final_hidden(output) -> torch.Tensor:
    """(batch, seq, hidden) final hidden states of a backbone's output; ValueError if it has none."""
    h = getattr(output, "last_hidden_state", None)
    if h is None:
        hs = getattr(output, "hidden_states", None)
        h = hs[-1] if hs else None
    if not isinstance(h, torch.Tensor) or h.ndim != 3:
        raise ValueError("`backbone` returned no hidden states: it must return an output with "
                         "`last_hidden_state` or `hidden_states` (e.g. a transformers PreTrainedModel); "
                         f"got {type(output).__name__}")
    return h


def output_cache(output):
    """The KV cache of a backbone output (``cache`` in transformers >= 5, ``past_key_values`` before)."""
    keys = output.keys() if hasattr(output, "keys") else ()
    for key in ("cache", "past_key_values"):
        if key in keys:
            return output[key]
    return getattr(output, "cache", None)


def call_backbone(backbone, input_ids, attention_mask=None, cache=None, use_cache=False):
    """Run ``backbone``; returns (final hidden states, new cache or None)."""
    kwargs = dict(input_ids=input_ids, attention_mask=attention_mask, use_cache=use_cache,
                  output_hidden_states=True)
    if cache is not None:
        kwargs["cache"] = cache
    out = backbone(**kwargs)
    return final_hidden(out), output_cache(out)


def hidden_size_of(backbone) -> int:
    """Hidden width from ``backbone.config.hidden_size``."""
    cfg = getattr(backbone, "config", None)
    size = getattr(cfg, "hidden_size", None)
    if not isinstance(size, numbers.Integral):
        raise ValueError("`backbone` has no `config.hidden_size`; pass `hidden_size=` explicitly")
    return int(size)


def tiny_decoder(vocab_size: int, hidden_size: int = 64, n_layers: int = 2, n_heads: int = 4,
                 seed: int = 0):
    """A small randomly initialised Llama decoder (``transformers.LlamaModel``) for tests and smoke runs."""
    transformers = require("transformers", "lm")
    for name, v in (("vocab_size", vocab_size), ("hidden_size", hidden_size), ("n_layers", n_layers),
                    ("n_heads", n_heads)):
        if not isinstance(v, numbers.Integral) or v < 1:
            raise ValueError(f"`{name}` must be a positive integer; got {v!r}")
    if hidden_size % n_heads:
        raise ValueError(f"`hidden_size` ({hidden_size}) must be divisible by `n_heads` ({n_heads})")
    cfg = transformers.LlamaConfig(vocab_size=int(vocab_size), hidden_size=int(hidden_size),
                                   intermediate_size=2 * int(hidden_size), num_hidden_layers=int(n_layers),
                                   num_attention_heads=int(n_heads), num_key_value_heads=int(n_heads),
                                   max_position_embeddings=2048, tie_word_embeddings=False)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        model = transformers.LlamaModel(cfg)
    return model.eval()


def truncate_layers(model, n_layers: int):
    """Keep the first ``n_layers`` decoder layers of a Llama-style model in place (final norm kept); returns it.

    The monitor of a 30-layer SmolLM2 can read layer ``n`` instead of the top: its cost drops by ``n / 30``.
    """
    base = getattr(model, "model", model)
    layers = getattr(base, "layers", None)
    if layers is None or not isinstance(n_layers, numbers.Integral) or not 1 <= n_layers <= len(layers):
        n = len(layers) if layers is not None else "?"
        raise ValueError(f"`n_layers` must be an integer in [1, {n}] for this model; got {n_layers!r}")
    # a private config copy: loaders may share one config object between models (SmolLM2's does)
    cfg = copy.deepcopy(base.config)
    cfg.num_hidden_layers = int(n_layers)
    if getattr(cfg, "layer_types", None) is not None:
        cfg.layer_types = list(cfg.layer_types)[: int(n_layers)]
    base.layers = torch.nn.ModuleList(list(layers)[: int(n_layers)])
    base.config = cfg
    if base is not model:
        model.config = cfg
    return model


def restore_rotary_buffers(model):
    """Recompute non-persistent rotary buffers (``inv_freq``) from the config, in place; returns the model.

    A model materialised with ``to_empty`` and then ``load_state_dict`` (as the shared SmolLM2 loader does)
    keeps *uninitialised memory* in non-persistent buffers, which the state dict does not hold: positions
    then get garbage (sometimes NaN) rotations. Rebuilding each rotary module from its config fixes it.
    """
    for name, mod in list(model.named_modules()):
        if hasattr(mod, "inv_freq") and hasattr(mod, "config") and "Rotary" in type(mod).__name__:
            fresh = type(mod)(config=mod.config).to(mod.inv_freq.device)
            parent = model.get_submodule(name.rsplit(".", 1)[0]) if "." in name else model
            setattr(parent, name.rsplit(".", 1)[-1], fresh)
    return model
