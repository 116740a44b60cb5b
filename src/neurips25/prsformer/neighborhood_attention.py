"""1-D neighborhood attention in pure PyTorch, with NATTEN's exact window rule.

Neighborhood attention (Hassani et al., CVPR 2023; dilated: Hassani & Shi, 2022) lets each query
attend to ``kernel_size`` keys around it. PRSformer stacks it over SNP tokens so that one layer sees
a local LD block and deeper, dilated layers see wider regions, at O(L) cost per layer.

The window rule (the one NATTEN implements; a zero-padded sliding window is a different operator):
for query ``i`` with dilation ``d``, let ``g = i mod d`` (its dilation group), ``t = i // d`` (its
index inside the group) and ``L_g`` the number of positions congruent to ``g``. The window starts at
``s = clamp(t - k // 2, 0, L_g - k)`` and the neighbors are positions ``g + d * (s, ..., s + k - 1)``.
Every query therefore sees exactly ``k`` keys; windows shift inward at the sequence ends.

Implementation: queries of one dilation group are cut into blocks of ``block`` consecutive queries.
Window starts are non-decreasing with step <= 1, so all windows of a block lie inside a slab of
``block + k - 1`` keys. Each block computes a small dense score matrix against its slab and masks the
keys outside each query's window. Memory and time are O(L * (block + k) * D): linear in L, and no
L x L matrix is ever built.
"""

from __future__ import annotations

import importlib.util

import torch
from torch import nn

__all__ = [
    "neighborhood_attention",
    "neighborhood_indices",
    "neighborhood_mask",
    "reference_neighborhood_attention",
    "NeighborhoodAttention1D",
    "receptive_field",
]


def _check_window(length: int, kernel_size: int, dilation: int) -> None:
    if isinstance(kernel_size, bool) or not isinstance(kernel_size, int):
        raise TypeError(f"`kernel_size` must be an int, got {type(kernel_size).__name__}")
    if isinstance(dilation, bool) or not isinstance(dilation, int):
        raise TypeError(f"`dilation` must be an int, got {type(dilation).__name__}")
    if kernel_size < 1 or kernel_size % 2 == 0:
        raise ValueError(f"`kernel_size` must be a positive odd int, got {kernel_size}")
    if dilation < 1:
        raise ValueError(f"`dilation` must be >= 1, got {dilation}")
    if length // dilation < kernel_size:
        raise ValueError(
            f"`kernel_size`={kernel_size} with `dilation`={dilation} needs a sequence of at least "
            f"kernel_size * dilation = {kernel_size * dilation} positions (every dilation group must "
            f"hold kernel_size keys), got L={length}"
        )


def _window_starts(length: int, kernel_size: int, dilation: int, device=None) -> torch.Tensor:
    """Window start ``s`` (index inside the dilation group) for every (group, t) on a padded grid.

    Returns a long tensor ``[dilation, ceil(L / dilation)]``; entries of padding positions (``g + d*t
    >= L``) hold a valid start and are discarded by the caller.
    """
    n_t = -(-length // dilation)
    g = torch.arange(dilation, device=device)[:, None]
    t = torch.arange(n_t, device=device)[None, :]
    group_len = (length - g + dilation - 1) // dilation  # L_g, positions congruent to g
    return (t - kernel_size // 2).clamp(min=0).minimum(group_len - kernel_size)


def neighborhood_indices(length: int, kernel_size: int, dilation: int = 1) -> torch.Tensor:
    """Key positions of every query under NATTEN's rule.

    Parameters
    ----------
    length : int
        Sequence length L.
    kernel_size : int
        Odd window size k, with ``k * dilation <= L``.
    dilation : int, default=1
        Dilation d.

    Returns
    -------
    torch.Tensor
        Long tensor ``[L, k]``; row ``i`` lists the keys of query ``i`` in increasing order.

    Examples
    --------
    >>> neighborhood_indices(5, 3)[0].tolist(), neighborhood_indices(5, 3)[4].tolist()
    ([0, 1, 2], [2, 3, 4])
    """
    _check_window(length, kernel_size, dilation)
    i = torch.arange(length)
    g, t = i % dilation, i // dilation
    starts = _window_starts(length, kernel_size, dilation)[g, t]
    return g[:, None] + dilation * (starts[:, None] + torch.arange(kernel_size)[None, :])


def neighborhood_mask(length: int, kernel_size: int, dilation: int = 1, device=None) -> torch.Tensor:
    """Boolean ``[L, L]`` mask, True where query ``i`` may attend key ``j`` (for tests and dense use).

    Built by broadcasting (same group ``j % d == i % d`` and ``start_i <= j // d < start_i + k``),
    so it can also be traced on the ``meta`` device without allocating L x L memory.
    """
    _check_window(length, kernel_size, dilation)
    i = torch.arange(length, device=device)
    starts = _window_starts(length, kernel_size, dilation, device=device)[i % dilation, i // dilation]
    same_group = (i[:, None] % dilation) == (i[None, :] % dilation)
    offset = (i[None, :] // dilation) - starts[:, None]
    return same_group & (offset >= 0) & (offset < kernel_size)


def reference_neighborhood_attention(q, k, v, kernel_size: int, dilation: int = 1, scale=None):
    """Dense attention with the neighborhood mask: the O(L^2) oracle for :func:`neighborhood_attention`."""
    length = q.shape[-2]
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    mask = neighborhood_mask(length, kernel_size, dilation, device=q.device)
    scores = (q @ k.transpose(-1, -2)) * scale
    scores = scores.masked_fill(~mask, float("-inf"))
    return scores.softmax(dim=-1) @ v


def _default_block(group_length: int, kernel_size: int) -> int:
    """Queries per block: the smallest divisor of ``group_length`` in ``[k, 2k]`` (whole blocks), else ``k``."""
    for size in range(kernel_size, 2 * kernel_size + 1):
        if group_length % size == 0:
            return size
    return kernel_size


def neighborhood_attention(q, k, v, kernel_size: int, dilation: int = 1, scale: float | None = None,
                           block: int | None = None) -> torch.Tensor:
    """1-D neighborhood attention, ``softmax(q k_N(i)^T * scale) v_N(i)`` over each query's window.

    Parameters
    ----------
    q, k, v : torch.Tensor
        ``[B, H, L, D]`` (batch, heads, sequence, head dim), same shape, floating point.
    kernel_size : int
        Odd number of keys per query, k. Requires ``k * dilation <= L``.
    dilation : int, default=1
        Stride between neighbors; windows are formed inside each dilation group.
    scale : float, optional
        Score scale; default ``1 / sqrt(D)``.
    block : int, optional
        Queries per block. Default: the smallest divisor of a dilation group's length ``ceil(L / dilation)`` in
        ``[k, 2k]`` (no padded queries, no copies to cut them off again: 1.17x faster at PRSformer's quick shape),
        else ``k``. Memory is about ``L * (block + k - 1)`` scores.

    Returns
    -------
    torch.Tensor
        ``[B, H, L, D]``. Differentiable in q, k and v.

    Notes
    -----
    Equals dense attention with :func:`neighborhood_mask` (tested to 1e-5 in fp32) but never builds
    an L x L matrix. For CUDA tensors and an installed ``natten``, :class:`NeighborhoodAttention1D`
    can dispatch to NATTEN's kernels instead.

    Examples
    --------
    >>> q = k = v = torch.randn(1, 2, 64, 8)
    >>> neighborhood_attention(q, k, v, kernel_size=7, dilation=2).shape
    torch.Size([1, 2, 64, 8])
    """
    for name, x in (("q", q), ("k", k), ("v", v)):
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"`{name}` must be a torch.Tensor, got {type(x).__name__}")
        if x.dim() != 4:
            raise ValueError(f"`{name}` must have shape [B, H, L, D], got {tuple(x.shape)}")
        if not x.is_floating_point():
            raise TypeError(f"`{name}` must be floating point, got {x.dtype}")
    if k.dtype != q.dtype or v.dtype != q.dtype:
        raise TypeError(f"`q`, `k`, `v` must share one dtype, got {q.dtype}, {k.dtype}, {v.dtype}; "
                        "cast them first (e.g. k.to(q.dtype))")
    if k.device != q.device or v.device != q.device:
        raise ValueError(f"`q`, `k`, `v` must be on one device, got {q.device}, {k.device}, {v.device}")
    if k.shape != q.shape or v.shape != q.shape:
        raise ValueError(f"`q`, `k`, `v` must share one shape, got {tuple(q.shape)}, {tuple(k.shape)}, "
                         f"{tuple(v.shape)}")
    B, H, L, D = q.shape
    _check_window(L, kernel_size, dilation)
    scale = D ** -0.5 if scale is None else float(scale)
    d, ks = dilation, kernel_size
    Q = _default_block(-(-L // d), ks) if block is None else int(block)
    if Q < 1:
        raise ValueError(f"`block` must be >= 1, got {block}")

    # Regroup by dilation: [B, H, L, D] -> [B, H, d, Lg, D] (position g + d*t -> [g, t]); pad L to d*Lg.
    Lg = -(-L // d)
    n_blocks = -(-Lg // Q)
    Lq = n_blocks * Q  # queries per group after padding to whole blocks
    pad = d * Lg - L

    def group(x: torch.Tensor) -> torch.Tensor:
        if pad:
            x = torch.nn.functional.pad(x, (0, 0, 0, pad))
        return x.reshape(B, H, Lg, d, D).transpose(2, 3)

    qg, kg, vg = group(q), group(k), group(v)
    if Lq > Lg:
        qg = torch.nn.functional.pad(qg, (0, 0, 0, Lq - Lg))
    starts = _window_starts(L, ks, d, device=q.device)  # [d, Lg]
    if Lq > Lg:
        starts = torch.cat([starts, starts[:, -1:].expand(d, Lq - Lg)], dim=1)
    starts = starts.view(d, n_blocks, Q)
    # Slab of keys for each block: from the first query's window start, block + k - 1 long.
    S = Q + ks - 1
    slab = starts[:, :, :1] + torch.arange(S, device=q.device)  # [d, nb, S]
    # Key j of the slab is in query t's window iff start_t <= slab_j < start_t + k.
    rel = slab[:, :, None, :] - starts[:, :, :, None]  # [d, nb, Q, S]
    # additive mask: 0 inside the window, -inf outside (one add over the scores instead of a masked_fill)
    bias = torch.zeros(rel.shape, dtype=q.dtype, device=q.device).masked_fill_((rel < 0) | (rel >= ks), float("-inf"))
    slab = slab.clamp(max=Lg - 1)  # out-of-range slab slots are never allowed; clamp to gather safely

    flat = slab.reshape(d, n_blocks * S)
    index = flat[None, None, :, :, None].expand(B, H, d, n_blocks * S, D)
    ks_ = kg.gather(3, index).view(B, H, d, n_blocks, S, D)
    vs_ = vg.gather(3, index).view(B, H, d, n_blocks, S, D)
    qb = qg.view(B, H, d, n_blocks, Q, D) * scale  # scaling q (Q x D) costs less than scaling the scores (Q x S)
    scores = qb @ ks_.transpose(-1, -2) + bias  # [B, H, d, nb, Q, S]
    out = scores.softmax(dim=-1) @ vs_  # [B, H, d, nb, Q, D]
    # Undo the grouping: [B, H, d, Lq, D] -> [B, H, Lg, d, D] -> [B, H, L, D].
    out = out.reshape(B, H, d, Lq, D)[:, :, :, :Lg].transpose(2, 3).reshape(B, H, d * Lg, D)
    return out[:, :, :L]


def _natten_available() -> bool:
    return importlib.util.find_spec("natten") is not None


class NeighborhoodAttention1D(nn.Module):
    """Multi-head 1-D neighborhood attention layer (qkv projection, attention, output projection).

    Mirrors ``natten.NeighborhoodAttention1D``'s constructor and its ``[B, L, E]`` layout. The
    PRSformer block uses qkv bias, no relative position bias and no dropout.

    Parameters
    ----------
    embed_dim : int
        Token width E; must be divisible by ``num_heads``.
    num_heads : int
        Heads H.
    kernel_size : int
        Odd window size k.
    dilation : int, default=1
        Dilation d.
    qkv_bias : bool, default=True
        Bias in the qkv projection.
    qk_scale : float, optional
        Score scale; default ``1 / sqrt(E / H)``.
    backend : {"auto", "torch", "natten"}, default="auto"
        ``"torch"``: :func:`neighborhood_attention`. ``"natten"``: ``natten.na1d`` (must be
        installed). ``"auto"``: natten when it is installed and the input is on CUDA, else torch.

    Examples
    --------
    >>> layer = NeighborhoodAttention1D(16, 2, kernel_size=5, dilation=2)
    >>> layer(torch.randn(3, 40, 16)).shape
    torch.Size([3, 40, 16])
    """

    def __init__(self, embed_dim: int, num_heads: int, kernel_size: int, dilation: int = 1,
                 qkv_bias: bool = True, qk_scale: float | None = None, backend: str = "auto"):
        super().__init__()
        if embed_dim < 1 or num_heads < 1 or embed_dim % num_heads:
            raise ValueError(f"`embed_dim` ({embed_dim}) must be a positive multiple of `num_heads` "
                             f"({num_heads})")
        if backend not in ("auto", "torch", "natten"):
            raise ValueError(f"`backend` must be 'auto', 'torch' or 'natten', got {backend!r}")
        if backend == "natten" and not _natten_available():
            raise ImportError("backend='natten' needs the `natten` package (CUDA build); "
                              "use backend='torch' for the pure PyTorch path")
        _check_window(kernel_size * dilation, kernel_size, dilation)  # validates k odd, d >= 1
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.kernel_size, self.dilation, self.backend = kernel_size, dilation, backend
        self.head_dim = embed_dim // num_heads
        self.scale = qk_scale if qk_scale is not None else self.head_dim ** -0.5
        self.qkv = nn.Linear(embed_dim, 3 * embed_dim, bias=qkv_bias)
        self.proj = nn.Linear(embed_dim, embed_dim)

    def _use_natten(self, x: torch.Tensor) -> bool:
        if self.backend == "natten":
            return True
        return self.backend == "auto" and x.is_cuda and _natten_available()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``x``: ``[B, L, E]`` -> ``[B, L, E]``."""
        if x.dim() != 3 or x.shape[-1] != self.embed_dim:
            raise ValueError(f"`x` must have shape [B, L, {self.embed_dim}], got {tuple(x.shape)}")
        B, L, _ = x.shape
        qkv = self.qkv(x).view(B, L, 3, self.num_heads, self.head_dim)
        if self._use_natten(x):  # natten's functional API takes [B, L, H, D]
            natten = importlib.import_module("natten")
            q, k, v = qkv.unbind(2)
            out = natten.na1d(q, k, v, kernel_size=self.kernel_size, dilation=self.dilation,
                              scale=self.scale).reshape(B, L, self.embed_dim)
        else:
            q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)  # each [B, H, L, D]
            out = neighborhood_attention(q, k, v, self.kernel_size, self.dilation, self.scale)
            out = out.transpose(1, 2).reshape(B, L, self.embed_dim)
        return self.proj(out)

    def extra_repr(self) -> str:
        return (f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, kernel_size={self.kernel_size}, "
                f"dilation={self.dilation}, backend={self.backend!r}")


def receptive_field(kernel_size: int, dilations) -> int:
    """Positions a token at the end of a stack of NA layers can depend on (one side and the other)."""
    return 1 + sum((kernel_size - 1) * d for d in dilations)

