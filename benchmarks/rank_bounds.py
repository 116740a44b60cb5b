"""Benchmark: GeneralizationReport against the SVDs it cannot avoid, and against per-bound recomputation.

Targets (issue 10): on a 5-layer width-1024 MLP the report (all ten bounds, issue 34) takes <= 1.2x the time of the
layer SVDs alone, because the spectra are computed once and shared. The anchor is the naive design in which
each bound computes its own spectra (as per-bound implementations do). A second row times the FFT
conv-operator spectrum against the SVD of the dense operator matrix. Times are medians of repeats in this
one run; only the ratios are meaningful on a shared machine. Single-threaded torch / BLAS (see
reproduce.py for why).

Run: python benchmarks/rank_bounds.py
"""

from __future__ import annotations

import statistics
import time

import numpy as np
import torch
from threadpoolctl import threadpool_limits

from neurips25.rank_bounds import (
    BOUND_NAMES,
    GeneralizationReport,
    conv_operator_singular_values,
    extract_layers,
)


def median_time(fn, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def mlp(width: int = 1024, depth: int = 5, d_in: int = 64, n_out: int = 10):
    dims = [d_in] + [width] * (depth - 1) + [n_out]
    mods = []
    for i in range(depth):
        mods += [torch.nn.Linear(dims[i], dims[i + 1])] + ([torch.nn.ReLU()] if i < depth - 1 else [])
    return torch.nn.Sequential(*mods)


def main() -> None:
    torch.manual_seed(0)
    net = mlp()
    X = torch.randn(1400, 64)
    with torch.no_grad():
        y = net(X).argmax(1)
    layers = extract_layers(net, X[:8])

    def svds_alone():
        # exactly the matrices the report decomposes (biases folded in), nothing else
        for i, l in enumerate(layers):
            l.operator_singular_values(augment=True, last=i == len(layers) - 1)

    def report():
        GeneralizationReport(net, X, y, margin=0.05).compute()

    def naive_per_bound():
        # anchor: each bound extracts and decomposes the layers itself
        for name in BOUND_NAMES:
            GeneralizationReport(net, X, y, margin=0.05).compute([name])

    t_svd, t_rep, t_naive = median_time(svds_alone), median_time(report), median_time(naive_per_bound, 1)

    rng = np.random.default_rng(0)
    K = rng.standard_normal((8, 8, 3, 3))
    hw = (12, 12)
    n_in = 8 * hw[0] * hw[1]
    basis = torch.eye(n_in, dtype=torch.float64).reshape(n_in, 8, *hw)
    x = torch.nn.functional.pad(basis, (1, 1, 1, 1), mode="circular")
    dense = torch.nn.functional.conv2d(x, torch.from_numpy(K)).reshape(n_in, -1).T.numpy()
    t_fft = median_time(lambda: conv_operator_singular_values(K, hw), 5)
    t_dense = median_time(lambda: np.linalg.svd(dense, compute_uv=False), 3)
    assert np.allclose(
        conv_operator_singular_values(K, hw), np.linalg.svd(dense, compute_uv=False), atol=1e-8
    )

    print("rank_bounds benchmark (5-layer width-1024 MLP, n = 1400; conv 8->8 channels, 3x3, 12x12 grid)")
    print(f"  layer SVDs alone            {t_svd:8.3f} s")
    print(
        f"  full report ({len(BOUND_NAMES)} bounds)     {t_rep:8.3f} s   ratio report / SVDs = {t_rep / t_svd:.2f}  "
        f"(target <= 1.2)"
    )
    print(f"  naive per-bound spectra     {t_naive:8.3f} s   ratio naive / report = {t_naive / t_rep:.2f}")
    print(f"  conv FFT spectrum           {t_fft:8.4f} s")
    print(f"  conv dense-operator SVD     {t_dense:8.4f} s   ratio dense / FFT = {t_dense / t_fft:.1f}")


if __name__ == "__main__":
    with threadpool_limits(1):
        torch.set_num_threads(1)
        main()
