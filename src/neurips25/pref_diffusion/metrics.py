"""Quality indicators for a set of objective vectors (minimisation), with one stated normalisation rule.

Hypervolume convention used throughout this package (the question pymoo issues #59 / #188 keep asking):
objectives are min-max normalised with the **offline dataset's** ideal and nadir (its per-objective min
and max), so the data's nadir maps to (1, ..., 1); the reference point is ``ref_factor`` times that
normalised nadir. ``ref_factor=1.1`` is the default here; the official PGD-MOO code reports 2.2, which
inflates every value and hides differences (both are reported by the reproduction). Points beyond the
reference point contribute nothing.
"""

from __future__ import annotations

import numpy as np

from neurips25.pref_diffusion.validation import check_objectives

__all__ = [
    "normalize_objectives",
    "hv",
    "igd",
    "spread",
    "deb_spread",
    "spacing",
    "mean_pairwise_distance",
    "hv_percentile",
    "non_dominated",
]


def normalize_objectives(F: np.ndarray, ideal: np.ndarray, nadir: np.ndarray) -> np.ndarray:
    """Min-max normalise ``F`` of shape (n, m) with ``ideal`` and ``nadir`` of shape (m,)."""
    F = check_objectives(F, "F", min_rows=0)
    ideal, nadir = np.asarray(ideal, float), np.asarray(nadir, float)
    if ideal.shape != (F.shape[1],) or nadir.shape != (F.shape[1],):
        raise ValueError(
            f"`ideal` and `nadir` must have shape ({F.shape[1]},), got {ideal.shape}, {nadir.shape}"
        )
    span = np.where(nadir - ideal > 0, nadir - ideal, 1.0)
    return (F - ideal) / span


def non_dominated(F: np.ndarray) -> np.ndarray:
    """Indices of the first non-dominated front of ``F`` (n, m), via pymoo's non-dominated sort."""
    from pymoo.util.nds.non_dominated_sorting import NonDominatedSorting

    F = check_objectives(F, "F", min_rows=0)
    if len(F) == 0:
        return np.zeros(0, dtype=int)
    return np.asarray(NonDominatedSorting().do(F, only_non_dominated_front=True), dtype=int)


def hv(
    F: np.ndarray,
    ideal: np.ndarray | None = None,
    nadir: np.ndarray | None = None,
    ref_factor: float = 1.1,
    cv: np.ndarray | None = None,
) -> float:
    """Hypervolume of ``F`` (n, m) after min-max normalisation, reference point ``ref_factor`` x nadir.

    With ``ideal`` / ``nadir`` omitted, ``F`` is taken as already normalised (nadir = 1). Computed by
    pymoo's ``HV`` indicator (moocore backend). An empty set has hypervolume 0. With the constraint
    violations ``cv`` (n,), only feasible rows (cv = 0) count, as in pymoo.

    Examples
    --------
    >>> hv(np.array([[0.0, 1.0], [1.0, 0.0]]), ref_factor=2.0)   # two 2x1 boxes overlapping in 1x1
    3.0
    """
    from pymoo.indicators.hv import HV

    if not (np.isfinite(ref_factor) and ref_factor > 0):
        raise ValueError(f"`ref_factor` must be a positive number, got {ref_factor!r}")
    F = check_objectives(F, "F", min_rows=0)
    if cv is not None:
        from neurips25.pref_diffusion.validation import check_violation

        F = F[check_violation(cv, len(F)) <= 0]
    if ideal is not None or nadir is not None:
        if ideal is None or nadir is None:
            raise ValueError("pass both `ideal` and `nadir`, or neither")
        F = normalize_objectives(F, ideal, nadir)
        if np.any(np.asarray(nadir, float) <= np.asarray(ideal, float)):
            raise ValueError("`nadir` must exceed `ideal` in every objective (a zero range cannot be normalised)")
    ref = np.full(F.shape[1], float(ref_factor))
    F = F[np.all(F < ref, axis=1)]
    if len(F) == 0:
        return 0.0
    return float(HV(ref_point=ref)(F))


def igd(
    F: np.ndarray, pf: np.ndarray, ideal: np.ndarray | None = None, nadir: np.ndarray | None = None
) -> float:
    """Inverted generational distance: mean distance from each true-front point to its nearest point of F.

    Both sets are normalised with ``ideal`` / ``nadir`` when given (so objectives of different scales
    weigh alike). Lower is better.
    """
    F = check_objectives(F, "F")
    pf = check_objectives(pf, "pf")
    if F.shape[1] != pf.shape[1]:
        raise ValueError(
            f"`F` and `pf` must have the same number of objectives, got {F.shape[1]} and {pf.shape[1]}"
        )
    if ideal is not None and nadir is not None:
        F, pf = normalize_objectives(F, ideal, nadir), normalize_objectives(pf, ideal, nadir)
    d = np.sqrt(((pf[:, None, :] - F[None, :, :]) ** 2).sum(-1))  # (n_pf, n)
    return float(d.min(axis=1).mean())


def _nearest_neighbour_distances(F: np.ndarray) -> np.ndarray:
    d = np.sqrt(((F[:, None, :] - F[None, :, :]) ** 2).sum(-1))
    np.fill_diagonal(d, np.inf)
    return d.min(axis=1)


def spread(F: np.ndarray, extremes: np.ndarray | None = None) -> float:
    """Generalised spread Delta (Zhou et al. 2006, extending Deb's Delta to m objectives); lower is better.

    ``Delta = (sum_j d(e_j, F) + sum_i |d_i - mean(d)|) / (sum_j d(e_j, F) + n mean(d))`` where d_i is the
    nearest-neighbour distance of point i in F and e_j are the m extreme points (those of ``extremes``,
    e.g. a true front, or F's own per-objective extremes when omitted, in which case the first sum is 0).
    0 means evenly spaced points that reach the extremes. Needs at least 2 points; returns nan otherwise.
    """
    F = check_objectives(F, "F", min_rows=0)
    if len(F) < 2:
        return float("nan")
    d = _nearest_neighbour_distances(F)
    dbar = d.mean()
    if extremes is None:
        d_ext = 0.0
    else:
        E = check_objectives(extremes, "extremes")
        ext = E[np.argmin(E, axis=0)]  # (m, m): the point minimising each objective
        d_ext = float(np.sqrt(((ext[:, None, :] - F[None, :, :]) ** 2).sum(-1)).min(axis=1).sum())
    denom = d_ext + len(F) * dbar
    return float((d_ext + np.abs(d - dbar).sum()) / denom) if denom > 0 else 0.0


def deb_spread(F: np.ndarray) -> float:
    """Deb's spread Delta for two objectives on the whole sample set (NSGA-II paper, 2002); lower is better.

    The points are sorted by f1 and ``d_i`` are the n - 1 consecutive Euclidean gaps;
    ``Delta = sum_i |d_i - mean(d)| / ((n - 1) mean(d))``. The extreme-point terms d_f, d_l are 0 here
    (the set's own extremes; no true front is assumed), which is how the review describes the official
    ``utils.spread`` applied to all 256 generated designs (reconstructed, not checked line by line).
    Needs two objectives and at least 3 points; returns nan otherwise.
    """
    F = check_objectives(F, "F", min_rows=0)
    if F.shape[1] != 2 or len(F) < 3:
        return float("nan")
    G = F[np.argsort(F[:, 0], kind="stable")]
    d = np.sqrt(((G[1:] - G[:-1]) ** 2).sum(-1))
    dbar = d.mean()
    return float(np.abs(d - dbar).sum() / (len(d) * dbar)) if dbar > 0 else 0.0


def spacing(F: np.ndarray) -> float:
    """Schott's spacing: standard deviation of the L1 nearest-neighbour distances (0 = evenly spaced)."""
    F = check_objectives(F, "F", min_rows=0)
    if len(F) < 2:
        return float("nan")
    d = np.abs(F[:, None, :] - F[None, :, :]).sum(-1)
    np.fill_diagonal(d, np.inf)
    return float(np.std(d.min(axis=1), ddof=1)) if len(F) > 2 else 0.0


def mean_pairwise_distance(F: np.ndarray) -> float:
    """Mean Euclidean distance over all pairs of rows of ``F``; higher means more spread out."""
    F = check_objectives(F, "F", min_rows=0)
    if len(F) < 2:
        return float("nan")
    d = np.sqrt(((F[:, None, :] - F[None, :, :]) ** 2).sum(-1))
    n = len(F)
    return float(d.sum() / (n * (n - 1)))


def hv_percentile(
    F: np.ndarray,
    q: float,
    ideal: np.ndarray | None = None,
    nadir: np.ndarray | None = None,
    ref_factor: float = 1.1,
) -> float:
    """Hypervolume after removing the best ``1 - q`` share of the points (PGD-MOO's robustness view).

    Points are ordered by non-dominated rank then crowding distance (the best first); the first
    ``round((1 - q) n)`` are dropped and the hypervolume of the rest is returned (q=0.75 -> "75th").
    """
    from neurips25.pref_diffusion.preferences import diversity_ranks

    if not 0 < q <= 1:
        raise ValueError(f"`q` must be in (0, 1], got {q!r}")
    F = check_objectives(F, "F")
    _, _, rank = diversity_ranks(F)
    keep = np.argsort(rank)[int(round((1 - q) * len(F))) :]
    return hv(F[keep], ideal, nadir, ref_factor)
