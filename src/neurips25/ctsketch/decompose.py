"""Sketching a summary tensor: tensor-train (own TT-SVD), CP and Tucker (tensorly) (CTSketch step 2).

The summary tensor of a fixed sub-program is decomposed ONCE, before training; the sketch is never
learned. Each sketch type knows how to contract its factors with input distributions without ever
building the dense tensor, at cost ``O(k * |R| * r^2)`` per example for a rank-``r`` tensor train.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np
import torch

from neurips25.extras import require


def _check_tensor(tensor, name: str = "tensor") -> torch.Tensor:
    if isinstance(tensor, np.ndarray):
        tensor = torch.from_numpy(tensor)
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"`{name}` must be a torch.Tensor or numpy array; got {type(tensor).__name__}")
    if tensor.ndim < 1 or tensor.numel() == 0:
        raise ValueError(
            f"`{name}` must be a non-empty tensor with at least one mode; got shape {tuple(tensor.shape)}"
        )
    if not tensor.is_floating_point():
        tensor = tensor.to(torch.float64)
    # a finite sum means every entry is finite (a NaN or an inf makes it NaN / inf); only a sum that overflowed
    # (or a real NaN / inf) needs the entry-wise test, which is three passes over the tensor
    if not bool(torch.isfinite(tensor.sum())) and not torch.isfinite(tensor).all():
        raise ValueError(f"`{name}` holds NaN or infinite entries")
    return tensor


def _check_n_inputs(n_inputs, ndim: int) -> int:
    if n_inputs is None:
        return ndim
    if isinstance(n_inputs, bool) or not isinstance(n_inputs, (int, np.integer)):
        raise TypeError(f"`n_inputs` must be an int; got {type(n_inputs).__name__}")
    if not 1 <= n_inputs <= ndim:
        raise ValueError(f"`n_inputs` must be in [1, {ndim}] (the tensor's modes); got {n_inputs}")
    return int(n_inputs)


def _check_ranks(rank, n: int, name: str = "rank") -> list[int]:
    """``rank`` as ``n`` positive ints (an int is repeated)."""
    if isinstance(rank, bool):
        raise TypeError(f"`{name}` must be a positive int or a sequence of them; got {rank!r}")
    ranks = [rank] * n if isinstance(rank, (int, np.integer)) else rank
    if not isinstance(ranks, Sequence) or isinstance(ranks, str):
        raise TypeError(f"`{name}` must be a positive int or a sequence of them; got {type(rank).__name__}")
    if len(ranks) != n:
        raise ValueError(f"`{name}` must give {n} ranks; got {len(ranks)}")
    for r in ranks:
        if isinstance(r, bool) or not isinstance(r, (int, np.integer)):
            raise TypeError(f"`{name}` must hold ints; got {r!r}")
        if r < 1:
            raise ValueError(f"`{name}` must be >= 1; got {r}")
    return [int(r) for r in ranks]


class Sketch:
    """A low-rank sketch ``T_hat`` of a summary tensor whose first ``n_inputs`` modes are inputs.

    Modes after the first ``n_inputs`` are output modes (e.g. the one-hot output mode) and are left
    uncontracted by :meth:`contract`.
    """

    n_inputs: int

    @property
    def shape(self) -> tuple[int, ...]:
        raise NotImplementedError

    @property
    def n_params(self) -> int:
        return sum(t.numel() for t in self.tensors())

    def tensors(self) -> list[torch.Tensor]:
        raise NotImplementedError

    def full(self) -> torch.Tensor:
        """The dense tensor ``T_hat`` (for checks on small tensors only)."""
        raise NotImplementedError

    def contract(self, ps: Sequence[torch.Tensor]) -> torch.Tensor:
        """``T_hat x_1 p_1 ... x_k p_k`` for batched ``ps[i]: [B, d_i]`` -> ``[B, *output modes]``.

        Unchecked fast path; use :func:`neurips25.ctsketch.contract` for validated input.
        """
        raise NotImplementedError

    def to(self, *args, **kwargs) -> Sketch:
        """A copy with every factor moved / cast like ``Tensor.to``."""
        return dataclasses.replace(
            self,
            **{
                f.name: (
                    getattr(self, f.name).to(*args, **kwargs)
                    if isinstance(getattr(self, f.name), torch.Tensor)
                    else [t.to(*args, **kwargs) for t in getattr(self, f.name)]
                )
                for f in dataclasses.fields(self)
                if f.name not in ("n_inputs", "tail")
            },
        )

    def error(self, tensor: torch.Tensor, relative: bool = True) -> float:
        """``||T - T_hat||_F`` (divided by ``||T||_F`` when ``relative``)."""
        tensor = _check_tensor(tensor)
        if tuple(tensor.shape) != self.shape:
            raise ValueError(f"`tensor` must have the sketch's shape {self.shape}; got {tuple(tensor.shape)}")
        diff = torch.linalg.vector_norm((tensor - self.full().to(tensor.dtype)).double()).item()
        if not relative:
            return diff
        norm = torch.linalg.vector_norm(tensor.double()).item()
        return diff / norm if norm > 0 else diff


@dataclasses.dataclass
class TTSketch(Sketch):
    """Tensor-train sketch: ``T_hat[i_1..i_K] = G_1[:, i_1, :] G_2[:, i_2, :] ... G_K[:, i_K, :]``.

    Attributes
    ----------
    cores : list of Tensor
        ``G_k`` of shape ``[r_{k-1}, d_k, r_k]`` with ``r_0 = r_K = 1``.
    n_inputs : int
        Number of leading input modes.
    tail : list of float
        Per bond, the root-sum-square of the singular values discarded there; for the exact TT-SVD,
        ``||T - T_hat||_F <= sqrt(sum(tail**2))`` (Oseledets 2011, Thm 2.2).
    """

    cores: list[torch.Tensor]
    n_inputs: int
    tail: list[float] = dataclasses.field(default_factory=list)

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(int(g.shape[1]) for g in self.cores)

    @property
    def ranks(self) -> tuple[int, ...]:
        return tuple(int(g.shape[2]) for g in self.cores[:-1])

    def tensors(self) -> list[torch.Tensor]:
        return list(self.cores)

    def projection_error(self, tensor_norm: float) -> float:
        """``||T - T_hat||_F`` without reconstruction, valid for TT-SVD output (left-orthonormal cores).

        TT-SVD's ``T_hat`` is the orthogonal projection of ``T`` onto the span of its left-orthonormal
        cores, so ``||T - T_hat||^2 = ||T||^2 - ||T_hat||^2`` and ``||T_hat|| = ||G_K||``. Accurate to about
        ``1e-8 * ||T||`` (cancellation); use :meth:`error` for tiny errors on small tensors.
        """
        last = torch.linalg.vector_norm(self.cores[-1].double()).item()
        return float(np.sqrt(max(tensor_norm**2 - last**2, 0.0)))

    def full(self) -> torch.Tensor:
        out = self.cores[0]  # [1, d_1, r_1]
        for g in self.cores[1:]:
            out = torch.tensordot(out, g, dims=([out.ndim - 1], [0]))
        return out.reshape(self.shape)

    def contract(self, ps):
        # left-to-right sweep (CTSketch step 2): z <- p_1^T G_1, then z <- sum_i z G_j[:, i, :] p_j[i]
        z = ps[0] @ self.cores[0][0]  # [B, r_1]
        for g, p in zip(self.cores[1 : self.n_inputs], ps[1:]):
            r, d, s = g.shape
            # sum_i p[b, i] G[:, i, :] as ONE matmul [B, d] @ [d, r*s], then the rank-r dot with z
            # (a batched einsum runs as B tiny matmuls, several times slower on a CPU)
            w = (p @ g.permute(1, 0, 2).reshape(d, r * s)).reshape(-1, r, s)  # [B, r, s]
            z = (z.unsqueeze(-1) * w).sum(1)  # [B, s]
        if self.n_inputs == len(self.cores):
            return z[:, 0]
        rest = self.cores[self.n_inputs]
        for g in self.cores[self.n_inputs + 1 :]:
            rest = torch.tensordot(rest, g, dims=([rest.ndim - 1], [0]))
        return torch.tensordot(z, rest[..., 0], dims=([1], [0]))  # [B, *output modes]


@dataclasses.dataclass
class CPSketch(Sketch):
    """CP sketch: ``T_hat = sum_r w_r a^1_r o ... o a^K_r`` with ``factors[k]: [d_k, R]``."""

    weights: torch.Tensor
    factors: list[torch.Tensor]
    n_inputs: int

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(int(a.shape[0]) for a in self.factors)

    @property
    def rank(self) -> int:
        return int(self.weights.shape[0])

    def tensors(self) -> list[torch.Tensor]:
        return [self.weights, *self.factors]

    def full(self) -> torch.Tensor:
        return self.full_rank_terms().sum(0)

    def contract(self, ps):
        z = self.weights.unsqueeze(0)  # [1, R]
        for a, p in zip(self.factors[: self.n_inputs], ps):
            z = z * (p @ a)  # [B, R]
        outs = self.factors[self.n_inputs :]
        if not outs:
            return z.sum(-1)
        rest = CPSketch(torch.ones_like(self.weights), list(outs), len(outs)).full_rank_terms()
        return torch.tensordot(z, rest, dims=([1], [0]))

    def full_rank_terms(self) -> torch.Tensor:
        """Per rank-one term, the outer product of its factors: ``[R, d_1, ..., d_K]``."""
        out = self.weights.reshape(-1)
        out = out.reshape(-1, *([1] * len(self.factors)))
        for k, a in enumerate(self.factors):
            shape = [a.shape[1]] + [1] * len(self.factors)
            shape[k + 1] = a.shape[0]
            out = out * a.t().reshape(shape)
        return out


@dataclasses.dataclass
class TuckerSketch(Sketch):
    """Tucker sketch: ``T_hat = G x_1 U_1 ... x_K U_K``, ``core: [R_1..R_K]``, ``factors[k]: [d_k, R_k]``."""

    core: torch.Tensor
    factors: list[torch.Tensor]
    n_inputs: int

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(int(u.shape[0]) for u in self.factors)

    def tensors(self) -> list[torch.Tensor]:
        return [self.core, *self.factors]

    def full(self) -> torch.Tensor:
        out = self.core
        for k, u in enumerate(self.factors):
            out = torch.movedim(torch.tensordot(out, u, dims=([k], [1])), -1, k)
        return out

    def contract(self, ps):
        # project each distribution onto its factor's span first: p_k U_k is [B, R_k]
        z = torch.tensordot(ps[0] @ self.factors[0], self.core, dims=([1], [0]))  # [B, R_2, ..., R_K]
        for u, p in zip(self.factors[1 : self.n_inputs], ps[1:]):
            z = torch.einsum("br...,br->b...", z, p @ u)
        for u in self.factors[self.n_inputs :]:
            # each output factor consumes the leading rank mode and appends its output mode
            z = torch.tensordot(z, u, dims=([1], [1]))
        return z


def _range_finder(c: torch.Tensor, width: int, n_power_iter: int, gen: torch.Generator) -> torch.Tensor:
    """Halko-Martinsson-Tropp randomized range finder: an orthonormal basis ``Q`` with ``C ~ Q Q^T C``."""
    omega = torch.randn(c.shape[1], width, generator=gen, dtype=c.dtype)
    q, _ = torch.linalg.qr(c @ omega)
    for _ in range(n_power_iter):  # power iterations sharpen the spectrum of slowly decaying tensors
        q, _ = torch.linalg.qr(c.T @ q)
        q, _ = torch.linalg.qr(c @ q)
    return q


def tt_decompose(
    tensor: torch.Tensor,
    rank,
    *,
    n_inputs: int | None = None,
    randomized: bool = True,
    oversample: int = 5,
    n_power_iter: int = 1,
    n_trials: int = 1,
    seed: int | None = None,
) -> TTSketch:
    """Tensor-train decomposition by (randomized) TT-SVD (Oseledets 2011; HMT range finder per unfolding).

    For ``k = 1..K-1`` the current remainder is unfolded to ``[r_{k-1} d_k, d_{k+1} ... d_K]``, its leading
    ``r_k`` left singular vectors become core ``G_k`` and ``S V^T`` is carried on. With ``randomized`` the
    singular vectors come from a Gaussian sketch of ``rank + oversample`` columns (the HMT scheme the
    official code takes from ``tt-sketch``'s ``hmt_sketch``); otherwise from a full SVD.

    Parameters
    ----------
    tensor : Tensor, shape ``[d_1, ..., d_K]``
        The summary tensor (e.g. from :func:`tensorize`).
    rank : int or sequence of K-1 ints
        Maximal TT-ranks ``r_1..r_{K-1}``; each is capped by the unfolding's size.
    n_inputs : int, optional
        Leading input modes (default all); the rest are output modes.
    randomized, oversample, n_power_iter : bool, int, int
        HMT range-finder settings.
    n_trials : int
        Randomized runs; the one with the lowest relative error is kept (the official code keeps the
        better of two).
    seed : int, optional
        Seed of the Gaussian test matrices.

    Returns
    -------
    TTSketch

    Examples
    --------
    >>> from neurips25.ctsketch import tensorize
    >>> T = tensorize(lambda a, b, c: a + b + c, [10, 10, 10])
    >>> sk = tt_decompose(T, rank=2, seed=0)
    >>> sk.ranks, sk.error(T) < 1e-10
    ((2, 2), True)
    """
    tensor = _check_tensor(tensor)
    n_inputs = _check_n_inputs(n_inputs, tensor.ndim)
    ranks = _check_ranks(rank, tensor.ndim - 1)
    for name, v, lo in (
        ("oversample", oversample, 0),
        ("n_power_iter", n_power_iter, 0),
        ("n_trials", n_trials, 1),
    ):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
            raise ValueError(f"`{name}` must be an int >= {lo}; got {v!r}")
    gen = torch.Generator().manual_seed(
        int(seed) if seed is not None else int(torch.randint(2**31, ()).item())
    )
    best = None
    # torch has no SVD in bfloat16 / float16: decompose in float32 and hand back cores in the tensor's dtype,
    # as cp_decompose and tucker_decompose do
    work = tensor.float() if tensor.dtype in (torch.bfloat16, torch.float16) else tensor
    norm = None
    for _ in range(n_trials if randomized else 1):
        sk = _tt_svd(work, ranks, n_inputs, randomized, oversample, n_power_iter, gen)
        if work is not tensor:
            sk = TTSketch([c.to(tensor.dtype) for c in sk.cores], sk.n_inputs, sk.tail)
        if n_trials == 1 or not randomized:
            return sk
        if norm is None:
            norm = torch.linalg.vector_norm(tensor.double()).item()
        err = sk.projection_error(norm)
        if best is None or err < best[0]:
            best = (err, sk)
    return best[1]


def _thin_svd(m: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``torch.linalg.svd(m, full_matrices=False)``; a wide ``m`` is decomposed as its (tall) transpose, which
    LAPACK does ~3x faster (a [7, 10^5] sketch: 17 ms wide, 5 ms tall), and the factors swapped back."""
    if m.shape[0] >= m.shape[1]:
        return torch.linalg.svd(m, full_matrices=False)
    v, s, uh = torch.linalg.svd(m.T, full_matrices=False)
    return uh.T, s, v.T


def _tt_svd(tensor, ranks, n_inputs, randomized, oversample, n_power_iter, gen) -> TTSketch:
    dims = tensor.shape
    cores, tail = [], []
    c = tensor
    r_prev = 1
    for k in range(len(dims) - 1):
        c = c.reshape(r_prev * dims[k], -1)  # unfolding [r_{k-1} d_k, d_{k+1} ... d_K]
        r = min(ranks[k], c.shape[0], c.shape[1])
        width = r + oversample
        if randomized and width < min(c.shape):
            q = _range_finder(c, width, n_power_iter, gen)
            ub, s, vh = _thin_svd(q.T @ c)
            u = q @ ub
            # the discarded energy is measured against the whole unfolding, not only its sketch
            resid = torch.linalg.vector_norm(c).square() - s[:r].square().sum()
            tail.append(math.sqrt(max(resid.item(), 0.0)))
        else:
            u, s, vh = _thin_svd(c)
            tail.append(torch.linalg.vector_norm(s[r:]).item())
        cores.append(u[:, :r].reshape(r_prev, dims[k], r))
        c = s[:r, None] * vh[:r]
        r_prev = r
    cores.append(c.reshape(r_prev, dims[-1], 1))
    return TTSketch(cores, n_inputs, tail)


def cp_decompose(
    tensor: torch.Tensor,
    rank: int,
    *,
    n_inputs: int | None = None,
    n_iter_max: int = 200,
    seed: int | None = None,
) -> CPSketch:
    """CP decomposition by alternating least squares (tensorly's ``parafac``).

    Examples
    --------
    >>> from neurips25.ctsketch import tensorize
    >>> sk = cp_decompose(tensorize(lambda a, b: a * b, [5, 5]), rank=1, seed=0)
    >>> sk.error(tensorize(lambda a, b: a * b, [5, 5])) < 1e-6
    True
    """
    tensor = _check_tensor(tensor)
    n_inputs = _check_n_inputs(n_inputs, tensor.ndim)
    (rank,) = _check_ranks(rank, 1)
    decomposition = require("tensorly.decomposition", "tensor")
    weights, factors = decomposition.parafac(
        tensor.double().numpy(), rank, n_iter_max=n_iter_max, init="svd", random_state=seed, tol=1e-12
    )
    return CPSketch(
        torch.as_tensor(np.asarray(weights), dtype=tensor.dtype),
        [torch.as_tensor(np.asarray(a), dtype=tensor.dtype) for a in factors],
        n_inputs,
    )


def tucker_decompose(
    tensor: torch.Tensor, rank, *, n_inputs: int | None = None, n_iter_max: int = 100, seed: int | None = None
) -> TuckerSketch:
    """Tucker decomposition by higher-order orthogonal iteration (tensorly's ``tucker``).

    ``rank`` is an int (every mode) or one rank per mode; each is capped by the mode's size.

    Examples
    --------
    >>> from neurips25.ctsketch import tensorize
    >>> T = tensorize(lambda a, b: a + b, [6, 6])
    >>> tucker_decompose(T, rank=2, seed=0).error(T) < 1e-8
    True
    """
    tensor = _check_tensor(tensor)
    n_inputs = _check_n_inputs(n_inputs, tensor.ndim)
    ranks = [min(r, d) for r, d in zip(_check_ranks(rank, tensor.ndim), tensor.shape)]
    decomposition = require("tensorly.decomposition", "tensor")
    core, factors = decomposition.tucker(
        tensor.double().numpy(), rank=ranks, n_iter_max=n_iter_max, random_state=seed, init="svd", tol=1e-12
    )
    return TuckerSketch(
        torch.as_tensor(np.asarray(core), dtype=tensor.dtype),
        [torch.as_tensor(np.asarray(u), dtype=tensor.dtype) for u in factors],
        n_inputs,
    )


DECOMPOSERS = {"tt": tt_decompose, "cp": cp_decompose, "tucker": tucker_decompose}


def decompose(tensor: torch.Tensor, rank, method: str = "tt", **kwargs) -> Sketch:
    """Dispatch to :func:`tt_decompose` (``"tt"``), :func:`cp_decompose` or :func:`tucker_decompose`."""
    if method not in DECOMPOSERS:
        raise ValueError(f"`method` must be one of {sorted(DECOMPOSERS)}; got {method!r}")
    return DECOMPOSERS[method](tensor, rank, **kwargs)
