"""Zero-parameter reference baselines on MVShoesLite: copy a product view into the shoe region.

``copy_view_baseline`` pastes one product view, warped onto the target's shoe mask by matching bounding boxes
(the target is misaligned in scale and translation; the mask is given to every model) and lit by the scene's
known light, into the masked model image. It learns nothing and is an upper reference for how much of the
target a single view explains at the right pose:

* ``"nearest"``: the view nearest the target's true azimuth (an oracle of the pose);
* ``"view0"``: the toe view, what a single-view model (A) can see;
* ``"random_side"``: one of the two side views by a coin flip, the best a model can do that sees all views but
  cannot tell which side each shows (B on symmetric data);
* ``"other_side"``: the side view opposite to the visible side (always wrong).
"""

from __future__ import annotations

import numpy as np
import torch

from neurips25.shoefit.data import VIEW_AZIMUTHS

CHOICES = ("nearest", "view0", "random_side", "other_side")


def _bbox(m: np.ndarray):
    ys, xs = np.nonzero(m > 0.5)
    return ys.min(), ys.max() + 1, xs.min(), xs.max() + 1


def nearest_view_index(azimuth) -> torch.Tensor:
    """Index of the product view (azimuths ``VIEW_AZIMUTHS``) nearest each target azimuth (degrees), ``(N,)`` long."""
    az = torch.as_tensor(azimuth, dtype=torch.float64).reshape(-1) % 360
    ref = torch.tensor(VIEW_AZIMUTHS, dtype=torch.float64)
    return ((az[:, None] - ref[None] + 180) % 360 - 180).abs().argmin(1)


def copy_view_baseline(data, choice: str = "nearest", *, seed: int = 0, scene_light: bool = True) -> torch.Tensor:
    """Predictions ``(N, 3, S, S)`` in [-1, 1]: a product view copied into each item's shoe region.

    ``data`` is an :class:`~neurips25.shoefit.MVShoesLite` with 4 views (it needs ``ref_views``, ``ref_masks``,
    ``mask``, ``model_image``, ``azimuth``, ``k_env``, ``bg_mean``). ``scene_light`` multiplies the copied colour
    by the scene's light ``(1 - k_env) + 2 k_env bg_mean`` (known in the data). Outside the mask the model image
    is kept, as the models' pipeline does.
    """
    if choice not in CHOICES:
        raise ValueError(f"choice must be one of {CHOICES}; got {choice!r}")
    if data.ref_views.shape[1] != len(VIEW_AZIMUTHS):
        raise ValueError(f"data must have {len(VIEW_AZIMUTHS)} product views; got {data.ref_views.shape[1]}")
    rng = np.random.default_rng(seed)
    views = ((data.ref_views.numpy() + 1) / 2)
    vmask, mask = data.ref_masks.numpy()[:, :, 0], data.mask.numpy()[:, 0]
    az = data.azimuth.numpy() % 360
    nearest = nearest_view_index(data.azimuth).numpy()
    out = ((data.model_image.numpy() + 1) / 2).copy()
    for i in range(len(az)):
        if mask[i].sum() == 0:
            continue
        if choice == "nearest":
            v = nearest[i]
        elif choice == "view0":
            v = 0
        else:
            sides = (1, 3)
            v = sides[rng.integers(2)] if choice == "random_side" else (4 - nearest[i] if nearest[i] in sides else 1)
        y0, y1, x0, x1 = _bbox(mask[i])
        sy0, sy1, sx0, sx1 = _bbox(vmask[i, v])
        yy = np.clip(sy0 + ((np.arange(y0, y1) - y0 + 0.5) * (sy1 - sy0) / (y1 - y0)).astype(int), 0, mask.shape[1] - 1)
        xx = np.clip(sx0 + ((np.arange(x0, x1) - x0 + 0.5) * (sx1 - sx0) / (x1 - x0)).astype(int), 0, mask.shape[2] - 1)
        patch = views[i, v][:, yy[:, None], xx[None, :]]
        if scene_light:
            k = float(data.k_env[i])
            patch = patch * ((1 - k) + 2 * k * data.bg_mean[i].numpy())[:, None, None]
        m = mask[i, y0:y1, x0:x1][None]
        out[i, :, y0:y1, x0:x1] = m * np.clip(patch, 0, 1) + (1 - m) * out[i, :, y0:y1, x0:x1]
    return torch.from_numpy(out).float() * 2 - 1
