"""Per-slice transforms psi: from sliced quantile functions to an unconstrained Hilbert space and back.

Sliced quantile functions ``Q(theta, .)`` form a convex cone (each must increase in ``u``), not a linear
space, so principal components computed on them can leave the set of valid distributions. A transform
``psi`` maps each slice to a space where every element is valid again after ``psi^{-1}``. Two
strategies are shipped; anything with the same members (``name``, ``slice_estimator``, ``forward``,
``inverse``, ``coordinate_weights(u, Q=None)``, where ``Q`` are the fitted slice quantiles, for
data-dependent weights) can be passed to :class:`SlicedWassersteinFPCA` instead.

*Reconstructed*: the paper's exact transform is not known here (its full text was not available). The LQD
default follows Petersen & Mueller (2016), applied slice by slice with a location term.
"""

from __future__ import annotations

import numpy as np
from sklearn.isotonic import isotonic_regression


def _check_levels(Q: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    Q = np.asarray(Q, dtype=float)
    u = np.asarray(u, dtype=float)
    if u.ndim != 1 or u.size < 2 or np.any(np.diff(u) <= 0):
        raise ValueError("`u` must be an increasing 1-D array of at least 2 quantile levels")
    if Q.shape[-1:] != u.shape:
        raise ValueError(f"last axis of the input must match `u` ({u.size} levels), got shape {Q.shape}")
    if not np.all(np.isfinite(Q)):
        raise ValueError("the input contains NaN or infinite values")
    return Q, u


class QuantileTransform:
    """Identity on sliced quantile functions (the Wasserstein geometry itself).

    ``forward`` returns ``Q`` unchanged, so with midpoint levels (weights ``1/M``) the Hilbert distance
    between two embeddings is SW_2 between the distributions. ``inverse`` maps an arbitrary element
    back to the nearest non-decreasing function in L^2 (isotonic regression), slice by slice.

    Examples
    --------
    >>> t = QuantileTransform()
    >>> t.inverse(np.array([[0.0, 2.0, 1.0, 3.0]]), np.array([0.125, 0.375, 0.625, 0.875])).tolist()
    [[0.0, 1.5, 1.5, 3.0]]
    """

    name = "quantile"
    #: how slices are estimated from samples (see :func:`sliced_quantiles`)
    slice_estimator = "empirical"

    def forward(self, Q, u) -> np.ndarray:
        """Quantiles ``(..., M)`` -> embedding ``(..., M)`` (a copy of ``Q``)."""
        Q, u = _check_levels(Q, u)
        return Q.copy()

    def inverse(self, Y, u) -> np.ndarray:
        """Embedding ``(..., M)`` -> non-decreasing quantiles ``(..., M)`` (isotonic L^2 projection)."""
        Y, u = _check_levels(Y, u)
        flat = Y.reshape(-1, u.size)
        out = np.empty_like(flat)
        for r in range(flat.shape[0]):
            out[r] = isotonic_regression(flat[r], increasing=True)
        return out.reshape(Y.shape)

    def coordinate_weights(self, u, Q=None) -> np.ndarray:
        """Quadrature weights (M,) of the embedding coordinates: midpoint rule, ``1/M`` each (``Q`` unused)."""
        u = np.asarray(u, dtype=float)
        return np.full(u.size, 1.0 / u.size)

    def __repr__(self) -> str:
        return "QuantileTransform()"


def slice_variances(Q: np.ndarray) -> np.ndarray:
    """Variance of each slice from its quantile function at midpoint levels: ``mean(Q^2) - mean(Q)^2``."""
    return np.maximum(np.mean(Q**2, axis=-1) - np.mean(Q, axis=-1) ** 2, 0.0)


class LQDTransform:
    """Log-quantile-density transform per slice, with the slice median as location.

    For a slice with quantile function ``Q`` and density ``f``, ``g(u) = log Q'(u) = -log f(Q(u))``
    (Petersen & Mueller 2016, Eq. 8) and ``c = Q(1/2)``. The inverse

        Q(u) = c + int_{1/2}^{u} exp(g(s)) ds

    is strictly increasing for *every* ``g`` in L^2, so every point of the Hilbert space
    ``L^2(S^{d-1}) x L^2(S^{d-1} x [0, 1])`` maps back to a valid distribution slice.

    Discretisation: on levels ``u_1 < ... < u_M`` the embedding of one slice is ``M`` numbers,
    ``[c, g_{1+1/2}, ..., g_{M-1/2}]`` with ``c = Q(u_{m*})`` at the middle level ``m* = M // 2`` and
    ``g_{m+1/2} = log((Q(u_{m+1}) - Q(u_m)) / (u_{m+1} - u_m))``, so ``inverse(forward(Q)) == Q`` up to
    rounding. Weights: ``location_weight`` for ``c``, ``u_{m+1} - u_m`` for each ``g``.

    *Reconstructed* (not confirmed from the paper): the choice of LQD, the median as location and the
    weighting of the location against the shape part.

    Parameters
    ----------
    location_weight : "auto" or float > 0, default="auto"
        Weight of the location ``c`` in the Hilbert inner product. ``c`` carries the data's units (say
        mmHg) while ``g`` is unitless. ``"auto"`` makes the location unit-free: the weight is
        ``1 / s^2``, with ``s^2`` the mean slice variance of the fitted distributions (over distributions
        and directions), so a shift by one within-distribution s.d. weighs as much as scaling the spread
        by ``e``; the analysis is then unchanged when the data are rescaled. A float is an absolute weight
        in inverse squared data units (``1.0`` was the default of the first version: on data in mmHg it
        makes the FPCA a PCA of slice medians).

    Examples
    --------
    >>> t = LQDTransform(location_weight=1.0); u = np.array([0.25, 0.5, 0.75])
    >>> Y = t.forward(np.array([1.0, 2.0, 4.0]), u)
    >>> Y.round(4).tolist(), t.inverse(Y, u).tolist()
    ([2.0, 1.3863, 2.0794], [1.0, 2.0, 4.0])
    """

    name = "lqd"
    slice_estimator = "kde"

    def __init__(self, location_weight="auto"):
        if isinstance(location_weight, str):
            if location_weight != "auto":
                raise ValueError(f"`location_weight` must be 'auto' or a positive float, got {location_weight!r}")
        elif isinstance(location_weight, bool) or not isinstance(location_weight, (int, float, np.number)) \
                or not np.isfinite(location_weight) or location_weight <= 0:
            raise ValueError(f"`location_weight` must be 'auto' or a positive float, got {location_weight!r}")
        self.location_weight = location_weight if isinstance(location_weight, str) else float(location_weight)

    def forward(self, Q, u) -> np.ndarray:
        """Quantiles ``(..., M)``, strictly increasing in the last axis -> embedding ``(..., M)``."""
        Q, u = _check_levels(Q, u)
        dQ = np.diff(Q, axis=-1)
        if np.any(dQ <= 0):
            raise ValueError("the LQD transform needs quantile functions strictly increasing in u "
                             "(estimate slices with a KDE, or use transform='quantile')")
        mid = u.size // 2
        g = np.log(dQ / np.diff(u))
        return np.concatenate([Q[..., mid:mid + 1], g], axis=-1)

    def inverse(self, Y, u) -> np.ndarray:
        """Embedding ``(..., M)`` (any real values) -> strictly increasing quantiles ``(..., M)``."""
        Y, u = _check_levels(Y, u)
        mid = u.size // 2
        steps = np.exp(Y[..., 1:]) * np.diff(u)
        cs = np.concatenate([np.zeros(Y.shape[:-1] + (1,)), np.cumsum(steps, axis=-1)], axis=-1)
        return Y[..., :1] + cs - cs[..., mid:mid + 1]

    def location_weight_for(self, Q=None) -> float:
        """The location weight in use: the float given, or ``1 / mean slice variance`` of ``Q`` (auto)."""
        if self.location_weight != "auto":
            return self.location_weight
        if Q is None:
            raise ValueError("`location_weight`='auto' needs the fitted slice quantiles `Q` (n, J, M) to "
                             "set the unit-free scale; pass Q, or give a float weight")
        s2 = float(np.mean(slice_variances(np.asarray(Q, dtype=float))))
        if not np.isfinite(s2) or s2 <= 0:
            raise ValueError("`location_weight`='auto': the slices have no spread, the scale is undefined")
        return 1.0 / s2

    def coordinate_weights(self, u, Q=None) -> np.ndarray:
        """Weights (M,): the location weight (see :meth:`location_weight_for`), the level spacings for ``g``."""
        u = np.asarray(u, dtype=float)
        return np.concatenate([[self.location_weight_for(Q)], np.diff(u)])

    def __repr__(self) -> str:
        return f"LQDTransform(location_weight={self.location_weight!r})"


TRANSFORMS = {"lqd": LQDTransform, "quantile": QuantileTransform}


def get_transform(transform):
    """Resolve ``"lqd"`` / ``"quantile"`` or a transform object, else raise naming ``slice_transform``."""
    if isinstance(transform, str):
        if transform not in TRANSFORMS:
            raise ValueError(f"`slice_transform` must be one of {tuple(TRANSFORMS)} or a transform object, "
                             f"got {transform!r}")
        return TRANSFORMS[transform]()
    needed = ("forward", "inverse", "coordinate_weights", "slice_estimator")
    missing = [m for m in needed if not hasattr(transform, m)]
    if missing:
        raise TypeError(f"`slice_transform` object lacks {missing}; "
                        "see neurips25.sliced_wasserstein.transforms")
    return transform


TAILS = ("exponential", "none")


def quantiles_to_densities(Q, u, t_grid, tails: str = "exponential") -> np.ndarray:
    """Slice densities on a t-grid from slice quantile functions (the sinogram of a 2-D density).

    ``tails="exponential"`` (default): each slice's CDF is the piecewise-linear interpolation of
    ``(Q_m, u_m)``, continued beyond ``Q_1`` and ``Q_M`` by exponential tails that carry the missing mass
    ``u_1`` and ``1 - u_M`` and meet the end density continuously (``F(t) = u_1 exp((t - Q_1) / s)``
    with ``s = u_1 / f_1``, likewise on the right). The density of a t-cell is its CDF increment over
    the cell width, so each slice keeps mass 1 (up to the mass beyond the grid) and has no jump at its
    ends, which the ramp filter would turn into rings. ``tails="none"`` is the first version: the density
    ``(u_{m+1} - u_m) / (Q_{m+1} - Q_m)`` at the midpoints ``(Q_m + Q_{m+1}) / 2``, interpolated linearly,
    zero outside ``[Q_1, Q_M]``, then each slice renormalised (the tail mass is smeared over the slice).

    Parameters
    ----------
    Q : array of shape (J, M)
        Strictly increasing slice quantile functions.
    u : array of shape (M,)
    t_grid : array of shape (K,) or (J, K)
        Evaluation points (per slice when 2-D), increasing and uniformly spaced.
    tails : {"exponential", "none"}, default="exponential"

    Returns
    -------
    ndarray of shape (J, K)
    """
    if tails not in TAILS:
        raise ValueError(f"`tails` must be one of {TAILS}, got {tails!r}")
    Q, u = _check_levels(Q, u)
    if Q.ndim != 2:
        raise ValueError(f"`Q` must have shape (J, M), got {Q.shape}")
    t = np.asarray(t_grid, dtype=float)
    t = np.broadcast_to(t, (Q.shape[0], t.shape[-1]))
    out = np.zeros(t.shape)
    for j in range(Q.shape[0]):
        dQ = np.diff(Q[j])
        keep = dQ > 0
        if not np.any(keep):
            continue
        step = t[j, 1] - t[j, 0]
        if tails == "none":
            xm = (0.5 * (Q[j, 1:] + Q[j, :-1]))[keep]
            fm = (np.diff(u)[keep] / dQ[keep])
            inside = (t[j] >= Q[j, 0]) & (t[j] <= Q[j, -1])
            out[j, inside] = np.interp(t[j, inside], xm, fm)
            mass = out[j].sum() * step
            if mass > 0:
                out[j] /= mass
            continue
        q = Q[j, np.concatenate([[True], keep])]
        v = u[np.concatenate([[True], keep])]
        edges = np.concatenate([t[j] - 0.5 * step, t[j, -1:] + 0.5 * step])
        F = np.interp(edges, q, v)
        # exponential tails: scale = tail mass / end density, so the density is continuous at Q_1, Q_M
        s_lo = v[0] * (q[1] - q[0]) / (v[1] - v[0])
        s_hi = (1.0 - v[-1]) * (q[-1] - q[-2]) / (v[-1] - v[-2])
        lo, hi = edges < q[0], edges > q[-1]
        F[lo] = v[0] * np.exp((edges[lo] - q[0]) / s_lo)
        F[hi] = 1.0 - (1.0 - v[-1]) * np.exp(-(edges[hi] - q[-1]) / s_hi)
        out[j] = np.diff(F) / step
    return out
