"""Pair labels for the preference model: plain Pareto dominance, or PGD-MOO's diversity-aware ranks.

Diversity-aware labels (the paper's contribution, Section 3.2): non-dominated sort the dataset into fronts
F_1, F_2, ...; inside each front score points by crowding distance (or exclusive hypervolume
contribution); the global rank orders by (front index, then descending score). A pair prefers the member
with the lower global rank, so across fronts labels agree with dominance and inside a front they prefer
the more isolated point. A partner from the anchor's own front is accepted only when its score exceeds
``threshold`` (0 by default), which keeps duplicate or fully crowded points from becoming "preferred"
tie-breaks.

Constraints (pymoo's constraint violation ``cv``, 0 = feasible) follow Deb's constrained dominance: a
feasible design beats an infeasible one, and of two infeasible designs the smaller violation wins. In the
ranks, the feasible designs are sorted into fronts first; the infeasible ones come after all of them,
one "front" per distinct violation value, ascending.
"""

from __future__ import annotations

import numpy as np

from neurips25.pref_diffusion.validation import check_objectives, check_pair, check_violation

__all__ = [
    "dominates",
    "dominance_labels",
    "crowding_distance",
    "hv_contributions",
    "diversity_ranks",
    "PairSampler",
]


def dominates(Ya: np.ndarray, Yb: np.ndarray, cv_a=None, cv_b=None) -> np.ndarray:
    """Row-wise Pareto dominance for minimisation: True where ``Ya[i]`` dominates ``Yb[i]``.

    ``Ya`` and ``Yb`` have shape (n, m) (or broadcast); returns a bool array of shape (n,). With the
    constraint violations ``cv_a``, ``cv_b`` (shape (n,), 0 = feasible) it is Deb's constrained dominance:
    feasible beats infeasible, the smaller violation wins between infeasible designs, and Pareto
    dominance decides between feasible ones.
    """
    Ya, Yb = np.asarray(Ya, float), np.asarray(Yb, float)
    pareto = np.all(Ya <= Yb, axis=-1) & np.any(Ya < Yb, axis=-1)
    if cv_a is None and cv_b is None:
        return pareto
    ca = np.zeros(pareto.shape) if cv_a is None else np.asarray(cv_a, float)
    cb = np.zeros(pareto.shape) if cv_b is None else np.asarray(cv_b, float)
    fa, fb = ca <= 0, cb <= 0
    return (fa & ~fb) | (~fa & ~fb & (ca < cb)) | (fa & fb & pareto)


def dominance_labels(Y_i: np.ndarray, Y_j: np.ndarray, cv_i=None, cv_j=None) -> np.ndarray:
    """Label pairs by dominance: 0 where Y_i dominates Y_j, 1 where Y_j dominates Y_i, -1 if incomparable.

    Parameters
    ----------
    Y_i, Y_j : ndarray of shape (n, m)
        Objective vectors of the two members of each pair.
    cv_i, cv_j : ndarray of shape (n,), optional
        Constraint violations (0 = feasible): constrained dominance (see :func:`dominates`).

    Examples
    --------
    >>> dominance_labels(np.array([[0, 0], [1, 1], [0, 1]]), np.array([[1, 1], [0, 0], [1, 0]])).tolist()
    [0, 1, -1]
    """
    Y_i = check_objectives(Y_i, "Y_i", min_rows=0)
    Y_j = check_objectives(Y_j, "Y_j", min_rows=0)
    if Y_i.shape != Y_j.shape:
        raise ValueError(f"`Y_i` and `Y_j` must have the same shape, got {Y_i.shape} and {Y_j.shape}")
    if (cv_i is None) != (cv_j is None):
        raise ValueError("pass both `cv_i` and `cv_j`, or neither")
    if cv_i is not None:
        cv_i, cv_j = check_violation(cv_i, len(Y_i), "cv_i"), check_violation(cv_j, len(Y_j), "cv_j")
    lab = np.full(len(Y_i), -1, dtype=int)
    lab[dominates(Y_i, Y_j, cv_i, cv_j)] = 0
    lab[dominates(Y_j, Y_i, cv_j, cv_i)] = 1
    return lab


def crowding_distance(F: np.ndarray) -> np.ndarray:
    """NSGA-II crowding distance of the points of one front, shape (n, m) -> (n,).

    For each objective the points are sorted; a point's distance adds the gap between its two
    neighbours divided by that objective's range; the sum is divided by m (pymoo's scaling). The extreme
    points of each objective get ``inf``. A front of at most two points is all ``inf``.
    """
    F = np.asarray(F, float)
    n, m = F.shape
    if n <= 2:
        return np.full(n, np.inf)
    order = np.argsort(F, axis=0, kind="mergesort")
    Fs = np.take_along_axis(F, order, axis=0)
    span = Fs[-1] - Fs[0]
    gaps = np.full((n, m), np.inf)
    # (n-2, m): the interior points' neighbour gaps per objective; a constant objective adds nothing
    gaps[1:-1] = np.where(span > 0, (Fs[2:] - Fs[:-2]) / np.where(span > 0, span, 1.0), 0.0)
    cd = np.zeros((n, m))
    np.put_along_axis(cd, order, gaps, axis=0)
    return cd.sum(axis=1) / m


def hv_contributions(F: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Exclusive hypervolume contribution of each point of a front (HV of all minus HV without it)."""
    from pymoo.indicators.hv import HV

    F = np.asarray(F, float)
    ind = HV(ref_point=np.asarray(ref, float))
    total = ind(F)
    return np.array([total - (ind(np.delete(F, i, axis=0)) if len(F) > 1 else 0.0) for i in range(len(F))])


def diversity_ranks(
    Y: np.ndarray, metric: str = "crowding", ref: np.ndarray | None = None, cv: np.ndarray | None = None
):
    """Front index, within-front diversity score and global rank of every row of ``Y`` (n, m).

    Parameters
    ----------
    Y : ndarray of shape (n, m)
        Objective values (minimisation).
    metric : {"crowding", "hv_contrib"}
        Within-front score: crowding distance, or exclusive hypervolume contribution (with reference
        point ``ref``, default 1.1 x the per-objective max of ``Y``).
    cv : ndarray of shape (n,), optional
        Constraint violations (0 = feasible). Infeasible rows are ranked after every feasible one, one
        front per distinct violation value (ascending), with score 0.

    Returns
    -------
    front : ndarray of int, shape (n,)
        0 for the non-dominated front, 1 for the next, ...
    score : ndarray of float, shape (n,)
    rank : ndarray of int, shape (n,)
        A permutation of 0..n-1: order by front, then descending score (ties by index).

    Examples
    --------
    >>> front, score, rank = diversity_ranks(np.array([[0.0, 1.0], [0.5, 0.5], [1.0, 0.0], [1.0, 1.0]]))
    >>> front.tolist(), rank.tolist()
    ([0, 0, 0, 1], [0, 2, 1, 3])
    """
    from pymoo.util.nds.non_dominated_sorting import NonDominatedSorting

    Y = check_objectives(Y, "Y")
    if metric not in ("crowding", "hv_contrib"):
        raise ValueError(f"`metric` must be 'crowding' or 'hv_contrib', got {metric!r}")
    n = len(Y)
    feas = np.ones(n, bool) if cv is None else check_violation(cv, n) <= 0
    fidx = np.flatnonzero(feas)
    front = np.empty(n, dtype=int)
    score = np.zeros(n)
    n_fronts = 0
    if len(fidx):
        Yf = Y[fidx]
        fronts = NonDominatedSorting().do(Yf)
        n_fronts = len(fronts)
        if metric == "hv_contrib":
            span = np.maximum(Yf.max(0) - Yf.min(0), 1e-12)
            Yn = (Yf - Yf.min(0)) / span
            ref = np.full(Y.shape[1], 1.1) if ref is None else (np.asarray(ref, float) - Yf.min(0)) / span
        for k, idx in enumerate(fronts):
            front[fidx[idx]] = k
            score[fidx[idx]] = (
                crowding_distance(Yf[idx]) if metric == "crowding" else hv_contributions(Yn[idx], ref)
            )
    if not feas.all():
        bad = np.flatnonzero(~feas)
        # infeasible designs after all fronts, ordered (and tied) by their violation
        _, level = np.unique(np.asarray(cv, float)[bad], return_inverse=True)
        front[bad] = n_fronts + level
    # lexsort: last key is primary -> front ascending, then score descending, then index
    order = np.lexsort((np.arange(n), -score, front))
    rank = np.empty(n, dtype=int)
    rank[order] = np.arange(n)
    return front, score, rank


class PairSampler:
    """A torch-style ``Dataset`` of labelled design pairs ``(x1, x2, label)``; label 0 means x1 is preferred.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Designs (already in the space the model sees).
    Y : ndarray of shape (n, m)
        Their objective values (minimisation).
    mode : {"diversity", "dominance"}
        ``"diversity"``: the global (front, crowding) rank decides (see module docstring).
        ``"dominance"``: only comparable pairs are used and the dominating member is preferred.
    threshold : float
        Minimum within-front score of a same-front partner (diversity mode).
    subset_ratio : float, optional
        Keep only the best ``subset_ratio`` share of the data by global rank ("SubCrowding").
    metric : {"crowding", "hv_contrib"}
        Within-front score of the diversity mode.
    cv : ndarray of shape (n,), optional
        Constraint violations (0 = feasible): labels follow constrained dominance in both modes.
    seed : int
        Seed of the partner draws.
    max_tries : int
        Partner candidates drawn per anchor before the anchor is skipped for this draw.

    Notes
    -----
    ``__getitem__`` draws a fresh partner each call, like the official data loader. Training code uses
    :meth:`draw`, which draws partners for all anchors at once.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((50, 3)); Y = np.column_stack([X[:, 0], 1 - X[:, 0] + X[:, 1]])
    >>> s = PairSampler(X, Y, mode="dominance", seed=0)
    >>> i, j, lab = s.draw()
    >>> bool(np.all(lab == (~dominates(Y[i], Y[j])).astype(int)))
    True
    """

    def __init__(
        self,
        X,
        Y,
        mode: str = "diversity",
        threshold: float = 0.0,
        subset_ratio: float | None = None,
        metric: str = "crowding",
        cv: np.ndarray | None = None,
        seed: int = 0,
        max_tries: int = 32,
    ):
        X, Y = check_pair(X, Y)
        cv = None if cv is None else check_violation(cv, len(X))
        if mode not in ("diversity", "dominance"):
            raise ValueError(f"`mode` must be 'diversity' or 'dominance', got {mode!r}")
        if subset_ratio is not None and not 0 < subset_ratio <= 1:
            raise ValueError(f"`subset_ratio` must be in (0, 1] or None, got {subset_ratio!r}")
        self.mode, self.threshold, self.max_tries = mode, float(threshold), int(max_tries)
        front, score, rank = diversity_ranks(Y, metric, cv=cv)
        keep = np.arange(len(X))
        if subset_ratio is not None:
            keep = np.argsort(rank)[: max(2, int(round(subset_ratio * len(X))))]
            # ranks are recomputed on the subset so fronts and crowding describe what is sampled
            front, score, rank = diversity_ranks(Y[keep], metric, cv=None if cv is None else cv[keep])
        self.X, self.Y = X[keep], Y[keep]
        self.cv = None if cv is None else cv[keep]
        self.front, self.score, self.rank = front, score, rank
        self.rng = np.random.default_rng(seed)

    def __len__(self) -> int:
        return len(self.X)

    def _valid(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        if self.mode == "dominance":
            ci, cj = (None, None) if self.cv is None else (self.cv[i], self.cv[j])
            return dominates(self.Y[i], self.Y[j], ci, cj) | dominates(self.Y[j], self.Y[i], cj, ci)
        same = self.front[i] == self.front[j]
        return (i != j) & (~same | (self.score[j] > self.threshold))

    def _label(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        if self.mode == "dominance":
            ci, cj = (None, None) if self.cv is None else (self.cv[i], self.cv[j])
            return (~dominates(self.Y[i], self.Y[j], ci, cj)).astype(np.int64)
        return (self.rank[i] > self.rank[j]).astype(np.int64)

    def draw(self, anchors: np.ndarray | None = None, pool: np.ndarray | None = None):
        """Draw one partner per anchor (from ``pool``, default all rows); returns (i, j, label) index
        arrays. Anchors without a valid partner among ``max_tries`` candidates are dropped."""
        i = np.arange(len(self.X)) if anchors is None else np.asarray(anchors, dtype=int)
        pool = np.arange(len(self.X)) if pool is None else np.asarray(pool, dtype=int)
        cand = pool[self.rng.integers(0, len(pool), size=(len(i), self.max_tries))]
        ok = self._valid(np.repeat(i, self.max_tries), cand.ravel()).reshape(cand.shape)
        has = ok.any(axis=1)
        j = cand[np.arange(len(i)), ok.argmax(axis=1)]
        i, j = i[has], j[has]
        return i, j, self._label(i, j)

    def __getitem__(self, idx: int):
        i, j, lab = self.draw(np.array([idx]))
        if len(i) == 0:
            raise IndexError(f"no valid partner found for anchor {idx} in {self.max_tries} draws")
        return self.X[i[0]], self.X[j[0]], int(lab[0])
