"""The two roles of vertical federated screening and the messages they exchange.

- :class:`ActiveParty` holds the binary label ``y`` and the key pair. It subsamples negatives (keeping
  every positive), encrypts the sampled labels once, and turns decrypted per-column integers into
  screening scores.
- :class:`PassiveParty` holds a block of feature columns. It gets only the public half of the backend
  (``n``, ``n**2``; no private key), validates the label message, accumulates the encrypted labels
  over the nonzeros of its (group-aggregated or raw) columns and returns one re-randomized ciphertext
  per column.

Everything that crosses the boundary is a message object (:class:`LabelMessage`,
:class:`StatisticMessage`); :func:`neurips25.vfs.protocol.run_protocol` passes them and counts their
ciphertexts and bytes.

Threat model: a semi-honest (honest-but-curious) active party and passive parties that do not collude
with it. What each party learns is listed in ``docs/vfs.md`` ("What each party learns"); in short, a
passive party sees the ids of the rows it is sent (without padding every positive is among them, so
every row outside is known to be negative), ``n1`` and ``n0'``, and ciphertexts; the active party sees
``D_u`` for every screened column (and ``S_u``, ``Q_u`` only when the statistic needs them). The
validation of a label message blocks malformed messages (no positives, inconsistent counts,
ciphertexts out of range) but cannot prove that the encrypted labels are 0/1: a malicious active
party that encrypts other values learns linear combinations of passive columns.
"""

from __future__ import annotations

import dataclasses
import math
import numbers

import numpy as np
import scipy.sparse as sp

from neurips25.vfs.crypto import CostMeter, EncryptedVector, make_backend
from neurips25.vfs.statistics import _as_float, get_statistic, group_aggregate, needs_sums

__all__ = ["ActiveParty", "LabelMessage", "PassiveParty", "StatisticMessage", "encode_integer_columns"]


@dataclasses.dataclass(frozen=True)
class LabelMessage:
    """Active -> passive: row ids, their encrypted labels, and the class counts in clear.

    Attributes
    ----------
    rows : numpy.ndarray of int, shape (n_sent,)
        Row ids sent, sorted. Without padding these are the sampled rows (every positive and ``n_neg``
        negatives): the passive party then knows that every row *outside* them is negative. With
        padding (``ActiveParty(pad_to=...)``) they are the sample plus random unsampled rows, and which
        of them were sampled is hidden in ``enc_in_sample``.
    enc_labels : EncryptedVector of length n_sent
        ``Enc(y_i)`` (``Enc(y_i s_i)`` with padding; equal, since every positive is sampled).
    n_pos, n_neg : int
        ``n1`` and ``n0'`` (needed to form ``D = n_s T - n1 S``).
    enc_in_sample : EncryptedVector of length n_sent or None
        With padding, ``Enc(s_i)``, ``s_i = 1`` if row ``i`` is in the sample; None without padding.
    send_sums : bool
        Whether the active party's statistic needs ``S_u`` and ``Q_u`` (``"pearson"``); ``"mean_diff"``
        does not, and then the passive party reveals only ``D_u``.
    """

    rows: np.ndarray
    enc_labels: EncryptedVector
    n_pos: int
    n_neg: int
    enc_in_sample: EncryptedVector | None = None
    send_sums: bool = True

    @property
    def padded(self) -> bool:
        return self.enc_in_sample is not None

    @property
    def n_ciphertexts(self) -> int:
        return len(self.enc_labels) + (len(self.enc_in_sample) if self.padded else 0)

    @property
    def n_integers(self) -> int:
        return len(self.rows) + 2


@dataclasses.dataclass(frozen=True)
class StatisticMessage:
    """Passive -> active: one ciphertext ``Enc(D_u)`` per screened column, and the sums if asked for.

    Attributes
    ----------
    party : str
        Sender.
    level : {"group", "feature"}
        Stage 1 (group aggregates) or stage 2 (features).
    ids : numpy.ndarray of int, shape (m,)
        Local group ids or local column indices of the sender.
    enc_diff : EncryptedVector of length m
        ``Enc(D_u)``, ``D_u = n_s T_u - n1 S_u``, re-randomized.
    sums, sq_sums : numpy.ndarray of int (object), EncryptedVector, or None
        ``S_u = sum_i u_i`` and ``Q_u = sum_i u_i^2`` over the sampled rows: in clear without padding,
        encrypted with padding (the passive party does not know which rows were sampled), None when
        the label message said the statistic does not need them.
    encoding_scale : int
        Fixed-point scale of the sender's integer encoding (1 for integer data); the active party
        divides by it so scores of parties with different encodings are comparable.
    """

    party: str
    level: str
    ids: np.ndarray
    enc_diff: EncryptedVector
    sums: object = None
    sq_sums: object = None
    encoding_scale: int = 1

    @property
    def n_ciphertexts(self) -> int:
        extra = sum(len(s) for s in (self.sums, self.sq_sums) if isinstance(s, EncryptedVector))
        return len(self.enc_diff) + extra

    @property
    def n_integers(self) -> int:
        clear = sum(len(s) for s in (self.sums, self.sq_sums) if s is not None and not isinstance(s, EncryptedVector))
        return len(self.ids) + clear


#: largest encoded magnitude: int64 arithmetic stays exact below it
_MAX_ENCODED = 2**62


def encode_integer_columns(X, precision_bits: int = 16, name: str = "passive") -> tuple[sp.csc_matrix, int]:
    """Integer CSC copy of ``X`` for Paillier: as is when integral, else ``round(X * 2**precision_bits)``.

    Returns the matrix and the scale used (1 for integer data). Integer encoding keeps Paillier and
    plaintext results exactly equal (floats would force exponent alignment). Raises a ``ValueError``
    naming the party when an encoded value would exceed ``2**62`` (e.g. timestamps in microseconds
    with the default 16 fractional bits): rescale ``X`` or lower ``precision_bits``.
    """
    Xc = sp.csc_matrix(X)
    if not Xc.has_canonical_format:
        Xc = Xc.copy()
        Xc.sum_duplicates()
    data = Xc.data
    peak = float(np.abs(data.astype(float)).max()) if data.size else 0.0
    if data.dtype.kind in "iub" or (data.size and np.all(np.mod(data, 1) == 0)):
        if peak >= _MAX_ENCODED:
            raise ValueError(
                f"`X` of party {name!r} holds integers up to {peak:.3g}; the protocol needs |x| < 2**62 "
                "(rescale the column)"
            )
        out = sp.csc_matrix((data.astype(np.int64), Xc.indices, Xc.indptr), shape=Xc.shape)
        return out, 1
    scale = 2 ** int(precision_bits)
    if peak * scale >= _MAX_ENCODED:
        raise ValueError(
            f"`X` of party {name!r} holds values up to {peak:.3g}: fixed-point encoding with precision_bits="
            f"{precision_bits} needs |x| * 2**{precision_bits} < 2**62 (|x| < {_MAX_ENCODED / scale:.3g}); "
            "rescale X (e.g. standardize it) or lower `precision_bits`"
        )
    out = sp.csc_matrix((np.rint(data.astype(float) * scale).astype(np.int64), Xc.indices, Xc.indptr), shape=Xc.shape)
    out.eliminate_zeros()
    return out, scale


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
    rerandomize : bool, default=True
        Multiply every returned ciphertext by a fresh ``r^n`` so the active party cannot link it to the
        label ciphertexts it sent (one public-key ``powmod`` per returned ciphertext).

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
        rerandomize: bool = True,
    ):
        if not sp.issparse(X):
            X = np.asarray(X)
            if X.ndim != 2:
                raise ValueError(f"`X` of party {name!r} must be 2-D, got shape {X.shape}")
            if not np.issubdtype(X.dtype, np.number) or not np.all(np.isfinite(X)):
                raise ValueError(f"`X` of party {name!r} must be finite and numeric")
        elif not np.all(np.isfinite(X.data)):
            raise ValueError(f"`X` of party {name!r} must be finite")
        if isinstance(group_size, bool) or not isinstance(group_size, numbers.Integral) or group_size < 1:
            raise ValueError(f"`group_size` must be an int >= 1, got {group_size!r}")
        if aggregate not in ("sum", "any"):
            raise ValueError(f"`aggregate` must be 'sum' or 'any', got {aggregate!r}")
        if isinstance(precision_bits, bool) or not isinstance(precision_bits, numbers.Integral) or precision_bits < 0:
            raise ValueError(f"`precision_bits` must be an int >= 0, got {precision_bits!r}")
        self.name = name
        self.aggregate = aggregate
        self.rerandomize = bool(rerandomize)
        self.X, self.encoding_scale = encode_integer_columns(X, int(precision_bits), name)
        p_k = self.X.shape[1]
        self.groups = contiguous_groups(p_k, group_size) if groups is None else _check_groups(groups, p_k)
        self.n_groups = int(self.groups.max()) + 1 if p_k else 0
        self._msg: LabelMessage | None = None
        self._X_sub: sp.csc_matrix | None = None

    @property
    def n_samples(self) -> int:
        return self.X.shape[0]

    @property
    def n_features(self) -> int:
        return self.X.shape[1]

    def check_label_message(self, msg: LabelMessage, backend) -> None:
        """Refuse a malformed label message (the checks a semi-honest protocol can make).

        Checks: ``n_pos >= 1`` and ``n_neg >= 1`` (integers), row ids unique, sorted and in
        ``[0, n_samples)``, one label ciphertext per row, ``n_pos + n_neg`` equal to the rows sent
        (at most, with padding), and every ciphertext a valid ciphertext of ``backend``'s key. It cannot
        check that the encrypted labels are 0/1 (that would need zero-knowledge proofs).
        """
        if not isinstance(msg, LabelMessage):
            raise TypeError(f"`msg` must be a LabelMessage, got {type(msg).__name__}")
        refused = f"label message refused by party {self.name!r}:"
        for field in ("n_pos", "n_neg"):
            v = getattr(msg, field)
            if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
                raise ValueError(f"{refused} `{field}` must be an int >= 1, got {v!r}")
        rows = np.asarray(msg.rows)
        if rows.ndim != 1 or rows.dtype.kind not in "iu":
            raise ValueError(f"{refused} `rows` must be a 1-D int array")
        if len(rows) and (rows[0] < 0 or rows[-1] >= self.n_samples or np.any(np.diff(rows) <= 0)):
            raise ValueError(f"{refused} `rows` must be unique sorted ids in [0, {self.n_samples})")
        if len(msg.enc_labels) != len(rows):
            raise ValueError(f"{refused} {len(msg.enc_labels)} label ciphertexts for {len(rows)} rows")
        n_s = msg.n_pos + msg.n_neg
        if msg.padded:
            if len(msg.enc_in_sample) != len(rows) or n_s > len(rows):
                raise ValueError(
                    f"{refused} padded message needs one sample-indicator "
                    f"ciphertext per row and n_pos + n_neg <= {len(rows)} rows"
                )
            backend.check_ciphertexts(msg.enc_in_sample, "msg.enc_in_sample")
        elif n_s != len(rows):
            raise ValueError(f"{refused} n_pos + n_neg = {n_s} but {len(rows)} rows were sent")
        backend.check_ciphertexts(msg.enc_labels, "msg.enc_labels")

    def _sampled(self, msg: LabelMessage, backend) -> sp.csc_matrix:
        # Validate and restrict to the rows sent once per label message; both stages reuse it.
        if self._msg is not msg:
            self.check_label_message(msg, backend)
            rows = np.asarray(msg.rows)
            if len(rows) == self.n_samples:  # every row sent: no copy
                self._X_sub = self.X
            else:
                self._X_sub = sp.csc_matrix(self.X[rows])
                self._X_sub.sort_indices()
            self._msg = msg
        return self._X_sub

    def _statistics(self, U: sp.csc_matrix, msg: LabelMessage, backend, meter, level, ids) -> StatisticMessage:
        # encoded |u| < 2**62 keeps |D_u| <= 2 n_s^2 2**62 far below n/2 for any key_bits >= 256
        n_s = msg.n_pos + msg.n_neg
        # T_u = sum_i u_i Enc(y_i) over nonzeros only (sparse-aware, additions only for 0/1 columns)
        enc_t = backend.column_sums(msg.enc_labels, U, meter)
        sums = sq = None
        if not msg.padded:
            s_plain = _exact_column_sums(U, power=1)
            # Enc(D_u) = n_s * Enc(T_u) + (-n1 * S_u)
            enc_d = backend.affine(enc_t, n_s, -msg.n_pos * s_plain, meter)
            if msg.send_sums:
                sums, sq = s_plain, _exact_column_sums(U, power=2)
        else:
            # padded rows: S_u = sum_i u_i s_i under encryption, Enc(D_u) = n_s Enc(T_u) - n1 Enc(S_u)
            enc_s = backend.column_sums(msg.enc_in_sample, U, meter)
            enc_d = backend.combine(enc_t, n_s, enc_s, -msg.n_pos, meter)
            if msg.send_sums:
                U2 = U.multiply(U).tocsc()
                sums = self._out(enc_s, backend, meter)
                sq = self._out(backend.column_sums(msg.enc_in_sample, U2, meter), backend, meter)
        enc_d = self._out(enc_d, backend, meter)
        ids = np.asarray(ids, dtype=np.int64)
        return StatisticMessage(self.name, level, ids, enc_d, sums, sq, self.encoding_scale)

    def _out(self, enc, backend, meter):
        return backend.rerandomize(enc, meter) if self.rerandomize else enc

    def group_statistics(self, msg: LabelMessage, backend, meter: CostMeter | None = None) -> StatisticMessage:
        """Stage 1: ``Enc(D_g)`` for every local group aggregate ``z_g``."""
        Z = group_aggregate(self._sampled(msg, backend), self.groups, self.aggregate)
        return self._statistics(Z, msg, backend, meter, "group", np.arange(self.n_groups))

    def group_columns(self, group_ids) -> np.ndarray:
        """Local column indices of the given local groups, in column order."""
        return np.flatnonzero(np.isin(self.groups, np.asarray(group_ids, dtype=np.int64)))

    def feature_statistics(
        self, msg: LabelMessage, backend, group_ids=None, meter: CostMeter | None = None
    ) -> StatisticMessage:
        """Stage 2 (or one-stage screening): ``Enc(D_j)`` for the columns of ``group_ids`` (all if None)."""
        X_sub = self._sampled(msg, backend)
        cols = np.arange(self.n_features) if group_ids is None else self.group_columns(group_ids)
        U = X_sub if group_ids is None else X_sub[:, cols]
        return self._statistics(U, msg, backend, meter, "feature", cols)


def _check_ratio(r) -> None:
    if r is not None and (isinstance(r, bool) or not isinstance(r, numbers.Real) or not r > 0 or not math.isfinite(r)):
        raise ValueError(f"`negative_sampling_ratio` must be a finite number > 0 or None, got {r!r}")


class ActiveParty:
    """The label holder: samples, encrypts ``y`` once, decrypts per-column statistics into scores.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Binary labels in {0, 1} (1 = the rare positive class).
    backend : {"plaintext", "paillier"} or key holder's backend instance, default="plaintext"
    key_bits : int, default=2048
        Paillier modulus length (used for byte counts by the plaintext backend).
    negative_sampling_ratio : float, optional
        ``r``: keep all ``n1`` positives and ``min(n0, round(r * n1))`` uniformly drawn negatives
        (case-control subsampling). None uses every row. A ratio that rounds to zero negatives raises.
    statistic : str or callable, default="mean_diff"
        See :mod:`neurips25.vfs.statistics`.
    pad_to : float in (0, 1], optional
        Send the ids of a padded sample of ``max(n_s, ceil(pad_to * n))`` rows (the sample plus random
        unsampled rows) with ``Enc(s_i)`` marking the sampled ones, so a passive party cannot tell which
        rows were sampled. ``1.0`` sends every row: the ids then reveal nothing about ``y``. Costs
        ``2 * n_sent`` encryptions instead of ``n_s`` and twice the homomorphic additions.
    random_state : int or numpy.random.Generator, optional
        Drives the negative sampling and the padding.

    Attributes
    ----------
    public_backend : PaillierPublicBackend or PlaintextPublicBackend
        What passive parties receive: ``n`` and ``n**2`` only, no private key, no decryption.

    Examples
    --------
    >>> import numpy as np
    >>> y = np.r_[np.ones(5), np.zeros(95)].astype(int)
    >>> a = ActiveParty(y, negative_sampling_ratio=3, random_state=0)
    >>> msg = a.label_message()
    >>> (msg.n_pos, msg.n_neg, len(msg.rows))
    (5, 15, 20)
    >>> len(ActiveParty(y, negative_sampling_ratio=3, pad_to=1.0, random_state=0).label_message().rows)
    100
    """

    def __init__(
        self,
        y,
        backend="plaintext",
        key_bits: int = 2048,
        negative_sampling_ratio=None,
        statistic="mean_diff",
        pad_to=None,
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
        _check_ratio(negative_sampling_ratio)
        if negative_sampling_ratio is not None and round(negative_sampling_ratio * self.n_pos) < 1:
            raise ValueError(
                f"`negative_sampling_ratio`={negative_sampling_ratio!r} keeps round(r * n1) = 0 negatives for "
                f"n1 = {self.n_pos} positives; it must be >= {0.5 / self.n_pos:.3g}"
            )
        if pad_to is not None and (
            isinstance(pad_to, bool) or not isinstance(pad_to, numbers.Real) or not 0 < pad_to <= 1
        ):
            raise ValueError(f"`pad_to` must be a fraction of the rows in (0, 1] or None, got {pad_to!r}")
        self.y = y.astype(np.int64)
        self.negative_sampling_ratio = negative_sampling_ratio
        self.pad_to = pad_to
        self.statistic = get_statistic(statistic)
        self.rng = np.random.default_rng(random_state)
        self._backend = make_backend(backend, key_bits)
        self.public_backend = self._backend.public()
        self._message: LabelMessage | None = None
        self._sample: np.ndarray | None = None

    @property
    def n_samples(self) -> int:
        return len(self.y)

    def sample_rows(self) -> np.ndarray:
        """All positives plus ``min(n0, round(r n1))`` negatives drawn without replacement, sorted."""
        pos = np.flatnonzero(self.y == 1)
        neg = np.flatnonzero(self.y == 0)
        if self.negative_sampling_ratio is not None:
            k = min(len(neg), int(round(self.negative_sampling_ratio * len(pos))))
            neg = self.rng.choice(neg, size=k, replace=False)
        return np.sort(np.concatenate([pos, neg]))

    def label_message(self, meter: CostMeter | None = None) -> LabelMessage:
        """Sample once, encrypt once (padding if asked); later calls return the same message."""
        if self._message is None:
            sample = self.sample_rows()
            n_neg = len(sample) - self.n_pos
            send_sums = needs_sums(self.statistic)
            if self.pad_to is None:
                enc = self._backend.encrypt_vector(self.y[sample], meter)
                self._message = LabelMessage(sample, enc, self.n_pos, n_neg, None, send_sums)
            else:
                n_sent = max(len(sample), int(math.ceil(self.pad_to * self.n_samples)))
                others = np.setdiff1d(np.arange(self.n_samples), sample, assume_unique=True)
                pad = self.rng.choice(others, size=n_sent - len(sample), replace=False)
                rows = np.sort(np.concatenate([sample, pad]))
                s = np.isin(rows, sample).astype(np.int64)
                enc_y = self._backend.encrypt_vector(self.y[rows] * s, meter)
                enc_s = self._backend.encrypt_vector(s, meter)
                self._message = LabelMessage(rows, enc_y, self.n_pos, n_neg, enc_s, send_sums)
            self._sample = sample
        return self._message

    def _open(self, values, meter):
        if isinstance(values, EncryptedVector):
            return self._backend.decrypt_vector(values, meter)
        return values

    def decrypt_scores(self, msg: StatisticMessage, meter: CostMeter | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Decrypt ``D_u`` (and encrypted sums) and apply the statistic; returns ``(D as Python ints, scores)``."""
        if not isinstance(msg, StatisticMessage):
            raise TypeError(f"`msg` must be a StatisticMessage, got {type(msg).__name__}")
        D = self._backend.decrypt_vector(msg.enc_diff, meter)
        lab = self.label_message()
        S_, Q_ = self._open(msg.sums, meter), self._open(msg.sq_sums, meter)
        D_ = D
        if msg.encoding_scale != 1:  # back to the features' own units (fixed-point encoded parties)
            c = float(msg.encoding_scale)
            D_ = _as_float(D) / c
            S_ = None if S_ is None else _as_float(S_) / c
            Q_ = None if Q_ is None else _as_float(Q_) / c**2
        scores = np.asarray(self.statistic(D_, S_, Q_, lab.n_pos, lab.n_neg), dtype=float)
        if scores.shape != (len(D),):
            raise ValueError(f"`statistic` returned shape {scores.shape}, expected ({len(D)},)")
        return D, scores
