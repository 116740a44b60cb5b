"""Marginal screening statistics of VFS and the group aggregation of stage 1.

The protocol reveals to the active party, per column ``u`` (a feature ``x_j`` or a group aggregate
``z_g``) and over the ``n_s = n1 + n0`` rows it sampled, the integer

    D_u = n_s * T_u - n1 * S_u,   T_u = sum_i u_i y_i,   S_u = sum_i u_i,

which equals ``n1 * n0 * (mean of u over positives - mean over negatives)``, plus the plaintext sums
``S_u`` and ``Q_u = sum_i u_i**2`` sent by the passive party. A *statistic* turns these into a score;
it is pluggable (the paper's exact statistic is not known here; reconstructed, see docs/vfs.md):

- ``"mean_diff"``: ``|D| / (n1 n0)`` = ``|mean_1(u) - mean_0(u)|``, the class mean difference.
  Under case-control subsampling (all positives, a uniform subset of negatives) both class means are
  unbiased, so the score needs no reweighting.
- ``"pearson"``: ``|D| / sqrt(n1 n0 (n_s Q - S^2))`` = ``|corr(u, y)|`` on the sampled rows.

A user statistic is any callable ``f(D, S, Q, n_pos, n_neg) -> scores`` (float arrays of shape (m,)).
A statistic whose attribute ``needs_sums`` is False (``"mean_diff"``) is passed ``S = Q = None`` and the
passive parties then never reveal the column sums; a callable without the attribute gets them.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.sparse as sp

__all__ = ["STATISTICS", "class_mean_difference", "get_statistic", "group_aggregate", "needs_sums"]

Statistic = Callable[[np.ndarray, np.ndarray, np.ndarray, int, int], np.ndarray]


def _as_float(a) -> np.ndarray:
    # D, S, Q are exact Python integers; float64 only once ranking needs it.
    return np.asarray([float(v) for v in np.asarray(a, dtype=object).ravel()], dtype=float)


def mean_difference_score(D, S, Q, n_pos: int, n_neg: int) -> np.ndarray:
    """``|mean_1(u) - mean_0(u)| = |D| / (n1 n0)`` per column."""
    return np.abs(_as_float(D)) / (float(n_pos) * float(n_neg))


mean_difference_score.needs_sums = False


def pearson_score(D, S, Q, n_pos: int, n_neg: int) -> np.ndarray:
    """``|corr(u, y)| = |D| / sqrt(n1 n0 (n_s Q - S^2))``; 0 for a constant column."""
    if S is None or Q is None:
        raise ValueError("the 'pearson' statistic needs the column sums `S` and `Q`")
    n_s = n_pos + n_neg
    Q, S = np.asarray(Q), np.asarray(S)
    if Q.dtype == object or Q.dtype.kind in "iu":  # exact integer sums from the protocol
        var = np.asarray([float(n_s * int(q) - int(s) ** 2) for q, s in zip(Q, S, strict=True)], dtype=float)
    else:
        var = n_s * Q.astype(float) - S.astype(float) ** 2
    denom = np.sqrt(float(n_pos) * float(n_neg) * np.maximum(var, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(denom > 0, np.abs(_as_float(D)) / np.where(denom > 0, denom, 1.0), 0.0)
    return out


#: registry of named statistics, all functions of ``(D, S, Q, n_pos, n_neg)``
STATISTICS: dict[str, Statistic] = {"mean_diff": mean_difference_score, "pearson": pearson_score}


pearson_score.needs_sums = True


def needs_sums(statistic) -> bool:
    """Whether a statistic reads ``S`` and ``Q`` (True unless it says ``needs_sums = False``)."""
    return bool(getattr(get_statistic(statistic), "needs_sums", True))


def get_statistic(statistic) -> Statistic:
    """Resolve ``statistic`` (a name in :data:`STATISTICS` or a callable) to a function."""
    if callable(statistic):
        return statistic
    if isinstance(statistic, str) and statistic in STATISTICS:
        return STATISTICS[statistic]
    raise ValueError(f"`statistic` must be one of {sorted(STATISTICS)} or a callable, got {statistic!r}")


def class_mean_difference(X, y) -> np.ndarray:
    """Centralized reference: ``mean(X[y == 1, j]) - mean(X[y == 0, j])`` for every column ``j``.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
    y : array-like of shape (n_samples,), values in {0, 1}

    Returns
    -------
    numpy.ndarray of shape (n_features,)
        Signed differences of class means; ``|.|`` is the ``"mean_diff"`` score.

    Examples
    --------
    >>> class_mean_difference([[1, 0], [1, 1], [0, 1], [0, 0]], [1, 1, 0, 0]).tolist()
    [1.0, 0.0]
    """
    y = np.asarray(y).ravel()
    if not set(np.unique(y).tolist()) <= {0, 1} or len(np.unique(y)) != 2:
        raise ValueError("`y` must contain both classes 0 and 1 and nothing else")
    pos = (y == 1).astype(float)
    neg = 1.0 - pos
    Xm = X if sp.issparse(X) else np.asarray(X, dtype=float)
    if Xm.shape[0] != len(y):
        raise ValueError(f"`X` has {Xm.shape[0]} rows but `y` has {len(y)}")
    m1 = np.asarray(Xm.T @ pos).ravel() / pos.sum()
    m0 = np.asarray(Xm.T @ neg).ravel() / neg.sum()
    return m1 - m0


def _contiguous_group_sums(Xc: sp.csc_matrix, groups: np.ndarray, n_groups: int, how: str) -> sp.csc_matrix:
    """Group sums when each group is a run of consecutive columns: one bincount over rows per group."""
    starts = np.searchsorted(groups, np.arange(n_groups + 1))
    bounds = Xc.indptr[starts]
    n = Xc.shape[0]
    indices, data, indptr = [], [], [0]
    for g in range(n_groups):
        rows = Xc.indices[bounds[g] : bounds[g + 1]]
        if how == "any":
            counts = np.bincount(rows, minlength=n)
        else:
            counts = np.bincount(rows, weights=Xc.data[bounds[g] : bounds[g + 1]].astype(float), minlength=n)
        nz = np.flatnonzero(counts)
        indices.append(nz)
        data.append(np.ones(len(nz), dtype=np.int64) if how == "any" else np.rint(counts[nz]).astype(np.int64))
        indptr.append(indptr[-1] + len(nz))
    Z = sp.csc_matrix(
        (
            np.concatenate(data) if data else np.zeros(0, np.int64),
            np.concatenate(indices) if indices else np.zeros(0, np.int32),
            np.asarray(indptr),
        ),
        shape=(n, n_groups),
    )
    return Z


def group_aggregate(X, groups, how: str = "sum") -> sp.csc_matrix:
    """Stage-1 group columns ``z_g``: the sum (or any-nonzero indicator) of a group's features.

    Parameters
    ----------
    X : sparse matrix or array of shape (n_samples, n_features)
        Integer-valued features of one party.
    groups : array-like of int, shape (n_features,)
        Group index ``0 .. G-1`` of each column.
    how : {"sum", "any"}, default="sum"
        ``z_ig = sum_{j in g} x_ij`` or ``z_ig = 1{any x_ij != 0, j in g}``.

    Returns
    -------
    scipy.sparse.csc_matrix of shape (n_samples, G), integer dtype

    Examples
    --------
    >>> group_aggregate([[1, 1, 0], [0, 1, 1]], [0, 0, 1]).toarray().tolist()
    [[2, 0], [1, 1]]
    >>> group_aggregate([[1, 1, 0], [0, 1, 1]], [0, 0, 1], how="any").toarray().tolist()
    [[1, 0], [1, 1]]
    """
    if how not in ("sum", "any"):
        raise ValueError(f"`how` must be 'sum' or 'any', got {how!r}")
    Xc = sp.csc_matrix(X)
    if how == "any":
        # indicator of any nonzero, computed before summing so opposite signs cannot cancel it
        Xc = sp.csc_matrix((Xc != 0).astype(np.int64))
    groups = np.asarray(groups)
    if groups.shape != (Xc.shape[1],):
        raise ValueError(f"`groups` must have shape ({Xc.shape[1]},), got {groups.shape}")
    n_groups = int(groups.max()) + 1 if len(groups) else 0
    if len(groups) and np.all(np.diff(groups) >= 0):
        return _contiguous_group_sums(Xc, groups, n_groups, how)
    # Z^T = M^T X^T as a CSR product (X^T in CSR reuses X's CSC arrays): faster than CSC @ CSR
    membership_t = sp.csr_matrix(
        (np.ones(len(groups), dtype=np.int64), (groups, np.arange(len(groups)))),
        shape=(n_groups, len(groups)),
    )
    Xt = sp.csr_matrix((Xc.data.astype(np.int64), Xc.indices, Xc.indptr), shape=(Xc.shape[1], Xc.shape[0]))
    Zt = membership_t @ Xt
    Z = sp.csc_matrix((Zt.data, Zt.indices, Zt.indptr), shape=(Xc.shape[0], n_groups))
    Z.eliminate_zeros()
    if how == "any":
        Z.data = np.ones_like(Z.data)
    return Z
