"""Backends: Paillier equals plaintext exactly, costs follow the nnz formulas, keys stay private."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp

from neurips25.vfs import CostMeter, PaillierBackend, PlaintextBackend
from neurips25.vfs.crypto import make_backend


@pytest.fixture(scope="module")
def paillier():
    pytest.importorskip("phe")  # the `fed` extra; plaintext tests run without it
    return PaillierBackend(key_bits=512)  # small keys: tests only


def _int_matrix(rng, n=30, p=7):
    X = rng.integers(-3, 4, size=(n, p)) * (rng.random((n, p)) < 0.4)
    X[:, 0] = 0  # an all-zero column
    return sp.csc_matrix(X)


def test_paillier_column_sums_and_affine_equal_plaintext(paillier):
    # guards: Enc arithmetic (sums over nonzeros, negative values, scale, signed shift) is exact
    rng = np.random.default_rng(0)
    X = _int_matrix(rng)
    y = rng.integers(0, 2, size=30)
    shift = rng.integers(-50, 50, size=7)
    plain = PlaintextBackend(key_bits=512)
    got = paillier.decrypt_vector(paillier.affine(paillier.column_sums(paillier.encrypt_vector(y), X), 37, shift))
    ref = plain.decrypt_vector(plain.affine(plain.column_sums(plain.encrypt_vector(y), X), 37, shift))
    oracle = 37 * (X.T @ y) + shift
    assert got.tolist() == ref.tolist() == oracle.tolist()


def test_negative_scale_and_large_values(paillier):
    # guards: negative multipliers use the modular inverse; values beyond int64 stay exact
    enc = paillier.encrypt_vector(np.array([5, -7]))
    out = paillier.decrypt_vector(paillier.affine(enc, -3, [10**20, -(10**20)]))
    assert out.tolist() == [-15 + 10**20, 21 - 10**20]


def test_both_backends_count_identical_costs(paillier):
    # guards: the plaintext backend's analytic counts are the counts real Paillier incurs
    rng = np.random.default_rng(1)
    X = _int_matrix(rng, n=20, p=5)
    y = rng.integers(0, 2, size=20)
    meters = []
    for be in (PlaintextBackend(512), paillier):
        m = CostMeter()
        be.decrypt_vector(be.affine(be.column_sums(be.encrypt_vector(y, m), X, m), 3, np.zeros(5, int), m), m)
        meters.append(m.as_dict())
    assert meters[0] == meters[1]


def test_cost_formula_on_binary_and_integer_columns():
    # guards: additions = sum(max(nnz-1, 0)); one scalar mult per distinct value != 1 in a column
    X = sp.csc_matrix(np.array([[1, 2, 0], [1, 2, 0], [0, 3, 0], [1, 1, 0]]))
    be, m = PlaintextBackend(), CostMeter()
    be.column_sums(be.encrypt_vector([1, 0, 1, 1], m), X, m)
    assert (m.encryptions, m.hom_additions, m.hom_scalar_mults) == (4, 2 + 3 + 0, 0 + 2 + 0)


def test_ciphertext_of_another_key_is_rejected(paillier):
    # guards: mixing keys raises a clear error instead of decrypting garbage
    other = PaillierBackend(key_bits=512)
    enc = other.encrypt_vector([1, 2])
    with pytest.raises(ValueError, match="encrypted under another key"):
        paillier.decrypt_vector(enc)
    with pytest.raises(ValueError, match="another key"):
        PlaintextBackend().decrypt_vector(PlaintextBackend().encrypt_vector([1]))


def test_private_key_is_never_pickled(paillier):
    # guards: "keys are never written to disk unencrypted"
    with pytest.raises(TypeError, match="private key"):
        pickle.dumps(paillier)


def test_fresh_encryptions_differ_but_decrypt_equal(paillier):
    # guards: encryption is randomized (semantic security), decryption still exact
    a, b = paillier.encrypt_vector([1, 1]).data
    assert a != b
    assert paillier.decrypt_vector(paillier.encrypt_vector([1, 1])).tolist() == [1, 1]


def test_bad_backend_arguments():
    with pytest.raises(ValueError, match="`backend` must be"):
        make_backend("rsa")
    with pytest.raises(ValueError, match="`key_bits` must be an int >= 256"):
        PlaintextBackend(key_bits=128)
    with pytest.raises(TypeError, match="must be an EncryptedVector"):
        PlaintextBackend().decrypt_vector([1, 2])


def test_meter_bytes_and_directions():
    m = CostMeter()
    m.record_message(3, 2, 512, to="passive")
    m.record_message(1, 0, 512, to="active")
    assert (m.bytes_to_passive, m.bytes_to_active, m.ciphertexts_to_passive) == (3 * 512 + 16, 512, 3)
    with pytest.raises(ValueError, match="`to` must be"):
        m.record_message(1, 0, 512, to="server")


def test_missing_phe_names_the_extra_and_plaintext_still_works(monkeypatch):
    # guards: the plaintext backend needs only core dependencies; Paillier asks for the `fed` extra
    import sys

    monkeypatch.setitem(sys.modules, "phe", None)  # makes `import phe` raise ImportError
    with pytest.raises(ImportError, match=r'pip install "neurips25\[fed\]"'):
        PaillierBackend(key_bits=512)
    be = make_backend("plaintext")
    assert be.decrypt_vector(be.encrypt_vector([3])).tolist() == [3]
