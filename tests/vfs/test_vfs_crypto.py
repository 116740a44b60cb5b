"""Backends: Paillier equals plaintext exactly, costs follow the nnz formulas, keys stay private."""

import pickle

import numpy as np
import pytest
import scipy.sparse as sp

from neurips25.vfs import CostMeter, EncryptedVector, PaillierBackend, PaillierPublicBackend, PlaintextBackend
from neurips25.vfs.crypto import make_backend

pytestmark = pytest.mark.filterwarnings("ignore:`key_bits`=512 is below 2048")


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
    pub, ppub = paillier.public(), plain.public()
    enc = pub.rerandomize(pub.affine(pub.column_sums(paillier.encrypt_vector(y), X), 37, shift))
    got = paillier.decrypt_vector(enc)
    ref = plain.decrypt_vector(ppub.rerandomize(ppub.affine(ppub.column_sums(plain.encrypt_vector(y), X), 37, shift)))
    oracle = 37 * (X.T @ y) + shift
    assert got.tolist() == ref.tolist() == oracle.tolist()


def test_combine_equals_linear_combination(paillier):
    # guards: Enc(a A + b B) of the padded protocol, with a negative coefficient
    pub = paillier.public()
    A, B = paillier.encrypt_vector([3, -4, 0]), paillier.encrypt_vector([1, 2, 5])
    assert paillier.decrypt_vector(pub.combine(A, 7, B, -3)).tolist() == [18, -34, -15]


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
        m, pub = CostMeter(), be.public()
        enc = pub.rerandomize(pub.affine(pub.column_sums(be.encrypt_vector(y, m), X, m), 3, np.zeros(5, int), m), m)
        be.decrypt_vector(enc, m)
        meters.append(m.as_dict())
    assert meters[0]["rerandomizations"] == 5
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
    pickle.dumps(paillier.public())  # the public half holds nothing secret


def test_public_backend_cannot_decrypt(paillier):
    # guards (issue 28): passive parties get n and n^2 only; v1 handed them the key holder's object
    pub = paillier.public()
    assert type(pub) is PaillierPublicBackend and not isinstance(pub, PaillierBackend)
    assert not hasattr(pub, "decrypt_vector") and not hasattr(pub, "_private")
    n = pub.n
    held = [v for v in vars(pub).values() if isinstance(v, int)]
    assert n in held and not [v for v in held if 1 < v < n and n % v == 0]  # no factor of n
    enc = paillier.encrypt_vector([1])
    with pytest.raises(AttributeError):
        pub.decrypt_vector(enc)
    assert not hasattr(PlaintextBackend().public(), "decrypt_vector")


def test_rerandomize_changes_ciphertexts_not_plaintexts(paillier):
    # guards: returned ciphertexts cannot be linked to the label ciphertexts (empty column is not the trivial 1)
    pub = paillier.public()
    enc = pub.column_sums(paillier.encrypt_vector([1, 0]), sp.csc_matrix(np.array([[1, 0], [0, 0]])))
    assert enc.data[1] == 1  # an empty column before re-randomization
    again = pub.rerandomize(enc)
    assert all(a != b for a, b in zip(enc.data, again.data)) and again.data[1] != 1
    assert paillier.decrypt_vector(again).tolist() == [1, 0]


def test_ciphertext_range_checks(paillier):
    # guards: the passive party refuses values that are not ciphertexts of this key
    pub = paillier.public()
    good = paillier.encrypt_vector([1, 0])
    pub.check_ciphertexts(good, "enc")
    for bad in ([0, good.data[1]], [pub.n**2, 5], [pub.n, 7]):
        with pytest.raises(ValueError, match="not a .*ciphertext"):
            pub.check_ciphertexts(EncryptedVector(bad, good.key_id), "enc")


def test_short_keys_warn():
    pytest.importorskip("phe")
    with pytest.warns(UserWarning, match="`key_bits`=512 is below 2048"):
        PaillierBackend(key_bits=512)


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
