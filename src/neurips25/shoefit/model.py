"""ShoeFitTransformer: a dual-image-stream DiT built from diffusers' FLUX parts.

Stream 1 (target) denoises the try-on image: its tokens are patches of ``[noisy target, masked model image,
mask]`` (channel concatenation, 7 channels in pixel space). Stream 2 (reference) encodes the clean product views
with its own weights (``add_*_proj``, ``norm1_context``, ``ff_context`` of a FLUX double-stream block); it is never
noised: its AdaLN modulation is the timestep embedding at ``t = 0``. The streams meet in attention in every block,
one way (target reads reference; reference reads only itself), so the reference stream is a function of the
product views alone and :meth:`ShoeFitTransformer.encode_reference` can run it once per sample and cache every
layer's reference keys and values across sampling steps.

Positions: :func:`~neurips25.shoefit.rope.multiview_rope_ids` (target at ``v = 0``, view ``i`` at ``v = i + 1``,
or all views at ``v = 1`` with ``share_view_ids=True``). Attention: :class:`LayeredRefAttnProcessor` (one way), with
its background layer active when ``layered=True``.

Reconstructed (the paper's text is not available): pixel space instead of a VAE latent, channel-concatenated
model image and mask in the target stream, the one-way attention, ``t = 0`` for the reference stream.
"""

from __future__ import annotations

import numbers

import torch
from diffusers.configuration_utils import ConfigMixin, register_to_config
from diffusers.models.attention import FeedForward
from diffusers.models.embeddings import TimestepEmbedding, Timesteps
from diffusers.models.modeling_utils import ModelMixin
from diffusers.models.normalization import AdaLayerNormContinuous, AdaLayerNormZero
from diffusers.models.transformers.transformer_flux import FluxAttention
from torch import nn

from neurips25.shoefit.attention import LayeredRefAttnProcessor
from neurips25.shoefit.rope import MultiViewRoPE, multiview_rope_ids


def patchify(x: torch.Tensor, p: int) -> torch.Tensor:
    """(B, C, H, W) -> (B, (H/p)(W/p), C p p), row-major patches."""
    B, C, H, W = x.shape
    x = x.reshape(B, C, H // p, p, W // p, p).permute(0, 2, 4, 1, 3, 5)
    return x.reshape(B, (H // p) * (W // p), C * p * p)


def unpatchify(t: torch.Tensor, p: int, h: int, w: int, c: int) -> torch.Tensor:
    """Inverse of :func:`patchify` for an ``h x w`` patch grid."""
    B = t.shape[0]
    return t.reshape(B, h, w, c, p, p).permute(0, 3, 1, 4, 2, 5).reshape(B, c, h * p, w * p)


class ShoeFitBlock(nn.Module):
    """A FLUX double-stream block whose two streams have separate timestep modulations (target t, reference 0)."""

    def __init__(self, dim: int, heads: int, head_dim: int, layered: bool, layered_mode: str):
        super().__init__()
        self.norm1, self.norm1_context = AdaLayerNormZero(dim), AdaLayerNormZero(dim)
        self.attn = FluxAttention(query_dim=dim, added_kv_proj_dim=dim, dim_head=head_dim, heads=heads, out_dim=dim,
                                  context_pre_only=False, bias=True, eps=1e-6,
                                  processor=LayeredRefAttnProcessor(dim, layered_mode, one_way=True))
        self.layered = layered
        self.norm2 = nn.LayerNorm(dim, elementwise_affine=False, eps=1e-6)
        self.norm2_context = nn.LayerNorm(dim, elementwise_affine=False, eps=1e-6)
        self.ff = FeedForward(dim=dim, dim_out=dim, activation_fn="gelu-approximate")
        self.ff_context = FeedForward(dim=dim, dim_out=dim, activation_fn="gelu-approximate")

    def forward(self, hidden, ref, temb, temb_ref, rotary, shoe_mask=None, ref_kv=None, ref_kv_out=None):
        nh, gate, shift_mlp, scale_mlp, gate_mlp = self.norm1(hidden, emb=temb)
        kwargs = {"shoe_mask": shoe_mask} if (self.layered and shoe_mask is not None) else {}
        if ref_kv is None:
            nr, c_gate, c_shift, c_scale, c_gate_mlp = self.norm1_context(ref, emb=temb_ref)
            attn_out, ref_attn = self.attn(nh, nr, image_rotary_emb=rotary, ref_kv_out=ref_kv_out, **kwargs)
            ref = ref + c_gate[:, None] * ref_attn
            nr = self.norm2_context(ref) * (1 + c_scale[:, None]) + c_shift[:, None]
            ref = ref + c_gate_mlp[:, None] * self.ff_context(nr)
        else:
            attn_out, _ = self.attn(nh, None, image_rotary_emb=rotary, ref_kv=ref_kv, **kwargs)
        hidden = hidden + gate[:, None] * attn_out
        nh = self.norm2(hidden) * (1 + scale_mlp[:, None]) + shift_mlp[:, None]
        hidden = hidden + gate_mlp[:, None] * self.ff(nh)
        return hidden, ref


class ShoeFitTransformer(ModelMixin, ConfigMixin):
    """Dual-stream DiT predicting the rectified-flow velocity ``eps - x0`` of the target image.

    Parameters (all stored in the config; ``save_pretrained`` / ``from_pretrained`` round-trip them)
    ----------
    sample_size : int
        Image side in pixels (a multiple of ``patch_size``).
    patch_size : int
        Pixel patch side; tokens per image ``(sample_size / patch_size) ** 2``.
    in_channels, ref_channels, out_channels : int
        Target-stream input channels (noisy 3 + masked model image 3 + mask 1), reference-view channels,
        velocity channels.
    num_layers, num_attention_heads, attention_head_dim : int
        Depth and attention shape; width ``heads * head_dim``.
    axes_dims_rope : tuple of int
        Rotary channels per id axis; must sum to ``attention_head_dim``.
    view_axis : {"first", "last"}
        Where the view id sits among the rotary axes.
    share_view_ids : bool
        All views at ``v = 1`` (2D positions only; the ablation).
    layered, layered_mode : bool, {"modulate", "gated_add"}
        Whether the LayeredRefAttention background layer is active and in which form.

    ``forward(noisy_target, masked_model_image, mask, ref_views, t)``: images ``(B, 3, S, S)``, mask ``(B, 1, S, S)``
    in [0, 1], ``ref_views (B, V, 3, S, S)``, ``t (B,)`` in [0, 1]; returns ``(B, 3, S, S)``.
    """

    @register_to_config
    def __init__(self, sample_size: int = 32, patch_size: int = 4, in_channels: int = 7, ref_channels: int = 3,
                 out_channels: int = 3, num_layers: int = 2, num_attention_heads: int = 4,
                 attention_head_dim: int = 24, axes_dims_rope: tuple = (8, 8, 8), rope_theta: float = 10000.0,
                 view_axis: str = "first", share_view_ids: bool = False, layered: bool = False,
                 layered_mode: str = "modulate"):
        super().__init__()
        for name, v in (("sample_size", sample_size), ("patch_size", patch_size), ("num_layers", num_layers),
                        ("num_attention_heads", num_attention_heads), ("attention_head_dim", attention_head_dim)):
            if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
                raise ValueError(f"{name} must be a positive integer; got {v!r}")
        if sample_size % patch_size:
            raise ValueError(f"sample_size {sample_size} must be a multiple of patch_size {patch_size}")
        dim = num_attention_heads * attention_head_dim
        self.pos_embed = MultiViewRoPE(rope_theta, axes_dims_rope, head_dim=attention_head_dim)
        self.grid = sample_size // patch_size
        self.time_proj = Timesteps(256, flip_sin_to_cos=True, downscale_freq_shift=0)
        self.time_embed = TimestepEmbedding(256, dim)
        self.x_embedder = nn.Linear(in_channels * patch_size ** 2, dim)
        self.ref_embedder = nn.Linear(ref_channels * patch_size ** 2, dim)
        self.blocks = nn.ModuleList(ShoeFitBlock(dim, num_attention_heads, attention_head_dim, layered, layered_mode)
                                    for _ in range(num_layers))
        self.norm_out = AdaLayerNormContinuous(dim, dim, elementwise_affine=False, eps=1e-6)
        self.proj_out = nn.Linear(dim, patch_size ** 2 * out_channels)

    # ----- inputs -------------------------------------------------------------------------------
    def _check_images(self, noisy_target, masked_model_image, mask,
                      names=("noisy_target", "masked_model_image", "mask")):
        S, c = self.config.sample_size, self.config
        for name, x, ch in ((names[0], noisy_target, c.out_channels),
                            (names[1], masked_model_image, c.in_channels - c.out_channels - 1),
                            (names[2], mask, 1)):
            if not isinstance(x, torch.Tensor) or x.ndim != 4 or tuple(x.shape[1:]) != (ch, S, S):
                shape = tuple(x.shape) if isinstance(x, torch.Tensor) else type(x).__name__
                raise ValueError(f"{name} must have shape (B, {ch}, {S}, {S}) (channels first, resolution "
                                 f"{S}); got {shape}")
            if x.shape[0] != noisy_target.shape[0]:
                raise ValueError(f"{name} has batch {x.shape[0]} but {names[0]} has {noisy_target.shape[0]}")
            if not torch.isfinite(x).all():
                raise ValueError(f"{name} contains NaN or inf")
        if mask.min() < 0 or mask.max() > 1:  # a 0..255 mask would scale the modulation and the input silently
            raise ValueError(f"mask must hold values in [0, 1] (1 = shoe pixel); got values in "
                             f"[{float(mask.min()):.3g}, {float(mask.max()):.3g}]")

    def _check_refs(self, ref_views, batch):
        S, ch = self.config.sample_size, self.config.ref_channels
        if not isinstance(ref_views, torch.Tensor) or ref_views.ndim != 5 or tuple(ref_views.shape[2:]) != (ch, S, S):
            shape = tuple(ref_views.shape) if isinstance(ref_views, torch.Tensor) else type(ref_views).__name__
            raise ValueError(f"ref_views must have shape (B, V, {ch}, {S}, {S}) (V product views at the model's "
                             f"resolution {S}); got {shape}")
        if ref_views.shape[0] != batch:
            raise ValueError(f"ref_views has batch {ref_views.shape[0]} but the target has {batch}")
        if not torch.isfinite(ref_views).all():
            raise ValueError("ref_views contains NaN or inf")

    def rotary(self, num_views: int, view_ids=None):
        """(cos, sin) over ``[reference tokens, target tokens]``; ``view_ids`` overrides the per-view ids."""
        g = self.grid
        img_ids, ref_ids = multiview_rope_ids(num_views, g, g, view_axis=self.config.view_axis,
                                              share_views=self.config.share_view_ids)
        if view_ids is not None:
            view_ids = torch.as_tensor(view_ids, dtype=torch.float32).reshape(-1)
            if view_ids.numel() != num_views or not torch.isfinite(view_ids).all():
                raise ValueError(f"view_ids must hold one finite id per reference view ({num_views}); got "
                                 f"{view_ids.numel()} values")
            col = 0 if self.config.view_axis == "first" else 2
            ref_ids[:, col] = torch.as_tensor(view_ids, dtype=torch.float32).repeat_interleave(g * g)
        return self.pos_embed(torch.cat([ref_ids, img_ids]).to(self.device))

    def _temb(self, t, batch):
        if not isinstance(t, torch.Tensor):
            t = torch.as_tensor(t, dtype=torch.float32)
        t = t.to(self.device, torch.float32).reshape(-1).expand(batch) if t.numel() == 1 else t.to(self.device)
        if t.shape != (batch,) or not torch.isfinite(t).all() or t.min() < 0 or t.max() > 1:
            raise ValueError(f"t must be a scalar or shape ({batch},) with values in [0, 1]; got shape "
                             f"{tuple(t.shape)}")
        return self.time_embed(self.time_proj(t * 1000.0).to(self.dtype))

    def shoe_token_mask(self, mask: torch.Tensor) -> torch.Tensor:
        """Pixel mask (B, 1, S, S) -> fraction of shoe pixels per target token (B, N)."""
        return patchify(mask, self.config.patch_size).mean(-1)

    # ----- the reference stream (cacheable) ----------------------------------------------------
    def encode_reference(self, ref_views: torch.Tensor, view_ids=None) -> dict:
        """Run the reference stream once; returns the cache ``{"kv": [(k, v) per block], "rotary", "views"}``."""
        self._check_refs(ref_views, ref_views.shape[0] if isinstance(ref_views, torch.Tensor) else 0)
        B, V = ref_views.shape[:2]
        ref = self.ref_embedder(patchify(ref_views.flatten(0, 1), self.config.patch_size).reshape(B, -1,
                                self.ref_embedder.in_features))
        temb_ref = self._temb(torch.zeros(B), B)
        rotary = self.rotary(V, view_ids)
        kv = []
        dummy = torch.zeros(B, 0, ref.shape[-1], device=ref.device, dtype=ref.dtype)
        for block in self.blocks:  # target stream empty: the reference stream never reads it
            _, ref = block(dummy, ref, temb_ref, temb_ref, (rotary[0], rotary[1]), ref_kv_out=kv)
        return {"kv": kv, "rotary": rotary, "views": V, "batch": B}

    def forward(self, noisy_target, masked_model_image, mask, ref_views=None, t=None, *, ref_cache=None,
                view_ids=None):
        """Velocity ``(B, 3, S, S)``. Without ``ref_cache`` both streams run in every block (recomputed);
        with the cache of :meth:`encode_reference` only the target stream runs (same numbers)."""
        if t is None:
            raise ValueError("t (the flow time in [0, 1]) is required")
        self._check_images(noisy_target, masked_model_image, mask)
        B, p = noisy_target.shape[0], self.config.patch_size
        hidden = self.x_embedder(patchify(torch.cat([noisy_target, masked_model_image, mask], 1), p))
        temb = self._temb(t, B)
        shoe = self.shoe_token_mask(mask)
        if ref_cache is None:
            self._check_refs(ref_views, B)
            V = ref_views.shape[1]
            ref = self.ref_embedder(patchify(ref_views.flatten(0, 1), p).reshape(B, -1, self.ref_embedder.in_features))
            temb_ref, rotary = self._temb(torch.zeros(B), B), self.rotary(V, view_ids)
            for block in self.blocks:
                hidden, ref = block(hidden, ref, temb, temb_ref, rotary, shoe_mask=shoe)
        else:
            if ref_cache["batch"] != B:
                raise ValueError(f"ref_cache was built for batch {ref_cache['batch']}, the target has {B}")
            for block, kv in zip(self.blocks, ref_cache["kv"]):
                hidden, _ = block(hidden, None, temb, None, ref_cache["rotary"], shoe_mask=shoe, ref_kv=kv)
        hidden = self.proj_out(self.norm_out(hidden, temb))
        return unpatchify(hidden, p, self.grid, self.grid, self.config.out_channels)
