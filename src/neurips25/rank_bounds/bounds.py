"""Generalization bounds as pure functions of layer spectra, norms and data statistics.

Every bound here is a multiclass margin bound: with probability ``1 - delta`` over the sample,

    P(argmax f(x) != y) <= R_gamma + gap,

where ``R_gamma`` is the empirical ramp loss at margin ``gamma`` (``DataStats.empirical_risk``). Each function
returns a :class:`BoundResult` with the value ``R_gamma + gap``, its log10 and the terms it was built from.
All of them are vacuous (> 1) on real networks; they are compared by their order and their growth (on a log
scale), never against 1.

The Schatten-p bound (:func:`schatten_rank_bound`, :func:`exact_rank_dudley_bound`) is a RECONSTRUCTION: the
paper's theorem and constants were not available. It is derived here from standard pieces (telescoping
perturbation, a low-rank cover of each layer, Dudley's entropy integral) so that it has the paper's stated
limits: sample complexity ``O~(W r L^2)`` as ``p -> 0`` and a norm-based bound as ``p`` grows. Each layer's
cover rank is capped at ``min(d_l, d_{l-1})``; the reported bound is the better of the Schatten-p relaxation
(closed form or capped numeric cover, best over the p grid) and the exact singular-value count, with the
choice priced in the union bound. :func:`full_rank_dudley_bound` is the same machinery with the rank sparsity
removed (every layer charged its full rank): the control.

The classic bounds follow their papers' statements; each docstring names the theorem, the constants and
where a constant was not available (an ``O(.)`` constant is taken as 1, which favours that bound).
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Sequence

import numpy as np

__all__ = [
    "DEFAULT_P_GRID",
    "BoundResult",
    "DataStats",
    "LayerSpectrum",
    "schatten_rank_bound",
    "exact_rank_dudley_bound",
    "full_rank_dudley_bound",
    "param_count_bound",
    "bartlett_spectral_bound",
    "neyshabur_pacbayes_bound",
    "golowich_frobenius_bound",
    "path_norm_bound",
]

#: the grid of p the best-over-p Schatten bound searches (its size enters the union bound)
DEFAULT_P_GRID: tuple[float, ...] = (0.1, 0.25, 0.5, 0.75, 1.0, 1.5)


@dataclasses.dataclass(frozen=True)
class LayerSpectrum:
    """What the bounds need to know about one layer's operator; computed once, shared by all bounds.

    Attributes
    ----------
    sv : ndarray, shape (r,)
        Decreasing singular values of the operator (bias folded in when the network has biases).
    in_dim, out_dim : int
        Operator dimensions ``d_{l-1}``, ``d_l`` (including the constant coordinate when biases are folded).
    n_params : int
        Free parameters of the layer (weights and bias); parameter counting uses it.
    l21_dist : float
        ``||(A - M)^T||_{2,1}``, the sum of the l2 norms of the rows of ``A - M``, with ``M`` the layer at
        initialisation or 0 (Bartlett et al. 2017).
    """

    sv: np.ndarray
    in_dim: int
    out_dim: int
    n_params: int
    l21_dist: float
    # r_p by p: every bound asks for the same few p many times (allocations, closed forms, union costs)
    _r_cache: dict = dataclasses.field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self):
        sv = np.asarray(self.sv, dtype=np.float64)
        if sv.ndim != 1 or sv.size == 0 or not np.all(np.isfinite(sv)) or np.any(sv < 0):
            raise ValueError("`sv` must be a non-empty 1-D array of finite singular values >= 0")
        sv = np.sort(sv)[::-1]
        if sv[0] <= 0:
            raise ValueError("a layer with all singular values 0 (a zero operator) cannot be bounded")
        # SVD rounding noise is exactly zero rank (see spectra._spectrum_of)
        tol = sv[0] * max(self.in_dim, self.out_dim) * np.finfo(np.float64).eps
        object.__setattr__(self, "sv", np.where(sv > tol, sv, 0.0))

    @property
    def spectral(self) -> float:
        return float(self.sv[0])

    @property
    def frobenius(self) -> float:
        return float(np.sqrt(np.sum(self.sv**2)))

    def effective_rank(self, p: float) -> float:
        """``r_p = sum_i (sigma_i / sigma_1)^p`` over the non-zero singular values (memoised per p)."""
        r = self._r_cache.get(p)
        if r is None:
            s = self.sv[self.sv > 0]
            r = self._r_cache[p] = float(np.sum((s / s[0]) ** p))
        return r


@dataclasses.dataclass(frozen=True)
class DataStats:
    """Sample statistics every bound uses.

    Attributes
    ----------
    n : int
        Number of training samples.
    B : float
        ``max_i ||x_i||_2`` (with the constant coordinate when biases are folded).
    X_frob : float
        ``||X||_F = sqrt(sum_i ||x_i||^2)``.
    gamma : float
        Margin scale > 0.
    empirical_risk : float
        Empirical ramp loss at ``gamma``, in [0, 1].
    n_classes : int
        Number of outputs K >= 2.
    """

    n: int
    B: float
    X_frob: float
    gamma: float
    empirical_risk: float
    n_classes: int

    def __post_init__(self):
        if not isinstance(self.n, numbers.Integral) or self.n < 1:
            raise ValueError(f"`n` must be a positive int, got {self.n!r}")
        for name in ("B", "X_frob", "gamma"):
            v = getattr(self, name)
            if not (isinstance(v, numbers.Real) and math.isfinite(v) and v > 0):
                raise ValueError(f"`{name}` must be a finite number > 0, got {v!r}")
        if not (0.0 <= self.empirical_risk <= 1.0):
            raise ValueError(f"`empirical_risk` must lie in [0, 1], got {self.empirical_risk!r}")
        if not isinstance(self.n_classes, numbers.Integral) or self.n_classes < 2:
            raise ValueError(f"`n_classes` must be an int >= 2, got {self.n_classes!r}")


@dataclasses.dataclass(frozen=True)
class BoundResult:
    """A bound's value ``empirical_risk + gap``, its log10, and the terms it was computed from."""

    name: str
    value: float
    log10_value: float
    terms: dict

    @classmethod
    def make(cls, name: str, data: DataStats, gap: float, **terms) -> BoundResult:
        value = data.empirical_risk + gap
        return cls(
            name,
            float(value),
            float(np.log10(value)) if value > 0 else -math.inf,
            dict(gap=float(gap), **terms),
        )


# ---------------------------------------------------------------------------------------------- checks
def _check(spectra: Sequence[LayerSpectrum], data: DataStats, delta: float) -> None:
    if not isinstance(data, DataStats):
        raise TypeError(f"`data` must be a DataStats, got {type(data).__name__}")
    if not isinstance(spectra, (list, tuple)) or len(spectra) == 0:
        raise ValueError("`spectra` must be a non-empty list of LayerSpectrum (one per layer)")
    if not all(isinstance(s, LayerSpectrum) for s in spectra):
        raise TypeError("`spectra` must hold LayerSpectrum objects")
    if not (isinstance(delta, numbers.Real) and 0 < delta < 1):
        raise ValueError(f"`delta` must lie in (0, 1), got {delta!r}")


def _check_p(p) -> float:
    if isinstance(p, bool) or not isinstance(p, numbers.Real):
        raise TypeError(f"`p` must be a number in (0, 2) or 'best', got {p!r}")
    if not (0 < p < 2):
        raise ValueError(f"`p` must lie in (0, 2) (the Dudley integral diverges at p >= 2), got {p}")
    return float(p)


def _confidence(n: int, delta: float, union: float) -> float:
    """``3 sqrt((log(2/delta) + union) / (2n))``: the concentration term, with a union-bound cost."""
    return 3.0 * math.sqrt((math.log(2.0 / delta) + union) / (2.0 * n))


def _dyadic_cost(x: float, log2_x: float | None = None) -> float:
    """Union-bound cost of choosing a scale ``x`` after training from the dyadic grid ``2^j`` with weights
    ``~ 1 / (|j| + 1)(|j| + 2)``: about ``2 log(2 + |log2 x|)`` (reconstructed bookkeeping). Pass ``log2_x``
    instead of ``x`` when ``x`` itself would overflow (``||A||_{S_p}`` at tiny p)."""
    if log2_x is None:
        log2_x = math.log2(x)
    return 2.0 * math.log(2.0 + abs(log2_x))


def _scale_union(spectra, data) -> float:
    return sum(_dyadic_cost(s.spectral) for s in spectra) + _dyadic_cost(data.gamma / data.B)


def _alpha_grid(n: int) -> np.ndarray:
    """Lower limits of the Dudley integral searched: ``[1/n, 1/sqrt(n)]``.

    Any alpha gives a valid bound; capping it at ``1/sqrt(n)`` keeps a vacuous bound from saturating at
    ``Rad ~ 4 alpha ~ 4`` (which would hide how the complexity term grows, the thing compared here).
    """
    return np.geomspace(1.0 / n, 1.0 / math.sqrt(n), 40)


def _dudley_numeric(log_cover, eps: np.ndarray, n: int) -> tuple[float, float]:
    """``min_alpha 4 alpha + 12/sqrt(n) int_alpha^1 sqrt(log N(e)) de`` as an upper Riemann sum.

    ``log_cover`` holds ``log N`` at the increasing grid ``eps`` (ending at 1); ``log N`` is non-increasing,
    so each interval is bounded by its left end.
    """
    root = np.sqrt(np.maximum(log_cover[:-1], 0.0))
    pieces = root * np.diff(eps)
    tail = np.cumsum(pieces[::-1])[::-1]  # integral from eps[i] to 1
    rad = 4.0 * eps[:-1] + 12.0 / math.sqrt(n) * tail
    rad = np.where(eps[:-1] <= 1.0 / math.sqrt(n) * (1 + 1e-12), rad, np.inf)  # see _alpha_grid
    i = int(np.argmin(rad))
    return float(rad[i]), float(eps[i])


# ---------------------------------------------------------------------------- the new (reconstructed) bound
def _D(spectra) -> np.ndarray:
    """``D_l = d_l + d_{l-1} + 1``: numbers per unit of rank in a rank-k cover (Candes-Plan)."""
    return np.array([l.in_dim + l.out_dim + 1 for l in spectra], dtype=float)


def _rank_cap(spectra) -> np.ndarray:
    """``min(d_l, d_{l-1})``: no layer needs a cover of higher rank than its operator can have."""
    return np.array([min(l.in_dim, l.out_dim) for l in spectra], dtype=float)


def _allocations(spectra, extra=None) -> np.ndarray:
    """Candidate splits ``a`` of the cover scale over layers (rows sum to 1): uniform, proportional to
    ``D_l``, and the Schatten-optimal ``(D_l r_p)^(1/(1+p))`` for each p of :data:`DEFAULT_P_GRID`. Any split
    gives a valid cover, so the minimum over candidates is valid too."""
    L = len(spectra)
    D = _D(spectra)
    cands = [np.ones(L), D]
    for q in DEFAULT_P_GRID:
        cands.append((D * np.array([l.effective_rank(q) for l in spectra])) ** (1 / (1 + q)))
    for a in extra or []:
        a = np.asarray(a, dtype=float)
        if a.shape != (L,) or np.any(a <= 0) or not np.all(np.isfinite(a)):
            raise ValueError(f"each of `allocations` must hold {L} finite positive weights")
        cands.append(a)
    return np.array([c / c.sum() for c in cands])


def _log_eta(spectra, data, A: np.ndarray, eps: np.ndarray) -> np.ndarray:
    """Step 1 (perturbation): the spectral scale of layer l, ``eta_l = a_l gamma eps s_l / (sqrt2 B prod s)``,
    in logs, shape (n_alloc, n_eps, L)."""
    log_s = np.log(np.array([l.spectral for l in spectra]))
    return (
        np.log(A)[:, None, :]
        + np.log(eps)[None, :, None]
        + log_s[None, None, :]
        + math.log(data.gamma / (math.sqrt(2) * data.B))
        - float(np.sum(log_s))
    )


def _count_cover(spectra, data, counts, A: np.ndarray, n_eps: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Step 2 summed over layers: ``log N(eps) = min_a sum_l k_l D_l log(18 sqrt(k_l) s_l / eta_l)``.

    ``counts(l, spec, log_eta)`` gives the cover rank ``k_l`` at each scale (an integer array). Returns the
    eps grid on ``[1/n, 1]``, ``log N`` at each eps (minimum over allocations) and the argmin allocation.
    """
    eps = np.geomspace(1.0 / data.n, 1.0, n_eps)
    log_eta = _log_eta(spectra, data, A, eps)
    D = _D(spectra)
    logN = np.zeros(log_eta.shape[:2])
    for l, spec in enumerate(spectra):
        k = counts(l, spec, log_eta[:, :, l])
        with np.errstate(divide="ignore", invalid="ignore"):
            term = k * D[l] * (np.log(18 * np.sqrt(np.maximum(k, 1)) * spec.spectral) - log_eta[:, :, l])
        logN += np.where(k > 0, np.maximum(term, 0.0), 0.0)
    return eps, logN.min(axis=0), np.argmin(logN, axis=0)


def _exact_counts(l, spec, log_eta):
    """``k_l(eta) = #{i : sigma_i > eta / 2}`` read off the spectrum (at most its rank <= min(d_l, d_{l-1}))."""
    asc = spec.sv[::-1]
    return asc.size - np.searchsorted(asc, np.exp(log_eta) / 2.0, side="right")


def _schatten_counts(p: float, cap: bool = True):
    """``k_l(eta) = floor((2 ||A_l||_{S_p} / eta)^p)``, capped at ``min(d_l, d_{l-1})`` when ``cap``.

    ``sigma_k <= ||A||_{S_p} k^{-1/p}``, so at most ``(2 M / eta)^p`` singular values exceed ``eta / 2``.
    """

    def counts(l, spec, log_eta):
        log_M = math.log(spec.spectral) + math.log(spec.effective_rank(p)) / p  # log ||A_l||_{S_p}
        log_k = p * (math.log(2.0) + log_M - log_eta)
        m = min(spec.in_dim, spec.out_dim)
        if cap:
            log_k = np.minimum(log_k, math.log(m))
        # float64 cannot hold the uncapped count at tiny p; the cap is the exact answer there anyway
        k = np.floor(np.exp(np.minimum(log_k, 700.0)) * (1 + 1e-12))
        return np.minimum(k, m) if cap else k

    return counts


def _full_counts(l, spec, log_eta):
    """Rank-blind control: the full rank ``min(d_l, d_{l-1})`` wherever ``sigma_1 > eta / 2``."""
    m = min(spec.in_dim, spec.out_dim)
    return np.where(np.exp(log_eta) / 2.0 < spec.spectral, m, 0)


def _schatten_closed_form(spectra, data, p: float) -> dict:
    """Closed-form Schatten-p complexity and Rademacher bound for one p (steps 2-4, no cap on ``k``)."""
    s = np.array([l.spectral for l in spectra])
    log_S = float(np.sum(np.log(s)))
    D = _D(spectra)
    r_p = np.array([l.effective_rank(p) for l in spectra])
    m = _rank_cap(spectra)
    c = D * r_p
    # Step 3: optimal allocation of the cover scale over layers, a_l proportional to c_l^(1/(1+p))
    w = c ** (1.0 / (1.0 + p))
    a = w / w.sum()
    log_scale = math.log(2 * math.sqrt(2) * data.B / data.gamma) + log_S  # log(2 sqrt2 B prod s / gamma)
    log_C = p * log_scale + (1.0 + p) * math.log(w.sum())  # log N(eps) <= Lambda * C * eps^-p
    best = (math.inf, 1.0, 0.0)
    for alpha in _alpha_grid(data.n):
        # Lambda bounds log(18 sqrt(k_l) s_l / eta_l) down to the smallest scale alpha used (k_l <= m_l)
        lam = float(
            np.max(np.log(18 * np.sqrt(m) * math.sqrt(2) * data.B / (a * data.gamma * alpha)) + log_S)
        )
        lam = max(lam, 1e-12)
        # Step 4 (Dudley): int_alpha^1 eps^(-p/2) d eps = (1 - alpha^(1 - p/2)) / (1 - p/2)
        integral = (1.0 - alpha ** (1.0 - p / 2.0)) / (1.0 - p / 2.0)
        rad = 4 * alpha + 12.0 / math.sqrt(data.n) * math.exp(0.5 * (math.log(lam) + log_C)) * integral
        if rad < best[0]:
            best = (rad, alpha, lam)
    return {
        "rad": best[0],
        "alpha": best[1],
        "Lambda": best[2],
        "log10_C": log_C / math.log(10),
        "r_p": r_p.tolist(),
        "sum_D_rp": float(np.sum(c)),
        "allocation": a,
    }


def _schatten_p_rad(spectra, data, p: float, n_eps: int = 200) -> dict:
    """Rademacher bound of the Schatten-p class: the better of the closed form (uncapped k) and the numeric
    cover with ``k_l`` capped at ``min(d_l, d_{l-1})``. Both bound the same class, so their minimum is valid
    and costs no union bound."""
    cf = _schatten_closed_form(spectra, data, p)
    A = _allocations(spectra, [cf["allocation"]])
    eps, logN, _ = _count_cover(spectra, data, _schatten_counts(p, cap=True), A, n_eps)
    rad_capped, alpha_capped = _dudley_numeric(logN, eps, data.n)
    out = {k: v for k, v in cf.items() if k != "allocation"}
    out.update(
        closed_form_rad=cf["rad"],
        capped_rad=rad_capped,
        rad=min(cf["rad"], rad_capped),
        evaluation="capped numeric cover" if rad_capped < cf["rad"] else "closed form",
    )
    if rad_capped < cf["rad"]:
        out["alpha"] = alpha_capped
    return out


def _schatten_p_union(spectra, q: float) -> float:
    """Union cost of the Schatten levels ``M_l = ||A_l||_{S_q}``, chosen after training (dyadic grid).

    ``log2 ||A||_{S_q} = log2 sigma_1 + log2(r_q) / q``, kept in logs (it overflows at tiny q)."""
    return sum(_dyadic_cost(0.0, math.log2(l.spectral) + math.log2(l.effective_rank(q)) / q) for l in spectra)


def schatten_rank_bound(
    spectra: Sequence[LayerSpectrum],
    data: DataStats,
    p="best",
    p_grid: Sequence[float] = DEFAULT_P_GRID,
    delta: float = 0.05,
    include_exact: bool = True,
) -> BoundResult:
    """Schatten-p rank-sparse margin bound (reconstructed), at one ``p`` or the best over ``p_grid``.

    Reconstruction of Ledent, Alves & Lei (NeurIPS 2025): a layer whose singular values have
    ``||A_l||_{S_p} = M_l`` has ``sigma_k <= M_l k^{-1/p}``, so it is within ``eta/2`` (spectral) of a
    matrix of rank ``k <= min((2 M_l / eta)^p, d_l, d_{l-1})``; rank-k matrices are covered with
    ``k D_l log(18 sqrt(k) s_l / eta)`` nats (Candes-Plan), ``D_l = d_l + d_{l-1} + 1``. Without the cap,
    spreading the scale over layers optimally gives the closed form

        log N(eps) <= Lambda (2 sqrt2 B prod_j s_j / (gamma eps))^p (sum_l [D_l r_p(A_l)]^(1/(1+p)))^(1+p),

    with ``r_p(A) = (||A||_{S_p} / ||A||_sigma)^p`` and ``Lambda = max_l log(18 sqrt(k_l) s_l / eta_l)`` at
    the smallest scale used; Dudley's integral (``int eps^{-p/2} = 1/(1 - p/2)``) then bounds the Rademacher
    complexity. With the cap the cover is evaluated numerically (same allocation, per-layer logs, Dudley as
    an upper Riemann sum); the smaller of the two Rademacher bounds is used (same class, both valid).
    ``gap = 2 Rad + 3 sqrt((log(2/delta) + U) / (2n))`` with ``U`` the union-bound cost of the data-dependent
    scales (s_l, M_l, gamma) and of the candidate chosen.

    With ``p="best"`` and ``include_exact`` the candidates are every p of ``p_grid`` and the exact-count bound
    (:func:`exact_rank_dudley_bound`), so ``U`` includes ``log(|p_grid| + 1)``; the reported bound is the
    smallest candidate, ``terms["source"]`` says which.

    As ``p -> 0`` the complexity tends to ``sum_l D_l rank(A_l) ~ 2 W r L`` (times ``Lambda = O(L)``); as
    ``p`` grows it becomes a norm-based bound.

    Parameters
    ----------
    spectra : list of LayerSpectrum
    data : DataStats
    p : float in (0, 2) or "best"
    p_grid : sequence of float in (0, 2)
        Searched when ``p="best"``.
    delta : float in (0, 1)
    include_exact : bool, default True
        With ``p="best"``, also consider the exact-count bound (priced in the union bound).

    Returns
    -------
    BoundResult
        ``terms`` holds ``p`` (the best Schatten p), ``source``, the Rademacher bound and every p's value.

    Examples
    --------
    >>> import numpy as np
    >>> spec = [LayerSpectrum(np.array([2.0, 1.0]), 2, 3, 8, 3.0),
    ...         LayerSpectrum(np.array([1.5]), 3, 1, 4, 1.5)]
    >>> data = DataStats(n=1000, B=1.0, X_frob=30.0, gamma=0.5, empirical_risk=0.0, n_classes=2)
    >>> schatten_rank_bound(spec, data, p=0.5).value > 0
    True
    """
    _check(spectra, data, delta)
    if isinstance(p, str):
        if p != "best":
            raise ValueError(f"`p` must be a number in (0, 2) or 'best', got {p!r}")
        grid = [_check_p(q) for q in p_grid]
        if not grid:
            raise ValueError("`p_grid` must not be empty")
        exact = bool(include_exact)
    else:
        grid = [_check_p(p)]
        exact = False
    n_cand = len(grid) + int(exact)
    union_base = _scale_union(spectra, data) + math.log(n_cand)
    per_p = {}
    for q in grid:
        cf = _schatten_p_rad(spectra, data, q)
        union = union_base + _schatten_p_union(spectra, q)
        gap = 2 * cf["rad"] + _confidence(data.n, delta, union)
        per_p[q] = (gap, cf, union)
    q_best = min(per_p, key=lambda q: per_p[q][0])
    gap, cf, union = per_p[q_best]
    source = f"schatten_p{q_best:g}"
    terms = dict(cf)
    if exact:
        ex = exact_rank_dudley_bound(spectra, data, delta)
        ex_union = union_base  # the exact count needs no Schatten level; it pays its share of log(n_cand)
        ex_gap = 2 * ex.terms["rad"] + _confidence(data.n, delta, ex_union)
        terms["exact_count_value"] = float(data.empirical_risk + ex_gap)
        if ex_gap < gap:
            gap, union, source = ex_gap, ex_union, "exact_count"
            terms.update(rad=ex.terms["rad"], alpha=ex.terms["alpha"])
    return BoundResult.make(
        "schatten" if p == "best" else f"schatten_p{q_best:g}",
        data,
        gap,
        p=q_best,
        source=source,
        union_cost=union,
        per_p={f"{q:g}": float(data.empirical_risk + v[0]) for q, v in per_p.items()},
        **{k: v for k, v in terms.items() if k not in ("p", "union_cost")},
    )


def _count_bound(name, spectra, data, delta, n_eps, allocations, counts) -> BoundResult:
    _check(spectra, data, delta)
    if not isinstance(n_eps, numbers.Integral) or n_eps < 10:
        raise ValueError(f"`n_eps` must be an int >= 10, got {n_eps!r}")
    A = _allocations(spectra, allocations)
    eps, logN, best_alloc = _count_cover(spectra, data, counts, A, int(n_eps))
    rad, alpha = _dudley_numeric(logN, eps, data.n)
    union = _scale_union(spectra, data)
    gap = 2 * rad + _confidence(data.n, delta, union)
    return BoundResult.make(
        name,
        data,
        gap,
        rad=rad,
        alpha=alpha,
        union_cost=union,
        log_cover_at_alpha=float(np.interp(alpha, eps, logN)),
        allocation_used=int(np.bincount(best_alloc).argmax()),
    )


def exact_rank_dudley_bound(
    spectra: Sequence[LayerSpectrum],
    data: DataStats,
    delta: float = 0.05,
    n_eps: int = 200,
    allocations: Sequence[Sequence[float]] | None = None,
) -> BoundResult:
    """Rank-sparse bound with exact singular-value counts, not the Schatten-p relaxation (reconstructed).

    Same covering argument as :func:`schatten_rank_bound`, but each layer at spectral scale ``eta_l`` keeps
    the exact rank ``k_l(eta_l) = #{i : sigma_i > eta_l / 2}`` (never above ``min(d_l, d_{l-1})``), so

        log N(eps) = min_a sum_l k_l D_l log(18 sqrt(k_l) s_l / eta_l),
        eta_l = a_l gamma eps s_l / (sqrt2 B prod_j s_j),  sum_l a_l = 1,

    evaluated on a grid of ``eps`` and integrated numerically (Dudley, upper Riemann sum). The minimum over
    allocations ``a`` runs over a candidate set (uniform, proportional to ``D_l``, and the Schatten-optimal
    allocation for each p of :data:`DEFAULT_P_GRID`); any allocation gives a valid cover, so the minimum
    is valid too.

    Parameters
    ----------
    spectra : list of LayerSpectrum
    data : DataStats
    delta : float in (0, 1)
    n_eps : int
        Points of the log-spaced grid of ``eps`` in ``[1/n, 1]``.
    allocations : list of weight vectors, optional
        Extra candidate allocations (each normalised to sum 1).

    Examples
    --------
    >>> import numpy as np
    >>> spec = [LayerSpectrum(np.array([2.0, 1e-3]), 2, 3, 8, 3.0),
    ...         LayerSpectrum(np.array([1.5]), 3, 1, 4, 1.5)]
    >>> data = DataStats(n=1000, B=1.0, X_frob=30.0, gamma=0.5, empirical_risk=0.0, n_classes=2)
    >>> exact_rank_dudley_bound(spec, data).terms["gap"] > 0
    True
    """
    return _count_bound("exact_rank", spectra, data, delta, n_eps, allocations, _exact_counts)


def full_rank_dudley_bound(
    spectra: Sequence[LayerSpectrum],
    data: DataStats,
    delta: float = 0.05,
    n_eps: int = 200,
    allocations: Sequence[Sequence[float]] | None = None,
) -> BoundResult:
    """The control: the exact-count cover with the rank sparsity removed (``k_l = min(d_l, d_{l-1})``).

    Identical to :func:`exact_rank_dudley_bound` except that every layer is charged its full rank at every
    scale where ``sigma_1 > eta_l / 2``. It sees no low rank, so any advantage of the rank-sparse bound that
    it shares comes from the machinery (margin, Dudley, allocation), not from rank sparsity.
    """
    return _count_bound("full_rank", spectra, data, delta, n_eps, allocations, _full_counts)


# ------------------------------------------------------------------------------------------- baselines
def param_count_bound(
    spectra: Sequence[LayerSpectrum], data: DataStats, kind: str = "covering", delta: float = 0.05
) -> BoundResult:
    """Parameter-counting bound, by covering numbers (same margin machinery) or by VC dimension.

    ``kind="covering"``: each layer's parameters lie in a spectral-norm ball of radius ``s_l``, covered at
    scale ``eta`` by ``(3 s_l / eta)^{P_l}`` points (volume argument); with ``eta_l = gamma eps s_l /
    (sqrt2 L B prod s)``, ``log N(eps) <= P log(3 sqrt2 L B prod_j s_j / (gamma eps))``, then Dudley as for
    the
    Schatten bound (same union cost over the scales). Sample complexity ``O~(W^2 L)``.

    ``kind="vc"``: ``VCdim <= P L ln P`` (Bartlett, Harvey, Liaw & Mehrabian 2019, constant taken as 1) and
    ``gap = sqrt((VCdim ln n + ln(1/delta)) / n)``.

    Examples
    --------
    >>> import numpy as np
    >>> spec = [LayerSpectrum(np.array([2.0, 1.0]), 2, 3, 8, 3.0)]
    >>> data = DataStats(n=1000, B=1.0, X_frob=30.0, gamma=0.5, empirical_risk=0.0, n_classes=3)
    >>> param_count_bound(spec, data, kind="vc").terms["P"]
    8
    """
    _check(spectra, data, delta)
    P = int(sum(l.n_params for l in spectra))
    L = len(spectra)
    if kind == "vc":
        vc = P * L * math.log(max(P, 2))
        gap = math.sqrt((vc * math.log(data.n) + math.log(1.0 / delta)) / data.n)
        return BoundResult.make("param_vc", data, gap, P=P, vcdim=vc)
    if kind != "covering":
        raise ValueError(f"`kind` must be 'covering' or 'vc', got {kind!r}")
    log_S = float(np.sum([math.log(l.spectral) for l in spectra]))
    eps = np.geomspace(1.0 / data.n, 1.0, 200)
    log_c = math.log(3 * math.sqrt(2) * L * data.B / data.gamma) + log_S
    logN = P * np.maximum(log_c - np.log(eps), 0.0)
    rad, alpha = _dudley_numeric(logN, eps, data.n)
    union = _scale_union(spectra, data)
    gap = 2 * rad + _confidence(data.n, delta, union)
    return BoundResult.make("param_covering", data, gap, P=P, rad=rad, alpha=alpha, union_cost=union)



def bartlett_spectral_bound(
    spectra: Sequence[LayerSpectrum], data: DataStats, delta: float = 0.05, width: int | None = None
) -> BoundResult:
    """Spectrally-normalised margin bound of Bartlett, Foster & Telgarsky (NeurIPS 2017), Lemma A.8.

    ``R_A = prod_l s_l (sum_l (||(A_l - M_l)^T||_{2,1} / s_l)^{2/3})^{3/2}`` (1-Lipschitz activations,
    ``M_l`` the layer at initialisation or 0) and, with probability ``1 - delta``,

        P(error) <= R_gamma + 8/n + 72 ||X||_F R_A sqrt(ln(2 W)) ln(n) / (gamma n) + 3 sqrt(ln(1/delta) / (2n)),

    where ``W`` is the number of entries of the largest layer matrix (``ln(2 d m)`` in their matrix-covering
    Lemma 3.2; pass ``width`` to override). Source of the constants: the BFT text was not readable here; this
    is Lemma A.8 as rendered by Graf et al. (NeurIPS 2022, ``rkwitt/excess_capacity``, ``Bounds.bartlett``):
    ``Rad <= 4/n + 9 ln(n)/sqrt(n) sqrt(ln 2W) (sum_i C_i^{2/3})^{3/2}``, ``C_i = (4/gamma)(||X||/sqrt n)
    prod s . b_i/s_i``, doubled, plus the concentration term of the lemma. It pays no union bound over the
    norms (Theorem 3.1 does), which favours it.
    """
    _check(spectra, data, delta)
    W = width if width is not None else max(l.in_dim * l.out_dim for l in spectra)
    s = np.array([l.spectral for l in spectra])
    ratio = np.array([l.l21_dist for l in spectra]) / s
    log_RA = float(np.sum(np.log(s))) + 1.5 * math.log(float(np.sum(ratio ** (2.0 / 3.0))))
    RA = math.exp(log_RA)
    gap = (
        8.0 / data.n
        + 72.0 * data.X_frob * RA * math.sqrt(math.log(2 * W)) * math.log(data.n) / (data.gamma * data.n)
        + 3 * math.sqrt(math.log(1 / delta) / (2 * data.n))
    )
    return BoundResult.make("bartlett_spectral", data, gap, R_A=RA, W=W)


def neyshabur_pacbayes_bound(
    spectra: Sequence[LayerSpectrum], data: DataStats, delta: float = 0.05
) -> BoundResult:
    """PAC-Bayes spectral-Frobenius bound of Neyshabur, Bhojanapalli & Srebro (2018), its O(.) constant = 1.

    ``gap = sqrt((B^2 L^2 h ln(L h) prod_l s_l^2 sum_l ||A_l||_F^2 / s_l^2 + ln(L n / delta)) / (gamma^2 n))``
    with ``h`` the largest width.
    """
    _check(spectra, data, delta)
    L = len(spectra)
    h = max(max(l.in_dim, l.out_dim) for l in spectra)
    s = np.array([l.spectral for l in spectra])
    stable = float(np.sum([(l.frobenius / l.spectral) ** 2 for l in spectra]))
    log_main = (
        2 * math.log(data.B * L)
        + math.log(h * math.log(L * h) if L * h > 1 else 1.0)
        + 2 * float(np.sum(np.log(s)))
        + math.log(stable)
    )
    gap = math.sqrt((math.exp(log_main) + math.log(L * data.n / delta)) / (data.gamma**2 * data.n))
    return BoundResult.make("neyshabur_pacbayes", data, gap, sum_stable_rank=stable)




def golowich_frobenius_bound(
    spectra: Sequence[LayerSpectrum], data: DataStats, delta: float = 0.05
) -> BoundResult:
    """Frobenius-product bound of Golowich, Rakhlin & Shamir (COLT 2018, Theorem 1), made multiclass.

    Theorem 1 (real-valued output, 1-Lipschitz positive-homogeneous activation, ``||W_j||_F <= M_F(j)``):
    ``Rad <= B (sqrt(2 ln(2) L) + 1) prod_j M_F(j) / sqrt(n)``. Output k uses row ``w_k`` of the last layer;
    ``sum_k ||w_k|| <= sqrt(K) ||W_L||_F``. The ramp-of-margin loss is ``sqrt2/gamma``-Lipschitz in l2, so by
    Maurer's vector contraction ``Rad(loss) <= (2/gamma) sum_k Rad_k <= (2/gamma) sqrt(K) Rad`` and
    ``gap = 2 Rad(loss) + 3 sqrt(ln(2/delta) / (2n))``.
    """
    _check(spectra, data, delta)
    L = len(spectra)
    log_prod = float(np.sum([math.log(l.frobenius) for l in spectra]))
    rad = data.B * (math.sqrt(2 * math.log(2) * L) + 1) * math.exp(log_prod) / math.sqrt(data.n)
    gap = 4.0 * math.sqrt(data.n_classes) / data.gamma * rad + 3 * math.sqrt(
        math.log(2 / delta) / (2 * data.n)
    )
    return BoundResult.make("golowich_frobenius", data, gap, prod_frobenius=math.exp(log_prod))


def path_norm_bound(
    path_norm: float,
    n_layers: int,
    data: DataStats,
    delta: float = 0.05,
    *,
    width: int | None = None,
    p: int = 2,
    input_dim: int | None = None,
    x_inf: float | None = None,
) -> BoundResult:
    """Path-norm bound of Neyshabur, Tomioka & Srebro (COLT 2015, Corollary 2 of Theorem 1).

    For a depth-``L`` ReLU net with at most ``H`` units per hidden layer and l_p path norm ``phi_p <= phi``,

        Rad <= sqrt(phi^2 (2 H^{1/p*})^{2(L-1)} min(p*, 4 ln(2D)) max_i ||x_i||_{p*}^2 / n),

    ``1/p + 1/p* = 1``, ``D`` the input dimension. Two cases are offered:

    - ``p=2`` (default): the l2 path norm with its width factor ``(2 sqrt(H))^(L-1)`` and ``min(2, 4 ln 2D) = 2``
      (needs ``width``); ``Rad <= sqrt2 (2 sqrt H)^(L-1) B phi_2 / sqrt(n)``.
    - ``p=1``: the width-free l1 path norm, ``Rad <= 2^(L-1) phi_1 sqrt(4 ln(2D)) max_i ||x_i||_inf /
      sqrt(n)`` (needs ``input_dim`` and ``x_inf``).

    Multiclass as for Golowich et al.: per-output path norms sum to at most ``sqrt(K) phi_2`` (l2) or
    ``phi_1`` (l1), and ``gap = (4/gamma) sum_k Rad_k + 3 sqrt(ln(2/delta) / (2n))``. The theorem text was
    not readable here; the form is transcribed from the notes' rendering and Graf et al.'s ``neyshabur_fro``
    (same Corollary), and a test recomputes it from the published form. ``path_norm`` comes from
    :func:`neurips25.rank_bounds.path_norm` (``p=2``) or ``path_norm(layers, p=1)``.
    """
    if not (isinstance(path_norm, numbers.Real) and math.isfinite(path_norm) and path_norm > 0):
        raise ValueError(f"`path_norm` must be a finite number > 0, got {path_norm!r}")
    if isinstance(n_layers, bool) or not isinstance(n_layers, numbers.Integral) or n_layers < 1:
        raise ValueError(f"`n_layers` must be a positive int, got {n_layers!r}")
    if not isinstance(data, DataStats):
        raise TypeError(f"`data` must be a DataStats, got {type(data).__name__}")
    if not (isinstance(delta, numbers.Real) and 0 < delta < 1):
        raise ValueError(f"`delta` must lie in (0, 1), got {delta!r}")
    conf = 3 * math.sqrt(math.log(2 / delta) / (2 * data.n))
    L = int(n_layers)
    if p == 2:
        if isinstance(width, bool) or not isinstance(width, numbers.Integral) or width < 1:
            raise ValueError(f"`width` (largest hidden layer H) must be a positive int for p=2, got {width!r}")
        log_factor = (L - 1) * math.log(2 * math.sqrt(width))
        rad = math.sqrt(2.0) * math.exp(log_factor) * data.B * path_norm / math.sqrt(data.n)
        gap = 4.0 / data.gamma * math.sqrt(data.n_classes) * rad + conf
        return BoundResult.make("path_norm", data, gap, path_norm=float(path_norm), p=2, width=int(width))
    if p == 1:
        if isinstance(input_dim, bool) or not isinstance(input_dim, numbers.Integral) or input_dim < 1:
            raise ValueError(f"`input_dim` must be a positive int for p=1, got {input_dim!r}")
        if not (isinstance(x_inf, numbers.Real) and math.isfinite(x_inf) and x_inf > 0):
            raise ValueError(f"`x_inf` (max_i ||x_i||_inf) must be a finite number > 0 for p=1, got {x_inf!r}")
        rad = 2.0 ** (L - 1) * path_norm * math.sqrt(4 * math.log(2 * input_dim)) * x_inf / math.sqrt(data.n)
        gap = 4.0 / data.gamma * rad + conf
        return BoundResult.make("path_norm_l1", data, gap, path_norm=float(path_norm), p=1)
    raise ValueError(f"`p` must be 1 (l1 path norm) or 2 (l2 path norm), got {p!r}")
