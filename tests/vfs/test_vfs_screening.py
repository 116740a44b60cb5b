"""The sklearn selectors: check_estimator, Pipeline, party lists, Paillier = plaintext, bad input."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

from neurips25.vfs import (
    CentralizedSIS,
    OneStageFederatedScreener,
    VerticalFederatedScreener,
    make_vertical_sparse_classification,
)

pytestmark = pytest.mark.filterwarnings("ignore:`key_bits`=512 is below 2048")


@parametrize_with_checks([VerticalFederatedScreener(group_size=2), OneStageFederatedScreener(), CentralizedSIS()])
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.fixture(scope="module")
def data():
    return make_vertical_sparse_classification(
        3000, 400, n_parties=2, group_size=20, density=0.05, positive_rate=0.1, random_state=3
    )


def test_one_matrix_and_party_list_agree(data):
    # guards: fit(X) with party_columns equals fit on the per-party blocks; sparse equals dense
    kw = dict(n_groups_keep=4, n_features_keep=15, group_size=20, negative_sampling_ratio=2, random_state=0)
    a = VerticalFederatedScreener(**kw).fit(data.X_parts, data.y)
    b = VerticalFederatedScreener(**kw, party_columns=data.party_columns).fit(data.X, data.y)
    c = VerticalFederatedScreener(**kw, party_columns=data.party_columns).fit(data.X.toarray(), data.y)
    assert a.get_support().tolist() == b.get_support().tolist() == c.get_support().tolist()
    assert set(data.support) <= set(a.get_support(indices=True))
    assert a.cost_["decryptions"] == 20 + 4 * 20


def test_one_stage_equals_centralized_sis(data):
    # oracle: with every row, the federated integer protocol ranks exactly like float centralized SIS
    one = OneStageFederatedScreener(n_features_keep=30, n_parties=3).fit(data.X, data.y)
    cen = CentralizedSIS(n_features_keep=30).fit(data.X, data.y)
    np.testing.assert_array_equal(one.ranking_, cen.ranking_)
    np.testing.assert_allclose(one.feature_scores_, cen.feature_scores_)


def test_pipeline_and_transform(data):
    pipe = make_pipeline(
        VerticalFederatedScreener(n_groups_keep=0.25, n_features_keep=12, group_size=20),
        LogisticRegression(max_iter=200),
    )
    pipe.fit(data.X, data.y)
    assert pipe[0].transform(data.X).shape == (3000, 12)
    assert pipe[0].transform(data.X_parts).shape == (3000, 12)
    assert pipe.predict_proba(data.X[:5]).shape == (5, 2)


def test_paillier_estimator_selects_like_plaintext(data):
    pytest.importorskip("phe")
    kw = dict(n_groups_keep=3, n_features_keep=10, group_size=20, negative_sampling_ratio=1, random_state=5)
    small = [P[:800] for P in data.X_parts]
    y = data.y[:800]
    a = VerticalFederatedScreener(backend="paillier", key_bits=512, **kw).fit(small, y)
    b = VerticalFederatedScreener(backend="plaintext", key_bits=512, **kw).fit(small, y)
    assert a.get_support().tolist() == b.get_support().tolist()
    assert a.cost_ == b.cost_
    np.testing.assert_array_equal(a.group_scores_, b.group_scores_)
    assert not hasattr(a, "_backend")  # no key kept on the fitted estimator


def test_user_groups(data):
    # one-hot-style user groups, relabelled per party; a group may not span parties
    groups = np.repeat(np.arange(40), 10)
    vfs = VerticalFederatedScreener(n_groups_keep=6, n_features_keep=15, party_columns=data.party_columns)
    vfs.fit(data.X, data.y, groups=groups)
    assert vfs.group_scores_.shape == (40,)
    bad = groups.copy()
    bad[195:205] = 7
    with pytest.raises(ValueError, match="spans parties 0 and 1"):
        vfs.fit(data.X, data.y, groups=bad)


def test_bad_input_messages(data):
    vfs = VerticalFederatedScreener()
    with pytest.raises(ValueError, match="same number of rows; got \\[10, 3000\\]"):
        vfs.fit([data.X_parts[0][:10], data.X_parts[1]], data.y)
    with pytest.raises(ValueError, match="`y` must be binary"):
        vfs.fit(data.X, np.arange(3000) % 3)
    with pytest.raises(ValueError, match="`y` contains only one class"):
        vfs.fit(data.X, np.zeros(3000))
    with pytest.raises(ValueError, match="`n_features_keep`=401 is larger than the 400 features"):
        VerticalFederatedScreener(n_features_keep=401).fit(data.X, data.y)
    with pytest.raises(ValueError, match="`party_columns` must partition the 400 columns"):
        VerticalFederatedScreener(party_columns=[np.arange(10)]).fit(data.X, data.y)
    with pytest.raises(ValueError, match="'backend' parameter of VerticalFederatedScreener must be"):
        VerticalFederatedScreener(backend="rsa").fit(data.X, data.y)
    with pytest.raises(ValueError, match="`y` must be 1-D with 3000 entries"):
        vfs.fit(data.X_parts, data.y[:5])


def test_sparse_input_touches_only_nonzeros(data):
    # guards: hom additions scale with nnz of the sampled rows, not n * p
    vfs = OneStageFederatedScreener(n_parties=2).fit(sp.csr_matrix(data.X), data.y)
    assert vfs.cost_["hom_additions"] <= data.X.nnz
    assert vfs.cost_["hom_additions"] < 0.1 * 3000 * 400


def test_breast_cancer_dense_real_data_sanity():
    # tiny real dense data (bundled with sklearn): fixed-point federated screening ranks like float SIS
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    for stat in ("mean_diff", "pearson"):
        one = OneStageFederatedScreener(n_features_keep=5, statistic=stat, n_parties=3).fit(X, y)
        cen = CentralizedSIS(n_features_keep=5, statistic=stat).fit(X, y)
        assert set(one.get_support(indices=True)) == set(cen.get_support(indices=True))
        np.testing.assert_allclose(one.feature_scores_, cen.feature_scores_, rtol=1e-2, atol=1e-6)
    # all groups kept -> two-stage selects what one-stage selects
    two = VerticalFederatedScreener(n_groups_keep=1.0, n_features_keep=5, group_size=4, n_parties=3).fit(X, y)
    one = OneStageFederatedScreener(n_features_keep=5, n_parties=3).fit(X, y)
    assert two.get_support().tolist() == one.get_support().tolist()


def test_scores_comparable_across_integer_and_fixed_point_parties():
    # guards: a fixed-point party's scores are divided back by its 2^16 scale (else it would win every rank)
    rng = np.random.default_rng(0)
    y = np.r_[np.ones(30, int), np.zeros(170, int)]
    x = (rng.random(200) < 0.2 + 0.3 * y).astype(int)
    vfs = OneStageFederatedScreener(n_features_keep=1).fit([x[:, None], 0.5 * x[:, None] + 1e-3], y)
    np.testing.assert_allclose(vfs.feature_scores_[1], 0.5 * vfs.feature_scores_[0], rtol=1e-4)
    assert vfs.get_support(indices=True).tolist() == [0]


@pytest.mark.parametrize("cls", [VerticalFederatedScreener, CentralizedSIS])
def test_string_labels_need_pos_label(data, cls):
    # review vfs-v2: ["stay", "churn"] made the sorted-last class ("stay", the majority) positive, silently
    y = np.where(data.y == 1, "churn", "stay")
    with pytest.raises(ValueError, match=r"non-numeric labels \['churn', 'stay'\]: set `pos_label`"):
        cls().fit(data.X, y)
    with pytest.raises(ValueError, match=r"`pos_label`='leave' is not one of the labels"):
        cls(pos_label="leave").fit(data.X, y)
    by_name = cls(pos_label="churn").fit(data.X, y)
    by_number = cls().fit(data.X, data.y)
    np.testing.assert_array_equal(by_name.get_support(), by_number.get_support())
