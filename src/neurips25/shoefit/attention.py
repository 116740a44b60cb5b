"""LayeredRefAttention: a diffusers attention processor in which the background only modulates the shoe.

ShoeFit's abstract names a "LayeredRefAttention" that "leverages background features to modulate footwear
latents" against background-induced colour distortion. Reconstruction (the full text is not available):

* the reference layer is the unchanged joint attention of a FLUX double-stream block: target tokens attend
  to the reference-view tokens (and to themselves), ``A_ref(h) = to_out(softmax(q k^T / sqrt d) v)``;
* the background layer lets shoe-region target queries attend only to background target tokens (keys /
  values of the same projections, masked), ``A_bg(h)``;
* ``A_bg`` never adds content; a zero-initialised linear map turns it into a per-channel scale and shift
  (AdaLN style) of the reference output on shoe tokens:

      h_shoe <- A_ref(h) * (1 + gamma(A_bg(h))) + beta(A_bg(h))          (mode="modulate")
      h_shoe <- A_ref(h) + tanh(g) * W A_bg(h),   g = 0 at init         (mode="gated_add", the ablation)

With ``gamma = beta = 0`` (or ``g = 0``) at initialisation the processor is exactly diffusers'
``FluxAttnProcessor``: a drop-in via ``model.set_attn_processor``. Scene context thus enters as lighting
(multiplicative), not as copied colour.

``one_way=True`` makes the reference stream read only itself (target tokens read both), the condition for
caching the reference stream across sampling steps: pass the cached ``ref_kv`` and no ``encoder_hidden_states``.
"""

from __future__ import annotations

import numbers
import warnings
import weakref

import torch
import torch.nn.functional as F
from diffusers.models.embeddings import apply_rotary_emb
from torch import nn

MODES = ("modulate", "gated_add")


def _check_mask(name: str, mask, batch: int, tokens: int) -> torch.Tensor:
    if not isinstance(mask, torch.Tensor):
        raise ValueError(f"{name} must be a tensor of shape (batch, num_target_tokens) = ({batch}, {tokens}); "
                         f"got {type(mask).__name__}")
    if mask.ndim == 3 and mask.shape[-1] == 1:
        mask = mask[..., 0]
    if mask.ndim != 2 or mask.shape[1] != tokens or mask.shape[0] not in (1, batch):
        raise ValueError(f"{name} must have shape (batch, num_target_tokens) = ({batch}, {tokens}); "
                         f"got {tuple(mask.shape)}")
    mask = mask.float()
    if not torch.isfinite(mask).all() or mask.min() < 0 or mask.max() > 1:
        raise ValueError(f"{name} must hold values in [0, 1] (1 = token in the region)")
    return mask


def _rope(x: torch.Tensor, emb, rows: slice) -> torch.Tensor:
    if emb is None or x.shape[1] == 0:
        return x
    cos, sin = emb
    return apply_rotary_emb(x, (cos[rows], sin[rows]), sequence_dim=1)


def _sdpa(q, k, v, mask=None):
    # (B, N, H, D) -> (B, H, N, D) for torch's kernel and back
    out = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), attn_mask=mask)
    return out.transpose(1, 2).flatten(2, 3)


class LayeredRefAttnProcessor(nn.Module):
    """Attention processor for ``FluxAttention`` with a background layer that modulates shoe tokens.

    Parameters
    ----------
    dim : int
        Output width of the attention (the block width, ``attn.out_dim``).
    mode : {"modulate", "gated_add"}
        ``"modulate"``: background output -> zero-initialised (gamma, beta); ``"gated_add"``: background output
        added through a zero-initialised per-channel tanh gate (the ablation).
    one_way : bool
        Reference tokens attend only to reference tokens (needed to cache them across sampling steps).

    Notes
    -----
    Call (the diffusers processor protocol, extra keywords through ``joint_attention_kwargs``)::

        proc(attn, hidden_states, encoder_hidden_states=None, attention_mask=None, image_rotary_emb=None,
             shoe_mask=None, bg_mask=None, ref_kv=None, ref_kv_out=None)

    ``shoe_mask`` / ``bg_mask``: ``(B, N_target)`` in [0, 1]; without ``shoe_mask`` the processor is plain
    attention. ``image_rotary_emb`` covers ``[reference tokens, target tokens]`` (FLUX order: the second
    stream first). ``ref_kv``: the reference keys (rotated) and values of this layer, ``(B, N_ref, H, D)``
    each, from an earlier call that appended them to the list ``ref_kv_out``.

    Install one instance per attention layer (:func:`install_layered_ref_attention`); an instance called by
    several layers warns (its weights would be tied across them). Reload a saved FLUX with its trained
    processors through :func:`load_layered_ref_attention` (a stock ``from_pretrained`` drops them). The output
    keeps the dtype of ``hidden_states`` (bfloat16 / float16 FLUX).

    >>> procs = install_layered_ref_attention(flux)                                      # doctest: +SKIP
    """

    def __init__(self, dim, mode: str = "modulate", one_way: bool = False):
        super().__init__()
        if isinstance(dim, bool) or not isinstance(dim, numbers.Integral) or dim < 1:
            raise ValueError(f"dim must be a positive integer (the attention output width); got {dim!r}")
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}; got {mode!r}")
        self.dim, self.mode, self.one_way = int(dim), mode, bool(one_way)
        if mode == "modulate":
            self.to_mod = nn.Linear(self.dim, 2 * self.dim)
            nn.init.zeros_(self.to_mod.weight), nn.init.zeros_(self.to_mod.bias)
        else:
            self.to_bg = nn.Linear(self.dim, self.dim)
            self.gate = nn.Parameter(torch.zeros(self.dim))

        self._owner, self._warned_shared = None, False  # the first attention that called this instance (weakly)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, mode={self.mode!r}, one_way={self.one_way}"

    def __getstate__(self):
        # pickle / deepcopy: the copy belongs to whichever attention calls it next
        state = dict(self.__dict__)
        state["_owner"], state["_warned_shared"] = None, False
        return state

    def _check_owner(self, attn) -> None:
        owner = None if self._owner is None else self._owner()
        if owner is None:
            self._owner = weakref.ref(attn)
        elif owner is not attn and not self._warned_shared:
            self._warned_shared = True
            warnings.warn("one LayeredRefAttnProcessor instance is called by several attention layers (e.g. "
                          "model.set_attn_processor(LayeredRefAttnProcessor(dim))): their modulation weights are "
                          "tied and save_pretrained fails on the shared tensors; build one processor per layer with "
                          "neurips25.shoefit.install_layered_ref_attention(model)", UserWarning, stacklevel=3)

    def __call__(self, attn, hidden_states, encoder_hidden_states=None, attention_mask=None, image_rotary_emb=None,
                 shoe_mask=None, bg_mask=None, ref_kv=None, ref_kv_out=None):
        self._check_owner(attn)
        return super().__call__(attn, hidden_states, encoder_hidden_states, attention_mask, image_rotary_emb,
                                shoe_mask, bg_mask, ref_kv, ref_kv_out)

    def forward(self, attn, hidden_states, encoder_hidden_states=None, attention_mask=None, image_rotary_emb=None,
                shoe_mask=None, bg_mask=None, ref_kv=None, ref_kv_out=None):
        if attn.out_dim != self.dim or attn.inner_dim != self.dim:
            raise ValueError(f"LayeredRefAttnProcessor(dim={self.dim}) installed on an attention of width "
                             f"{attn.out_dim} (inner {attn.inner_dim}); build it with dim={attn.out_dim} on an "
                             f"attention whose heads * head_dim equals its width")
        if ref_kv is not None and encoder_hidden_states is not None:
            raise ValueError("pass either encoder_hidden_states (compute the reference stream) or ref_kv "
                             "(its cached keys / values), not both")
        B, N = hidden_states.shape[:2]
        single_stream = encoder_hidden_states is None and ref_kv is None
        # single-stream FLUX blocks see [second stream, image] as one sequence: the masks cover its tail
        q = attn.norm_q(attn.to_q(hidden_states).unflatten(-1, (-1, attn.head_dim)))
        k = attn.norm_k(attn.to_k(hidden_states).unflatten(-1, (-1, attn.head_dim)))
        v = attn.to_v(hidden_states).unflatten(-1, (-1, attn.head_dim))
        total = N if single_stream else N + (encoder_hidden_states.shape[1] if ref_kv is None else ref_kv[0].shape[1])
        q, k = _rope(q, image_rotary_emb, slice(total - N, total)), _rope(k, image_rotary_emb, slice(total - N, total))

        enc_out = None
        if single_stream:
            out = _sdpa(q, k, v, attention_mask)
        else:
            if ref_kv is None:
                n_ref = encoder_hidden_states.shape[1]
                eq = attn.norm_added_q(attn.add_q_proj(encoder_hidden_states).unflatten(-1, (-1, attn.head_dim)))
                ek = attn.norm_added_k(attn.add_k_proj(encoder_hidden_states).unflatten(-1, (-1, attn.head_dim)))
                ev = attn.add_v_proj(encoder_hidden_states).unflatten(-1, (-1, attn.head_dim))
                eq, ek = _rope(eq, image_rotary_emb, slice(0, n_ref)), _rope(ek, image_rotary_emb, slice(0, n_ref))
                if ref_kv_out is not None:
                    ref_kv_out.append((ek, ev))
            else:
                ek, ev = ref_kv
                if ek.shape[0] != B or ek.shape[2:] != k.shape[2:]:
                    raise ValueError(f"ref_kv keys must have shape (B={B}, N_ref, heads, {attn.head_dim}); "
                                     f"got {tuple(ek.shape)}")
            kk, vv = torch.cat([ek, k], 1), torch.cat([ev, v], 1)
            if self.one_way or ref_kv is not None:
                out = _sdpa(q, kk, vv, attention_mask)
                if ref_kv is None:
                    enc_out = _sdpa(eq, ek, ev)
            else:  # the stock joint attention over [reference, target]
                joint = _sdpa(torch.cat([eq, q], 1), kk, vv, attention_mask)
                enc_out, out = joint[:, :eq.shape[1]], joint[:, eq.shape[1]:]
        out = attn.to_out[1](attn.to_out[0](out)) if not attn.pre_only else out

        if shoe_mask is not None:
            n_tgt = N if (encoder_hidden_states is not None or ref_kv is not None) else shoe_mask.shape[-1]
            shoe = _check_mask("shoe_mask", shoe_mask, B, n_tgt)
            bg = 1.0 - shoe if bg_mask is None else _check_mask("bg_mask", bg_mask, B, n_tgt)
            if n_tgt > N:
                raise ValueError(f"shoe_mask covers {n_tgt} tokens but the sequence has {N}")
            pad = N - n_tgt
            if pad:  # single-stream: no modulation on the second stream's tokens
                shoe = F.pad(shoe, (pad, 0))
                bg = F.pad(bg, (pad, 0))
            shoe, bg = shoe.expand(B, -1), bg.expand(B, -1)
            # background layer: shoe queries read background keys only (rows with no background read nothing)
            allowed = (bg > 0.5)[:, None, None, :].expand(B, 1, N, N)
            has_bg = allowed.any(-1, keepdim=True)
            # keep the activation dtype (bfloat16 / float16 FLUX): a float32 factor would promote a_bg
            a_bg = _sdpa(q, k, v, allowed | ~has_bg) * has_bg[:, 0, :, :1].to(q.dtype)
            s = shoe[..., None].to(out.dtype)
            if self.mode == "modulate":
                gamma, beta = self.to_mod(a_bg).chunk(2, dim=-1)
                out = out + s * (out * gamma + beta)
            else:
                out = out + s * torch.tanh(self.gate) * self.to_bg(a_bg)

        if single_stream:
            return out
        return out, (None if enc_out is None else attn.to_add_out(enc_out))
