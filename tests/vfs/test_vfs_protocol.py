"""Protocol: planted truth, group stage keeps strong groups, cost counts equal the nnz formulas."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from neurips25.vfs import ActiveParty, PassiveParty, make_vertical_sparse_classification, run_protocol
from neurips25.vfs.protocol import resolve_keep, sis_model_size


def _parties(data, group_size):
    return [PassiveParty(P, group_size=group_size, name=f"p{k}") for k, P in enumerate(data.X_parts)]


@pytest.fixture(scope="module")
def data():
    return make_vertical_sparse_classification(
        4000, 600, n_parties=3, group_size=20, density=0.05, positive_rate=0.1, random_state=0
    )


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 3))
def test_stage1_keeps_the_group_of_a_perfect_feature(seed, n_parties):
    # guards: in a noiseless case (x_j = y) stage 1 never drops the group holding the strong feature
    rng = np.random.default_rng(seed)
    n, p, m = 600, 60 * n_parties, 10
    y = (rng.random(n) < 0.1).astype(int)
    y[:2] = [0, 1]
    X = (rng.random((n, p)) < 0.05).astype(int)
    j = int(rng.integers(p))
    X[:, j] = y
    bounds = np.linspace(0, p, n_parties + 1).astype(int)
    parties = [PassiveParty(X[:, a:b], group_size=m) for a, b in zip(bounds[:-1], bounds[1:])]
    res = run_protocol(ActiveParty(y), parties, n_features_keep=1, n_groups_keep=1)
    assert res.feature_group[j] in res.kept_groups
    assert res.support.tolist() == [j]


def test_cost_counts_equal_nnz_formulas(data):
    # guards: CostMeter = encryptions n_s; decryptions G + m d1; additions from nnz of Z and kept X
    active = ActiveParty(data.y, negative_sampling_ratio=2, random_state=0)
    parties = _parties(data, 20)
    res = run_protocol(active, parties, n_groups_keep=4, n_features_keep=10)
    lab = active.label_message()
    X = data.X.tocsc()[lab.rows]
    Z = sp.csc_matrix(X @ sp.csr_matrix((np.ones(600), (np.arange(600), data.groups))))
    kept_cols = np.flatnonzero(np.isin(res.feature_group, res.kept_groups))
    nnz_z, nnz_x = np.diff(Z.indptr), np.diff(X[:, kept_cols].indptr)
    distinct = sum(len(set(Z[:, g].data.tolist()) - {1}) for g in range(Z.shape[1]))
    c = res.cost
    assert c.encryptions == len(lab.rows) == lab.n_pos + lab.n_neg == int(data.y.sum()) * 3
    assert c.decryptions == 30 + len(kept_cols) == 30 + 4 * 20
    assert c.hom_additions == np.maximum(nnz_z - 1, 0).sum() + np.maximum(nnz_x - 1, 0).sum()
    assert c.hom_scalar_mults == distinct + c.decryptions
    assert c.hom_plain_additions == c.decryptions
    assert c.ciphertexts_to_passive == 3 * len(lab.rows)
    assert c.ciphertexts_to_active == c.decryptions


def test_two_stage_recovers_planted_support_with_fewer_decryptions(data):
    two = run_protocol(ActiveParty(data.y), _parties(data, 20), n_groups_keep=5, n_features_keep=20)
    one = run_protocol(ActiveParty(data.y), _parties(data, 20), n_features_keep=20, two_stage=False)
    assert set(data.support) <= set(two.support)
    assert set(data.support) <= set(one.support)
    assert one.cost.decryptions == 600 and two.cost.decryptions == 30 + 100
    assert one.group_scores is None and two.group_scores.shape == (30,)
    # stage-2 scores equal the one-stage scores of the same features (same rows, same integers)
    scored = ~np.isnan(two.feature_scores)
    np.testing.assert_array_equal(two.feature_scores[scored], one.feature_scores[scored])


def test_keep_rules_and_sis_size():
    assert sis_model_size(2500) == int(2500 / np.log(2500)) == 319
    assert sis_model_size(1) == 1
    assert resolve_keep(0.05, 2000, "n_groups_keep") == 100
    assert resolve_keep(0.0001, 10, "n_groups_keep") == 1
    with pytest.raises(ValueError, match="`n_groups_keep`=11 is larger than the 10 available"):
        resolve_keep(11, 10, "n_groups_keep")
    with pytest.raises(ValueError, match="`n_groups_keep` must be an int >= 1 or a float in"):
        resolve_keep(1.5, 10, "n_groups_keep")


def test_protocol_bad_inputs(data):
    parties = _parties(data, 20)
    with pytest.raises(ValueError, match="has 10 rows but the active party has 4000 labels"):
        run_protocol(ActiveParty(data.y), [PassiveParty(np.ones((10, 3)))])
    with pytest.raises(TypeError, match="`passives` must be a non-empty list"):
        run_protocol(ActiveParty(data.y), [])
    with pytest.raises(ValueError, match="`n_features_keep`=601 is larger than the 600 features"):
        run_protocol(ActiveParty(data.y), parties, n_features_keep=601)
    with pytest.warns(UserWarning, match="exceeds the 20 features of the surviving groups"):
        res = run_protocol(ActiveParty(data.y), parties, n_groups_keep=1, n_features_keep=50)
    assert len(res.support) == 20


def test_party_bad_inputs():
    with pytest.raises(ValueError, match="`y` must contain both classes"):
        ActiveParty(np.zeros(5))
    with pytest.raises(ValueError, match=r"`y` must be binary with values in \{0, 1\}"):
        ActiveParty([0, 1, 2])
    with pytest.raises(ValueError, match="`negative_sampling_ratio` must be a finite number > 0"):
        ActiveParty([0, 1], negative_sampling_ratio=0)
    with pytest.raises(ValueError, match="must be finite"):
        PassiveParty(np.array([[np.nan, 1.0]]))
    with pytest.raises(ValueError, match="consecutive ids"):
        PassiveParty(np.ones((3, 2)), groups=[0, 2])
    with pytest.raises(TypeError, match="must be a StatisticMessage"):
        ActiveParty([0, 1]).decrypt_scores("ciphertexts")


def test_negative_sampling_keeps_all_positives():
    y = np.r_[np.ones(7, int), np.zeros(200, int)]
    lab = ActiveParty(y, negative_sampling_ratio=3, random_state=1).label_message()
    assert np.isin(np.arange(7), lab.rows).all()
    assert (lab.n_pos, lab.n_neg, len(lab.rows)) == (7, 21, 28)


def test_fixed_point_encoding_of_real_features():
    # real-valued features are encoded as round(x * 2^16); ranking follows the real statistic
    rng = np.random.default_rng(4)
    y = np.r_[np.ones(20, int), np.zeros(80, int)]
    X = rng.normal(size=(100, 4))
    X[:, 2] += 1.5 * y
    res = run_protocol(ActiveParty(y), [PassiveParty(X, group_size=1)], n_features_keep=1, two_stage=False)
    assert res.support.tolist() == [2]
    assert PassiveParty(X).encoding_scale == 2**16
