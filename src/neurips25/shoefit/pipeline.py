"""ShoeFitPipeline: rectified-flow sampling of the try-on image with a cached reference stream.

Rectified flow: ``z_t = (1 - t) x0 + t eps`` and the transformer predicts ``v = eps - x0``; sampling integrates
``dz/dt = v`` from ``t = 1`` (noise) to ``0`` with diffusers' ``FlowMatchEulerDiscreteScheduler``. The reference
stream depends on the product views only (one-way attention, ``t = 0`` modulation), so by default it runs once
per call (:meth:`ShoeFitTransformer.encode_reference`) instead of once per step. The known region (outside the
mask) is pasted from the model image at the end.
"""

from __future__ import annotations

import numbers
import warnings

import torch
from diffusers import DiffusionPipeline, FlowMatchEulerDiscreteScheduler

from neurips25.shoefit.model import ShoeFitTransformer

_RANGE_TOL = 1e-3  # images scaled as x / 127.5 - 1 land within float rounding of [-1, 1]


def _check_image_range(images: dict) -> None:
    """Refuse images outside [-1, 1], the range the model is trained and sampled in, naming the argument and the
    range seen (0..255 images gave a loss of 9,418, silently); warn when no image has a value below 0, the mark of
    [0, 1] images (inside the range, but read as washed-out [-1, 1] images)."""
    lows = []
    for name, x in images.items():
        if not isinstance(x, torch.Tensor) or not x.numel():
            continue
        lo, hi = float(x.min()), float(x.max())
        if lo < -1 - _RANGE_TOL or hi > 1 + _RANGE_TOL:
            raise ValueError(f"{name} must hold images in [-1, 1] (x / 127.5 - 1 for 8-bit images, 2 * x - 1 for "
                             f"[0, 1] images); got values in [{lo:.4g}, {hi:.4g}]")
        lows.append(lo)
    if lows and min(lows) >= 0:
        warnings.warn(f"{', '.join(images)} have no value below 0: if the images are in [0, 1], pass 2 * x - 1 "
                      "(the model works in [-1, 1], where they read as washed-out images)", stacklevel=3)


class ShoeFitPipeline(DiffusionPipeline):
    """``pipe(ref_views, model_image, mask, num_inference_steps=20, generator=None) -> (B, 3, S, S)`` in [-1, 1].

    ``ref_views`` and ``model_image`` are in [-1, 1] too: outside it is an error naming the argument, and images with
    no value below 0 (the mark of [0, 1] images) warn.

    >>> pipe = ShoeFitPipeline(ShoeFitTransformer(), FlowMatchEulerDiscreteScheduler())
    >>> pipe.save_pretrained("shoefit-tiny")                                                # doctest: +SKIP
    >>> pipe = ShoeFitPipeline.from_pretrained("shoefit-tiny")                              # doctest: +SKIP
    """

    model_cpu_offload_seq = "transformer"

    def __init__(self, transformer: ShoeFitTransformer, scheduler: FlowMatchEulerDiscreteScheduler):
        super().__init__()
        self.register_modules(transformer=transformer, scheduler=scheduler)

    @torch.no_grad()
    def __call__(self, ref_views, model_image, mask, num_inference_steps=20, generator=None, *,
                 cache_reference: bool = True, view_ids=None, paste_known: bool = True, latents=None):
        if isinstance(num_inference_steps, bool) or not isinstance(num_inference_steps, numbers.Integral) \
                or num_inference_steps < 1:
            raise ValueError(f"num_inference_steps must be a positive integer; got {num_inference_steps!r}")
        tr = self.transformer
        # the pipeline has no noisy target: its argument is model_image, and errors name it
        tr._check_images(torch.zeros_like(model_image) if isinstance(model_image, torch.Tensor) else model_image,
                         model_image, mask, names=("model_image", "model_image", "mask"))
        tr._check_refs(ref_views, model_image.shape[0])
        _check_image_range({"model_image": model_image, "ref_views": ref_views})
        if mask.min() < 0 or mask.max() > 1:
            raise ValueError("mask must hold values in [0, 1] (1 = shoe region to synthesise)")
        dev, dt = tr.device, tr.dtype
        ref_views, model_image, mask = ref_views.to(dev, dt), model_image.to(dev, dt), mask.to(dev, dt)
        z = latents if latents is not None else torch.randn(model_image.shape, generator=generator,
                                                            dtype=torch.float32).to(dev, dt)
        self.scheduler.set_timesteps(num_inference_steps, device=dev)
        cache = tr.encode_reference(ref_views, view_ids) if cache_reference else None
        for ts in self.scheduler.timesteps:
            t = (ts / self.scheduler.config.num_train_timesteps).expand(z.shape[0]).to(dt)
            if cache is None:
                v = tr(z, model_image, mask, ref_views, t, view_ids=view_ids)
            else:
                v = tr(z, model_image, mask, t=t, ref_cache=cache)
            z = self.scheduler.step(v, ts, z, return_dict=False)[0]
        z = z.clamp(-1, 1)
        return mask * z + (1 - mask) * model_image if paste_known else z


def rectified_flow_loss(transformer: ShoeFitTransformer, batch: dict, generator=None, outside_weight: float = 0.1,
                        ref_views: torch.Tensor | None = None) -> torch.Tensor:
    """Rectified-flow training loss ``|| v_theta(z_t, t) - (eps - x0) ||^2``, up-weighted inside the mask.

    ``z_t = (1 - t) x0 + t eps`` with ``t ~ U(0, 1)``; pixels outside the shoe mask (given in the model image)
    weigh ``outside_weight``. ``batch`` holds ``target``, ``model_image``, ``mask`` and ``ref_views`` (overridden by
    ``ref_views``, e.g. to keep view 0 only). Images are in [-1, 1] (outside it is an error naming the entry; with no
    value below 0 anywhere, a warning: [0, 1] images).
    """
    x0, mask = batch["target"], batch["mask"]
    if not isinstance(mask, torch.Tensor) or not torch.isfinite(mask).all() or mask.min() < 0 or mask.max() > 1:
        raise ValueError("batch['mask'] must be a tensor with values in [0, 1] (it weighs the loss); got "
                         + (f"values in [{float(mask.min()):.3g}, {float(mask.max()):.3g}]"
                            if isinstance(mask, torch.Tensor) and mask.numel() else type(mask).__name__))
    refs = batch["ref_views"] if ref_views is None else ref_views
    _check_image_range({"batch['target']": x0, "batch['model_image']": batch["model_image"],
                        "batch['ref_views']" if ref_views is None else "ref_views": refs})
    # the noise, the flow time and the loss in float32 (float64 for float64 data); the model reads its own dtype,
    # so a bfloat16 / float16 transformer trains on float32 batches or batches in its dtype alike
    work, dt = torch.promote_types(x0.dtype, torch.float32), transformer.dtype
    x0, mask = x0.to(work), mask.to(work)
    eps = torch.randn(x0.shape, generator=generator).to(work)
    t = torch.rand(x0.shape[0], generator=generator)
    zt = (1 - t[:, None, None, None].to(work)) * x0 + t[:, None, None, None].to(work) * eps
    v = transformer(zt.to(dt), batch["model_image"].to(dt), mask.to(dt), refs.to(dt), t)
    w = mask + outside_weight * (1 - mask)
    return (((v.to(work) - (eps - x0)) ** 2) * w).sum() / (w.sum() * x0.shape[1])
