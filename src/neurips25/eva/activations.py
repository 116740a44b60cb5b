"""Collecting the input activations of LoRA target layers (EVA step 1).

Forward hooks record each target layer's input; padding tokens (``attention_mask == 0``) and, for
language modelling, prompt tokens (``labels == label_mask_value``) are dropped; layers that receive the
very same input (q/k/v of one attention block) are detected so that one decomposition serves them all.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping

import torch
from torch import nn


def token_mask(batch, use_label_mask: bool = True, label_mask_value: int = -100) -> torch.Tensor | None:
    """Boolean mask (B, T) of the tokens whose activations enter the PCA, or None for "all rows".

    ``attention_mask`` removes padding; ``labels`` equal to ``label_mask_value`` are removed too when
    ``use_label_mask`` is set and the labels are per token (same shape as ``input_ids``). Sequence-level
    labels (shape (B,), classification) are ignored, which PEFT's default would mis-broadcast.
    """
    if not isinstance(batch, Mapping) or "input_ids" not in batch:
        return None
    ids = batch["input_ids"]
    mask = batch.get("attention_mask")
    mask = torch.ones_like(ids, dtype=torch.bool) if mask is None else mask.bool()
    labels = batch.get("labels")
    if use_label_mask and isinstance(labels, torch.Tensor) and labels.shape == ids.shape:
        mask = mask & (labels != label_mask_value)
    return mask


def select_tokens(layer_input: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """Rows of a layer input kept for the PCA: (B, T, d) -> (N, d) under ``mask``; else flattened."""
    if mask is not None and layer_input.ndim == 3 and layer_input.shape[:2] == mask.shape:
        return layer_input[mask]
    return layer_input.reshape(-1, layer_input.shape[-1])


class InputRecorder:
    """Forward hooks that store the (masked) input of the layers in :attr:`active`.

    Parameters
    ----------
    modules : mapping of str to nn.Module
        Layers to watch, by name.
    """

    def __init__(self, modules: Mapping[str, nn.Module]) -> None:
        self.modules = dict(modules)
        self.active: set[str] = set(self.modules)
        self.mask: torch.Tensor | None = None
        self.inputs: dict[str, torch.Tensor] = {}
        self._handles: list = []

    def _hook(self, name: str):
        def hook(module, args, output):
            if name in self.active:
                x = args[0] if isinstance(args, tuple) else args
                self.inputs[name] = select_tokens(x.detach(), self.mask).float()
        return hook

    def __enter__(self) -> InputRecorder:
        self._handles = [m.register_forward_hook(self._hook(n)) for n, m in self.modules.items()]
        return self

    def __exit__(self, *exc) -> None:
        for h in self._handles:
            h.remove()
        self._handles = []
        self.inputs = {}


def find_equal_inputs(inputs: Mapping[str, torch.Tensor]) -> dict[str, str]:
    """Map each layer whose input equals an earlier layer's input to that earlier layer.

    Returns ``{member: representative}`` where the representative is the first layer (in the order of
    ``inputs``) of its group; layers with a unique input do not appear.
    """
    groups: dict[str, str] = {}
    reps: list[str] = []
    for name, x in inputs.items():
        for rep in reps:
            y = inputs[rep]
            if x.shape == y.shape and torch.equal(x, y):
                groups[name] = rep
                break
        else:
            reps.append(name)
    return groups


@contextlib.contextmanager
def adapters_disabled(model: nn.Module) -> Iterator[None]:
    """Run the frozen base model: LoRA branches (possibly non-zero after another init) switched off."""
    if hasattr(model, "disable_adapter") and hasattr(model, "peft_config") and hasattr(model, "base_model"):
        with model.disable_adapter():
            yield
        return
    if hasattr(model, "disable_adapter_layers"):
        model.disable_adapter_layers()
        try:
            yield
        finally:
            model.enable_adapter_layers()
        return
    yield
