"""Indicators against closed forms on hand-sized inputs and against moocore's hypervolume."""

import numpy as np
import pytest

from neurips25.pref_diffusion import (
    hv,
    hv_percentile,
    igd,
    mean_pairwise_distance,
    normalize_objectives,
    spacing,
    spread,
)


def test_hv_hand_computed_2d_and_3d():
    # staircase of 3 points, reference (2, 2): union of [0,2]x[1,2], [0.5,2]x[0.5,2], [1,2]x[0,2]
    # = 2*1 + 1.5*0.5 + 1*0.5 = 3.25
    F = np.array([[0.0, 1.0], [0.5, 0.5], [1.0, 0.0]])
    assert hv(F, ref_factor=2.0) == pytest.approx(3.25)
    assert hv(np.array([[0.0, 0.0, 0.0]]), ref_factor=1.1) == pytest.approx(1.1**3)


def test_hv_matches_moocore_and_normalisation_rule():
    moocore = pytest.importorskip("moocore")
    rng = np.random.default_rng(0)
    F = rng.random((40, 3)) * [10, 100, 1] + [1, 2, 3]
    ideal, nadir = F.min(0), F.max(0)
    Fn = (F - ideal) / (nadir - ideal)
    assert hv(F, ideal, nadir, ref_factor=2.2) == pytest.approx(moocore.hypervolume(Fn, ref=np.full(3, 2.2)))


def test_hv_ignores_points_beyond_reference_and_empty_set():
    assert hv(np.array([[1.2, 0.0]]), ref_factor=1.1) == 0.0
    assert hv(np.zeros((0, 2))) == 0.0


def test_igd_closed_form():
    pf = np.array([[0.0, 1.0], [1.0, 0.0]])
    F = np.array([[0.0, 1.0]])
    assert igd(F, pf) == pytest.approx((0.0 + np.sqrt(2)) / 2)


def test_spread_spacing_mpd_closed_forms():
    even = np.column_stack([np.linspace(0, 1, 11), 1 - np.linspace(0, 1, 11)])
    assert spread(even) == pytest.approx(0.0, abs=1e-12)
    assert spacing(even) == pytest.approx(0.0, abs=1e-12)
    # the true front's extremes are reached, so the extreme term adds nothing
    assert spread(even, extremes=even) == pytest.approx(0.0, abs=1e-12)
    uneven = np.array([[0.0, 1.0], [0.1, 0.9], [1.0, 0.0]])
    assert spread(uneven) > 0.3
    sq = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    assert mean_pairwise_distance(sq) == pytest.approx((4 * 1 + 2 * np.sqrt(2)) / 6)


def test_hv_percentile_drops_the_best_points():
    F = np.column_stack([np.linspace(0, 1, 8), 1 - np.linspace(0, 1, 8)])
    full = hv(F)
    assert hv_percentile(F, 1.0) == pytest.approx(full)
    assert hv_percentile(F, 0.5) < full


def test_metric_bad_inputs():
    with pytest.raises(ValueError, match="`ref_factor` must be"):
        hv(np.zeros((2, 2)), ref_factor=-1)
    with pytest.raises(ValueError, match="pass both"):
        hv(np.zeros((2, 2)), ideal=np.zeros(2))
    with pytest.raises(ValueError, match="NaN or inf"):
        igd(np.array([[np.inf, 0.0]]), np.zeros((1, 2)))
    with pytest.raises(ValueError, match="same number of objectives"):
        igd(np.zeros((2, 2)), np.zeros((2, 3)))
    with pytest.raises(ValueError, match="must have shape"):
        normalize_objectives(np.zeros((2, 2)), np.zeros(3), np.ones(3))
    with pytest.raises(ValueError, match="`q` must be in"):
        hv_percentile(np.zeros((2, 2)), 0.0)
