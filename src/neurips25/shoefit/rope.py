"""Multi-view 3D rotary positions: a view axis beside the two image axes (ShoeFit, "3D RoPE").

Each token carries integer ids ``(v, h, w)``: the target (noisy) image gets ``v = target_index`` (0), product view
``i`` gets ``v = i + 1``, and ``(h, w)`` are patch coordinates. Every axis ``a`` rotates its own slice of
``axes_dim[a]`` channels of the query and key by the angle ``p_a * theta_a,i`` with
``theta_a,i = theta ** (-2 i / axes_dim[a])`` (the FLUX layout; ``sum(axes_dim)`` is the head size). A target
token then matches a patch of every view through ``(h, w)`` while the view axis keeps the views apart; with
``share_views=True`` every view sits at ``v = 1`` (the ablation in which views collapse onto one position).

The view-axis placement (first, as in FLUX.1 Kontext's ``(1, h, w)`` context ids, or last) is reconstructed:
the paper's text is not available.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import torch
from torch import nn

VIEW_AXIS = ("first", "last")


def _positive_int(name: str, value, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or int(value) < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}")
    return int(value)


def _grid(h: int, w: int) -> torch.Tensor:
    rows = torch.arange(h).repeat_interleave(w)
    cols = torch.arange(w).repeat(h)
    return torch.stack([rows, cols], dim=1)


def multiview_rope_ids(num_views, h, w, target_index=0, *, view_axis: str = "first",
                       share_views: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """Rotary ids of a target image and ``num_views`` reference views on a ``h x w`` patch grid.

    Returns ``(img_ids, ref_ids)`` of shapes ``(h*w, 3)`` and ``(num_views*h*w, 3)`` (float, as diffusers'
    ``FluxPosEmbed`` takes them). With ``view_axis="first"`` a row is ``(v, row, col)``; with ``"last"`` it is
    ``(row, col, v)``. Reference view ``i`` (0-based) has ``v = target_index + 1 + i``, or ``v = target_index + 1``
    for every view when ``share_views`` (2D positions shared by all views).

    >>> img, ref = multiview_rope_ids(4, 2, 2)
    >>> img.shape, ref.shape, ref[4].tolist()
    (torch.Size([4, 3]), torch.Size([16, 3]), [2.0, 0.0, 0.0])
    """
    num_views = _positive_int("num_views", num_views)
    h, w = _positive_int("h", h), _positive_int("w", w)
    target_index = _positive_int("target_index", target_index, minimum=0)
    if view_axis not in VIEW_AXIS:
        raise ValueError(f"view_axis must be one of {VIEW_AXIS}; got {view_axis!r}")
    grid = _grid(h, w)
    views = torch.full((num_views,), target_index + 1) if share_views else target_index + 1 + torch.arange(num_views)

    def with_view(v: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
        return torch.cat([v[:, None], g], 1) if view_axis == "first" else torch.cat([g, v[:, None]], 1)

    img = with_view(torch.full((h * w,), target_index), grid)
    ref = with_view(views.repeat_interleave(h * w), grid.repeat(num_views, 1))
    return img.float(), ref.float()


class MultiViewRoPE(nn.Module):
    """N-axis rotary embedding ``ids (N, n_axes) -> (cos, sin)``, each ``(N, sum(axes_dim))``.

    Equals diffusers' ``FluxPosEmbed(theta, axes_dim)`` (interleaved real pairs, the layout its
    ``apply_rotary_emb(..., use_real_unbind_dim=-1)`` expects), with the axes checked: each even and positive,
    and, when ``head_dim`` is given, summing to it.

    Parameters
    ----------
    theta : float
        RoPE base (10000 in FLUX).
    axes_dim : sequence of int
        Channels per axis, e.g. ``(8, 12, 12)`` for head size 32; the order matches the id columns.
    head_dim : int, optional
        Attention head size the embedding is for; ``sum(axes_dim)`` must equal it.
    """

    def __init__(self, theta: float = 10000.0, axes_dim: Sequence[int] = (8, 8, 8), head_dim: int | None = None):
        super().__init__()
        if isinstance(theta, bool) or not isinstance(theta, numbers.Real) or not float(theta) > 1.0:
            raise ValueError(f"theta must be a real number > 1; got {theta!r}")
        try:
            axes = [int(a) for a in axes_dim]
        except TypeError:
            raise ValueError(f"axes_dim must be a sequence of even positive ints; got {axes_dim!r}") from None
        if not axes or any(a <= 0 or a % 2 for a in axes) or any(
                isinstance(a, bool) or not isinstance(a, numbers.Integral) for a in axes_dim):
            raise ValueError(f"axes_dim must be a sequence of even positive ints; got {tuple(axes_dim)}")
        if head_dim is not None:
            head_dim = _positive_int("head_dim", head_dim)
            if sum(axes) != head_dim:
                raise ValueError(f"axes_dim {tuple(axes)} sums to {sum(axes)} but the attention head size is "
                                 f"{head_dim}; the rotary axes must split the head exactly")
        self.theta, self.axes_dim, self.head_dim = float(theta), tuple(axes), head_dim

    def forward(self, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if not isinstance(ids, torch.Tensor) or ids.ndim != 2 or ids.shape[1] != len(self.axes_dim):
            shape = tuple(ids.shape) if isinstance(ids, torch.Tensor) else type(ids).__name__
            raise ValueError(f"ids must be a tensor of shape (num_tokens, {len(self.axes_dim)}) (one column per "
                             f"rotary axis of axes_dim={self.axes_dim}); got {shape}")
        if not torch.isfinite(ids.float()).all():
            raise ValueError("ids must be finite")
        pos = ids.to(torch.float64)
        cos, sin = [], []
        for a, dim in enumerate(self.axes_dim):
            # theta_a,i = theta^(-2i/d_a); angle = p_a * theta_a,i; each angle drives one (real, imag) pair
            freqs = self.theta ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)
            angle = pos[:, a:a + 1] * freqs[None, :]
            cos.append(angle.cos().repeat_interleave(2, dim=1))
            sin.append(angle.sin().repeat_interleave(2, dim=1))
        return torch.cat(cos, 1).float().to(ids.device), torch.cat(sin, 1).float().to(ids.device)

    def extra_repr(self) -> str:
        return f"theta={self.theta:g}, axes_dim={self.axes_dim}"
