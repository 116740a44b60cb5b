"""Per-slice transforms: LQD formulas (Petersen & Mueller / fdadensity), round trips, validity of inverses."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.stats import norm

from neurips25.sliced_wasserstein import (
    LQDTransform,
    QuantileTransform,
    quantile_levels,
    quantiles_to_densities,
)


def test_lqd_of_a_gaussian_matches_the_closed_form():
    # fdadensity's dens2lqd: psi(f)(u) = -log f(Q(u)); for N(m, s^2) that is log s - log phi(Phi^{-1}(u))
    u = quantile_levels(2001)
    m, s = 1.5, 0.7
    Y = LQDTransform().forward(m + s * norm.ppf(u), u)
    assert Y[0] == pytest.approx(m, abs=1e-12)  # location: the median level
    mid = 0.5 * (u[1:] + u[:-1])
    # the discrete g is log of the mean of q over a level step: equal to log q(mid) where q is smooth
    inner = (mid > 0.01) & (mid < 0.99)
    np.testing.assert_allclose(Y[1:][inner], (np.log(s) - norm.logpdf(norm.ppf(mid)))[inner], atol=1e-3)


def test_lqd_round_trip_on_exact_quantiles():
    # acceptance criterion 2: psi^{-1}(psi(Q)) = Q to 1e-6
    u = quantile_levels(101)
    Q = np.stack([m + s * norm.ppf(u) for m, s in [(0, 1), (3, 0.2), (-2, 5)]])
    t = LQDTransform()
    np.testing.assert_allclose(t.inverse(t.forward(Q, u), u), Q, atol=1e-9)


@settings(max_examples=30, deadline=None)
@given(arrays(float, (3, 9), elements=st.floats(-5, 5)))
def test_lqd_inverse_of_any_element_is_a_strictly_increasing_quantile(Y):
    # every point of the Hilbert space maps to a valid slice (the reason for the transform)
    u = quantile_levels(9)
    Q = LQDTransform().inverse(Y, u)
    assert np.all(np.diff(Q, axis=-1) > 0)
    np.testing.assert_allclose(Q[:, 4], Y[:, 0], atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(arrays(float, (2, 7), elements=st.floats(-5, 5)))
def test_quantile_inverse_is_the_isotonic_projection(Y):
    u = quantile_levels(7)
    Q = QuantileTransform().inverse(Y, u)
    assert np.all(np.diff(Q, axis=-1) >= -1e-12)
    np.testing.assert_allclose(Q.mean(axis=-1), Y.mean(axis=-1), atol=1e-9)  # PAVA keeps block means
    inc = np.sort(Y, axis=-1)
    np.testing.assert_allclose(QuantileTransform().inverse(inc, u), inc)


def test_weights():
    u = quantile_levels(5)
    np.testing.assert_allclose(QuantileTransform().coordinate_weights(u), 0.2)
    np.testing.assert_allclose(LQDTransform(1.0).coordinate_weights(u), [1.0, 0.2, 0.2, 0.2, 0.2])


def test_auto_location_weight_is_unit_free():
    # issue 32: the default location weight is 1 / mean slice variance, so rescaling the data changes nothing
    u = quantile_levels(51)
    Q = np.stack([m + s * norm.ppf(u) for m, s in [(0, 1), (3, 2), (-2, 3)]])[None]  # (1, 3, 51)
    w = LQDTransform().coordinate_weights(u, Q=Q)
    assert w[0] == pytest.approx(1.0 / np.mean([1, 4, 9]), rel=0.05)  # midpoint levels lose a little tail
    w_mmhg = LQDTransform().coordinate_weights(u, Q=40.0 * Q)
    assert w_mmhg[0] * 40.0**2 == pytest.approx(w[0], rel=1e-12)
    np.testing.assert_allclose(w_mmhg[1:], w[1:])
    with pytest.raises(ValueError, match="needs the fitted slice quantiles"):
        LQDTransform().coordinate_weights(u)


def test_estimator_with_auto_weight_is_invariant_to_units():
    from neurips25.sliced_wasserstein import SlicedWassersteinFPCA

    rng = np.random.default_rng(3)
    X = [rng.normal(a, np.exp(b), size=(200, 2)) for a, b in rng.uniform(-1, 1, size=(12, 2))]
    kw = dict(n_components=2, n_directions=8, n_quantiles=21)
    xi = SlicedWassersteinFPCA(**kw).fit_transform(X)
    xi_scaled = SlicedWassersteinFPCA(**kw).fit_transform([40.0 * x for x in X])
    np.testing.assert_allclose(np.abs(xi_scaled), np.abs(xi), rtol=1e-6, atol=1e-9)


def test_quantiles_to_densities_recovers_a_gaussian_density():
    u = quantile_levels(401)
    t = np.linspace(-5, 5, 201)
    dens = quantiles_to_densities(norm.ppf(u)[None, :], u, t)
    assert dens.sum() * (t[1] - t[0]) == pytest.approx(1.0, abs=1e-6)  # only the tails beyond +-5 are lost
    np.testing.assert_allclose(dens[0], norm.pdf(t), atol=0.01)


@pytest.mark.parametrize("M", [21, 101])
def test_exponential_tails_keep_the_mass_the_levels_do_not_see(M):
    # issue 32: the first version cut u < u_1 and u > u_M and smeared that mass back by renormalising
    u = quantile_levels(M)
    t = np.linspace(-6, 6, 241)
    Q = norm.ppf(u)[None, :]
    new = quantiles_to_densities(Q, u, t)
    old = quantiles_to_densities(Q, u, t, tails="none")
    assert new[0, t < Q[0, 0]].sum() * (t[1] - t[0]) == pytest.approx(u[0], rel=0.05)
    assert old[0, t < Q[0, 0] - 0.05].sum() == 0.0
    err_new, err_old = np.abs(new[0] - norm.pdf(t)).sum(), np.abs(old[0] - norm.pdf(t)).sum()
    assert err_new < 0.7 * err_old
    with pytest.raises(ValueError, match="`tails` must be one of"):
        quantiles_to_densities(Q, u, t, tails="gauss")


def test_bad_input():
    u = quantile_levels(4)
    with pytest.raises(ValueError, match="strictly increasing in u"):
        LQDTransform().forward(np.array([0.0, 1.0, 1.0, 2.0]), u)
    with pytest.raises(ValueError, match="last axis of the input must match `u`"):
        LQDTransform().forward(np.arange(5.0), u)
    with pytest.raises(ValueError, match="NaN"):
        QuantileTransform().inverse(np.array([0.0, np.nan, 1.0, 2.0]), u)


def test_location_weight_shifts_the_fpca_towards_shape():
    # distributions that differ by a large shift (first) and by spread (second): a small location weight
    # lets the spread component lead
    from neurips25.sliced_wasserstein import SlicedWassersteinFPCA

    rng = np.random.default_rng(0)
    X = [rng.normal(10 * a, np.exp(b), size=(300, 2)) for a, b in rng.uniform(-1, 1, size=(30, 2))]
    kw = dict(n_components=2, n_directions=8, n_quantiles=21)
    default = SlicedWassersteinFPCA(**kw).fit(X)
    shape = SlicedWassersteinFPCA(slice_transform=LQDTransform(location_weight=1e-4), **kw).fit(X)
    spread = np.array([np.log(x.std()) for x in X])
    assert abs(np.corrcoef(default.transform(X)[:, 0], spread)[0, 1]) < 0.5
    assert abs(np.corrcoef(shape.transform(X)[:, 0], spread)[0, 1]) > 0.95
    assert LQDTransform(2.0).coordinate_weights(quantile_levels(3))[0] == 2.0
    with pytest.raises(ValueError, match="`location_weight` must be 'auto' or a positive float"):
        LQDTransform(0.0)
    with pytest.raises(ValueError, match="`location_weight` must be 'auto' or a positive float"):
        LQDTransform("unit")
