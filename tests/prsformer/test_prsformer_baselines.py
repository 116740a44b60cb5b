"""Baselines: logistic solver vs sklearn, LDpred-inf vs ridge, Gibbs vs inf limit, tuning."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression, Ridge

from neurips25.prsformer import (
    fit_ldpred_grid,
    fit_penalized_logistic,
    gwas_sumstats,
    ld_blocks,
    ldpred_gibbs,
    ldpred_inf,
    logistic_path,
)


@pytest.fixture(scope="module")
def toy():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 12))
    y = (X[:, 0] - 0.5 * X[:, 3] + rng.standard_normal(300) > 1.0).astype(float)
    return X, y


@pytest.mark.parametrize("ratio,solver", [(0.0, "lbfgs"), (0.5, "saga"), (1.0, "saga")])
def test_logistic_path_matches_sklearn(toy, ratio, solver):
    X, y = toy
    lam = 0.02
    W, b = logistic_path(X, y[:, None], [lam], ratio, n_iter=3000, n_sweeps=3, tol=1e-12)
    ref = LogisticRegression(C=1 / (lam * len(y)), l1_ratio=ratio, solver=solver, tol=1e-12,
                             max_iter=100_000).fit(X, y)
    assert np.abs(W[:, 0, 0] - ref.coef_[0]).max() < 1e-4
    assert b[0, 0] == pytest.approx(ref.intercept_[0], abs=1e-4)


def test_ldpred_inf_is_ridge():
    # with R and beta_hat from the same standardised data, LDpred-inf is ridge with alpha = M / h2
    rng = np.random.default_rng(1)
    g = rng.integers(0, 3, size=(400, 10))
    y = g[:, 2] + rng.standard_normal(400)
    beta_hat, n, freq = gwas_sumstats(g, y[:, None].round() > 0)
    blocks = ld_blocks(g, block_size=10, freq=freq)
    z, _ = (g - g.mean(0)) / g.std(0), None
    ys = ((y.round() > 0) - (y.round() > 0).mean()) / (y.round() > 0).std()
    ridge = Ridge(alpha=10 / 0.3, fit_intercept=False).fit(z, ys).coef_
    assert np.allclose(ldpred_inf(beta_hat[:, 0], blocks, n, 0.3), ridge, atol=1e-8)


def test_gibbs_with_p1_tends_to_ldpred_inf():
    rng = np.random.default_rng(2)
    g = rng.integers(0, 3, size=(500, 20))
    y = (g[:, 4] + g[:, 5] + rng.standard_normal(500) > 2.5).astype(float)
    beta_hat, n, freq = gwas_sumstats(g, y)
    blocks = ld_blocks(g, block_size=8, freq=freq)
    inf = ldpred_inf(beta_hat[:, 0], blocks, n, 0.5)
    gibbs = ldpred_gibbs(beta_hat[:, [0]], blocks, n, 0.5, 1.0, n_iter=400, burn_in=50, seed=0)[:, 0]
    assert np.corrcoef(inf, gibbs)[0, 1] > 0.99
    # a sparse prior shrinks null SNPs harder than the infinitesimal one
    sparse = ldpred_gibbs(beta_hat[:, [0]], blocks, n, 0.5, 0.05, n_iter=200, burn_in=50, seed=0)[:, 0]
    null = np.setdiff1d(np.arange(20), [4, 5])
    assert np.abs(sparse[null]).mean() < np.abs(inf[null]).mean()


def test_tuned_l1_finds_planted_snps():
    rng = np.random.default_rng(3)
    g = rng.integers(0, 3, size=(1200, 30)).astype(np.int8)
    y = (1.5 * g[:, 7] - 1.5 * g[:, 21] + rng.standard_normal(1200) > 1.5).astype(float)[:, None]
    score = fit_penalized_logistic(g[:800], y[:800], g[800:], y[800:], "l1")
    assert set(np.argsort(-np.abs(score.weights[:, 0]))[:2]) == {7, 21}
    ldp = fit_ldpred_grid(g[:800], y[:800], g[800:], y[800:], block_size=10, n_iter=30, burn_in=10)
    assert set(np.argsort(-np.abs(ldp.weights[:, 0]))[:2]) == {7, 21}


def test_bad_arguments(toy):
    X, y = toy
    g = np.zeros((10, 3), dtype=np.int8)
    with pytest.raises(ValueError, match="penalty"):
        fit_penalized_logistic(g, np.zeros(10), g, np.zeros(10), "l3")
    with pytest.raises(ValueError, match="NaN"):
        fit_penalized_logistic(g, np.full(10, np.nan), g, np.zeros(10))
    with pytest.raises(ValueError, match="cover"):
        ldpred_inf(np.zeros(3), [(np.array([0, 1]), np.eye(2))], n=10, h2=0.5)
    with pytest.raises(ValueError, match="burn_in"):
        ldpred_gibbs(np.zeros((2, 1)), [(np.array([0, 1]), np.eye(2))], 10, 0.5, 0.1, n_iter=5, burn_in=5)
