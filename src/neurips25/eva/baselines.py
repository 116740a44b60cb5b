"""Baseline LoRA initialisations (PEFT's own) and the captured-variance measure EVA maximises.

- ``"lora"``: Kaiming-uniform ``A``, ``B = 0`` (Hu et al., 2022), PEFT's default.
- ``"pissa"``: ``A, B`` from the top singular triplets of the WEIGHT ``W`` (Meng et al., 2024); the base
  weight becomes the residual.
- ``"olora"``: ``A, B`` from a QR decomposition of ``W`` (Büyükakyüz, 2024); base weight adjusted.
- ``"eva"``: LoRA init, then :func:`neurips25.eva.eva_init` on the data.
"""

from __future__ import annotations

import numbers

import torch
from torch import nn

from neurips25.extras import require

INITIALIZERS = ("lora", "pissa", "olora", "eva")
_PEFT_INIT = {"lora": True, "pissa": "pissa", "olora": "olora", "eva": True}


def make_lora_model(
    model: nn.Module,
    init: str,
    *,
    rank: int = 8,
    lora_alpha: float = 8.0,
    target_modules=("query", "value"),
    modules_to_save=None,
    dataloader=None,
    pissa_niter: int | None = None,
    **eva_kwargs,
):
    """Wrap ``model`` in PEFT LoRA adapters initialised by ``init`` (one of :data:`INITIALIZERS`).

    ``dataloader`` and ``eva_kwargs`` go to :func:`neurips25.eva.eva_init` when ``init == "eva"``.
    ``pissa_niter``: PiSSA's fast variant (PEFT's ``"pissa_niter_<n>"``: randomised SVD with ``n`` power
    iterations instead of the full SVD of every weight). Returns the ``PeftModel``.
    """
    if init not in INITIALIZERS:
        raise ValueError(f"`init` must be one of {INITIALIZERS}, got {init!r}")
    if init == "eva" and dataloader is None:
        raise ValueError("`dataloader` is required for init='eva'")
    if pissa_niter is not None and (not isinstance(pissa_niter, numbers.Integral) or pissa_niter < 1):
        raise ValueError(f"`pissa_niter` must be None or an integer >= 1, got {pissa_niter!r}")
    peft = require("peft", "lm")
    how = f"pissa_niter_{int(pissa_niter)}" if init == "pissa" and pissa_niter is not None else _PEFT_INIT[init]
    cfg = peft.LoraConfig(r=rank, lora_alpha=lora_alpha, target_modules=list(target_modules),
                          init_lora_weights=how, lora_dropout=0.0,
                          modules_to_save=list(modules_to_save) if modules_to_save else None)
    pm = peft.get_peft_model(model, cfg)
    if init == "eva":
        from neurips25.eva.init import eva_init

        eva_init(pm, dataloader, rank=rank, **eva_kwargs)
    return pm


def captured_variance(a: torch.Tensor, x: torch.Tensor) -> float:
    """Share of the centred variance of ``x`` inside the row space of ``a``: ``tr(Q Sigma Q^T) / tr(Sigma)``.

    ``Q`` is an orthonormal basis of ``a``'s rows, so scaling (PiSSA's ``sqrt(S) V^T``) does not count,
    only the subspace. EVA's ``A`` (top principal directions) maximises this over all rank-``r`` ``A``
    on the data it was computed from (Eckart-Young; the paper's theorem on captured variance).

    Parameters
    ----------
    a : Tensor, shape (r, d)
    x : Tensor, shape (n, d)
    """
    if a.ndim != 2 or x.ndim != 2 or a.shape[1] != x.shape[1]:
        raise ValueError(f"`a` (r, d) and `x` (n, d) must share d, got {tuple(a.shape)} and {tuple(x.shape)}")
    if a.shape[0] == 0:
        return 0.0
    xc = (x - x.mean(0)).double()
    q, _ = torch.linalg.qr(a.double().T)  # (d, r) orthonormal columns spanning a's rows
    return float((xc @ q).square().sum() / xc.square().sum())
