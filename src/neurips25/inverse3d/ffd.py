"""Free-form deformation (Sederberg & Parry 1986) with a trivariate Bernstein lattice.

A point ``x`` in the lattice box, with local coordinates ``s = (x - lo) / (hi - lo)`` in [0, 1]^3, moves by
``d(x) = sum_ijk B_i^l(s_1) B_j^m(s_2) B_k^n(s_3) c_ijk`` (the paper's ``v' = sum_i B_i(v) c_i`` written as
a displacement of the control points from their rest positions). Zero displacement is the identity; the
map is smooth, so a mesh carried by it keeps its connectivity; it is a diffeomorphism as long as the
Jacobian determinant ``det(I + dd/dx)`` stays positive, which :meth:`FFDLattice.jacobian_det` checks.
"""

from __future__ import annotations

import math
import numbers

import torch


def bernstein(t, n):
    """Bernstein basis of degree ``n - 1`` at ``t`` in [0, 1]: shape (..., n)."""
    k = torch.arange(n, dtype=t.dtype)
    binom = torch.tensor([math.comb(n - 1, int(i)) for i in range(n)], dtype=t.dtype)
    t = t.unsqueeze(-1)
    return binom * t**k * (1 - t) ** (n - 1 - k)


def bernstein_deriv(t, n):
    """d/dt of :func:`bernstein`: shape (..., n)."""
    if n == 1:
        return torch.zeros(*t.shape, 1, dtype=t.dtype)
    low = bernstein(t, n - 1)
    pad = torch.zeros(*t.shape, 1, dtype=t.dtype)
    return (n - 1) * (torch.cat([pad, low], -1) - torch.cat([low, pad], -1))


class FFDLattice:
    """A box lattice of control points that deforms space smoothly.

    Parameters
    ----------
    lo, hi : sequence of 3 floats
        The lattice box; points outside it do not move.
    shape : tuple of 3 ints, default (8, 4, 4)
        Control points along x, y, z (the paper uses 20 x 6 x 6 on a full car), each >= 2.

    Examples
    --------
    >>> import torch
    >>> lat = FFDLattice((0, 0, 0), (1, 1, 1), shape=(3, 3, 3))
    >>> x = torch.rand(5, 3)
    >>> bool(torch.allclose(lat.deform(x, lat.zeros()), x))
    True
    """

    def __init__(self, lo, hi, shape=(8, 4, 4)):
        lo_t = torch.as_tensor(lo, dtype=torch.float32)
        hi_t = torch.as_tensor(hi, dtype=torch.float32)
        if lo_t.shape != (3,) or hi_t.shape != (3,):
            raise ValueError(f"`lo` and `hi` must be 3-vectors; got {tuple(lo_t.shape)} and {tuple(hi_t.shape)}")
        if not bool((hi_t > lo_t).all()):
            raise ValueError(f"`hi` must exceed `lo` in every coordinate; got lo={lo}, hi={hi}")
        if (not isinstance(shape, (tuple, list)) or len(shape) != 3
                or not all(isinstance(n, numbers.Integral) and n >= 2 for n in shape)):
            raise ValueError(f"`shape` must be 3 integers >= 2; got {shape!r}")
        self.lo, self.hi = lo_t, hi_t
        self.shape = tuple(int(n) for n in shape)

    def zeros(self):
        """A zero control displacement, shape (*shape, 3)."""
        return torch.zeros(*self.shape, 3)

    def _check_disp(self, disp):
        if not isinstance(disp, torch.Tensor) or tuple(disp.shape) != (*self.shape, 3):
            got = tuple(disp.shape) if hasattr(disp, "shape") else type(disp).__name__
            raise ValueError(f"`control_disp` must be a tensor of shape {(*self.shape, 3)}; got {got}")

    def _local(self, x):
        lo, hi = self.lo.to(x.dtype), self.hi.to(x.dtype)  # the points' dtype, not float32's promotion
        s = (x - lo) / (hi - lo)
        inside = ((s >= 0) & (s <= 1)).all(-1, keepdim=True)
        return s.clamp(0, 1), inside

    def displacement(self, x, control_disp):
        """``d(x)`` at points (N, 3); zero outside the box."""
        self._check_disp(control_disp)
        s, inside = self._local(x)
        bx, by, bz = (bernstein(s[:, i], n) for i, n in enumerate(self.shape))
        d = torch.einsum("ni,nj,nk,ijkc->nc", bx, by, bz, control_disp.to(s.dtype))
        return d * inside

    def deform(self, vertices, control_disp):
        """Move points: ``x + d(x)``; ``vertices`` (N, 3) keep a floating dtype (integers -> float32)."""
        x = torch.as_tensor(vertices)
        if not x.is_floating_point():
            x = x.to(torch.float32)
        if x.ndim != 2 or x.shape[1] != 3:
            raise ValueError(f"`vertices` must have shape (N, 3); got {tuple(x.shape)}")
        return x + self.displacement(x, control_disp)

    def inverse(self, y, control_disp, iters=6):
        """Points ``x`` with ``x + d(x) = y`` by fixed-point iteration (converges while ``|dd/dx| < 1``)."""
        x = y
        for _ in range(iters):
            x = y - self.displacement(x, control_disp)
        return x

    def jacobian_det(self, control_disp, points=None, n=6):
        """``det(I + dd/dx)`` at ``points`` (default: an n^3 grid filling the lattice box)."""
        self._check_disp(control_disp)
        if points is None:
            t = (torch.arange(n, dtype=torch.float32) + 0.5) / n
            g = torch.stack(torch.meshgrid(t, t, t, indexing="ij"), -1).reshape(-1, 3)
            points = self.lo + g * (self.hi - self.lo)
        s, _ = self._local(points)
        B = [bernstein(s[:, i], m) for i, m in enumerate(self.shape)]
        D = [bernstein_deriv(s[:, i], m) for i, m in enumerate(self.shape)]
        scale = 1.0 / (self.hi - self.lo)
        cols = [
            torch.einsum("ni,nj,nk,ijkc->nc", D[0], B[1], B[2], control_disp) * scale[0],
            torch.einsum("ni,nj,nk,ijkc->nc", B[0], D[1], B[2], control_disp) * scale[1],
            torch.einsum("ni,nj,nk,ijkc->nc", B[0], B[1], D[2], control_disp) * scale[2],
        ]
        J = torch.eye(3) + torch.stack(cols, -1)  # J[n, c, dim] = d x'_c / d x_dim
        return torch.linalg.det(J)

    def jacobian_positive(self, control_disp, n=6):
        """Whether the deformation is locally invertible everywhere on an n^3 sample of the box."""
        return bool((self.jacobian_det(control_disp, n=n) > 0).all())

    def smoothness(self, control_disp, kind="laplacian"):
        """Smoothness penalty of the control displacements (the paper's ``lambda_smooth sum ||Δc_i||^2``).

        ``kind="laplacian"`` (default; the reading of ``Δ`` as a Laplacian): squared second differences of the
        displacements along each lattice axis, ``sum_a ||D2_a c||^2``. It is zero for every affine map
        (translation, stretch, shear), so an isochoric elongation of the body costs nothing here and is
        charged only by the volume term. ``kind="first_difference"``: squared differences of neighbouring
        control points, ``sum_a ||D1_a c||^2`` (this package's earlier reading), which charges stretches too.
        """
        c = control_disp
        if kind == "laplacian":
            return sum(((c.diff(n=2, dim=a)) ** 2).sum() for a in range(3) if c.shape[a] > 2)
        if kind == "first_difference":
            return sum(((c.diff(dim=a)) ** 2).sum() for a in range(3))
        raise ValueError(f"`kind` must be 'laplacian' or 'first_difference'; got {kind!r}")
