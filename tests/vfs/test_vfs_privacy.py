"""What each party can compute (issue 28): label-message validation, padding, hidden sums, bad input."""

import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp

from neurips25.vfs import ActiveParty, PassiveParty, VerticalFederatedScreener, run_protocol
from neurips25.vfs.crypto import EncryptedVector
from neurips25.vfs.statistics import group_aggregate

pytestmark = pytest.mark.filterwarnings("ignore:`key_bits`=512 is below 2048")


@pytest.fixture(scope="module")
def toy():
    rng = np.random.default_rng(0)
    y = (rng.random(300) < 0.1).astype(int)
    y[:2] = [1, 0]
    X = (rng.random((300, 40)) < 0.2).astype(int)
    X[:, 3] = y | (rng.random(300) < 0.05)
    return X, y


def _run(X, y, **active_kw):
    active = ActiveParty(y, random_state=4, **active_kw)
    parties = [PassiveParty(X[:, :20], group_size=5), PassiveParty(X[:, 20:], group_size=5)]
    return run_protocol(active, parties, n_groups_keep=3, n_features_keep=5), active


@pytest.mark.parametrize("backend", ["plaintext", "paillier"])
def test_padded_sample_gives_the_same_integers(toy, backend):
    # guards: pad_to hides the sample without changing D_u (S_u is summed under encryption instead)
    if backend == "paillier":
        pytest.importorskip("phe")
    X, y = toy
    kw = dict(negative_sampling_ratio=2, backend=backend, key_bits=512)
    plain, a0 = _run(X, y, **kw)
    padded, a1 = _run(X, y, pad_to=1.0, **kw)
    assert len(a1.label_message().rows) == 300 and len(a0.label_message().rows) == a0.n_pos * 3
    assert padded.feature_diffs.tolist() == plain.feature_diffs.tolist()
    assert padded.group_diffs.tolist() == plain.group_diffs.tolist()
    assert padded.cost.encryptions == 2 * 300 and plain.cost.encryptions == a0.n_pos * 3


def test_partial_padding_and_pearson_sums_encrypted(toy):
    # pad_to=0.5: 150 rows sent, the sample among them; pearson then gets S and Q decrypted, same scores
    X, y = toy
    ref, _ = _run(X, y, negative_sampling_ratio=2, statistic="pearson")
    got, active = _run(X, y, negative_sampling_ratio=2, statistic="pearson", pad_to=0.5)
    lab = active.label_message()
    assert len(lab.rows) == 150 and np.isin(np.flatnonzero(y), lab.rows).all()
    np.testing.assert_allclose(got.feature_scores, ref.feature_scores)
    assert got.cost.decryptions == 3 * ref.cost.decryptions  # D, S and Q per column


def test_mean_diff_reveals_no_column_sums(toy):
    # guards: under mean_diff the active party receives D_u only; pearson needs (and gets) S_u, Q_u
    X, y = toy
    active = ActiveParty(y)
    msg = PassiveParty(X).feature_statistics(active.label_message(), active.public_backend)
    assert msg.sums is None and msg.sq_sums is None and msg.n_integers == 40
    active = ActiveParty(y, statistic="pearson")
    msg = PassiveParty(X).feature_statistics(active.label_message(), active.public_backend)
    assert msg.sums.tolist() == X.sum(0).tolist()


def test_malformed_label_messages_are_refused(toy):
    # guards: the review's malicious message (y_i = 2^i, n_pos = 0) and other inconsistent messages
    X, y = toy
    active = ActiveParty(y, negative_sampling_ratio=2, random_state=0)
    lab, pub = active.label_message(), active.public_backend
    party = PassiveParty(X)
    bad = {
        "`n_pos` must be an int >= 1": dataclasses.replace(lab, n_pos=0),
        "`n_neg` must be an int >= 1": dataclasses.replace(lab, n_neg=0),
        "n_pos \\+ n_neg = .* but .* rows were sent": dataclasses.replace(lab, n_neg=lab.n_neg + 1),
        "unique sorted ids": dataclasses.replace(lab, rows=lab.rows[::-1].copy()),
        "label ciphertexts for": dataclasses.replace(
            lab, enc_labels=EncryptedVector(lab.enc_labels.data[:-1], lab.enc_labels.key_id)
        ),
        "must hold integers": dataclasses.replace(
            lab, enc_labels=EncryptedVector(lab.enc_labels.data.astype(float), lab.enc_labels.key_id)
        ),
    }
    for match, msg in bad.items():
        with pytest.raises(ValueError, match=match):
            party.group_statistics(msg, pub)
    with pytest.raises(TypeError, match="must be a LabelMessage"):
        party.group_statistics("labels", pub)


def test_paillier_ciphertexts_out_of_range_are_refused(toy):
    pytest.importorskip("phe")
    X, y = toy
    active = ActiveParty(y, backend="paillier", key_bits=512, negative_sampling_ratio=1, random_state=0)
    lab = active.label_message()
    forged = EncryptedVector([active.public_backend.n**2 + 1, *lab.enc_labels.data[1:]], lab.enc_labels.key_id)
    with pytest.raises(ValueError, match="not a ciphertext of this key"):
        PassiveParty(X).group_statistics(dataclasses.replace(lab, enc_labels=forged), active.public_backend)


def test_bad_inputs_found_by_the_review():
    # regression (issue 28): each of these used to fail deep inside or silently
    y = np.r_[np.ones(5, int), np.zeros(95, int)]
    with pytest.raises(ValueError, match=r"`negative_sampling_ratio`=1e-09 keeps round\(r \* n1\) = 0 negatives"):
        ActiveParty(y, negative_sampling_ratio=1e-9)
    with pytest.raises(ValueError, match="fixed-point encoding with precision_bits=16 needs"):
        PassiveParty(np.full((4, 1), 1.5e15 + 0.5), name="bank")  # e.g. microsecond timestamps
    with pytest.raises(ValueError, match="party 'bank' holds integers up to"):
        PassiveParty(np.full((4, 1), 2.0**63), name="bank")
    PassiveParty(np.full((4, 1), 1.5e15 + 0.5), precision_bits=0)  # lower precision fits
    with pytest.raises(ValueError, match=r"block of party 1 \(`X\[1\]`\) is 1-D with shape \(100,\)"):
        VerticalFederatedScreener().fit([np.ones((100, 2)), np.ones(100)], y)
    with pytest.raises(ValueError, match="`pad_to` must be a fraction"):
        ActiveParty(y, pad_to=1.5)


def test_contiguous_group_sums_equal_the_generic_product():
    # the bincount fast path (groups in column order) equals the sparse product path
    rng = np.random.default_rng(5)
    X = sp.csc_matrix((rng.random((60, 12)) < 0.3) * rng.integers(1, 4, size=(60, 12)))
    groups = np.repeat(np.arange(4), 3)
    perm = rng.permutation(12)
    for how in ("sum", "any"):
        fast = group_aggregate(X, groups, how).toarray()
        slow = group_aggregate(X[:, perm], groups[perm], how).toarray()  # unsorted labels: generic path
        ref = np.stack([X[:, groups == g].toarray().sum(1) for g in range(4)], 1)
        np.testing.assert_array_equal(fast, slow)
        np.testing.assert_array_equal(fast, ref if how == "sum" else ref > 0)
