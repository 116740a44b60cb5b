"""The bounds as pure functions: closed forms on hand inputs, limits, monotonicity, and bad input."""

import math

import numpy as np
import pytest

from neurips25.rank_bounds import (
    DataStats,
    LayerSpectrum,
    bartlett_spectral_bound,
    exact_rank_dudley_bound,
    neyshabur_pacbayes_bound,
    param_count_bound,
    path_norm_bound,
    schatten_rank_bound,
)


def spectrum(sv, d_in, d_out, l21=1.0):
    return LayerSpectrum(np.asarray(sv, float), d_in, d_out, d_in * d_out, l21)


@pytest.fixture
def data():
    return DataStats(n=2000, B=3.0, X_frob=100.0, gamma=0.5, empirical_risk=0.01, n_classes=4)


def low_and_full(width=64, rank=2):
    """Two 3-layer nets with equal spectral norms: one with rank-`rank` hidden weights, one full rank."""
    low = [
        spectrum([2.0] * rank, 10, width),
        spectrum([2.0] * rank, width, width),
        spectrum([2.0] * 4, width, 4),
    ]
    full = [
        spectrum(np.linspace(2, 1, 10), 10, width),
        spectrum(np.linspace(2, 1, width), width, width),
        spectrum([2.0] * 4, width, 4),
    ]
    return low, full


def test_schatten_prefers_low_rank_and_beats_parameter_counting_there(data):
    low, full = low_and_full()
    s_low, s_full = schatten_rank_bound(low, data), schatten_rank_bound(full, data)
    assert s_low.value < s_full.value
    assert s_low.value < param_count_bound(low, data).value
    # parameter counting does not see rank at all
    assert param_count_bound(low, data).value == pytest.approx(param_count_bound(full, data).value)
    assert exact_rank_dudley_bound(low, data).value < exact_rank_dudley_bound(full, data).value


def test_small_p_complexity_tends_to_sum_of_D_times_rank(data):
    low, _ = low_and_full(width=32, rank=3)
    res = schatten_rank_bound(low, data, p=1e-3)
    expected = (11 + 32 + 1) * 3 + (32 + 32 + 1) * 3 + (32 + 4 + 1) * 4  # sum_l D_l rank_l
    assert res.terms["sum_D_rp"] == pytest.approx(expected, rel=1e-2)


def test_schatten_grows_like_sqrt_width_for_flat_rank(data):
    # fixed rank, growing width: log-log slope of the complexity term is about 1/2 (W r, not W^2)
    vals = []
    widths = [128, 256, 512, 1024]
    for w in widths:
        low, _ = low_and_full(width=w, rank=3)
        vals.append(math.log10(schatten_rank_bound(low, data, p=0.1).terms["rad"]))
        params = [
            math.log10(param_count_bound(low_and_full(width=v, rank=3)[0], data).terms["rad"]) for v in widths
        ]
    slope = np.polyfit(np.log10(widths), vals, 1)[0]
    slope_param = np.polyfit(np.log10(widths), params, 1)[0]
    assert 0.45 < slope < 0.6 and 0.95 < slope_param < 1.1


def test_best_over_p_pays_for_the_grid_and_is_the_min(data):
    low, _ = low_and_full()
    best = schatten_rank_bound(low, data, p="best", include_exact=False)
    single = schatten_rank_bound(low, data, p=best.terms["p"])
    assert best.value > single.value  # log|grid| more in the union bound
    assert best.value == pytest.approx(min(best.terms["per_p"].values()))


def test_reported_bound_is_the_better_candidate_priced_in_the_union_bound(data):
    # issue 34: the reported Schatten bound is min(best-over-p, exact count), paying log(|grid| + 1)
    low, full = low_and_full()
    for spec in (low, full):
        rep = schatten_rank_bound(spec, data)
        only_p = schatten_rank_bound(spec, data, include_exact=False)
        exact = exact_rank_dudley_bound(spec, data)
        cands = list(rep.terms["per_p"].values()) + [rep.terms["exact_count_value"]]
        assert rep.value == pytest.approx(min(cands))
        # each candidate pays more than it would alone: log(7) > log(6) for the grid, log(7) > 0 for exact
        assert rep.terms["exact_count_value"] > exact.value
        assert min(rep.terms["per_p"].values()) > only_p.value
        assert rep.terms["source"] in {f"schatten_p{q:g}" for q in (0.1, 0.25, 0.5, 0.75, 1, 1.5)} | {"exact_count"}


def test_exact_rank_dudley_matches_a_loop_transcription(data):
    # one layer, one allocation: log N(eps) = k D log(18 sqrt(k) s / eta), eta = gamma eps s / (sqrt2 B s)
    spec = [spectrum([2.0, 0.5, 0.01], 3, 3)]
    res = exact_rank_dudley_bound(spec, data, n_eps=50)
    eps = np.geomspace(1 / data.n, 1, 50)
    logN = []
    for e in eps:
        eta = data.gamma * e / (math.sqrt(2) * data.B) * 2.0 / 2.0
        k = sum(s > eta / 2 for s in (2.0, 0.5, 0.01))
        logN.append(k * 7 * math.log(18 * math.sqrt(k) * 2.0 / eta) if k else 0.0)
    best = min(
        4 * eps[i]
        + 12
        / math.sqrt(data.n)
        * sum(math.sqrt(max(logN[j], 0)) * (eps[j + 1] - eps[j]) for j in range(i, 49))
        for i in range(49)
        if eps[i] <= 1 / math.sqrt(data.n)
    )
    assert res.terms["rad"] == pytest.approx(best, rel=1e-9)


def test_pacbayes_grows_with_depth_product(data):
    one = [spectrum([2.0, 1.0], 3, 5), spectrum([1.0], 5, 4)]
    two = [spectrum([4.0, 2.0], 3, 5), spectrum([1.0], 5, 4)]
    assert neyshabur_pacbayes_bound(two, data).value > neyshabur_pacbayes_bound(one, data).value


@pytest.mark.parametrize("p", [0, -0.5, 2.0, 3.0])
def test_p_outside_open_interval_is_rejected(data, p):
    with pytest.raises(ValueError, match=r"`p` must lie in \(0, 2\)"):
        schatten_rank_bound([spectrum([1.0], 2, 2)], data, p=p)


def test_bad_inputs_name_the_argument(data):
    with pytest.raises(ValueError, match="`p` must be a number in"):
        schatten_rank_bound([spectrum([1.0], 2, 2)], data, p="smallest")
    with pytest.raises(ValueError, match="`spectra` must be a non-empty list"):
        param_count_bound([], data)
    with pytest.raises(ValueError, match="`delta` must lie in"):
        bartlett_spectral_bound([spectrum([1.0], 2, 2)], data, delta=1.5)
    with pytest.raises(ValueError, match="`kind` must be"):
        param_count_bound([spectrum([1.0], 2, 2)], data, kind="rademacher")
    with pytest.raises(ValueError, match="`sv` must be a non-empty 1-D array of finite"):
        LayerSpectrum(np.array([1.0, np.inf]), 2, 2, 4, 1.0)
    with pytest.raises(ValueError, match="`gamma` must be a finite number > 0"):
        DataStats(n=10, B=1.0, X_frob=1.0, gamma=0.0, empirical_risk=0.0, n_classes=2)
    with pytest.raises(ValueError, match="`path_norm` must be a finite number > 0"):
        path_norm_bound(float("nan"), 2, data)
