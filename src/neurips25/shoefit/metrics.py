"""Shoe-region metrics: masked PSNR, side-colour accuracy and the background-colour leak.

Every metric is masked to the shoe (the background dominates a whole-image score). Images are in [-1, 1]
(the model's range) and are mapped to [0, 1] first (`masked_psnr(value_range=(0, 1))` for [0, 1] images).
"""

from __future__ import annotations

import math
import warnings

import torch

from neurips25.shoefit.data import PALETTE, _real_pair


def _check(pred, gt, mask):
    for name, x in (("pred", pred), ("gt", gt)):
        if not isinstance(x, torch.Tensor) or x.ndim != 4 or x.shape[1] != 3:
            raise ValueError(f"{name} must be a tensor of shape (B, 3, H, W); got "
                             f"{tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__}")
    if pred.shape != gt.shape:
        raise ValueError(f"pred {tuple(pred.shape)} and gt {tuple(gt.shape)} must have the same shape")
    if not isinstance(mask, torch.Tensor) or mask.shape != (pred.shape[0], 1, *pred.shape[2:]):
        raise ValueError(f"mask must have shape (B, 1, H, W) = {(pred.shape[0], 1, *pred.shape[2:])}; got "
                         f"{tuple(mask.shape) if isinstance(mask, torch.Tensor) else type(mask).__name__}")


def _check_range(mask):
    if not torch.isfinite(mask).all() or mask.min() < 0 or mask.max() > 1:
        raise ValueError("mask must hold values in [0, 1] (1 = shoe pixel); got values in "
                         f"[{float(mask.min()):.3g}, {float(mask.max()):.3g}]")


def masked_psnr(pred: torch.Tensor, gt: torch.Tensor, mask: torch.Tensor, *,
                value_range: tuple[float, float] = (-1.0, 1.0)) -> torch.Tensor:
    """PSNR (dB, peak = the width of ``value_range``) over the mask's pixels, per image: ``(B,)``; NaN for an
    empty mask.

    Images are in ``value_range`` (default [-1, 1], the model's range; pass ``(0, 1)`` for [0, 1] images: the
    same images read in the wrong range shift every PSNR by 6 dB). ``gt`` outside the range is an error, and a
    ``gt`` with no value below the middle of a (-1, 1) range warns (it looks like [0, 1] data). The mask weighs
    pixels and must lie in [0, 1]; an image whose mask is all zero has no shoe to score and gets NaN (not a
    perfect score). A perfect prediction is capped at 100 dB. Computed in float32 at least (returned so): in
    float16 the error of a near-perfect prediction underflows and its PSNR read inf.
    """
    _check(pred, gt, mask)
    _check_range(mask)
    lo, hi = _real_pair("value_range", value_range)
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"value_range must be (low, high) with finite low < high; got {value_range!r}")
    if not torch.isfinite(gt).all() or gt.min() < lo - 1e-6 or gt.max() > hi + 1e-6:
        raise ValueError(f"gt must hold finite values in value_range=({lo:g}, {hi:g}); got values in "
                         f"[{float(gt.min()):.3g}, {float(gt.max()):.3g}]")
    if (lo, hi) == (-1.0, 1.0) and gt.numel() and gt.min() >= 0:
        warnings.warn("gt has no value below 0 although value_range is (-1, 1): if the images are in [0, 1], "
                      "pass value_range=(0, 1) (read as [-1, 1] their PSNR is 6 dB too high)", stacklevel=2)
    work = torch.promote_types(torch.promote_types(pred.dtype, gt.dtype), torch.float32)  # float16 underflows
    pred, gt, mask = pred.to(work), gt.to(work), mask.to(work)
    area = mask.sum((1, 2, 3))
    se = (((pred - gt) / (hi - lo)) ** 2 * mask).sum((1, 2, 3))
    mse = se / (3 * area).clamp_min(1e-12)
    psnr = -10 * torch.log10(mse.clamp_min(1e-10))
    return torch.where(area > 0, psnr, torch.full_like(psnr, float("nan")))


def side_color_accuracy(pred: torch.Tensor, labels: torch.Tensor, side: torch.Tensor,
                        color_id: torch.Tensor) -> torch.Tensor:
    """1 where the visible side's mean predicted colour is nearest (in chromaticity) its true palette colour.

    ``labels (B, H, W)`` sector ids of the ground truth, ``side (B,)`` the visible side's sector id,
    ``color_id (B,)`` the palette index of its colour; the candidates are the 8 palette colours. Chromaticity
    (colour / its mean) discounts the shading. Returns ``(B,)`` floats, NaN where the side has no pixel.
    """
    if not isinstance(labels, torch.Tensor) or labels.shape != (pred.shape[0], *pred.shape[2:]):
        raise ValueError(f"labels must have shape (B, H, W) = {(pred.shape[0], *pred.shape[2:])}")
    rgb = (pred.clamp(-1, 1) + 1) / 2
    sel = (labels == side[:, None, None]).to(pred.dtype)[:, None]
    mean = (rgb * sel).sum((2, 3)) / sel.sum((2, 3)).clamp_min(1)
    pal = torch.as_tensor(PALETTE, dtype=pred.dtype)
    chroma = lambda c: c / c.mean(-1, keepdim=True).clamp_min(1e-3)  # noqa: E731
    d = ((chroma(mean)[:, None] - chroma(pal)[None]) ** 2).sum(-1)
    out = (d.argmin(1) == color_id).to(pred.dtype)
    return torch.where(sel.sum((1, 2, 3)) > 0, out, torch.full_like(out, float("nan")))


def contamination_slope(pred: torch.Tensor, gt: torch.Tensor, bg_mean: torch.Tensor, mask: torch.Tensor) -> float:
    """Background-colour leak: least-squares slope of the shoe-region colour error on the background colour.

    Per image and channel, ``e = mean_shoe(pred) - mean_shoe(gt)`` (in [0, 1] units); the slope of ``e`` on the
    background's mean colour, pooled over the three channels after centring each (so a constant colour bias
    does not count). The ground truth already contains the physical environment tint, so a model that
    renders the scene light correctly has slope 0; one that copies background colour into the shoe has a
    positive slope.

    Images with an empty mask are left out (they have no shoe colour). NaN when the slope is not defined: fewer
    than two images remain, or the background colour does not vary over them (a constant background says
    nothing about a leak; it is not "no leak").
    """
    _check(pred, gt, mask)
    _check_range(mask)
    if not isinstance(bg_mean, torch.Tensor) or bg_mean.shape != (pred.shape[0], 3):
        raise ValueError(f"bg_mean must have shape (B, 3) = ({pred.shape[0]}, 3)")
    keep = mask.sum((1, 2, 3)) > 0
    pred, gt, mask, bg_mean = pred[keep], gt[keep], mask[keep], bg_mean[keep]
    if pred.shape[0] < 2:
        return float("nan")
    m = mask.sum((2, 3))
    e = (((pred - gt) / 2) * mask).sum((2, 3)) / m  # (B, 3)
    x = bg_mean - bg_mean.mean(0)
    y = e - e.mean(0)
    sxx = (x * x).sum()
    if not sxx > 1e-12 * max(1.0, float((bg_mean * bg_mean).sum())):
        return float("nan")
    return float((x * y).sum() / sxx)
