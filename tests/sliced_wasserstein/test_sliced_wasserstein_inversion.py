"""Sample route (any d): point clouds whose slices match target slice quantiles."""

import numpy as np
import pytest

from neurips25.sliced_wasserstein import (
    GaussianMixture2D,
    directions,
    gaussian_slice_quantiles,
    quantile_levels,
    slices_to_samples,
)


def _sw_to_exact(Z, quantile_fn, D):
    lev = (np.arange(len(Z)) + 0.5) / len(Z)
    return np.sqrt(np.mean((np.sort(Z @ D.T, axis=0).T - quantile_fn(D, lev)) ** 2))


def test_sample_route_recovers_a_mixture_in_2d():
    # acceptance criterion 2: SW_2(reconstruction, truth) < 0.05 x slice s.d., checked on unseen directions
    gm = GaussianMixture2D.default()
    D, u = directions(2, 60), quantile_levels(201)
    Z = slices_to_samples(gm.slice_quantiles(D, u), D, u, n_points=1000, seed=0)
    Dchk = directions(2, 16, kind="random", seed=1)
    sd = np.sqrt(np.mean(gm.slice_variance(Dchk)))
    assert _sw_to_exact(Z, gm.slice_quantiles, Dchk) < 0.05 * sd


def test_sample_route_recovers_a_correlated_gaussian_in_3d():
    m, S = np.array([1.0, -2.0, 0.5]), np.array([[2.0, 0.8, 0.0], [0.8, 1.0, -0.3], [0.0, -0.3, 0.5]])
    D, u = directions(3, 60), quantile_levels(101)
    Z = slices_to_samples(gaussian_slice_quantiles(m, S, D, u), D, u, n_points=1500, seed=0)
    np.testing.assert_allclose(Z.mean(axis=0), m, atol=0.05)
    np.testing.assert_allclose(np.cov(Z.T), S, atol=0.12)


def test_is_deterministic_given_a_seed():
    D, u = directions(2, 8), quantile_levels(11)
    Q = gaussian_slice_quantiles([0, 0], np.eye(2), D, u)
    first, again = slices_to_samples(Q, D, u, 50, seed=3), slices_to_samples(Q, D, u, 50, seed=3)
    np.testing.assert_array_equal(first, again)


def test_bad_input():
    D, u = directions(2, 8), quantile_levels(11)
    Q = gaussian_slice_quantiles([0, 0], np.eye(2), D, u)
    with pytest.raises(ValueError, match="`dirs` has 8 rows but `Q` has 7"):
        slices_to_samples(Q[:7], D, u)
    with pytest.raises(ValueError, match="`dirs` must span R\\^2"):
        slices_to_samples(Q[:1], D[:1], u)
    with pytest.raises(ValueError, match="`lr` must be in \\(0, 2\\)"):
        slices_to_samples(Q, D, u, lr=3.0)
    with pytest.raises(ValueError, match="`u_grid` must be 11 increasing"):
        slices_to_samples(Q, D, u[::-1])
