"""Recording the residual stream and the attention probabilities of a decoder, layer by layer.

The paper's residual-stream analyses (Sec. 3.1: modality gap, homogeneity; Sec. 3.3: neighbourhood overlap)
read :math:`h_l` at each token position after every layer; the attention analysis (Sec. 3.2) reads the
post-softmax matrices :math:`a^{l,h}_{qk}`, which only eager attention materialises.
"""

from __future__ import annotations

import torch
from torch import nn

from neurips25.narrow_gate.layers import attention_module, decoder_layers, resolve_layers

SITES = ("output", "attn_input")


def _hidden(output):
    return output[0] if isinstance(output, (tuple, list)) else output


class ResidualRecorder:
    """Forward hooks that keep each chosen layer's residual stream, as a context manager.

    Parameters
    ----------
    model : nn.Module
        A Hugging Face decoder / VLM (its layers are found with :func:`decoder_layers`).
    layers : "all", int or iterable of int
    site : {"output", "attn_input"}
        The residual after the layer (``h_l``), or the hidden state entering the layer's attention.

    Notes
    -----
    After one or more forward passes inside the context, :attr:`residuals` is a float tensor of shape
    ``(n_layers_recorded, batch_total, seq, d)`` (passes concatenated along the batch). Example::

        with ResidualRecorder(model) as rec:
            model(input_ids)
        h = rec.residuals   # (L, B, S, D)
    """

    def __init__(self, model: nn.Module, layers="all", site: str = "output"):
        if site not in SITES:
            raise ValueError(f"site must be one of {SITES}; got {site!r}")
        self.model = model
        self.blocks = decoder_layers(model)
        self.layers = resolve_layers(layers, len(self.blocks))
        self.site = site
        self._store: dict[int, list[torch.Tensor]] = {i: [] for i in self.layers}
        self._handles = []

    def _hook(self, i):
        if self.site == "output":
            def fn(module, args, output):
                self._store[i].append(_hidden(output).detach().float().cpu())
        else:
            def fn(module, args, kwargs):
                h = kwargs.get("hidden_states", args[0] if args else None)
                self._store[i].append(h.detach().float().cpu())
        return fn

    def __enter__(self):
        for i in self.layers:
            if self.site == "output":
                h = self.blocks[i].register_forward_hook(self._hook(i))
            else:
                h = attention_module(self.blocks[i]).register_forward_pre_hook(self._hook(i), with_kwargs=True)
            self._handles.append(h)
        return self

    def __exit__(self, *exc):
        for h in self._handles:
            h.remove()
        self._handles.clear()
        return False

    def clear(self):
        for v in self._store.values():
            v.clear()

    def _joined(self, layer: int) -> torch.Tensor:
        passes = self._store[layer]
        lengths = [p.shape[1] for p in passes]
        if len(set(lengths)) > 1:
            raise ValueError(f"the recorder holds passes of different sequence lengths {lengths}, which cannot be "
                             "stacked along the batch (generate records one pass per step); record the finished "
                             "sequence with one forward, e.g. model(generated_ids), or call clear() between passes")
        return torch.cat(passes, dim=0)

    @property
    def residuals(self) -> torch.Tensor:
        if not any(self._store.values()):
            raise RuntimeError("nothing recorded yet: run a forward pass inside the recorder's context")
        return torch.stack([self._joined(i) for i in self.layers])

    def at(self, layer: int, position: int) -> torch.Tensor:
        """Residual of recorded ``layer`` at ``position``: (batch_total, d)."""
        if layer not in self.layers:
            raise ValueError(f"layer {layer} was not recorded; recorded layers are {self.layers}")
        r = self._joined(layer)
        if not 0 <= position < r.shape[1]:
            raise ValueError(f"position {position} is outside the recorded sequence of length {r.shape[1]}")
        return r[:, position]


def _attn_impl(attn: nn.Module) -> str:
    cfg = getattr(attn, "config", None)
    return getattr(cfg, "_attn_implementation", None) or "eager"


@torch.no_grad()
def attention_weights(model: nn.Module, inputs: dict, layers="all") -> torch.Tensor:
    """Post-softmax attention of one forward pass: float tensor (n_layers, batch, heads, seq, seq).

    Needs eager attention: SDPA and flash kernels never form the matrix, so a model loaded with them is
    refused with a message saying how to switch.
    """
    if not isinstance(inputs, dict):
        raise TypeError("inputs must be a dict of model keyword arguments (input_ids=..., ...)")
    blocks = decoder_layers(model)
    idx = resolve_layers(layers, len(blocks))
    store, handles = {}, []
    for i in idx:
        attn = attention_module(blocks[i])
        impl = _attn_impl(attn)
        if impl not in ("eager", "narrow_gate_knockout"):
            raise ValueError(f"attention weights were requested but the model runs attn_implementation={impl!r}, "
                             "which never materialises them; load it with attn_implementation='eager' or call "
                             "model.set_attn_implementation('eager')")

        def fn(module, args, output, i=i):
            if not isinstance(output, (tuple, list)) or len(output) < 2 or output[1] is None:
                raise ValueError(f"layer {i}'s attention returned no weights; use attn_implementation='eager'")
            store[i] = output[1].detach().float().cpu()
        handles.append(attn.register_forward_hook(fn))
    try:
        model(**inputs)
    finally:
        for h in handles:
            h.remove()
    return torch.stack([store[i] for i in idx])
