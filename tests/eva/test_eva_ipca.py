"""IncrementalPCA against the exact PCA of all rows (numpy oracle) and captured_variance."""

import numpy as np
import pytest
import torch

from neurips25.eva import IncrementalPCA, captured_variance


def _data(seed=0, n=600, d=8):
    g = torch.Generator().manual_seed(seed)
    scales = torch.tensor([6.0, 4.0, 2.5, 1.5, 1.0, 0.5, 0.3, 0.1])[:d]
    return torch.randn(n, d, generator=g) * scales + torch.arange(d) * 3.0


@pytest.mark.parametrize("svd", ["full", "lowrank"])
def test_matches_exact_pca_when_keeping_all_components(svd):
    # with k = d nothing is truncated, so the streamed result equals the batch PCA of all rows
    x = _data()
    pca = IncrementalPCA(8, svd=svd)
    for chunk in x.split(75):
        pca.partial_fit(chunk)
    xn = x.double().numpy()
    cov = np.cov(xn, rowvar=False, bias=True)
    evals, evecs = np.linalg.eigh(cov)
    evals, evecs = evals[::-1], evecs[:, ::-1]
    np.testing.assert_allclose(pca.mean_.numpy(), xn.mean(0), atol=1e-9)
    np.testing.assert_allclose(pca.var_.numpy(), xn.var(0), rtol=1e-9)
    np.testing.assert_allclose(pca.explained_variance_ratio_.numpy(), evals / evals.sum(), rtol=1e-6, atol=1e-9)
    cos = np.abs(np.sum(pca.components_.numpy() * evecs.T, axis=1))
    assert cos.min() > 1 - 1e-6


def test_truncated_top_directions_and_sign():
    # planted spectrum: the top-2 directions are the first two axes; the sign rule makes them +e0, +e1
    pca = IncrementalPCA(2, svd="full")
    for chunk in _data(1).split(100):
        pca.partial_fit(chunk)
    assert torch.allclose(pca.components_.abs().argmax(1), torch.tensor([0, 1]))
    assert (pca.components_[torch.arange(2), pca.components_.abs().argmax(1)] > 0).all()


def test_bad_inputs():
    with pytest.raises(ValueError, match="`n_components` must be a positive int"):
        IncrementalPCA(0)
    with pytest.raises(ValueError, match="`svd` must be"):
        IncrementalPCA(2, svd="qr")
    with pytest.raises(ValueError, match="at least n_components=4 rows"):
        IncrementalPCA(4).partial_fit(torch.randn(3, 8))
    with pytest.raises(ValueError, match="exceeds the feature dimension"):
        IncrementalPCA(9).partial_fit(torch.randn(20, 8))


def test_captured_variance_oracle_and_optimality():
    x = _data(2)
    e = torch.eye(8)
    total = x.double().var(0, unbiased=False).sum()
    # axis-aligned rows capture exactly those axes' variance share; the PCA subspace captures the most
    assert captured_variance(e[:2], x) == pytest.approx(float(x.double().var(0, unbiased=False)[:2].sum() / total))
    pca = IncrementalPCA(2, svd="full").partial_fit(x)
    rand = torch.linalg.qr(torch.randn(8, 2, generator=torch.Generator().manual_seed(0)))[0].T
    assert captured_variance(pca.components_, x) >= captured_variance(rand, x)
    assert captured_variance(3.0 * e[:2], x) == pytest.approx(captured_variance(e[:2], x))  # scale-free
    with pytest.raises(ValueError, match="must share d"):
        captured_variance(e[:2], torch.randn(5, 7))
