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

The private key lives only inside a backend object, which refuses to be pickled, so the key is never
written to disk (the estimator drops its backend after ``fit``).
"""

from __future__ import annotations

import dataclasses
import itertools
import secrets

import numpy as np
import scipy.sparse as sp

from neurips25.extras import require

__all__ = ["CostMeter", "EncryptedVector", "PaillierBackend", "PlaintextBackend", "make_backend"]

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


class _Backend:
    """Shared interface; see :class:`PaillierBackend` and :class:`PlaintextBackend`."""

    name = "base"

    def __init__(self, key_bits: int):
        if isinstance(key_bits, bool) or not isinstance(key_bits, (int, np.integer)) or key_bits < 256:
            raise ValueError(f"`key_bits` must be an int >= 256, got {key_bits!r}")
        self.key_bits = int(key_bits)
        self.key_id = next(_key_ids)

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

    def __reduce__(self):
        # Pickling would write the private key out unencrypted; refuse instead.
        raise TypeError(f"{type(self).__name__} holds a private key and cannot be pickled")

    def _count_column_sums(self, X: sp.csc_matrix, meter: CostMeter | None) -> None:
        if meter is None:
            return
        nnz, distinct = _column_value_buckets(X)
        meter.hom_additions += int(np.maximum(nnz - 1, 0).sum())
        meter.hom_scalar_mults += int(distinct.sum())


class PlaintextBackend(_Backend):
    """The VFS arithmetic in the clear, with the costs Paillier would incur counted.

    Parameters
    ----------
    key_bits : int, default=2048
        Key length used only to count bytes (a ciphertext is ``2 * key_bits / 8`` bytes).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> be = PlaintextBackend()
    >>> enc = be.encrypt_vector(np.array([1, 0, 1]))
    >>> X = sp.csc_matrix(np.array([[1, 0], [1, 1], [0, 1]]))
    >>> be.decrypt_vector(be.column_sums(enc, X)).tolist()  # T_u = sum_i u_i y_i
    [1, 1]
    """

    name = "plaintext"

    def __init__(self, key_bits: int = 2048):
        super().__init__(key_bits)

    def encrypt_vector(self, values, meter: CostMeter | None = None) -> EncryptedVector:
        """'Encrypt' integers: keep them, count ``len(values)`` encryptions."""
        v = np.asarray(values, dtype=np.int64)
        if meter is not None:
            meter.encryptions += len(v)
        return EncryptedVector(v.copy(), self.key_id)

    def column_sums(self, enc: EncryptedVector, X: sp.csc_matrix, meter: CostMeter | None = None) -> EncryptedVector:
        """``T_u = sum_i u_i * y_i`` for every column ``u`` of integer ``X`` (rows aligned with ``enc``)."""
        self._check_key(enc, "enc")
        self._count_column_sums(X, meter)
        y = enc.data
        bound = (np.abs(X.data).max() if X.nnz else 0) * (np.abs(y).max() if len(y) else 0)
        if bound * max(X.shape[0], 1) < _INT64_SAFE:
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
        if meter is not None:
            meter.hom_scalar_mults += len(enc)
            meter.hom_plain_additions += len(enc)
        out = np.asarray(enc.data, dtype=object) * int(scale) + shift
        return EncryptedVector(out, self.key_id)

    def decrypt_vector(self, enc: EncryptedVector, meter: CostMeter | None = None) -> np.ndarray:
        """Return the integers (object array of Python ints); counts ``len(enc)`` decryptions."""
        self._check_key(enc, "enc")
        if meter is not None:
            meter.decryptions += len(enc)
        return np.array([int(v) for v in enc.data], dtype=object)


class PaillierBackend(_Backend):
    """Real Paillier encryption on integers (``phe`` key generation, raw ciphertext arithmetic).

    Ciphertexts are raw integers ``c = g^m r^n mod n^2``; addition of plaintexts is ``c1 * c2 mod n^2``,
    multiplication by a plaintext ``k`` is ``c^k mod n^2`` (negative ``k`` through the modular inverse),
    adding a plaintext ``b`` multiplies by the unobfuscated ``g^b = 1 + b n``. Plaintexts are integers
    modulo ``n`` read back as signed (``m > n/2`` means ``m - n``), so no float encoding is involved and
    results equal the plaintext backend exactly.

    Parameters
    ----------
    key_bits : int, default=2048
        Length of the Paillier modulus ``n``. 2048 is the usual minimum for real use; tests use 512.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> be = PaillierBackend(key_bits=512)
    >>> enc = be.encrypt_vector(np.array([1, 0, 1]))
    >>> X = sp.csc_matrix(np.array([[1, 0], [1, 1], [0, 2]]))
    >>> be.decrypt_vector(be.affine(be.column_sums(enc, X), 3, [-1, 0])).tolist()
    [2, 6]
    """

    name = "paillier"

    def __init__(self, key_bits: int = 2048):
        super().__init__(key_bits)
        phe = require("phe", "fed")
        self._util = require("phe.util", "fed")
        self._public, self._private = phe.generate_paillier_keypair(n_length=self.key_bits)
        self._n = self._public.n
        self._nsq = self._public.nsquare
        self._half = self._n // 2
        self._q2_inv_p2 = self._util.invert(self._private.qsquare, self._private.psquare)

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
            # An empty column sums to Enc(0); the trivial ciphertext 1 = g^0 needs no encryption.
            out.append(1 if total is None else total)
        return EncryptedVector(out, self.key_id)

    def affine(self, enc: EncryptedVector, scale: int, shift, meter: CostMeter | None = None) -> EncryptedVector:
        """``Enc(scale * T + shift)`` elementwise: one ``powmod`` and one cheap ``mulmod`` each."""
        self._check_key(enc, "enc")
        shift = [int(b) for b in np.asarray(shift, dtype=object).ravel()]
        if meter is not None:
            meter.hom_scalar_mults += len(enc)
            meter.hom_plain_additions += len(enc)
        n, nsq, mulmod = self._n, self._nsq, self._util.mulmod
        out = [
            mulmod(self._mul_const(c, int(scale)), (1 + n * (b % n)) % nsq, nsq)
            for c, b in zip(enc.data, shift, strict=True)
        ]
        return EncryptedVector(out, self.key_id)

    def decrypt_vector(self, enc: EncryptedVector, meter: CostMeter | None = None) -> np.ndarray:
        """Decrypt to signed Python integers (object array); counts ``len(enc)`` decryptions."""
        self._check_key(enc, "enc")
        if meter is not None:
            meter.decryptions += len(enc)
        out = []
        for c in enc.data:
            m = self._private.raw_decrypt(c)
            out.append(m - self._n if m > self._half else m)
        return np.array(out, dtype=object)


def make_backend(backend, key_bits: int = 2048):
    """Build a backend from ``"plaintext"`` / ``"paillier"`` or pass a backend instance through."""
    if isinstance(backend, _Backend):
        return backend
    if backend == "plaintext":
        return PlaintextBackend(key_bits=key_bits)
    if backend == "paillier":
        return PaillierBackend(key_bits=key_bits)
    raise ValueError(f"`backend` must be 'plaintext', 'paillier' or a backend instance, got {backend!r}")
