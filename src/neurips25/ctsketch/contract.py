"""Contracting a sketch with input distributions: the expected program output (CTSketch, Sec. 3).

``E_{r ~ p_1 x ... x p_k}[c(r)] = T x_1 p_1 x_2 p_2 ... x_k p_k ~ T_hat x_1 p_1 ... x_k p_k``; with a
sketch the dense ``T`` is never built. The error of the sketched expectation obeys

``|<T - T_hat, p_1 o ... o p_k>| <= ||T - T_hat||_F * prod_i ||p_i||_2 <= ||T - T_hat||_F``

(Cauchy-Schwarz, and ``||p||_2 <= ||p||_1 = 1`` for a distribution): :func:`error_bound`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from neurips25.ctsketch.decompose import Sketch


def check_distributions(
    distributions, sizes: Sequence[int], *, name: str = "distributions", atol: float = 1e-4
) -> tuple[list[torch.Tensor], bool]:
    """Validate input distributions against domain ``sizes``; return them batched and whether they were.

    ``distributions`` is a sequence of ``k`` tensors of shape ``[B, d_i]`` (or ``[d_i]``), or one tensor
    ``[B, k, d]`` when all domains have the same size ``d``. Each row must be non-negative and sum to 1
    within ``atol``.
    """
    k = len(sizes)
    if isinstance(distributions, torch.Tensor):
        if distributions.ndim != 3 or distributions.shape[1] != k:
            raise ValueError(
                f"`{name}` as one tensor must have shape [B, {k}, d]; got {tuple(distributions.shape)}"
            )
        distributions = list(distributions.unbind(1))
    if not isinstance(distributions, Sequence) or isinstance(distributions, str):
        raise TypeError(
            f"`{name}` must be a sequence of {k} tensors or one [B, {k}, d] tensor; "
            f"got {type(distributions).__name__}"
        )
    if len(distributions) != k:
        raise ValueError(
            f"`{name}` must hold one distribution per program input ({k}); got {len(distributions)}"
        )
    ps, batched = [], None
    for i, (p, d) in enumerate(zip(distributions, sizes)):
        if not isinstance(p, torch.Tensor):
            raise TypeError(f"`{name}[{i}]` must be a torch.Tensor; got {type(p).__name__}")
        if p.ndim not in (1, 2):
            raise ValueError(f"`{name}[{i}]` must have shape [B, {d}] or [{d}]; got {tuple(p.shape)}")
        if batched is None:
            batched = p.ndim == 2
        elif batched != (p.ndim == 2):
            raise ValueError(f"`{name}` mixes batched and unbatched distributions")
        p = p if p.ndim == 2 else p.unsqueeze(0)
        if p.shape[1] != d:
            raise ValueError(f"`{name}[{i}]` must have domain size {d}; got {p.shape[1]}")
        if ps and p.shape[0] != ps[0].shape[0]:
            raise ValueError(
                f"`{name}` must share one batch size; `{name}[{i}]` has {p.shape[0]}, "
                f"`{name}[0]` has {ps[0].shape[0]}"
            )
        if not torch.isfinite(p).all():
            raise ValueError(f"`{name}[{i}]` holds NaN or infinite entries")
        if (p < -atol).any():
            raise ValueError(f"`{name}[{i}]` has negative probabilities (min {p.min().item():.3g})")
        total = p.sum(-1)
        worst = (total - 1).abs().max().item()
        if worst > atol:
            raise ValueError(
                f"`{name}[{i}]` rows must sum to 1 (within {atol:g}); worst row sums to "
                f"{total[(total - 1).abs().argmax()].item():.6g}"
            )
        ps.append(p)
    return ps, bool(batched)


def contract(sketch: Sketch, distributions, *, atol: float = 1e-4) -> torch.Tensor:
    """Expected output of a sketched sub-program under independent input distributions.

    Parameters
    ----------
    sketch : Sketch
        A :class:`TTSketch`, :class:`CPSketch` or :class:`TuckerSketch` whose first ``k = n_inputs``
        modes are inputs.
    distributions : sequence of Tensor ``[B, d_i]`` (or ``[d_i]``), or Tensor ``[B, k, d]``
        One distribution per input over that input's domain.
    atol : float
        Tolerance of the non-negativity and sum-to-one checks.

    Returns
    -------
    Tensor
        ``[B]`` (value tensors) or ``[B, *output modes]`` (one-hot output mode); unbatched inputs drop ``B``.

    Examples
    --------
    >>> import torch
    >>> from neurips25.ctsketch import tensorize, tt_decompose
    >>> sk = tt_decompose(tensorize(lambda a, b: a + b, [10, 10]), rank=2, seed=0)
    >>> p = torch.full((10,), 0.1, dtype=torch.float64)
    >>> round(float(contract(sk, [p, p])), 6)
    9.0
    """
    if not isinstance(sketch, Sketch):
        raise TypeError(
            f"`sketch` must be a Sketch (from tt_decompose, cp_decompose, tucker_decompose); "
            f"got {type(sketch).__name__}"
        )
    ps, batched = check_distributions(distributions, sketch.shape[: sketch.n_inputs], atol=atol)
    dtype = sketch.tensors()[0].dtype
    out = sketch.contract([p.to(dtype) for p in ps])
    return out if batched else out[0]


def dense_contract(tensor: torch.Tensor, distributions: Sequence[torch.Tensor]) -> torch.Tensor:
    """Reference contraction with the dense tensor (materialises ``T``; used as the anchor in checks).

    ``tensor: [d_1..d_K]``, ``distributions[i]: [B, d_i]`` for the first ``k`` modes -> ``[B, d_{k+1}..]``.
    """
    out = tensor.unsqueeze(0).expand(distributions[0].shape[0], *tensor.shape)
    for p in distributions:
        out = torch.einsum("bd...,bd->b...", out, p.to(tensor.dtype))
    return out


def error_bound(sketch: Sketch, tensor: torch.Tensor, distributions=None) -> float | torch.Tensor:
    """Upper bound on the contraction error, ``||T - T_hat||_F * prod_i ||p_i||_2``.

    Without ``distributions`` the worst case over all distributions, ``||T - T_hat||_F``, is returned.
    """
    frob = sketch.error(tensor, relative=False)
    if distributions is None:
        return frob
    ps, batched = check_distributions(distributions, sketch.shape[: sketch.n_inputs])
    norms = torch.stack([torch.linalg.vector_norm(p.double(), dim=-1) for p in ps]).prod(0)
    out = frob * norms
    return out if batched else out[0]


def enumeration_memory_bytes(sizes: Sequence[int], bytes_per_entry: int = 4) -> float:
    """Memory of the dense (undecomposed) summary tensor over domains of ``sizes`` (as a float)."""
    return float(math.prod(float(s) for s in sizes) * bytes_per_entry)
