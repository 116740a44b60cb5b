"""ShoeFit: a dual-image-stream DiT for virtual footwear try-on (NeurIPS 2025), as diffusers components.

"ShoeFit: A New Dataset and Dual-image-stream DiT Framework for Virtual Footwear Try-On", NeurIPS 2025. Only
the abstract is public; everything beyond its component names is reconstructed (see docs/shoefit.md):

* :func:`multiview_rope_ids` / :class:`MultiViewRoPE`: 3-axis rotary ids ``(view, h, w)`` for V product views
  beside the target, equal to diffusers' ``FluxPosEmbed`` (against viewpoint misalignment);
* :class:`LayeredRefAttnProcessor`: a diffusers attention processor in which the background only modulates
  shoe tokens (a zero-initialised scale / shift; plain attention at initialisation), against
  background-induced colour distortion; :func:`install_layered_ref_attention` puts one per layer in a stock
  diffusers transformer (e.g. ``FluxTransformer2DModel``) and :func:`load_layered_ref_attention` reloads a saved
  one with those trained processors;
* :class:`ShoeFitTransformer` (diffusers ``ModelMixin``) and :class:`ShoeFitPipeline` (``DiffusionPipeline`` with
  ``FlowMatchEulerDiscreteScheduler``): target stream denoised, reference stream never noised and read one way,
  so it is cached across sampling steps;
* :class:`MVShoesLite`: procedural multi-view shoes with a known scene-light tint (views that do not describe
  themselves, misaligned targets, a background-leak split); shoe-region metrics; :func:`copy_view_baseline`.

Example::

    from diffusers import FlowMatchEulerDiscreteScheduler
    from neurips25.shoefit import MVShoesLite, ShoeFitPipeline, ShoeFitTransformer

    data = MVShoesLite(8, seed=0)
    model = ShoeFitTransformer(sample_size=24, attention_head_dim=16, axes_dims_rope=(4, 6, 6), layered=True)
    pipe = ShoeFitPipeline(model, FlowMatchEulerDiscreteScheduler())
    out = pipe(data.ref_views, data.model_image, data.mask, num_inference_steps=10)
"""

from neurips25.shoefit.attention import LayeredRefAttnProcessor
from neurips25.shoefit.baselines import copy_view_baseline
from neurips25.shoefit.data import MVShoesLite, render
from neurips25.shoefit.install import install_layered_ref_attention, load_layered_ref_attention
from neurips25.shoefit.metrics import contamination_slope, masked_psnr, side_color_accuracy
from neurips25.shoefit.model import ShoeFitTransformer
from neurips25.shoefit.pipeline import ShoeFitPipeline, rectified_flow_loss
from neurips25.shoefit.rope import MultiViewRoPE, multiview_rope_ids

__all__ = [
    "LayeredRefAttnProcessor",
    "MultiViewRoPE",
    "MVShoesLite",
    "ShoeFitPipeline",
    "ShoeFitTransformer",
    "contamination_slope",
    "copy_view_baseline",
    "install_layered_ref_attention",
    "load_layered_ref_attention",
    "masked_psnr",
    "multiview_rope_ids",
    "rectified_flow_loss",
    "render",
    "side_color_accuracy",
]
