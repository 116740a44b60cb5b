"""The paper's two causal experiments as functions of any model, its spans and a scoring callable.

- :func:`knockout_sweep` (Sec. 4.1, task ablation and the progressive variant): knock out attention from the
  text after the image to a target key set ([EOI], all image tokens, random image tokens, last image token,
  [BOI]) in layers ``L_start .. L-1`` and re-score.
- :func:`eoi_patching` (Sec. 4.3, steering): write the source run's residual at one position into the base
  run after layer ``l`` and read the outputs, for each ``l``.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable

import numpy as np
import torch

from neurips25.narrow_gate.knockout import MODES, attention_knockout
from neurips25.narrow_gate.layers import decoder_layers, resolve_layers
from neurips25.narrow_gate.patching import patch_residual
from neurips25.narrow_gate.positions import ModalitySpans
from neurips25.narrow_gate.recorder import ResidualRecorder

TARGETS = ("eoi", "boi", "all_image", "last_image", "random_image_10")


def target_keys(spans: ModalitySpans, target: str, rng: np.random.Generator) -> list[int]:
    """Key positions of a named target; ``random_image_K`` draws K image positions."""
    if target == "eoi":
        return [spans.eoi]
    if target == "boi":
        return [spans.boi]
    if target == "all_image":
        return list(spans.image)
    if target == "last_image":
        return [max(spans.image)]
    if target.startswith("random_image_"):
        k = int(target.rsplit("_", 1)[1])
        if not 1 <= k <= len(spans.image):
            raise ValueError(f"{target}: needs 1 <= K <= {len(spans.image)} image tokens")
        return sorted(rng.choice(list(spans.image), k, replace=False).tolist())
    raise ValueError(f"unknown target {target!r}; expected one of {TARGETS} (random_image_K for any K)")


def knockout_sweep(model, evaluate: Callable[[], float], spans: ModalitySpans, targets=("eoi", "all_image",
                   "random_image_10"), start_layers=(0,), mode: str = "mask_pre_softmax", queries=None,
                   n_draws: int = 3, seed: int = 0) -> dict:
    """Score ``evaluate()`` with each target knocked out from each ``L_start`` to the last layer.

    Parameters
    ----------
    evaluate : callable returning a float
        Runs the model on its data and scores it (e.g. accuracy in percent).
    spans : ModalitySpans
        Layout of the sequences ``evaluate`` runs on.
    queries : iterable of int, optional
        Query rows; default the text after the image.
    n_draws : int
        Random targets are averaged over this many draws.

    Returns
    -------
    dict
        ``{"baseline": s, target: {L_start: score}}``.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}; got {mode!r}")
    if not isinstance(n_draws, numbers.Integral) or n_draws < 1:
        raise ValueError(f"n_draws must be a positive int; got {n_draws!r}")
    n_layers = len(decoder_layers(model))
    starts = resolve_layers(start_layers, n_layers, "start_layers")
    q = list(spans.text_after_image() if queries is None else queries)
    rng = np.random.default_rng(seed)
    out = {"baseline": float(evaluate())}
    for t in targets:
        target_keys(spans, t, rng)  # validate the name before the long work
        out[t] = {}
        for s in starts:
            draws = n_draws if t.startswith("random_image_") else 1
            scores = []
            for _ in range(draws):
                with attention_knockout(model, q, target_keys(spans, t, rng), range(s, n_layers), mode=mode):
                    scores.append(float(evaluate()))
            out[t][s] = float(np.mean(scores))
    return out


@torch.no_grad()
def eoi_patching(model, base_inputs: dict, source_inputs: dict, position: int, layers="all",
                 readout: Callable | None = None) -> dict:
    """Patch the source run's residual at ``position`` into the base run after each layer in ``layers``.

    ``readout(outputs)`` turns the patched run's outputs into a result (default: the logits). Base and source
    must have the same batch size and layout. Returns ``{layer: readout(outputs)}``.
    """
    if not isinstance(base_inputs, dict) or not isinstance(source_inputs, dict):
        raise TypeError("base_inputs and source_inputs must be dicts of model keyword arguments")
    readout = readout or (lambda o: o.logits)
    idx = resolve_layers(layers, len(decoder_layers(model)))
    with ResidualRecorder(model, idx) as rec:
        model(**source_inputs)
    out = {}
    for layer in idx:
        with patch_residual(model, position, layer, rec):
            out[layer] = readout(model(**base_inputs))
    return out
