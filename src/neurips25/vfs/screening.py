"""scikit-learn selectors: two-stage VFS, the one-stage federated baseline and centralized SIS.

All three are ``SelectorMixin`` estimators: ``fit(X, y)``, ``get_support()``, ``transform(X)``, usable
in a ``Pipeline``. ``X`` is one matrix (dense or scipy.sparse) whose columns are split among simulated
passive parties, or a list of per-party matrices; ``y`` is the active party's binary label.
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.feature_selection import SelectorMixin
from sklearn.utils import ClassifierTags
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from neurips25.vfs.parties import ActiveParty, PassiveParty
from neurips25.vfs.protocol import resolve_keep, run_protocol, sis_model_size
from neurips25.vfs.statistics import STATISTICS, get_statistic

__all__ = ["CentralizedSIS", "OneStageFederatedScreener", "VerticalFederatedScreener"]


def _is_party_list(X) -> bool:
    """A list of blocks (one per party), as opposed to a list of rows.

    A list is read as party blocks as soon as one element is a sparse matrix or a 2-D array; every
    element must then be 2-D, else the error names the party.
    """
    if not isinstance(X, (list, tuple)) or not X:
        return False
    if not any(sp.issparse(P) or getattr(P, "ndim", None) == 2 for P in X):
        return False
    for k, P in enumerate(X):
        ndim = 2 if sp.issparse(P) else np.ndim(P)
        if ndim != 2:
            raise ValueError(
                f"`X` is a list of party blocks, but the block of party {k} (`X[{k}]`) is {ndim}-D with shape "
                f"{np.shape(P)}; every party block must be 2-D (n_samples, p_k): use P.reshape(-1, 1) for one column"
            )
    return True


def _widen_half(X):
    """float16 -> float32 (exact): the parties hold their blocks as scipy.sparse matrices, which have no float16."""
    return X.astype(np.float32) if getattr(X, "dtype", None) == np.float16 else X


def _keep_constraint():
    return [
        Interval(numbers.Integral, 1, None, closed="left"),
        Interval(numbers.Real, 0, 1, closed="right"),
        None,
    ]


class _BinaryScreener(SelectorMixin, BaseEstimator):
    """Shared input handling: per-party blocks, binary ``y``, the fitted mask."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.input_tags.sparse = True
        # binary-only: sklearn's checks then feed two-class targets
        tags.classifier_tags = ClassifierTags(multi_class=False)
        return tags

    def _validate_y(self, y, n_samples: int) -> np.ndarray:
        y = np.asarray(y)
        if y.ndim != 1 or len(y) != n_samples:
            raise ValueError(f"`y` must be 1-D with {n_samples} entries (one per row of X), got shape {y.shape}")
        kind = type_of_target(y, input_name="y", raise_unknown=True)
        classes = np.unique(y)
        if len(classes) < 2:
            raise ValueError(
                f"`y` contains only one class ({classes.tolist()}); screening needs positives and negatives"
            )
        if kind != "binary":
            raise ValueError(
                f"`y` must be binary (the active party's labels); got target type {kind!r} with "
                f"{len(classes)} distinct values"
            )
        self.classes_ = classes
        pos_label = getattr(self, "pos_label", None)
        if pos_label is None:
            if classes.dtype.kind not in "biuf":
                # sorted order would make e.g. "stay" (the majority) positive in ["stay", "churn"] silently
                raise ValueError(f"`y` has non-numeric labels {classes.tolist()}: set `pos_label` to the (rare) "
                                 "positive class")
            # numeric labels: the larger one is the (rare) positive class, as in sklearn's binary convention
            pos_label = classes[1]
        elif pos_label not in classes.tolist():
            raise ValueError(f"`pos_label`={pos_label!r} is not one of the labels of `y` {classes.tolist()}")
        return (y == pos_label).astype(np.int64)

    def _split(self, X, y):
        """Return (parts, party_columns, y01) after validating X as one matrix or a list of blocks."""
        if _is_party_list(X):
            parts = []
            for k, Xk in enumerate(X):
                Xk = Xk if sp.issparse(Xk) else np.asarray(Xk)
                if Xk.ndim != 2:
                    raise ValueError(f"`X[{k}]` must be 2-D, got shape {Xk.shape}")
                parts.append(_widen_half(Xk))
            rows = {P.shape[0] for P in parts}
            if len(rows) != 1:
                raise ValueError(f"every party block in `X` must have the same number of rows; got {sorted(rows)}")
            y01 = self._validate_y(y, parts[0].shape[0])
            bounds = np.cumsum([0, *[P.shape[1] for P in parts]])
            cols = [np.arange(bounds[k], bounds[k + 1]) for k in range(len(parts))]
            self.n_features_in_ = int(bounds[-1])
            return parts, cols, y01
        X, _ = validate_data(self, X, y, accept_sparse=("csr", "csc"), dtype="numeric", y_numeric=False)
        X = _widen_half(X)
        y01 = self._validate_y(y, X.shape[0])
        cols = self._party_columns(X.shape[1])
        Xc = X.tocsc() if sp.issparse(X) else X
        parts = [Xc[:, c] for c in cols]
        return parts, cols, y01

    def _party_columns(self, p: int) -> list[np.ndarray]:
        pc = getattr(self, "party_columns", None)
        if pc is None:
            k = max(1, min(getattr(self, "n_parties", 1), p))
            return [np.asarray(c, dtype=np.int64) for c in np.array_split(np.arange(p), k)]
        cols = [np.asarray(c, dtype=np.int64).ravel() for c in pc]
        flat = np.concatenate(cols) if cols else np.zeros(0, dtype=np.int64)
        if len(flat) != p or not np.array_equal(np.sort(flat), np.arange(p)):
            raise ValueError(f"`party_columns` must partition the {p} columns of X (each exactly once)")
        return cols

    def _get_support_mask(self):
        check_is_fitted(self, "support_")
        return self.support_

    def transform(self, X):
        """Keep the selected columns of ``X`` (one matrix, or a list of party blocks in fit order)."""
        if _is_party_list(X):
            X = sp.hstack(X, format="csr") if any(sp.issparse(P) for P in X) else np.hstack([np.asarray(P) for P in X])
        return super().transform(X)

    def _store(self, res, p: int) -> None:
        mask = np.zeros(p, dtype=bool)
        mask[res.support] = True
        self.support_ = mask
        self.feature_scores_ = res.feature_scores
        self.ranking_ = res.ranking
        self.cost_ = res.cost.as_dict()
        self.n_positives_ = res.n_pos
        self.n_sampled_negatives_ = res.n_neg
        self.feature_groups_ = res.feature_group


class VerticalFederatedScreener(_BinaryScreener):
    """Two-stage vertical federated feature screening (VFS), coarse groups then fine features.

    The active party holds ``y`` and the Paillier keys; passive parties hold column blocks of ``X``.
    Stage 1 scores every feature group ``z_g`` (sum of its features) and keeps the top ``d1`` groups;
    stage 2 scores the individual features of the surviving groups and keeps the top ``d2``. A column's
    score comes from ``D_u = n_s sum_i u_i y_i - n1 sum_i u_i`` computed under encryption over the
    sampled rows (see :mod:`neurips25.vfs.statistics`; reconstructed statistic, pluggable).

    Parameters
    ----------
    n_groups_keep : int or float, default=None
        ``d1``: groups surviving stage 1, a count or a fraction of ``G``; None keeps 5% (at least one).
    n_features_keep : int or float, default=None
        ``d2``: features kept; None gives the SIS size ``floor(n1 / log n1)``. An int larger than the
        number of features raises.
    group_size : int, default=50
        ``m``: block size when ``groups`` is not passed to ``fit``.
    statistic : {"mean_diff", "pearson"} or callable, default="mean_diff"
    negative_sampling_ratio : float, default=None
        ``r``: keep all positives and ``r n1`` negatives (case-control); None uses every row.
    party_columns : list of int arrays, default=None
        Columns of ``X`` held by each passive party; None splits them into ``n_parties`` equal
        contiguous blocks. Ignored when ``X`` is a list of blocks.
    n_parties : int, default=2
    aggregate : {"sum", "any"}, default="sum"
        How a group's features form ``z_g``.
    backend : {"plaintext", "paillier"}, default="plaintext"
        ``"paillier"`` encrypts for real (needs ``phe``); ``"plaintext"`` does the same integer
        arithmetic in the clear and counts the same costs.
    key_bits : int, default=2048
        Paillier modulus length (below 2048 warns).
    pad_to : float in (0, 1], default=None
        Send the passive parties a padded sample of this fraction of the rows, hiding which rows were
        sampled (1.0: every row, the ids reveal nothing about ``y``); see :class:`~neurips25.vfs.ActiveParty`.
    random_state : int, RandomState or None, default=None
        Drives the negative sampling.
    pos_label : int, str, bool or None, default=None
        The (rare) positive class of ``y``. ``None``: the larger of two numeric labels; labels that are not
        numbers (e.g. ``["stay", "churn"]``) need it set, as in scikit-learn's binary metrics.

    Attributes
    ----------
    support_ : ndarray of bool, shape (n_features,)
    feature_scores_ : ndarray of float, shape (n_features,)
        Stage-2 scores; NaN for features whose group was dropped at stage 1.
    group_scores_ : ndarray of float, shape (G,)
    kept_groups_ : ndarray of int
        Stage-1 survivors (global group ids, best first).
    feature_groups_ : ndarray of int, shape (n_features,)
        Global group id of each feature.
    ranking_ : ndarray of int
        Features scored at stage 2, best first.
    cost_ : dict
        :class:`~neurips25.vfs.crypto.CostMeter` counts (encryptions, decryptions, hom_operations,
        ciphertexts and bytes per direction).
    n_positives_, n_sampled_negatives_ : int
    classes_ : ndarray of shape (2,)
        The two labels, sorted. The positive class is ``pos_label``, else ``classes_[1]`` (numeric labels).

    Examples
    --------
    >>> from neurips25.vfs import VerticalFederatedScreener, make_vertical_sparse_classification
    >>> data = make_vertical_sparse_classification(5000, 400, n_parties=2, group_size=20, density=0.05,
    ...                                            positive_rate=0.1, random_state=0)
    >>> vfs = VerticalFederatedScreener(n_groups_keep=4, n_features_keep=20, group_size=20,
    ...                                 negative_sampling_ratio=3, random_state=0).fit(data.X_parts, data.y)
    >>> bool(set(data.support) <= set(vfs.get_support(indices=True)))
    True
    >>> vfs.cost_["decryptions"]  # 20 groups + 4 groups x 20 features, instead of 400
    100
    """

    _parameter_constraints: dict = {
        "n_groups_keep": _keep_constraint(),
        "n_features_keep": _keep_constraint(),
        "group_size": [Interval(numbers.Integral, 1, None, closed="left")],
        "statistic": [StrOptions(set(STATISTICS)), callable],
        "negative_sampling_ratio": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "party_columns": ["array-like", None],
        "n_parties": [Interval(numbers.Integral, 1, None, closed="left")],
        "aggregate": [StrOptions({"sum", "any"})],
        "backend": [StrOptions({"plaintext", "paillier"})],
        "key_bits": [Interval(numbers.Integral, 256, None, closed="left")],
        "pad_to": [Interval(numbers.Real, 0, 1, closed="right"), None],
        "random_state": ["random_state"],
        "pos_label": [numbers.Integral, str, bool, None],
    }

    def __init__(
        self,
        n_groups_keep=None,
        n_features_keep=None,
        group_size=50,
        statistic="mean_diff",
        negative_sampling_ratio=None,
        party_columns=None,
        n_parties=2,
        aggregate="sum",
        backend="plaintext",
        key_bits=2048,
        pad_to=None,
        random_state=None,
        pos_label=None,
    ):
        self.n_groups_keep = n_groups_keep
        self.n_features_keep = n_features_keep
        self.group_size = group_size
        self.statistic = statistic
        self.negative_sampling_ratio = negative_sampling_ratio
        self.party_columns = party_columns
        self.n_parties = n_parties
        self.aggregate = aggregate
        self.backend = backend
        self.key_bits = key_bits
        self.pad_to = pad_to
        self.random_state = random_state
        self.pos_label = pos_label

    _two_stage = True

    def _party_groups(self, groups, cols: list[np.ndarray], p: int) -> list[np.ndarray | None]:
        if groups is None:
            return [None] * len(cols)
        g = np.asarray(groups)
        if g.shape != (p,):
            raise ValueError(f"`groups` must have one label per column, shape ({p},), got {g.shape}")
        out, seen = [], {}
        for k, c in enumerate(cols):
            labels, local = np.unique(g[c], return_inverse=True)
            for lab in labels.tolist():
                if lab in seen:
                    raise ValueError(f"`groups` label {lab!r} spans parties {seen[lab]} and {k}; one party per group")
                seen[lab] = k
            out.append(local.astype(np.int64))
        return out

    def fit(self, X, y, groups=None):
        """Run the screening protocol on ``X`` (one matrix or a list of party blocks) and labels ``y``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features) or list of such blocks
        y : array-like of shape (n_samples,)
            Binary labels held by the active party.
        groups : array-like of shape (n_features,), optional
            Group label of each column (a group may not span parties); default: blocks of ``group_size``
            inside each party.

        Returns
        -------
        self
        """
        self._validate_params()
        parts, cols, y01 = self._split(X, y)
        p = int(sum(len(c) for c in cols))
        if isinstance(self.n_features_keep, numbers.Integral) and self.n_features_keep > p:
            raise ValueError(f"`n_features_keep`={self.n_features_keep} is larger than the {p} features of X")
        get_statistic(self.statistic)
        party_groups = self._party_groups(groups, cols, p) if self._two_stage else [None] * len(cols)
        group_size = self.group_size if self._two_stage else 1
        rng = np.random.default_rng(
            self.random_state
            if not isinstance(self.random_state, np.random.RandomState)
            else self.random_state.randint(2**31)
        )
        active = ActiveParty(
            y01,
            backend=self.backend,
            key_bits=self.key_bits,
            negative_sampling_ratio=self.negative_sampling_ratio,
            statistic=self.statistic,
            pad_to=self.pad_to,
            random_state=rng,
        )
        passives = [
            PassiveParty(
                P,
                groups=g,
                group_size=group_size,
                aggregate=getattr(self, "aggregate", "sum"),
                name=f"party{k}",
            )
            for k, (P, g) in enumerate(zip(parts, party_groups, strict=True))
        ]
        res = run_protocol(
            active,
            passives,
            n_features_keep=self.n_features_keep,
            n_groups_keep=getattr(self, "n_groups_keep", None),
            two_stage=self._two_stage,
            party_columns=cols,
        )
        self._store(res, p)
        if self._two_stage:
            self.group_scores_ = res.group_scores
            self.kept_groups_ = res.kept_groups
        self.protocol_result_ = res
        return self


class OneStageFederatedScreener(VerticalFederatedScreener):
    """One-stage federated screening: every feature is scored under encryption (the baseline of VFS).

    Same protocol and parameters as :class:`VerticalFederatedScreener` without the group stage
    (``n_groups_keep``, ``group_size`` and ``aggregate`` are ignored). Decrypts ``p`` ciphertexts.

    Examples
    --------
    >>> import numpy as np
    >>> from neurips25.vfs import OneStageFederatedScreener
    >>> X = np.array([[1, 0, 1], [1, 1, 0], [0, 1, 1], [0, 0, 1]])
    >>> OneStageFederatedScreener(n_features_keep=1).fit(X, [1, 1, 0, 0]).get_support().tolist()
    [True, False, False]
    """

    _two_stage = False


class CentralizedSIS(_BinaryScreener):
    """Non-federated sure independence screening on the pooled data (Fan & Lv 2008), as a reference.

    Computes the same statistic in floating point on all rows, no encryption, no parties; keeps the
    top ``n_features_keep`` (default ``floor(n1 / log n1)``).

    Parameters
    ----------
    n_features_keep : int or float, default=None
    statistic : {"mean_diff", "pearson"} or callable, default="mean_diff"
    pos_label : int, str, bool or None, default=None
        The (rare) positive class of ``y``. ``None``: the larger of two numeric labels; labels that are not
        numbers (e.g. ``["stay", "churn"]``) need it set, as in scikit-learn's binary metrics.

    Attributes
    ----------
    support_, feature_scores_, ranking_, classes_

    Examples
    --------
    >>> import numpy as np
    >>> from neurips25.vfs import CentralizedSIS
    >>> X = np.array([[1, 0, 1], [1, 1, 0], [0, 1, 1], [0, 0, 1]])
    >>> CentralizedSIS(n_features_keep=1).fit(X, [1, 1, 0, 0]).get_support(indices=True).tolist()
    [0]
    """

    _parameter_constraints: dict = {
        "n_features_keep": _keep_constraint(),
        "statistic": [StrOptions(set(STATISTICS)), callable],
        "pos_label": [numbers.Integral, str, bool, None],
    }

    def __init__(self, n_features_keep=None, statistic="mean_diff", pos_label=None):
        self.n_features_keep = n_features_keep
        self.statistic = statistic
        self.pos_label = pos_label

    def fit(self, X, y):
        """Score every column of ``X`` against binary ``y`` on all rows and keep the top ones."""
        self._validate_params()
        if _is_party_list(X):
            X = sp.hstack(X, format="csc") if any(sp.issparse(P) for P in X) else np.hstack(X)
        X, _ = validate_data(self, X, y, accept_sparse=("csr", "csc"), dtype=np.float64)
        y01 = self._validate_y(y, X.shape[0])
        p = X.shape[1]
        if isinstance(self.n_features_keep, numbers.Integral) and self.n_features_keep > p:
            raise ValueError(f"`n_features_keep`={self.n_features_keep} is larger than the {p} features of X")
        n1 = int(y01.sum())
        n0 = len(y01) - n1
        S = np.asarray(X.sum(axis=0)).ravel()
        T = np.asarray(X.T @ y01.astype(float)).ravel()
        Q = np.asarray((X.multiply(X) if sp.issparse(X) else X * X).sum(axis=0)).ravel()
        D = len(y01) * T - n1 * S
        scores = np.asarray(get_statistic(self.statistic)(D, S, Q, n1, n0), dtype=float)
        idx = np.arange(p)
        ranking = idx[np.lexsort((idx, -scores))]
        d2 = (
            min(sis_model_size(n1), p)
            if self.n_features_keep is None
            else resolve_keep(self.n_features_keep, p, "n_features_keep")
        )
        mask = np.zeros(p, dtype=bool)
        mask[ranking[:d2]] = True
        self.support_ = mask
        self.feature_scores_ = scores
        self.ranking_ = ranking
        return self
