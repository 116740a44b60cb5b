"""Statistics: oracles against numpy, the D identity, unbiasedness under case-control subsampling."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from neurips25.vfs import STATISTICS, ActiveParty, PassiveParty, class_mean_difference, group_aggregate
from neurips25.vfs.statistics import get_statistic


def test_class_mean_difference_matches_numpy():
    # oracle: per-column means by class, computed directly
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 5))
    y = rng.integers(0, 2, size=40)
    ref = X[y == 1].mean(axis=0) - X[y == 0].mean(axis=0)
    np.testing.assert_allclose(class_mean_difference(X, y), ref)
    np.testing.assert_allclose(class_mean_difference(sp.csr_matrix(X), y), ref)


def test_group_aggregate_matches_loop():
    rng = np.random.default_rng(1)
    X = (rng.random((25, 9)) < 0.3).astype(int) * rng.integers(-2, 3, size=(25, 9))
    groups = np.array([0, 0, 1, 2, 2, 2, 1, 3, 3])
    Z = group_aggregate(X, groups).toarray()
    ref = np.stack([X[:, groups == g].sum(axis=1) for g in range(4)], axis=1)
    np.testing.assert_array_equal(Z, ref)
    # "any" counts nonzeros even when opposite signs cancel in the sum
    anyz = group_aggregate(X, groups, how="any").toarray()
    np.testing.assert_array_equal(anyz, np.stack([(X[:, groups == g] != 0).any(axis=1) for g in range(4)], 1))


def test_pearson_score_equals_abs_corrcoef():
    rng = np.random.default_rng(2)
    X = rng.integers(0, 4, size=(50, 3))
    y = rng.integers(0, 2, size=50)
    n1, n0 = int(y.sum()), int(50 - y.sum())
    D = [50 * int(X[:, j] @ y) - n1 * int(X[:, j].sum()) for j in range(3)]
    S = [int(v) for v in X.sum(0)]
    Q = [int(v) for v in (X**2).sum(0)]
    got = STATISTICS["pearson"](np.array(D, dtype=object), np.array(S, dtype=object), np.array(Q, dtype=object), n1, n0)
    ref = [abs(np.corrcoef(X[:, j], y)[0, 1]) for j in range(3)]
    np.testing.assert_allclose(got, ref)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.integers(6, 40))
def test_protocol_D_equals_n1_n0_times_mean_difference(seed, n):
    # property: D = n_s T - n1 S = n1 n0 (mean_1 - mean_0) exactly, on any integer data with both classes
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, size=n)
    y[:2] = [0, 1]
    X = rng.integers(-5, 6, size=(n, 3)) * (rng.random((n, 3)) < 0.5)
    active = ActiveParty(y)
    msg = PassiveParty(X, group_size=1).feature_statistics(active.label_message(), active.public_backend)
    D, score = active.decrypt_scores(msg)
    n1, n0 = int(y.sum()), n - int(y.sum())
    np.testing.assert_allclose(np.array(D, dtype=float), n1 * n0 * class_mean_difference(X, y), atol=1e-6)
    np.testing.assert_allclose(score, np.abs(class_mean_difference(X, y)), atol=1e-12)


def test_subsampled_statistic_is_unbiased_monte_carlo():
    # guards: keeping all positives and a uniform subset of negatives leaves the mean difference unbiased
    rng = np.random.default_rng(3)
    n = 2000
    y = (rng.random(n) < 0.05).astype(int)
    x = (rng.random(n) < 0.1 + 0.3 * y).astype(int)[:, None]
    full = class_mean_difference(x, y)[0]
    draws = []
    for s in range(300):
        active = ActiveParty(y, negative_sampling_ratio=2, random_state=s)
        lab = active.label_message()
        msg = PassiveParty(x, group_size=1).feature_statistics(lab, active.public_backend)
        D, _ = active.decrypt_scores(msg)
        draws.append(float(D[0]) / (lab.n_pos * lab.n_neg))
    se = np.std(draws) / np.sqrt(len(draws))
    assert abs(np.mean(draws) - full) < 4 * se + 1e-12
    assert np.std(draws) > 0  # the subsample really varies


def test_custom_statistic_and_bad_names():
    f = STATISTICS["mean_diff"]
    assert get_statistic(f) is f
    with pytest.raises(ValueError, match="`statistic` must be one of"):
        get_statistic("kolmogorov")
    with pytest.raises(ValueError, match="`how` must be 'sum' or 'any'"):
        group_aggregate(np.eye(2), [0, 1], how="max")
    with pytest.raises(ValueError, match="`groups` must have shape"):
        group_aggregate(np.eye(2), [0])
    with pytest.raises(ValueError, match="`y` must contain both classes"):
        class_mean_difference(np.eye(2), [1, 1])
