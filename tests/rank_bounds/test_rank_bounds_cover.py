"""The Schatten-p closed form against a numeric cover, the cap k <= min(d_l, d_{l-1}), and the full-rank
control (issue 34)."""

import math

import numpy as np
import pytest
from scipy.integrate import quad

from neurips25.rank_bounds import (
    DataStats,
    LayerSpectrum,
    exact_rank_dudley_bound,
    full_rank_dudley_bound,
    schatten_rank_bound,
)
from neurips25.rank_bounds import bounds as B


@pytest.fixture
def data():
    return DataStats(n=2000, B=3.0, X_frob=100.0, gamma=0.5, empirical_risk=0.0, n_classes=4)


def net(width=64, decay=0.05):
    """Three layers whose hidden spectra decay geometrically (like weight-decayed nets)."""
    sv = 2.0 * np.exp(-decay * np.arange(width))
    return [
        LayerSpectrum(sv[:10], 10, width, 10 * width, 1.0),
        LayerSpectrum(sv, width, width, width * width, 1.0),
        LayerSpectrum(np.array([2.0, 1.5, 1.0, 0.5]), width, 4, 4 * width, 1.0),
    ]


@pytest.mark.parametrize("p", [0.25, 0.5, 1.0])
def test_closed_form_dudley_integral_matches_quadrature(data, p):
    # the analytic int_alpha^1 eps^(-p/2) = (1 - alpha^(1-p/2)) / (1 - p/2), checked by scipy quad
    cf = B._schatten_closed_form(net(), data, p)
    C = 10 ** cf["log10_C"]
    integral, _ = quad(lambda e: math.sqrt(cf["Lambda"] * C * e ** (-p)), cf["alpha"], 1.0, limit=200)
    assert cf["rad"] == pytest.approx(4 * cf["alpha"] + 12 / math.sqrt(data.n) * integral, rel=1e-7)


@pytest.mark.parametrize("p", [0.1, 0.5, 1.0])
def test_numeric_cover_never_exceeds_the_closed_form(data, p):
    # pointwise in eps: exact counts <= capped Schatten-p counts <= the relaxed closed form Lambda C eps^-p
    # (the closed form charges (2M/eta)^p ranks, each with the log of the capped rank sqrt(m_l))
    spec = net()
    cf = B._schatten_closed_form(spec, data, p)
    A = cf["allocation"][None, :]
    eps, log_exact, _ = B._count_cover(spec, data, B._exact_counts, A, 120)
    _, log_sp, _ = B._count_cover(spec, data, B._schatten_counts(p, cap=True), A, 120)
    # closed form, transcribed here: Lambda(eps) = max_l log(18 sqrt(m_l) s_l / eta_l), C eps^-p
    s = np.array([l.spectral for l in spec])
    m = np.array([min(l.in_dim, l.out_dim) for l in spec])
    eta = cf["allocation"][None, :] * data.gamma * eps[:, None] * s / (math.sqrt(2) * data.B * np.prod(s))
    lam = np.max(np.log(18 * np.sqrt(m) * s / eta), axis=1)
    closed = lam * 10 ** cf["log10_C"] * eps ** (-p)
    assert np.all(log_exact <= log_sp * (1 + 1e-12))
    assert np.all(log_sp <= closed * (1 + 1e-9))
    # at small p the relaxation is close to the cover (within 30x at the Dudley floor 1/sqrt(n)); at larger
    # p the uncapped closed form charges far more ranks than the layers have: the cap is what matters
    i = np.searchsorted(eps, 1 / math.sqrt(data.n))
    if p < 0.5:
        assert closed[i] / log_sp[i] < 30
    else:
        assert closed[i] / log_sp[i] > 10


def test_cap_at_min_dims_binds_for_a_flat_full_rank_spectrum(data):
    # all singular values equal: r_p = 64 and (2 M / eta)^p = 64 (2 s / eta)^p > 64 = min(d_l, d_{l-1})
    flat = [LayerSpectrum(np.ones(64), 64, 64, 64 * 64, 1.0), LayerSpectrum(np.ones(4), 64, 4, 256, 1.0)]
    p = 0.5
    rad = B._schatten_p_rad(flat, data, p)
    assert rad["capped_rad"] < rad["closed_form_rad"]
    assert rad["evaluation"] == "capped numeric cover"
    counts = B._schatten_counts(p, cap=True)(0, flat[0], np.log(np.geomspace(1e-6, 1.0, 30)))
    assert counts.max() == 64
    uncapped = B._schatten_counts(p, cap=False)(0, flat[0], np.log(np.geomspace(1e-6, 1.0, 30)))
    assert uncapped.max() > 64


def test_full_rank_control_is_never_below_the_exact_count(data):
    for decay in (0.0, 0.05, 0.5):
        spec = net(decay=decay)
        exact, full = exact_rank_dudley_bound(spec, data), full_rank_dudley_bound(spec, data)
        assert full.value >= exact.value - 1e-12
    # the control sees no rank: low-rank and full-rank nets with the same dimensions and spectral norms
    low = net(decay=3.0)
    assert exact_rank_dudley_bound(low, data).value < 0.5 * full_rank_dudley_bound(low, data).value
    # (only the candidate allocations depend on the spectrum)
    assert full_rank_dudley_bound(low, data).value == pytest.approx(
        full_rank_dudley_bound(net(decay=0.0), data).value, rel=0.05
    )


def test_reported_bound_takes_the_exact_count_when_the_spectrum_is_sharp(data):
    # a sharply low-rank net: exact counts beat the p-relaxation, and the report says so
    res = schatten_rank_bound(net(decay=3.0), data)
    assert res.terms["source"] == "exact_count"
    assert res.value == pytest.approx(res.terms["exact_count_value"])
