"""The shared Student-t interval: oracle values, one-sided bounds, coverage, bad input."""

import math

import numpy as np
import pytest

from neurips25.repro.intervals import mean_interval


def test_three_seeds_use_the_student_quantile_not_the_normal():
    iv = mean_interval([1.0, 2.0, 3.0])
    # s = 1, k = 3, t_{0.975, 2} = 4.302653
    assert iv.mean == 2.0 and iv.sd == 1.0 and iv.n == 3
    assert iv.half == pytest.approx(4.302653 / math.sqrt(3), rel=1e-6)
    assert (iv.lo, iv.hi) == pytest.approx((2.0 - iv.half, 2.0 + iv.half))


def test_one_sided_bound_is_the_two_sided_interval_at_twice_the_tail():
    x = np.random.default_rng(0).normal(size=7)
    assert mean_interval(x, 0.95, one_sided=True).half == pytest.approx(mean_interval(x, 0.90).half)


def test_a_single_value_has_no_interval():
    iv = mean_interval([0.3])
    assert iv.mean == 0.3 and math.isnan(iv.half) and math.isnan(iv.lo) and iv.n == 1


def test_coverage_is_near_the_level_for_small_samples():
    rng = np.random.default_rng(1)
    hits = 0
    for _ in range(4000):
        iv = mean_interval(rng.normal(5.0, 2.0, size=3))
        hits += iv.lo <= 5.0 <= iv.hi
    assert 0.93 < hits / 4000 < 0.97  # a normal 1.96 interval covers only ~0.80 at k = 3


def test_numpy_scalars_are_accepted_as_level():
    assert mean_interval([1.0, 2.0], np.float64(0.9)).level == 0.9


@pytest.mark.parametrize("bad, match", [([], "non-empty 1-D"), ([[1.0, 2.0]], "non-empty 1-D"),
                                        ([1.0, float("nan")], "finite")])
def test_bad_values(bad, match):
    with pytest.raises(ValueError, match=match):
        mean_interval(bad)


@pytest.mark.parametrize("level", [0.0, 1.0, 95, True, "0.95"])
def test_bad_level(level):
    with pytest.raises(ValueError, match="level must be a number in"):
        mean_interval([1.0, 2.0], level)
