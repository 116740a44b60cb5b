"""CTSketch benchmark: sketched contraction vs dense-tensor contraction vs enumeration of all worlds.

For the k-input sum of digits (k = 4, and k = 5 for the trend) and a batch of input distributions, time

* ``sketch``: the rank-2 tensor-train contraction (what CTSketch runs per example),
* ``dense``: mode-by-mode contraction with the materialised ``10^k`` tensor,
* ``enumeration``: probability of every one of the ``10^k`` worlds times the program's output (exact
  inference by enumeration),

and, as a second anchor, our TT-SVD against tensorly's ``tensor_train`` on the same tensor. All in one run;
ratios are what to read (absolute times are noisy on a shared machine).

    python benchmarks/ctsketch.py
"""

from __future__ import annotations

import time

import tensorly as tl
import torch
from tensorly.decomposition import tensor_train

from neurips25.ctsketch import ExactEnumeration, contract, dense_contract, tensorize, tt_decompose


def best_of(fn, repeat: int = 7, number: int = 5) -> float:
    """Best mean seconds per call over ``repeat`` rounds of ``number`` calls."""
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        times.append((time.perf_counter() - t0) / number)
    return min(times)


def bench_contraction(k: int, batch: int) -> tuple[float, float, float]:
    """Seconds per batch for the sketch, the dense tensor and enumeration on the k-input sum."""
    T = tensorize(lambda *r: sum(r), [10] * k).float()
    sk = tt_decompose(T.double(), 2, seed=0).to(torch.float32)
    ps = [torch.softmax(torch.randn(batch, 10), -1) for _ in range(k)]
    exact = ExactEnumeration(lambda *r: sum(r), [10] * k, vectorized=True).to(torch.float32)
    if not torch.allclose(contract(sk, ps), exact(*ps), atol=1e-3):
        raise RuntimeError("sketched and exact expectations disagree")
    return (best_of(lambda: sk.contract(ps)), best_of(lambda: dense_contract(T, ps)),
            best_of(lambda: exact(*ps), number=2))


def bench_tt_svd(k: int) -> tuple[float, float, float, float]:
    """Seconds of tensorly's TT-SVD, ours randomized, ours exact; and the largest reconstruction gap."""
    T = tensorize(lambda *r: sum(r), [10] * k, vectorized=True)
    ranks = [1] + [2] * (k - 1) + [1]
    t_tl = best_of(lambda: tensor_train(T.numpy(), ranks), repeat=3, number=1)
    t_rand = best_of(lambda: tt_decompose(T, 2, seed=0), repeat=3, number=1)
    t_exact = best_of(lambda: tt_decompose(T, 2, randomized=False), repeat=3, number=1)
    ref = tl.tt_to_tensor(tensor_train(T.numpy(), ranks))
    gap = float(abs(tt_decompose(T, 2, seed=0).full().numpy() - ref).max())
    return t_tl, t_rand, t_exact, gap


def main() -> None:
    torch.set_num_threads(1)
    batch = 256
    print(f"batch of {batch} input distributions, float32, one thread")
    print(f"{'k':>2} {'sketch ms':>10} {'dense ms':>10} {'enum ms':>10} {'dense/sketch':>13} "
          f"{'enum/sketch':>12}")
    for k in (4, 5):
        t_sk, t_dense, t_enum = bench_contraction(k, batch)
        print(f"{k:>2} {t_sk * 1e3:>10.3f} {t_dense * 1e3:>10.3f} {t_enum * 1e3:>10.3f} "
              f"{t_dense / t_sk:>13.1f} {t_enum / t_sk:>12.1f}")
    print("\nTT-SVD of the sum tensor, ours (randomized and exact) vs tensorly.tensor_train")
    for k in (4, 6):
        t_tl, t_rand, t_exact, gap = bench_tt_svd(k)
        print(f"k={k}: tensorly {t_tl * 1e3:.1f} ms, ours randomized {t_rand * 1e3:.1f} ms "
              f"(tensorly/ours {t_tl / t_rand:.1f}x), ours exact {t_exact * 1e3:.1f} ms; max gap {gap:.1e}")


if __name__ == "__main__":
    main()
