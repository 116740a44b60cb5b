"""Car-like bodies as signed distance functions, their voxelisation and surface sampling.

DrivAerNet++ is not available offline, so the designs live in a parametric car-body family
(reconstructed): a body of length L, width W, height H whose cross-section is a superellipse (exponent
``q``: round to boxy) scaled along x by a nose profile (exponent ``p_nose``: blunt to pointed), a tail
profile (``p_tail``) and a tail taper, with a rear-slant plane (fastback / notchback / estate by its angle
and start) and a smooth random surface perturbation. Coordinates are in reference lengths (see
:mod:`neurips25.inverse3d.cfd`); x is the flow direction. The functions return approximate signed
distances (exact for the sphere and box), negative inside.
"""

from __future__ import annotations

import dataclasses
import math
import numbers

import numpy as np

#: body centre in the default 48 x 24 x 24 box (8 x 4 x 4 reference lengths)
CENTER = (2.5, 2.0, 2.0)
#: design envelope: maximal length, width, height (the box every design must stay inside)
ENVELOPE = (2.8, 1.2, 1.2)


def sphere_sdf(center, radius):
    """Signed distance to a sphere."""
    c = np.asarray(center, dtype=float)
    return lambda p: np.linalg.norm(np.asarray(p) - c, axis=-1) - radius


def box_sdf(center, half):
    """Signed distance to an axis-aligned box with half-sizes ``half``."""
    c, b = np.asarray(center, dtype=float), np.asarray(half, dtype=float)

    def f(p):
        q = np.abs(np.asarray(p) - c) - b
        return np.linalg.norm(np.maximum(q, 0), axis=-1) + np.minimum(q.max(-1), 0)
    return f


def ellipsoid_sdf(center, radii):
    """Approximate signed distance to an axis-aligned ellipsoid (first-order, exact on the axes)."""
    c, r = np.asarray(center, dtype=float), np.asarray(radii, dtype=float)

    def f(p):
        q = (np.asarray(p) - c) / r
        k0 = np.linalg.norm(q, axis=-1)
        k1 = np.linalg.norm(q / r, axis=-1)
        return k0 * (k0 - 1) / np.maximum(k1, 1e-12)
    return f


@dataclasses.dataclass(frozen=True)
class CarBody:
    """One member of :class:`CarBodyFamily` (all lengths in reference lengths, angles in degrees)."""

    length: float
    width: float
    height: float
    q: float
    p_nose: float
    p_tail: float
    taper: float
    slant_deg: float
    slant_start: float
    noise: tuple = ()
    center: tuple = CENTER

    def params(self) -> np.ndarray:
        return np.array([self.length, self.width, self.height, self.q, self.p_nose, self.p_tail, self.taper,
                         self.slant_deg, self.slant_start])

    def sdf(self, p):
        """Approximate signed distance at points ``p`` of shape (..., 3)."""
        p = np.asarray(p, dtype=float)
        x, y, z = (p[..., i] - self.center[i] for i in range(3))
        half_l = self.length / 2
        s = np.clip(x / half_l, -1, 1)
        expo = np.where(s < 0, self.p_nose, self.p_tail)
        prof = np.power(np.clip(1 - np.abs(s) ** expo, 1e-9, 1), 1 / expo)
        prof = prof * (1 - (1 - self.taper) * np.maximum(s, 0) ** 2)
        wc = np.maximum(self.width / 2 * prof, 1e-4)
        hc = np.maximum(self.height / 2 * prof, 1e-4)
        rad = (np.abs(y / wc) ** self.q + np.abs(z / hc) ** self.q) ** (1 / self.q)
        d = (rad - 1) * np.minimum(wc, hc)
        d = np.maximum(d, (np.abs(x) - half_l))
        # rear slant: cut the top rear with a plane through (slant_start * L/2, H/2) at slant_deg
        ang = math.radians(self.slant_deg)
        if ang > 0:
            x0 = self.slant_start * half_l
            n = np.array([math.sin(ang), math.cos(ang)])
            d = np.maximum(d, (x - x0) * n[0] + (z - self.height / 2) * n[1])
        for amp, kx, ky, kz, ph in self.noise:
            d = d + amp * np.sin(kx * x + ky * y + kz * z + ph)
        return d


class CarBodyFamily:
    """Random car-like bodies (the stand-in for DrivAerNet++'s geometries).

    Parameters
    ----------
    seed : int
        Drives every draw.
    noise : float, default 0.02
        Amplitude (reference lengths) of the smooth random surface perturbation.

    Examples
    --------
    >>> fam = CarBodyFamily(seed=0)
    >>> body = fam.sample()
    >>> body.sdf([[2.5, 2.0, 2.0]]) < 0
    array([ True])
    """

    #: (low, high) of each parameter
    RANGES = dict(length=(1.6, 2.6), width=(0.7, 1.1), height=(0.6, 1.0), q=(2.0, 5.0), p_nose=(1.5, 4.0),
                  p_tail=(1.5, 4.0), taper=(0.4, 1.0), slant_deg=(0.0, 35.0), slant_start=(0.0, 0.7))

    def __init__(self, seed=0, noise=0.02):
        if not isinstance(seed, numbers.Integral):
            raise ValueError(f"`seed` must be an integer; got {seed!r}")
        if not isinstance(noise, numbers.Real) or not 0 <= noise <= 0.1:
            raise ValueError(f"`noise` must be a number in [0, 0.1]; got {noise!r}")
        self.rng = np.random.default_rng(int(seed))
        self.noise = float(noise)

    def sample(self) -> CarBody:
        kw = {k: float(self.rng.uniform(*r)) for k, r in self.RANGES.items()}
        modes = tuple((float(self.rng.uniform(0, self.noise)), *map(float, self.rng.normal(0, 4, 3)),
                       float(self.rng.uniform(0, 2 * math.pi))) for _ in range(3))
        return CarBody(**kw, noise=modes)

    def samples(self, n):
        return [self.sample() for _ in range(int(n))]


def cell_centers(grid, h):
    """Cell-centre coordinates, shape (nx, ny, nz, 3)."""
    axes = [(np.arange(n) + 0.5) * h for n in grid]
    return np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1)


def voxelize(sdf, grid, h):
    """Penalisation mask chi on a grid: ``clip(0.5 - sdf / h, 0, 1)`` at cell centres (a one-cell ramp).

    Parameters
    ----------
    sdf : callable
        Points (..., 3) -> signed distance (negative inside).
    grid : tuple of 3 ints
    h : float
        Cell size.

    Returns
    -------
    numpy.ndarray, float32, shape ``grid``
    """
    if not callable(sdf):
        raise ValueError(f"`sdf` must be a callable mapping points (..., 3) to distances; got {type(sdf).__name__}")
    if not isinstance(h, numbers.Real) or h <= 0:
        raise ValueError(f"`h` must be a number > 0; got {h!r}")
    if (not isinstance(grid, (tuple, list)) or len(grid) != 3
            or not all(isinstance(n, numbers.Integral) and n >= 1 for n in grid)):
        raise ValueError(f"`grid` must be a tuple of 3 positive integers (nx, ny, nz); got {grid!r}")
    d = sdf(cell_centers(tuple(int(n) for n in grid), float(h)))
    return np.clip(0.5 - d / h, 0.0, 1.0).astype(np.float32)


def _grad(sdf, p, eps=1e-3):
    g = np.empty_like(p)
    for i in range(3):
        e = np.zeros(3)
        e[i] = eps
        g[:, i] = (sdf(p + e) - sdf(p - e)) / (2 * eps)
    return g


def surface_points(sdf, n, lo, hi, rng, n_candidates=None):
    """Points on the zero level set and their outward normals.

    Samples candidates uniformly in the box ``[lo, hi]``, keeps those near the surface and projects them
    on it with three Newton steps along the SDF gradient.

    Returns
    -------
    (xyz, normals) : two arrays of shape (n, 3)
    """
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    n = int(n)
    if n < 1:
        raise ValueError(f"`n` must be >= 1; got {n}")
    band = 0.05 * float(np.min(hi - lo))
    pts = np.empty((0, 3))
    for _ in range(50):
        cand = rng.uniform(lo, hi, size=(n_candidates or 20 * n, 3))
        cand = cand[np.abs(sdf(cand)) < band]
        pts = np.concatenate([pts, cand])
        if len(pts) >= n:
            break
    if len(pts) < n:
        raise ValueError("`sdf` has (almost) no surface inside the box [lo, hi]")
    pts = pts[rng.permutation(len(pts))[:n]]
    for _ in range(3):
        g = _grad(sdf, pts)
        pts = pts - (sdf(pts) / np.maximum((g**2).sum(1), 1e-12))[:, None] * g
    g = _grad(sdf, pts)
    normals = g / np.maximum(np.linalg.norm(g, axis=1, keepdims=True), 1e-12)
    return pts, normals
