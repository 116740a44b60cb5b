"""Simulated cohorts: msprime genotypes, planted phenotypes, dataset validation."""

import numpy as np
import pytest

from neurips25.prsformer import GenotypeDataset, simulate_cohort, simulate_phenotypes


@pytest.fixture(scope="module")
def cohort():
    return simulate_cohort((300, 100), n_snps=64, n_tasks=3, chromosome_length=2e5, window=4,
                           prevalence=(0.1, 0.3), missing_rate=0.01, seed=3)


def test_shapes_values_and_ancestry(cohort):
    assert cohort.dosages.shape == (400, 64) and cohort.dosages.dtype == np.int8
    assert set(np.unique(cohort.dosages)) <= {-1, 0, 1, 2}
    assert (cohort.dosages == -1).mean() == pytest.approx(0.01, abs=0.005)
    assert np.bincount(cohort.ancestry).tolist() == [300, 100]
    assert cohort.labels.shape == (400, 3) and cohort.covariates.shape == (400, 2)
    # PC1 separates the two ancestries
    assert abs(np.corrcoef(cohort.covariates[:, 1], cohort.ancestry)[0, 1]) > 0.8


def test_planted_architecture(cohort):
    prev = cohort.labels.mean(0)
    assert np.allclose(prev, cohort.truth["prevalence"], atol=0.01)
    pairs = cohort.truth["pairs"]
    assert len(pairs) > 0
    gap = pairs[:, 1] - pairs[:, 0]
    assert ((gap >= 1) & (gap <= 16)).all() and (gap <= 4).any() and (gap > 4).any()
    assert (cohort.chromosome[pairs[:, 0]] == cohort.chromosome[pairs[:, 1]]).all()
    # half of the genetic variance is epistatic, as requested
    epi, add = cohort.truth["epistatic"].var(0), cohort.truth["additive"].var(0)
    assert np.allclose(epi / (epi + add), 0.5, atol=1e-6)


def test_same_seed_same_cohort():
    a = simulate_cohort(50, n_snps=16, n_tasks=1, chromosome_length=1e5, seed=1)
    b = simulate_cohort(50, n_snps=16, n_tasks=1, chromosome_length=1e5, seed=1)
    assert np.array_equal(a.dosages, b.dosages) and np.array_equal(a.labels, b.labels)


def test_additive_scenario_has_no_pairs():
    g = np.random.default_rng(0).integers(0, 3, size=(200, 20))
    labels, truth = simulate_phenotypes(g, n_tasks=2, epistasis_frac=0.0, prevalence=0.2)
    assert len(truth["pairs"]) == 0 and np.abs(truth["epistatic"]).max() == 0
    assert labels.sum(0).tolist() == [40, 40]  # exactly the top 20% of 200


def test_bad_input():
    with pytest.raises(ValueError, match="NaN phenotypes"):
        GenotypeDataset(np.zeros((3, 4)), np.array([0.0, np.nan, 1.0]))
    with pytest.raises(ValueError, match="dosages"):
        GenotypeDataset(np.full((3, 4), 3), np.zeros(3))
    with pytest.raises(ValueError, match="prevalence"):
        simulate_phenotypes(np.zeros((5, 4), dtype=int), n_tasks=3, prevalence=[0.1, 1.5, 0.2])
    with pytest.raises(ValueError, match="h2"):
        simulate_phenotypes(np.zeros((5, 4), dtype=int), h2=1.2)
