"""The two roles of vertical federated screening and the messages they exchange.

- :class:`ActiveParty` holds the binary label ``y`` and the key pair. It subsamples negatives (keeping
  every positive), encrypts the sampled labels once, and turns decrypted per-column integers into
  screening scores.
- :class:`PassiveParty` holds a block of feature columns. It never sees ``y`` or the private key: it
  accumulates the encrypted labels over the nonzeros of its (group-aggregated or raw) columns and
  returns one ciphertext per column.

Everything that crosses the boundary is a message object (:class:`LabelMessage`,
:class:`StatisticMessage`); :func:`neurips25.vfs.protocol.run_protocol` passes them and counts their
ciphertexts and bytes.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import scipy.sparse as sp

from neurips25.vfs.crypto import CostMeter, EncryptedVector, make_backend
from neurips25.vfs.statistics import get_statistic, group_aggregate

__all__ = ["ActiveParty", "LabelMessage", "PassiveParty", "StatisticMessage", "encode_integer_columns"]


@dataclasses.dataclass(frozen=True)
class LabelMessage:
    """Active -> passive: sampled row ids, their encrypted labels, and the class counts in clear.

    Attributes
    ----------
    rows : numpy.ndarray of int, shape (n_s,)
        Sampled rows (all positives and ``n_neg`` negatives), sorted; the ids reveal nothing about
        which rows are positive.
    enc_labels : EncryptedVector of length n_s
        ``Enc(y_i)`` for the sampled rows.
    n_pos, n_neg : int
        ``n1`` and ``n0'`` (needed to form ``D = n_s T - n1 S``).
    """

    rows: np.ndarray
    enc_labels: EncryptedVector
    n_pos: int
    n_neg: int

    @property
    def n_ciphertexts(self) -> int:
        return len(self.enc_labels)

    @property
    def n_integers(self) -> int:
        return len(self.rows) + 2


@dataclasses.dataclass(frozen=True)
class StatisticMessage:
    """Passive -> active: one ciphertext ``Enc(D_u)`` and two plain sums per screened column.

    Attributes
    ----------
    party : str
        Sender.
    level : {"group", "feature"}
        Stage 1 (group aggregates) or stage 2 (features).
    ids : numpy.ndarray of int, shape (m,)
        Local group ids or local column indices of the sender.
    enc_diff : EncryptedVector of length m
        ``Enc(D_u)``, ``D_u = n_s T_u - n1 S_u``.
    sums, sq_sums : numpy.ndarray of int (object), shape (m,)
        ``S_u = sum_i u_i`` and ``Q_u = sum_i u_i^2`` over the sampled rows.
    encoding_scale : int
        Fixed-point scale of the sender's integer encoding (1 for integer data); the active party
        divides by it so scores of parties with different encodings are comparable.
    """

    party: str
    level: str
    ids: np.ndarray
    enc_diff: EncryptedVector
    sums: np.ndarray
    sq_sums: np.ndarray
    encoding_scale: int = 1

    @property
    def n_ciphertexts(self) -> int:
        return len(self.enc_diff)

    @property
    def n_integers(self) -> int:
        return 3 * len(self.ids)


def _as_floats(values) -> np.ndarray:
    return np.array([float(v) for v in np.asarray(values, dtype=object).ravel()], dtype=float)


def encode_integer_columns(X, precision_bits: int = 16) -> tuple[sp.csc_matrix, int]:
    """Integer CSC copy of ``X`` for Paillier: as is when integral, else ``round(X * 2**precision_bits)``.

    Returns the matrix and the scale used (1 for integer data). Integer encoding keeps Paillier and
    plaintext results exactly equal (floats would force exponent alignment).
    """
    Xc = sp.csc_matrix(X, copy=True)
    Xc.sum_duplicates()
    data = Xc.data
    if data.dtype.kind in "iub" or (data.size and np.all(np.mod(data, 1) == 0)):
        Xc.data = data.astype(np.int64)
        return Xc, 1
    scale = 2 ** int(precision_bits)
    Xc.data = np.rint(data.astype(float) * scale).astype(np.int64)
    Xc.eliminate_zeros()
    return Xc, scale


def contiguous_groups(n_features: int, group_size: int) -> np.ndarray:
    """Group label of each column when columns are cut into consecutive blocks of ``group_size``."""
    return np.arange(n_features) // int(group_size)


def _check_groups(groups, n_features: int) -> np.ndarray:
    g = np.asarray(groups)
    if g.shape != (n_features,) or g.dtype.kind not in "iu":
        raise ValueError(f"`groups` must be an int array of shape ({n_features},), got {g.dtype} {g.shape}")
    uniq = np.unique(g)
    if n_features and (uniq[0] != 0 or uniq[-1] != len(uniq) - 1):
        raise ValueError("`groups` must label the columns with consecutive ids 0 .. G-1, every id used")
    return g.astype(np.int64)


def _exact_column_sums(U: sp.csc_matrix, power: int) -> np.ndarray:
    """``sum_i u_i**power`` per column as Python ints (int64 when it cannot overflow)."""
    peak = int(np.abs(U.data).max()) if U.nnz else 0
    if peak**power * max(U.shape[0], 1) < 2**62:
        csum = np.concatenate([[0], np.cumsum(U.data.astype(np.int64) ** power)])
        return np.array((csum[U.indptr[1:]] - csum[U.indptr[:-1]]).tolist(), dtype=object)
    return np.array(
        [sum(int(v) ** power for v in U.data[s:e]) for s, e in zip(U.indptr[:-1], U.indptr[1:], strict=True)],
        dtype=object,
    )


class PassiveParty:
    """A feature holder: computes encrypted per-column statistics for the active party.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, p_k)
        This party's columns, rows aligned with the active party's labels (after private set
        intersection). Non-integer values are fixed-point encoded (see :func:`encode_integer_columns`).
    groups : array-like of int, shape (p_k,), optional
        Local group id ``0 .. G_k-1`` of each column (a one-hot block, a feature family). Default:
        consecutive blocks of ``group_size`` columns.
    group_size : int, default=50
        Block size ``m`` used when ``groups`` is None.
    aggregate : {"sum", "any"}, default="sum"
        Stage-1 group column ``z_g``: sum of the group's features or any-nonzero indicator.
    name : str, default="passive"
    precision_bits : int, default=16

    Examples
    --------
    >>> import numpy as np
    >>> from neurips25.vfs.parties import ActiveParty
    >>> active = ActiveParty(np.array([1, 0, 1, 0]), backend="plaintext")
    >>> passive = PassiveParty(np.array([[1, 0], [0, 1], [1, 1], [0, 0]]), group_size=1)
    >>> msg = passive.group_statistics(active.label_message(), active.public_backend)
    >>> active.decrypt_scores(msg)[1].tolist()
    [1.0, 0.0]
    """

    def __init__(
        self,
        X,
        groups=None,
        group_size: int = 50,
        aggregate: str = "sum",
        name: str = "passive",
        precision_bits: int = 16,
    ):
        if not sp.issparse(X):
            X = np.asarray(X)
            if X.ndim != 2:
                raise ValueError(f"`X` of party {name!r} must be 2-D, got shape {X.shape}")
            if not np.issubdtype(X.dtype, np.number) or not np.all(np.isfinite(X)):
                raise ValueError(f"`X` of party {name!r} must be finite and numeric")
        elif not np.all(np.isfinite(X.data)):
            raise ValueError(f"`X` of party {name!r} must be finite")
        if isinstance(group_size, bool) or not isinstance(group_size, (int, np.integer)) or group_size < 1:
            raise ValueError(f"`group_size` must be an int >= 1, got {group_size!r}")
        if aggregate not in ("sum", "any"):
            raise ValueError(f"`aggregate` must be 'sum' or 'any', got {aggregate!r}")
        self.name = name
        self.aggregate = aggregate
        self.X, self.encoding_scale = encode_integer_columns(X, precision_bits)
        p_k = self.X.shape[1]
        self.groups = contiguous_groups(p_k, group_size) if groups is None else _check_groups(groups, p_k)
        self.n_groups = int(self.groups.max()) + 1 if p_k else 0
        self._rows_key: bytes | None = None
        self._X_sub: sp.csc_matrix | None = None

    @property
    def n_samples(self) -> int:
        return self.X.shape[0]

    @property
    def n_features(self) -> int:
        return self.X.shape[1]

    def _sampled(self, msg: LabelMessage) -> sp.csc_matrix:
        # Restrict to the sampled rows once per label message; both stages reuse it.
        key = np.asarray(msg.rows).tobytes()
        if key != self._rows_key:
            self._X_sub = sp.csc_matrix(self.X[msg.rows])
            self._X_sub.sort_indices()
            self._rows_key = key
        return self._X_sub

    def _statistics(self, U: sp.csc_matrix, msg: LabelMessage, backend, meter, level, ids) -> StatisticMessage:
        n_s = msg.n_pos + msg.n_neg
        # T_u = sum_i u_i Enc(y_i) over nonzeros only (sparse-aware, additions only for 0/1 columns)
        enc_t = backend.column_sums(msg.enc_labels, U, meter)
        sums = _exact_column_sums(U, power=1)
        sq = _exact_column_sums(U, power=2)
        # Enc(D_u) = n_s * Enc(T_u) + (-n1 * S_u)
        enc_d = backend.affine(enc_t, n_s, -msg.n_pos * sums, meter)
        ids = np.asarray(ids, dtype=np.int64)
        return StatisticMessage(self.name, level, ids, enc_d, sums, sq, self.encoding_scale)

    def group_statistics(self, msg: LabelMessage, backend, meter: CostMeter | None = None) -> StatisticMessage:
        """Stage 1: ``Enc(D_g)`` for every local group aggregate ``z_g``."""
        Z = group_aggregate(self._sampled(msg), self.groups, self.aggregate)
        return self._statistics(Z, msg, backend, meter, "group", np.arange(self.n_groups))

    def group_columns(self, group_ids) -> np.ndarray:
        """Local column indices of the given local groups, in column order."""
        return np.flatnonzero(np.isin(self.groups, np.asarray(group_ids, dtype=np.int64)))

    def feature_statistics(
        self, msg: LabelMessage, backend, group_ids=None, meter: CostMeter | None = None
    ) -> StatisticMessage:
        """Stage 2 (or one-stage screening): ``Enc(D_j)`` for the columns of ``group_ids`` (all if None)."""
        X_sub = self._sampled(msg)
        cols = np.arange(self.n_features) if group_ids is None else self.group_columns(group_ids)
        return self._statistics(X_sub[:, cols], msg, backend, meter, "feature", cols)


class _PublicBackend:
    """What a passive party gets: homomorphic operations under the public key, no decryption."""

    def __init__(self, backend):
        self._backend = backend
        self.key_id = backend.key_id
        self.ciphertext_bytes = backend.ciphertext_bytes

    def column_sums(self, enc, X, meter=None):
        return self._backend.column_sums(enc, X, meter)

    def affine(self, enc, scale, shift, meter=None):
        return self._backend.affine(enc, scale, shift, meter)


class ActiveParty:
    """The label holder: samples, encrypts ``y`` once, decrypts per-column statistics into scores.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Binary labels in {0, 1} (1 = the rare positive class).
    backend : {"plaintext", "paillier"} or backend instance, default="plaintext"
    key_bits : int, default=2048
        Paillier modulus length (used for byte counts by the plaintext backend).
    negative_sampling_ratio : float, optional
        ``r``: keep all ``n1`` positives and ``min(n0, round(r * n1))`` uniformly drawn negatives
        (case-control subsampling). None uses every row.
    statistic : str or callable, default="mean_diff"
        See :mod:`neurips25.vfs.statistics`.
    random_state : int or numpy.random.Generator, optional
        Drives the negative sampling.

    Examples
    --------
    >>> import numpy as np
    >>> y = np.r_[np.ones(5), np.zeros(95)].astype(int)
    >>> a = ActiveParty(y, negative_sampling_ratio=3, random_state=0)
    >>> msg = a.label_message()
    >>> (msg.n_pos, msg.n_neg, len(msg.rows))
    (5, 15, 20)
    """

    def __init__(
        self,
        y,
        backend="plaintext",
        key_bits: int = 2048,
        negative_sampling_ratio=None,
        statistic="mean_diff",
        random_state=None,
    ):
        y = np.asarray(y)
        if y.ndim != 1:
            raise ValueError(f"`y` must be 1-D, got shape {y.shape}")
        if y.dtype.kind == "b":
            y = y.astype(np.int64)
        if y.dtype.kind not in "iuf" or not np.isin(y, (0, 1)).all():
            raise ValueError("`y` must be binary with values in {0, 1}")
        self.n_pos = int((y == 1).sum())
        if self.n_pos == 0 or self.n_pos == len(y):
            raise ValueError(f"`y` must contain both classes; got {self.n_pos} positives out of {len(y)}")
        if negative_sampling_ratio is not None and (
            isinstance(negative_sampling_ratio, bool)
            or not isinstance(negative_sampling_ratio, (int, float, np.integer, np.floating))
            or not negative_sampling_ratio > 0
        ):
            raise ValueError(f"`negative_sampling_ratio` must be a number > 0 or None, got {negative_sampling_ratio!r}")
        self.y = y.astype(np.int64)
        self.negative_sampling_ratio = negative_sampling_ratio
        self.statistic = get_statistic(statistic)
        self.rng = np.random.default_rng(random_state)
        self._backend = make_backend(backend, key_bits)
        self.public_backend = _PublicBackend(self._backend)
        self._message: LabelMessage | None = None

    @property
    def n_samples(self) -> int:
        return len(self.y)

    def sample_rows(self) -> np.ndarray:
        """All positives plus ``min(n0, round(r n1))`` negatives drawn without replacement, sorted."""
        pos = np.flatnonzero(self.y == 1)
        neg = np.flatnonzero(self.y == 0)
        if self.negative_sampling_ratio is not None:
            k = min(len(neg), max(1, int(round(self.negative_sampling_ratio * len(pos)))))
            neg = self.rng.choice(neg, size=k, replace=False)
        return np.sort(np.concatenate([pos, neg]))

    def label_message(self, meter: CostMeter | None = None) -> LabelMessage:
        """Sample once, encrypt the sampled labels once; later calls return the same message."""
        if self._message is None:
            rows = self.sample_rows()
            enc = self._backend.encrypt_vector(self.y[rows], meter)
            self._message = LabelMessage(rows, enc, self.n_pos, len(rows) - self.n_pos)
        return self._message

    def decrypt_scores(self, msg: StatisticMessage, meter: CostMeter | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Decrypt ``D_u`` and apply the statistic; returns ``(D as Python ints, float scores)``."""
        if not isinstance(msg, StatisticMessage):
            raise TypeError(f"`msg` must be a StatisticMessage, got {type(msg).__name__}")
        D = self._backend.decrypt_vector(msg.enc_diff, meter)
        lab = self.label_message()
        D_, S_, Q_ = D, msg.sums, msg.sq_sums
        if msg.encoding_scale != 1:  # back to the features' own units (fixed-point encoded parties)
            c = float(msg.encoding_scale)
            D_, S_ = _as_floats(D) / c, _as_floats(S_) / c
            Q_ = _as_floats(Q_) / c**2
        scores = np.asarray(self.statistic(D_, S_, Q_, lab.n_pos, lab.n_neg), dtype=float)
        if scores.shape != (len(D),):
            raise ValueError(f"`statistic` returned shape {scores.shape}, expected ({len(D)},)")
        return D, scores
