"""Slicing: directions, sliced quantiles, and SW_p against POT (oracle) and closed forms."""

import numpy as np
import ot
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm

from neurips25.sliced_wasserstein import (
    directions,
    quantile_levels,
    sliced_quantiles,
    sliced_wasserstein,
)


@pytest.fixture
def clouds():
    rng = np.random.default_rng(0)
    return rng.normal(size=(50, 2)), rng.normal(size=(50, 2)) * 1.5 + 1.0, rng.normal(size=(37, 2))


@pytest.mark.parametrize("d,kind", [(2, "grid"), (3, "fibonacci"), (5, "random"), (2, "random")])
def test_directions_are_unit_vectors_on_a_half_sphere(d, kind):
    # guards: wrong normalisation; grids that double-count theta and -theta
    D = directions(d, 40, kind=kind, seed=0)
    assert D.shape == (40, d)
    np.testing.assert_allclose(np.linalg.norm(D, axis=1), 1.0, atol=1e-12)
    if kind == "grid":
        ang = np.arctan2(D[:, 1], D[:, 0])
        assert ang.min() >= 0 and ang.max() < np.pi
        # equispaced quadrature over the half-circle: mean of theta theta^T is I / 2 exactly
        np.testing.assert_allclose(D.T @ D / 40, np.eye(2) / 2, atol=1e-12)
    if kind == "fibonacci":
        assert np.all(D[:, 2] > 0)
        np.testing.assert_allclose(D.T @ D / 40, np.eye(3) / 3, atol=0.02)


def test_univariate_has_one_direction():
    assert directions(1, 30).tolist() == [[1.0]]


def test_sw_matches_pot_equal_sizes(clouds):
    # acceptance criterion 1: POT at the same projections, to 1e-8
    a, b, _ = clouds
    D = directions(2, 30)
    ours = sliced_wasserstein(a, b, dirs=D)
    pot = ot.sliced_wasserstein_distance(a, b, projections=D.T)
    assert abs(ours - pot) < 1e-8


@pytest.mark.parametrize("p", [1, 2, 3])
def test_sw_matches_pot_unequal_sizes_and_weights(clouds, p):
    # the general 1-D coupling (merged quantile steps) with non-uniform weights, for several p
    a, _, c = clouds
    rng = np.random.default_rng(1)
    wa, wc = rng.uniform(size=50), rng.uniform(size=37)
    D = directions(3, 25, kind="random", seed=2)
    a3, c3 = np.c_[a, a[:, 0] ** 2], np.c_[c, c[:, 1]]
    ours = sliced_wasserstein(a3, c3, p=p, dirs=D, a_weights=wa, b_weights=wc)
    pot = ot.sliced_wasserstein_distance(a3, c3, wa / wa.sum(), wc / wc.sum(), projections=D.T, p=p)
    assert abs(ours - pot) < 1e-8
    assert abs(sliced_wasserstein(a3, c3, p=p, dirs=D) - ot.sliced_wasserstein_distance(
        a3, c3, projections=D.T, p=p)) < 1e-8


def test_sw_translation_closed_form():
    # two copies shifted by v: W_2 on slice theta is |<v, theta>|, and mean_theta <v,theta>^2 = |v|^2 / 2
    x = np.random.default_rng(3).normal(size=(20, 2))
    v = np.array([3.0, -4.0])
    assert sliced_wasserstein(x, x + v, n_directions=64) == pytest.approx(np.sqrt(25 / 2), rel=1e-12)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 30), m=st.integers(2, 30), seed=st.integers(0, 10_000))
def test_sw_is_a_symmetric_pseudometric(n, m, seed):
    rng = np.random.default_rng(seed)
    a, b, c = rng.normal(size=(n, 2)), rng.normal(size=(m, 2)) + 1, rng.normal(size=(n + 1, 2)) * 2
    D = directions(2, 12)
    ab, ba = sliced_wasserstein(a, b, dirs=D), sliced_wasserstein(b, a, dirs=D)
    assert ab == pytest.approx(ba, abs=1e-12)
    assert sliced_wasserstein(a, a, dirs=D) == pytest.approx(0.0, abs=1e-12)
    assert ab <= sliced_wasserstein(a, c, dirs=D) + sliced_wasserstein(c, b, dirs=D) + 1e-9


def test_empirical_quantile_embedding_is_an_isometry(clouds):
    # with midpoint levels and N | M, the L2 distance of quantile embeddings is SW_2 exactly
    a, b, _ = clouds
    D = directions(2, 30)
    Q = sliced_quantiles([a, b], D, quantile_levels(100))
    h = np.sqrt(np.mean((Q[0] - Q[1]) ** 2))
    assert abs(h - sliced_wasserstein(a, b, dirs=D)) < 1e-12


def test_kde_quantiles_of_a_gaussian_are_close_to_exact():
    # the binned FFT KDE: Scott bandwidth inflates the s.d. by sqrt(1 + N^-0.4), nothing else
    x = np.random.default_rng(4).normal(size=(20000, 2)) * [2.0, 0.5]
    u = quantile_levels(21)
    D = directions(2, 4)
    sd = np.sqrt(np.array([4.0, 0.5**2 * 0.5 + 4 * 0.5, 0.25, 4 * 0.5 + 0.25 * 0.5]))
    for rule, c in (("scott", 1.0), ("robust", 1.06)):  # robust: 1.06 min(sd, IQR / 1.349) = 1.06 sd here
        Q = sliced_quantiles([x], D, u, method="kde", bandwidth=rule, density_floor=0.0)[0]
        exact = sd[:, None] * np.sqrt(1 + c**2 * 20000**-0.4) * norm.ppf(u)[None, :]
        # tolerance: ~2.5 sampling s.d. of the most extreme level's empirical quantile at N = 20000
        assert np.all(np.abs(Q - exact) < 0.05 * sd[:, None])
        assert np.all(np.diff(Q, axis=1) > 0)


def test_kde_quantiles_are_robust_to_heavy_tails():
    # issue 32 / review: Scott on the s.d. and a grid spanning [min, max] gave Cauchy quartiles of -8 / +8
    x = np.random.default_rng(0).standard_cauchy(500)
    u = np.array([0.25, 0.5, 0.75])
    Q = sliced_quantiles([x], np.ones((1, 1)), u, method="kde")[0, 0]
    emp = np.percentile(x, [25, 50, 75])
    np.testing.assert_allclose(Q, emp, atol=0.3)  # true quartiles +-1; KDE widens them by ~h^2
    scott = sliced_quantiles([x], np.ones((1, 1)), u, method="kde", bandwidth="scott")[0, 0]
    assert abs(scott[0]) > 3 * abs(Q[0])  # the old rule stays available, and stays wrong here


def test_kde_ignores_far_outliers_and_refines_its_grid():
    # 3 points at 1e6 must not move the quantiles of 2000 standard normal points at the inner levels
    rng = np.random.default_rng(1)
    x = rng.normal(size=2000)
    u = quantile_levels(101)
    clean = sliced_quantiles([x], np.ones((1, 1)), u, method="kde")[0, 0]
    dirty = sliced_quantiles([np.r_[x, [1e6, 2e6, 3e6]]], np.ones((1, 1)), u, method="kde")[0, 0]
    inner = u < 0.98
    np.testing.assert_allclose(dirty[inner], clean[inner], atol=0.03)


def test_degenerate_and_transposed_samples_warn():
    # issue 32: a constant distribution dominated the LQD analysis silently; (2, 100) was read as 2 points
    from neurips25.sliced_wasserstein.slicing import DegenerateSliceWarning, TransposedSampleWarning

    D, u = directions(2, 4), quantile_levels(5)
    with pytest.warns(DegenerateSliceWarning, match=r"`samples\[0\]` has no spread along 4 of 4"):
        sliced_quantiles([np.ones((10, 2))], D, u, method="kde")
    with pytest.warns(TransposedSampleWarning, match=r"2 points in R\^100, fewer points than dimensions"):
        sliced_wasserstein(np.zeros((2, 100)), np.ones((2, 100)), n_directions=3, seed=0)


def test_sw_rejects_p_inf():
    with pytest.raises(ValueError, match=r"`p` must be a finite number >= 1, got inf"):
        sliced_wasserstein(np.zeros((3, 2)), np.ones((3, 2)), p=np.inf)


def test_covariance_from_slices_recovers_a_gaussian_covariance():
    from neurips25.sliced_wasserstein import covariance_from_slices, gaussian_slice_quantiles

    S = np.array([[2.0, -0.7, 0.3], [-0.7, 1.0, 0.2], [0.3, 0.2, 0.5]])
    D, u = directions(3, 40), quantile_levels(4001)
    Q = gaussian_slice_quantiles([1.0, 2.0, 3.0], S, D, u)
    np.testing.assert_allclose(covariance_from_slices(Q, D), S, rtol=2e-3)
    with pytest.raises(ValueError, match="must span the symmetric 2x2"):
        covariance_from_slices(Q[:2, :], np.array([[1.0, 0.0], [0.0, 1.0]]))


def test_sliced_quantiles_shape_and_ragged_input():
    rng = np.random.default_rng(5)
    X = [rng.normal(size=(n, 3)) for n in (10, 25, 40)]
    Q = sliced_quantiles(X, directions(3, 7), quantile_levels(11), method="kde")
    assert Q.shape == (3, 7, 11)


@pytest.mark.parametrize("kwargs,match", [
    (dict(a=np.zeros((1, 2)), b=np.zeros((3, 2))), "`a` must hold at least 2 points"),
    (dict(a=np.zeros((3, 2)), b=np.zeros((3, 3))), "`b` has dimension 3, expected 2"),
    (dict(a=np.array([[0.0, np.nan], [1, 1]]), b=np.zeros((3, 2))), "`a` contains NaN"),
    (dict(a=np.zeros((3, 2)), b=np.ones((3, 2)), p=0.5), "`p` must be a finite number >= 1"),
    (dict(a=np.zeros((3, 2)), b=np.ones((3, 2)), dirs=[[1.0, 1.0]]), "unit vectors"),
    (dict(a=np.zeros((3, 2)), b=np.ones((3, 2)), a_weights=[1, -1, 1]), "`a_weights` must be 3"),
])
def test_sw_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        sliced_wasserstein(**kwargs)


def test_other_bad_input():
    with pytest.raises(ValueError, match="`kind`='grid' needs d = 2"):
        directions(3, 5, kind="grid")
    with pytest.raises(ValueError, match="`n_directions` must be an int >= 1"):
        directions(2, 0)
    with pytest.raises(ValueError, match="`u_grid` must be an increasing"):
        sliced_quantiles([np.zeros((3, 2))], directions(2, 3), [0.0, 0.5])
    with pytest.raises(ValueError, match="`bandwidth` must be one of"):
        sliced_quantiles([np.zeros((3, 2))], directions(2, 3), [0.2, 0.5], bandwidth=-1.0)
    with pytest.raises(ValueError, match="`n_quantiles` must be an int >= 2"):
        quantile_levels(1)
