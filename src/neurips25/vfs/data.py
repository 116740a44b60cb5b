"""Simulated vertically partitioned, sparse, grouped 0/1 features with a rare logistic label.

The design follows the notes (reconstructed): ``p`` ultrahigh 0/1 features of density ``density``
split column-wise over ``K`` passive parties, cut into groups of ``group_size`` consecutive columns
(groups never span parties); a few true features sit inside a few groups; ``y`` follows a logistic
model whose intercept is solved so that ``P(y = 1)`` equals ``positive_rate``.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy.sparse as sp
from scipy.optimize import brentq
from scipy.special import expit

__all__ = [
    "VerticalDataset",
    "alternate_signs",
    "column_block",
    "logistic_labels",
    "make_vertical_sparse_classification",
    "sparse_binary_matrix",
]


@dataclasses.dataclass
class VerticalDataset:
    """A simulated vertical data set with its planted truth.

    Attributes
    ----------
    X_parts : list of scipy.sparse.csc_matrix, each (n_samples, p_k), int8 0/1
    y : numpy.ndarray of int, shape (n_samples,)
    support : numpy.ndarray of int
        True features ``M*`` (global column indices, sorted).
    groups : numpy.ndarray of int, shape (n_features,)
        Global group id of each column.
    coef : numpy.ndarray of float, shape (n_features,)
        Logistic coefficients (zero off the support).
    intercept : float
    party_columns : list of numpy.ndarray
        Global columns of each party (contiguous blocks).
    """

    X_parts: list
    y: np.ndarray
    support: np.ndarray
    groups: np.ndarray
    coef: np.ndarray
    intercept: float
    party_columns: list

    @property
    def X(self) -> sp.csc_matrix:
        """All parties' columns side by side (the centralized view)."""
        return sp.hstack(self.X_parts, format="csc")


def sparse_binary_matrix(n_samples: int, n_features: int, density: float, rng: np.random.Generator) -> sp.csc_matrix:
    """An (n_samples, n_features) CSC matrix of iid Bernoulli(``density``) entries, int8.

    Nonzero positions are drawn as geometric gaps along the column-major flattened index, which gives
    exact iid Bernoulli entries, already sorted, with no duplicate removal (``O(nnz)``).
    """
    if not 0 < density < 1:
        raise ValueError(f"`density` must be in (0, 1), got {density!r}")
    total = n_samples * n_features
    expected = total * density
    draws = int(expected + 8 * np.sqrt(expected) + 64)
    flat = np.cumsum(rng.geometric(density, size=draws), dtype=np.int64) - 1
    while flat[-1] < total:  # extremely rare: the draw fell short of the end
        more = np.cumsum(rng.geometric(density, size=draws // 8 + 64), dtype=np.int64) + flat[-1]
        flat = np.concatenate([flat, more])
    flat = flat[flat < total]
    cols = flat // n_samples
    rows = (flat - cols * n_samples).astype(np.int32)
    indptr = np.searchsorted(cols, np.arange(n_features + 1)).astype(np.int64)
    return sp.csc_matrix((np.ones(len(rows), dtype=np.int8), rows, indptr), shape=(n_samples, n_features))


def logistic_labels(eta: np.ndarray, positive_rate: float, rng: np.random.Generator) -> tuple[np.ndarray, float]:
    """Draw ``y ~ Bernoulli(expit(b + eta))``, ``b`` solved so that ``mean(expit(b + eta))`` is the rate."""
    if not 0 < positive_rate < 1:
        raise ValueError(f"`positive_rate` must be in (0, 1), got {positive_rate!r}")
    eta = np.asarray(eta, dtype=float)
    b = brentq(lambda c: expit(c + eta).mean() - positive_rate, -50.0, 50.0, xtol=1e-10)
    y = (rng.random(len(eta)) < expit(b + eta)).astype(np.int64)
    return y, float(b)


def make_vertical_sparse_classification(
    n_samples: int = 5000,
    n_features: int = 2000,
    n_parties: int = 4,
    group_size: int = 50,
    density: float = 0.01,
    n_active_groups: int = 3,
    n_active_per_group: int = 4,
    beta_range: tuple[float, float] = (1.5, 2.5),
    positive_rate: float = 0.05,
    mixed_signs: bool = False,
    random_state=None,
) -> VerticalDataset:
    """Sparse grouped 0/1 features over ``n_parties`` parties and a rare logistic label.

    Parameters
    ----------
    n_samples, n_features : int
    n_parties : int, default=4
        Parties get contiguous blocks of whole groups.
    group_size : int, default=50
    density : float, default=0.01
        ``P(x_ij = 1)``.
    n_active_groups, n_active_per_group : int, default=3, 4
        True features: ``n_active_per_group`` random columns in each of ``n_active_groups`` random groups.
    beta_range : (float, float), default=(1.5, 2.5)
        Effect sizes ``|beta_j| ~ U(beta_range)``.
    positive_rate : float, default=0.05
        ``P(y = 1)``, reached by solving the intercept.
    mixed_signs : bool, default=False
        Alternate the signs of the effects inside each true group (exposes cancellation at stage 1).
    random_state : int or numpy.random.Generator, optional

    Returns
    -------
    VerticalDataset

    Examples
    --------
    >>> d = make_vertical_sparse_classification(1000, 200, n_parties=2, group_size=20, random_state=0)
    >>> [P.shape for P in d.X_parts], len(d.support), int(d.groups.max()) + 1
    ([(1000, 100), (1000, 100)], 12, 10)
    """
    for name, v in [
        ("n_samples", n_samples),
        ("n_features", n_features),
        ("n_parties", n_parties),
        ("group_size", group_size),
        ("n_active_groups", n_active_groups),
        ("n_active_per_group", n_active_per_group),
    ]:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"`{name}` must be an int >= 1, got {v!r}")
    n_groups = -(-n_features // group_size)
    full_groups = n_features // group_size
    if n_parties > n_groups:
        raise ValueError(f"`n_parties`={n_parties} exceeds the {n_groups} groups; each party needs a group")
    if n_active_groups > full_groups or n_active_per_group > group_size:
        raise ValueError("`n_active_groups` x `n_active_per_group` does not fit in the full groups")
    lo, hi = beta_range
    if not 0 <= lo <= hi:
        raise ValueError(f"`beta_range` must satisfy 0 <= low <= high, got {beta_range!r}")
    rng = np.random.default_rng(random_state)
    groups = np.arange(n_features) // group_size
    party_groups = np.array_split(np.arange(n_groups), n_parties)
    party_columns = [np.flatnonzero(np.isin(groups, g)) for g in party_groups]
    X_parts = [sparse_binary_matrix(n_samples, len(c), density, rng) for c in party_columns]

    true_groups = np.sort(rng.choice(full_groups, size=n_active_groups, replace=False))
    support = np.sort(
        np.concatenate(
            [g * group_size + rng.choice(group_size, size=n_active_per_group, replace=False) for g in true_groups]
        )
    )
    coef = np.zeros(n_features)
    magnitude = rng.uniform(lo, hi, size=len(support))
    coef[support] = magnitude
    if mixed_signs:
        coef = alternate_signs(coef, support, groups)
    eta = column_block(X_parts, party_columns, support) @ coef[support]
    y, intercept = logistic_labels(eta, positive_rate, rng)
    return VerticalDataset(X_parts, y, support, groups, coef, intercept, party_columns)


def alternate_signs(coef: np.ndarray, support: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Copy of ``coef`` with every second true feature of each true group negated (+, -, +, -, ...)."""
    out = np.array(coef, dtype=float)
    for g in np.unique(groups[support]):
        in_g = support[groups[support] == g]
        out[in_g[1::2]] = -np.abs(out[in_g[1::2]])
    return out


def column_block(X_parts: list, party_columns: list, columns: np.ndarray) -> np.ndarray:
    """Dense (n_samples, len(columns)) copy of the given global columns, gathered from the parties."""
    out = np.zeros((X_parts[0].shape[0], len(columns)))
    starts = [c[0] for c in party_columns]
    for j, col in enumerate(np.asarray(columns)):
        k = int(np.searchsorted(starts, col, side="right") - 1)
        out[:, j] = X_parts[k][:, int(col - party_columns[k][0])].toarray().ravel()
    return out
