"""v2: residualised pair architecture, oracle pair model, per-task checkpoints, bad inputs."""

import numpy as np
import pytest
import torch

from neurips25.prsformer import (
    GenotypeDataset,
    LinearDosageModel,
    PRSformer,
    evaluate,
    fit,
    fit_ldpred_grid,
    fit_pair_ridge,
    fit_penalized_logistic,
    neighborhood_attention,
    simulate_phenotypes,
    standardize_genotypes,
    task_metrics,
)


@pytest.fixture(scope="module")
def genotypes():
    # correlated neighbours (a crude LD: an AR(1) latent per haplotype, thresholded at allele
    # frequency 0.2), so raw products of neighbours carry a linear part
    rng = np.random.default_rng(0)
    lat = np.zeros((2, 3000, 40))
    lat[..., 0] = rng.standard_normal((2, 3000))
    for j in range(1, 40):
        lat[..., j] = 0.8 * lat[..., j - 1] + 0.6 * rng.standard_normal((2, 3000))
    hap = lat > 0.84  # P(N(0, 1) > 0.84) = 0.2
    return hap[0].astype(np.int8) + hap[1].astype(np.int8)


def test_pair_term_is_purely_non_linear(genotypes):
    y, truth = simulate_phenotypes(genotypes, n_tasks=2, h2=0.5, h2_nonlinear=0.2, pairs_per_snp=0.5,
                                   window=3, cross_frac=0.25, cross_window=10, seed=1)
    z, _ = standardize_genotypes(genotypes)
    X = np.hstack([np.ones((len(z), 1)), z])
    e = truth["epistatic"]
    fitted = X @ np.linalg.lstsq(X, e, rcond=None)[0]
    assert (fitted.var(0) / e.var(0)).max() < 1e-8  # nothing left for a linear model
    # v3: nothing left for a dosage + dominance model either (carrier indicators beside the dosages)
    Xd = np.hstack([X, (genotypes >= 1).astype(float)])
    fitted = Xd @ np.linalg.lstsq(Xd, e, rcond=None)[0]
    assert (fitted.var(0) / e.var(0)).max() < 1e-8
    assert np.allclose(e.var(0), 0.2, rtol=1e-6) and np.allclose(truth["additive"].var(0), 0.3, rtol=1e-6)
    assert truth["h2_nonlinear"] == pytest.approx(0.2)
    gaps = truth["pairs"][:, 1] - truth["pairs"][:, 0]
    assert len(truth["pairs"]) == 20 and len(np.unique(truth["pairs"], axis=0)) == 20
    assert ((gaps >= 1) & (gaps <= 10)).all()
    assert (gaps <= 3).sum() == 15 and (gaps > 3).sum() == 5  # within and across blocks


def test_raw_products_carry_a_linear_part(genotypes):
    # the v1 design (no residualisation): a share of the "epistatic" variance was linear
    _, raw = simulate_phenotypes(genotypes, n_tasks=2, residualize=False, pairs_per_snp=0.5, window=2,
                                 seed=1)
    z, _ = standardize_genotypes(genotypes)
    X = np.hstack([np.ones((len(z), 1)), z])
    e = raw["epistatic"]
    share = (X @ np.linalg.lstsq(X, e, rcond=None)[0]).var(0) / e.var(0)
    assert share.min() > 0.1
    # the reported share is over every per-SNP column (dosages and carriers): at least the linear share
    Xd = np.hstack([X, (genotypes >= 1).astype(float)])
    share_d = (Xd @ np.linalg.lstsq(Xd, e, rcond=None)[0]).var(0) / e.var(0)
    assert np.allclose(share_d, raw["linear_share_raw"], atol=1e-6) and (share_d >= share - 1e-9).all()


def test_oracle_pair_model_beats_ridge_and_ridge_equals_no_pairs(genotypes):
    y, truth = simulate_phenotypes(genotypes, n_tasks=1, h2=0.6, h2_nonlinear=0.4, pairs_per_snp=0.1,
                                   prevalence=0.3, seed=2)
    tr, va, te = slice(0, 2000), slice(2000, 2500), slice(2500, 3000)
    g = genotypes
    oracle = fit_pair_ridge(g[tr], y[tr], g[va], y[va], truth["pairs"])
    ridge = fit_pair_ridge(g[tr], y[tr], g[va], y[va], np.zeros((0, 2), int))
    a_or = task_metrics(y[te], oracle.predict(g[te]))["mean_auroc"]
    a_ri = task_metrics(y[te], ridge.predict(g[te]))["mean_auroc"]
    assert a_or > a_ri + 0.05
    l2 = fit_penalized_logistic(g[tr], y[tr], g[va], y[va], "l2")
    assert np.allclose(ridge.predict(g[te]), l2.predict(g[te]), atol=1e-8)


def test_per_task_checkpoints_pick_each_tasks_best_epoch():
    rng = np.random.default_rng(3)
    g = rng.integers(0, 3, size=(400, 16)).astype(np.int8)
    y = np.stack([(g[:, 0] + rng.standard_normal(400) > 1.5), (g[:, 5] + rng.standard_normal(400) > 1.5)],
                 1).astype(np.float32)
    tr, va = GenotypeDataset(g[:300], y[:300]), GenotypeDataset(g[300:], y[300:])
    torch.manual_seed(0)
    res = fit(LinearDosageModel(16, 2), tr, va, epochs=5, lr=0.05, patience=5, checkpoint="per_task")
    per_epoch = np.array([h["val_auroc_per_task"] for h in res.history])
    assert res.best_epoch_per_task == per_epoch.argmax(0).tolist()
    got = evaluate(res.per_task, va)["auroc"]
    assert np.allclose(got, per_epoch.max(0))
    with pytest.raises(ValueError, match="checkpoint"):
        fit(LinearDosageModel(16, 2), tr, va, checkpoint="best")


def test_fit_rejects_validation_without_cases():
    g = np.random.default_rng(0).integers(0, 3, size=(50, 8))
    y = np.zeros((50, 1))
    y[:10] = 1
    with pytest.raises(ValueError, match="task 0 has 0 cases"):
        fit(LinearDosageModel(8, 1), GenotypeDataset(g, y), GenotypeDataset(g[10:], y[10:]), epochs=1)


def test_forward_rejects_nan_covariates():
    torch.manual_seed(0)
    m = PRSformer(16, 1, d_model=4, n_heads=1, d_ff=8, n_layers=1, kernel_size=3, dilations=1, n_covariates=2)
    cov = torch.zeros(3, 2)
    cov[1, 0] = float("nan")
    with pytest.raises(ValueError, match="covariates.*NaN"):
        m(torch.zeros(3, 16, dtype=torch.long), cov)


def test_attention_rejects_mixed_dtypes():
    q = torch.randn(1, 1, 16, 4)
    with pytest.raises(TypeError, match="one dtype.*float32.*float64"):
        neighborhood_attention(q, q.double(), q, kernel_size=3)


def test_baselines_validate_inputs():
    rng = np.random.default_rng(0)
    g = rng.integers(0, 3, size=(40, 6))
    y = (rng.random((40, 1)) < 0.4).astype(float)
    with pytest.raises(ValueError, match="train.*allele counts"):
        fit_penalized_logistic(np.where(g == 2, 3, g), y, g, y)
    with pytest.raises(ValueError, match="0/1"):
        fit_penalized_logistic(g, y + 1, g, y + 1)  # PLINK-style 1/2 coding
    with pytest.raises(ValueError, match="val labels of task 0"):
        fit_penalized_logistic(g, y, g, np.zeros_like(y))
    with pytest.raises(ValueError, match="train dosages have 6 SNPs but val dosages have 5"):
        fit_ldpred_grid(g, y, g[:, :5], y)
    with pytest.raises(ValueError, match="pairs"):
        fit_pair_ridge(g, y, g, y, np.array([[0, 9]]))
    # imputed dosages in [0, 2] and -1 (missing) are accepted
    imputed = g + rng.uniform(-0.2, 0.2, g.shape).clip(0, None) * (g < 2)
    imputed[0, 0] = -1
    fit_penalized_logistic(imputed, y, g, y, lambdas=[0.1])


def test_ldpred_with_covariates_uses_them():
    rng = np.random.default_rng(4)
    g = rng.integers(0, 3, size=(1200, 20)).astype(np.int8)
    sex = rng.integers(0, 2, size=(1200, 1)).astype(float)
    y = (g[:, 3] + 2.0 * sex[:, 0] + rng.standard_normal(1200) > 2.5).astype(float)[:, None]
    kw = dict(block_size=10, n_iter=20, burn_in=5, method="inf")
    plain = fit_ldpred_grid(g[:800], y[:800], g[800:1000], y[800:1000], **kw)
    cov = fit_ldpred_grid(g[:800], y[:800], g[800:1000], y[800:1000], train_covariates=sex[:800],
                          val_covariates=sex[800:1000], **kw)
    a_plain = task_metrics(y[1000:], plain.predict(g[1000:]))["mean_auroc"]
    a_cov = task_metrics(y[1000:], cov.predict(g[1000:], sex[1000:]))["mean_auroc"]
    assert a_cov > a_plain + 0.05 and cov.cov_weights[0, 0] > 1.0
    with pytest.raises(ValueError, match="covariates"):
        cov.predict(g[1000:])
