"""Additively homomorphic backends and the cost meter of the VFS protocol.

Two backends share one interface so the protocol code never knows which one runs:

- :class:`PaillierBackend` does real Paillier encryption (through ``phe``, with ``gmpy2`` when it is
  installed) on integer plaintexts. Ciphertexts are kept as raw integers modulo ``n**2`` so the
  homomorphic operations are single ``mulmod`` / ``powmod`` calls.
- :class:`PlaintextBackend` performs the same integer arithmetic in the clear (numpy ``int64`` or
  Python integers) and counts the same operations analytically, so the protocol can be simulated at
  ``n = 50,000``, ``p = 100,000``.

Both count their work in a :class:`CostMeter` in ciphertext units: encryptions, decryptions,
homomorphic additions, ciphertext-by-plaintext multiplications, plaintext additions, and the
ciphertexts and bytes sent in each direction.

Each backend comes in two halves. The key holder's object (:class:`PaillierBackend`,
:class:`PlaintextBackend`) encrypts and decrypts; :meth:`~PaillierBackend.public` returns what a passive
party receives (:class:`PaillierPublicBackend`, :class:`PlaintextPublicBackend`): the homomorphic
operations, re-randomization and ciphertext checks, built from ``n`` and ``n**2`` only, with no private
key and no decryption. The private key lives only inside the key holder's object, which refuses to be
pickled, so the key is never written to disk (the estimator drops its backend after ``fit``).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import secrets
import warnings

import numpy as np
import scipy.sparse as sp

from neurips25.extras import require

__all__ = [
    "CostMeter",
    "EncryptedVector",
    "PaillierBackend",
    "PaillierPublicBackend",
    "PlaintextBackend",
    "PlaintextPublicBackend",
    "make_backend",
]

# Sparse integer dot products are done in int64 only when no partial sum can overflow.
_INT64_SAFE = 2**62
_key_ids = itertools.count(1)


@dataclasses.dataclass
class CostMeter:
    """Counts of the protocol's work, in ciphertext units.

    Attributes
    ----------
    encryptions : int
        Paillier encryptions (the active party's labels; an all-zero column costs none).
    decryptions : int
        Ciphertexts decrypted by the active party.
    hom_additions : int
        Ciphertext + ciphertext additions (one ``mulmod`` modulo ``n**2`` each).
    hom_scalar_mults : int
        Ciphertext * plaintext-integer multiplications (one ``powmod`` each).
    hom_plain_additions : int
        Ciphertext + plaintext additions (one cheap ``mulmod`` each, no obfuscation).
    rerandomizations : int
        Returned ciphertexts multiplied by a fresh ``r**n`` (one ``powmod`` with exponent ``n`` each), so
        the active party cannot relate them to the label ciphertexts it sent.
    ciphertexts_to_passive, ciphertexts_to_active : int
        Ciphertexts sent by the active party (summed over passive parties) and returned to it.
    bytes_to_passive, bytes_to_active : int
        Bytes on the wire in each direction: ``2 * key_bits / 8`` per ciphertext, 8 per integer.
    """

    encryptions: int = 0
    decryptions: int = 0
    hom_additions: int = 0
    hom_scalar_mults: int = 0
    hom_plain_additions: int = 0
    rerandomizations: int = 0
    ciphertexts_to_passive: int = 0
    ciphertexts_to_active: int = 0
    bytes_to_passive: int = 0
    bytes_to_active: int = 0

    @property
    def hom_operations(self) -> int:
        """All homomorphic operations done by the passive parties."""
        return self.hom_additions + self.hom_scalar_mults + self.hom_plain_additions

    def record_message(self, n_ciphertexts: int, n_integers: int, ciphertext_bytes: int, to: str) -> None:
        """Account one message of ``n_ciphertexts`` ciphertexts and ``n_integers`` plain integers."""
        nbytes = int(n_ciphertexts) * ciphertext_bytes + 8 * int(n_integers)
        if to == "passive":
            self.ciphertexts_to_passive += int(n_ciphertexts)
            self.bytes_to_passive += nbytes
        elif to == "active":
            self.ciphertexts_to_active += int(n_ciphertexts)
            self.bytes_to_active += nbytes
        else:
            raise ValueError(f"`to` must be 'passive' or 'active', got {to!r}")

    def as_dict(self) -> dict:
        """Every counter plus ``hom_operations``, as plain ints."""
        d = {k: int(v) for k, v in dataclasses.asdict(self).items()}
        d["hom_operations"] = self.hom_operations
        return d


@dataclasses.dataclass(frozen=True)
class EncryptedVector:
    """A vector of ciphertexts (or, for the plaintext backend, of the integers they stand for).

    Attributes
    ----------
    data : numpy.ndarray or list of int
        ``int64`` / object array for :class:`PlaintextBackend`; raw Paillier ciphertexts (ints modulo
        ``n**2``) for :class:`PaillierBackend`.
    key_id : int
        Identifies the key pair that produced it; a backend refuses vectors of another key.
    """

    data: object
    key_id: int

    def __len__(self) -> int:
        return len(self.data)


def _column_value_buckets(X: sp.csc_matrix) -> tuple[np.ndarray, np.ndarray]:
    """Per column: number of nonzeros and number of distinct nonzero values other than 1.

    A column is accumulated as ``sum_v v * (sum of the ciphertexts of rows where u_i = v)``, so it costs
    ``nnz - 1`` additions and one scalar multiplication per distinct value ``v != 1`` (none for 0/1 data).
    """
    nnz = np.diff(X.indptr).astype(np.int64)
    data = X.data
    not_one = data != 1
    if not not_one.any():
        return nnz, np.zeros(X.shape[1], dtype=np.int64)
    cols = np.repeat(np.arange(X.shape[1], dtype=np.int64), nnz)[not_one]
    vals = data[not_one].astype(np.int64)
    lo, span = int(vals.min()), int(vals.max() - vals.min()) + 1
    key = cols * span + (vals - lo)
    if X.shape[1] * span <= 50_000_000:  # small value range (counts): a bincount table, no sort
        present = np.bincount(key, minlength=X.shape[1] * span).reshape(X.shape[1], span) > 0
        distinct = present.sum(axis=1).astype(np.int64)
    else:
        distinct = np.bincount(np.unique(key) // span, minlength=X.shape[1]).astype(np.int64)
    return nnz, distinct


class _PublicOps:
    """Homomorphic operations and checks every backend half has; needs ``key_bits`` and ``key_id``."""

    name = "base"
    key_bits: int
    key_id: int

    @property
    def ciphertext_bytes(self) -> int:
        """Size of one ciphertext on the wire: an integer modulo ``n**2``."""
        return 2 * self.key_bits // 8

    def _check_key(self, enc: EncryptedVector, argument: str) -> None:
        if not isinstance(enc, EncryptedVector):
            raise TypeError(f"`{argument}` must be an EncryptedVector, got {type(enc).__name__}")
        if enc.key_id != self.key_id:
            raise ValueError(
                f"`{argument}` was encrypted under another key (key id {enc.key_id}, this backend "
                f"holds {self.key_id}); ciphertexts of different keys cannot be combined or decrypted"
            )

    def _count_column_sums(self, X: sp.csc_matrix, meter: CostMeter | None) -> None:
        if meter is None:
            return
        nnz, distinct = _column_value_buckets(X)
        meter.hom_additions += int(np.maximum(nnz - 1, 0).sum())
        meter.hom_scalar_mults += int(distinct.sum())

    @staticmethod
    def _count_affine(n: int, meter: CostMeter | None) -> None:
        if meter is not None:
            meter.hom_scalar_mults += n
            meter.hom_plain_additions += n

    @staticmethod
    def _count_combine(n: int, meter: CostMeter | None) -> None:
        if meter is not None:
            meter.hom_scalar_mults += 2 * n
            meter.hom_additions += n


def _check_key_bits(key_bits) -> int:
    if isinstance(key_bits, bool) or not isinstance(key_bits, (int, np.integer)) or key_bits < 256:
        raise ValueError(f"`key_bits` must be an int >= 256, got {key_bits!r}")
    return int(key_bits)


class _KeyHolder:
    """Mixin of the key holder's half: refuses pickling (it would write the private key out)."""

    def __reduce__(self):
        raise TypeError(f"{type(self).__name__} holds a private key and cannot be pickled")

    def __deepcopy__(self, memo):
        raise TypeError(f"{type(self).__name__} holds a private key and cannot be copied")


class PlaintextPublicBackend(_PublicOps):
    """The passive parties' half of :class:`PlaintextBackend`: homomorphic operations, no decryption.

    The plaintext backend is a simulation (its "ciphertexts" are the integers themselves); this half
    mirrors :class:`PaillierPublicBackend` so the protocol code is the same for both.
    """

    name = "plaintext"

    def __init__(self, key_bits: int, key_id: int):
        self.key_bits = _check_key_bits(key_bits)
        self.key_id = int(key_id)

    def column_sums(self, enc: EncryptedVector, X: sp.csc_matrix, meter: CostMeter | None = None) -> EncryptedVector:
        """``T_u = sum_i u_i * y_i`` for every column ``u`` of integer ``X`` (rows aligned with ``enc``)."""
        self._check_key(enc, "enc")
        self._count_column_sums(X, meter)
        y = np.asarray(enc.data)
        big = y.dtype == object
        bound = (int(np.abs(X.data).max()) if X.nnz else 0) * (int(np.abs(y).max()) if len(y) else 0)
        if not big and bound * max(X.shape[0], 1) < _INT64_SAFE:
            out = np.asarray(X.T @ y.astype(np.int64), dtype=np.int64)
        else:  # exact big-integer path for large fixed-point values
            out = np.array(
                [
                    sum(int(a) * int(y[i]) for a, i in zip(X.data[s:e], X.indices[s:e], strict=True))
                    for s, e in zip(X.indptr[:-1], X.indptr[1:], strict=True)
                ],
                dtype=object,
            )
        return EncryptedVector(out, self.key_id)

    def affine(self, enc: EncryptedVector, scale: int, shift, meter: CostMeter | None = None) -> EncryptedVector:
        """``scale * T + shift`` elementwise, exactly (Python integers)."""
        self._check_key(enc, "enc")
        shift = np.asarray(shift, dtype=object)
        self._count_affine(len(enc), meter)
        out = np.asarray(enc.data, dtype=object) * int(scale) + shift
        return EncryptedVector(out, self.key_id)

    def combine(self, enc_a: EncryptedVector, a: int, enc_b: EncryptedVector, b: int, meter=None) -> EncryptedVector:
        """``a * A + b * B`` elementwise (two scalar multiplications and one addition each)."""
        self._check_key(enc_a, "enc_a")
        self._check_key(enc_b, "enc_b")
        self._count_combine(len(enc_a), meter)
        out = np.asarray(enc_a.data, dtype=object) * int(a) + np.asarray(enc_b.data, dtype=object) * int(b)
        return EncryptedVector(out, self.key_id)

    def rerandomize(self, enc: EncryptedVector, meter: CostMeter | None = None) -> EncryptedVector:
        """Paillier would multiply each ciphertext by a fresh ``r**n``; here only the cost is counted."""
        self._check_key(enc, "enc")
        if meter is not None:
            meter.rerandomizations += len(enc)
        return enc

    def check_ciphertexts(self, enc: EncryptedVector, argument: str) -> None:
        """Raise unless ``enc`` is of this key and holds integers."""
        self._check_key(enc, argument)
        data = np.asarray(enc.data)
        if data.dtype.kind not in "iuO" or (data.dtype == object and not all(isinstance(v, int) for v in enc.data)):
            raise ValueError(f"`{argument}` must hold integers (plaintext backend), got dtype {data.dtype}")


class PlaintextBackend(_KeyHolder, PlaintextPublicBackend):
    """The VFS arithmetic in the clear, with the costs Paillier would incur counted.

    Parameters
    ----------
    key_bits : int, default=2048
        Key length used only to count bytes (a ciphertext is ``2 * key_bits / 8`` bytes) and to bound
        plaintexts like Paillier does.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> be = PlaintextBackend()
    >>> enc = be.encrypt_vector(np.array([1, 0, 1]))
    >>> X = sp.csc_matrix(np.array([[1, 0], [1, 1], [0, 1]]))
    >>> be.decrypt_vector(be.public().column_sums(enc, X)).tolist()  # T_u = sum_i u_i y_i
    [1, 1]
    """

    def __init__(self, key_bits: int = 2048):
        super().__init__(key_bits, next(_key_ids))

    def public(self) -> PlaintextPublicBackend:
        """What a passive party receives: the operations without ``encrypt`` / ``decrypt``."""
        return PlaintextPublicBackend(self.key_bits, self.key_id)

    def encrypt_vector(self, values, meter: CostMeter | None = None) -> EncryptedVector:
        """'Encrypt' integers: keep them, count ``len(values)`` encryptions."""
        v = np.asarray(values, dtype=np.int64)
        if meter is not None:
            meter.encryptions += len(v)
        return EncryptedVector(v.copy(), self.key_id)

    def decrypt_vector(self, enc: EncryptedVector, meter: CostMeter | None = None) -> np.ndarray:
        """Return the integers (object array of Python ints); counts ``len(enc)`` decryptions."""
        self._check_key(enc, "enc")
        if meter is not None:
            meter.decryptions += len(enc)
        return np.array([int(v) for v in enc.data], dtype=object)


class PaillierPublicBackend(_PublicOps):
    """Paillier under the public key only: what a passive party holds (``n`` and ``n**2``, nothing else).

    Ciphertexts are raw integers ``c = g^m r^n mod n^2`` with ``g = n + 1``; addition of plaintexts is
    ``c1 * c2 mod n^2``, multiplication by a plaintext ``k`` is ``c^k mod n^2`` (negative ``k`` through the
    modular inverse), adding a plaintext ``b`` multiplies by the unobfuscated ``g^b = 1 + b n``, and
    re-randomization multiplies by a fresh ``r^n``. There is no decryption: decrypting needs the
    factorization of ``n``, which this object never sees.

    Parameters
    ----------
    n : int
        The public modulus.
    key_id : int
        Identifier shared with the key holder (ciphertexts of other keys are refused).
    """

    name = "paillier"

    def __init__(self, n: int, key_id: int):
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2**255:
            raise ValueError(f"`n` must be a Paillier modulus (an int of >= 256 bits), got {n!r}")
        self._n = int(n)
        self._nsq = self._n * self._n
        self.key_bits = self._n.bit_length()
        self.key_id = int(key_id)
        require("phe.util", "fed")  # fail early, naming the extra, when phe is missing

    @property
    def _util(self):
        # looked up, not stored: the public half stays picklable
        return require("phe.util", "fed")

    @property
    def n(self) -> int:
        return self._n

    def _mul_const(self, c: int, k: int) -> int:
        if k >= 0:
            return self._util.powmod(c, k, self._nsq)
        return self._util.powmod(self._util.invert(c, self._nsq), -k, self._nsq)

    def column_sums(self, enc: EncryptedVector, X: sp.csc_matrix, meter: CostMeter | None = None) -> EncryptedVector:
        """``Enc(T_u)``, ``T_u = sum_i u_i y_i``, touching only the nonzeros of each column of ``X``."""
        self._check_key(enc, "enc")
        self._count_column_sums(X, meter)
        cts, nsq, mulmod = enc.data, self._nsq, self._util.mulmod
        out = []
        for s, e in zip(X.indptr[:-1].tolist(), X.indptr[1:].tolist(), strict=True):
            buckets: dict[int, int] = {}
            for i, v in zip(X.indices[s:e].tolist(), X.data[s:e].tolist(), strict=True):
                acc = buckets.get(v)
                buckets[v] = cts[i] if acc is None else mulmod(acc, cts[i], nsq)
            total = None
            for v, acc in buckets.items():
                term = acc if v == 1 else self._mul_const(acc, int(v))
                total = term if total is None else mulmod(total, term, nsq)
            # An empty column sums to Enc(0); the trivial ciphertext 1 = g^0 needs no encryption (it is
            # re-randomized before it leaves the party).
            out.append(1 if total is None else total)
        return EncryptedVector(out, self.key_id)

    def affine(self, enc: EncryptedVector, scale: int, shift, meter: CostMeter | None = None) -> EncryptedVector:
        """``Enc(scale * T + shift)`` elementwise: one ``powmod`` and one cheap ``mulmod`` each."""
        self._check_key(enc, "enc")
        shift = [int(b) for b in np.asarray(shift, dtype=object).ravel()]
        self._count_affine(len(enc), meter)
        n, nsq, mulmod = self._n, self._nsq, self._util.mulmod
        out = [
            mulmod(self._mul_const(c, int(scale)), (1 + n * (b % n)) % nsq, nsq)
            for c, b in zip(enc.data, shift, strict=True)
        ]
        return EncryptedVector(out, self.key_id)

    def combine(self, enc_a: EncryptedVector, a: int, enc_b: EncryptedVector, b: int, meter=None) -> EncryptedVector:
        """``Enc(a * A + b * B)`` elementwise: two ``powmod`` and one ``mulmod`` each."""
        self._check_key(enc_a, "enc_a")
        self._check_key(enc_b, "enc_b")
        self._count_combine(len(enc_a), meter)
        mulmod = self._util.mulmod
        out = [
            mulmod(self._mul_const(ca, int(a)), self._mul_const(cb, int(b)), self._nsq)
            for ca, cb in zip(enc_a.data, enc_b.data, strict=True)
        ]
        return EncryptedVector(out, self.key_id)

    def rerandomize(self, enc: EncryptedVector, meter: CostMeter | None = None) -> EncryptedVector:
        """``c * r^n mod n^2`` with a fresh random ``r`` per ciphertext: same plaintext, unlinkable ciphertext."""
        self._check_key(enc, "enc")
        if meter is not None:
            meter.rerandomizations += len(enc)
        n, nsq, powmod, mulmod = self._n, self._nsq, self._util.powmod, self._util.mulmod
        out = [mulmod(c, powmod(secrets.randbelow(n - 1) + 1, n, nsq), nsq) for c in enc.data]
        return EncryptedVector(out, self.key_id)

    def check_ciphertexts(self, enc: EncryptedVector, argument: str) -> None:
        """Raise unless every ciphertext is an integer in ``(0, n^2)`` coprime with ``n``."""
        self._check_key(enc, argument)
        for i, c in enumerate(enc.data):
            if isinstance(c, bool) or not isinstance(c, (int, np.integer)) or not 0 < int(c) < self._nsq:
                raise ValueError(f"`{argument}`[{i}] is not a ciphertext of this key (not an int in (0, n^2))")
            if math.gcd(int(c), self._n) != 1:
                raise ValueError(f"`{argument}`[{i}] is not a valid Paillier ciphertext (shares a factor with n)")


class PaillierBackend(_KeyHolder, PaillierPublicBackend):
    """Real Paillier encryption on integers: the key holder's half (``phe`` key generation).

    Encrypts (the obfuscation ``r^n`` by CRT modulo ``p^2`` and ``q^2``) and decrypts to signed integers
    (``m > n/2`` reads as ``m - n``), so no float encoding is involved and results equal the plaintext
    backend exactly. It can also run the homomorphic operations of :class:`PaillierPublicBackend`;
    passive parties get only :meth:`public`.

    Parameters
    ----------
    key_bits : int, default=2048
        Length of the Paillier modulus ``n``. Below 2048 a ``UserWarning`` is raised (tests use 512 for
        speed; such keys are not secure).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     be = PaillierBackend(key_bits=512)
    >>> pub = be.public()  # n and n^2 only
    >>> enc = be.encrypt_vector(np.array([1, 0, 1]))
    >>> X = sp.csc_matrix(np.array([[1, 0], [1, 1], [0, 2]]))
    >>> be.decrypt_vector(pub.rerandomize(pub.affine(pub.column_sums(enc, X), 3, [-1, 0]))).tolist()
    [2, 6]
    >>> hasattr(pub, "decrypt_vector")
    False
    """

    def __init__(self, key_bits: int = 2048):
        key_bits = _check_key_bits(key_bits)
        if key_bits < 2048:
            warnings.warn(
                f"`key_bits`={key_bits} is below 2048: Paillier keys this short can be factored; use them for "
                "tests only",
                UserWarning,
                stacklevel=2,
            )
        phe = require("phe", "fed")
        public, self._private = phe.generate_paillier_keypair(n_length=key_bits)
        super().__init__(public.n, next(_key_ids))
        self.key_bits = key_bits
        self._q2_inv_p2 = self._util.invert(self._private.qsquare, self._private.psquare)

    def public(self) -> PaillierPublicBackend:
        """What a passive party receives: a :class:`PaillierPublicBackend` built from ``n`` alone."""
        pub = PaillierPublicBackend(self._n, self.key_id)
        pub.key_bits = self.key_bits
        return pub

    def _encrypt_int(self, m: int) -> int:
        # c = g^m r^n mod n^2 with g = n + 1, so g^m = 1 + m n. The obfuscation r^n is the dominant cost;
        # the key holder computes it by CRT modulo p^2 and q^2 with exponents reduced mod p(p-1), q(q-1).
        r = secrets.randbelow(self._n - 1) + 1
        powmod, sk = self._util.powmod, self._private
        a_p = powmod(r, self._n % (sk.p * (sk.p - 1)), sk.psquare)
        a_q = powmod(r, self._n % (sk.q * (sk.q - 1)), sk.qsquare)
        r_n = a_q + sk.qsquare * (((a_p - a_q) * self._q2_inv_p2) % sk.psquare)
        return ((1 + (int(m) % self._n) * self._n) * r_n) % self._nsq

    def encrypt_vector(self, values, meter: CostMeter | None = None) -> EncryptedVector:
        """Encrypt integers one by one (obfuscated); counts ``len(values)`` encryptions."""
        v = np.asarray(values, dtype=np.int64)
        if meter is not None:
            meter.encryptions += len(v)
        return EncryptedVector([self._encrypt_int(m) for m in v.tolist()], self.key_id)

    def decrypt_vector(self, enc: EncryptedVector, meter: CostMeter | None = None) -> np.ndarray:
        """Decrypt to signed Python integers (object array); counts ``len(enc)`` decryptions."""
        self._check_key(enc, "enc")
        if meter is not None:
            meter.decryptions += len(enc)
        out = []
        half = self._n // 2
        for c in enc.data:
            m = self._private.raw_decrypt(c)
            out.append(m - self._n if m > half else m)
        return np.array(out, dtype=object)


def make_backend(backend, key_bits: int = 2048):
    """Build a key holder's backend from ``"plaintext"`` / ``"paillier"`` or pass an instance through."""
    if isinstance(backend, (PlaintextBackend, PaillierBackend)):
        return backend
    if backend == "plaintext":
        return PlaintextBackend(key_bits=key_bits)
    if backend == "paillier":
        return PaillierBackend(key_bits=key_bits)
    raise ValueError(f"`backend` must be 'plaintext', 'paillier' or a key holder's backend instance, got {backend!r}")
