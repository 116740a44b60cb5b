"""TT-SVD (own), CP / Tucker (tensorly): exactness on sum tensors, agreement with tensorly, rank checks."""

import numpy as np
import pytest
import tensorly as tl
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from tensorly.decomposition import tensor_train

from neurips25.ctsketch import cp_decompose, decompose, tensorize, tt_decompose, tucker_decompose


@pytest.mark.parametrize("k", [2, 3, 4])
@pytest.mark.parametrize("randomized", [True, False])
def test_sum_tensor_is_exact_at_rank_2(k, randomized):
    # issue criterion 1: the k-input sum tensor has TT-rank 2, reconstructed to 1e-6
    T = tensorize(lambda *r: sum(r), [10] * k)
    sk = tt_decompose(T, 2, randomized=randomized, seed=0)
    assert sk.ranks == (2,) * (k - 1)
    assert sk.error(T) < 1e-6


@pytest.mark.parametrize("k", [2, 3, 4])
def test_reconstruction_matches_tensorly_tensor_train(k):
    # anchor: tensorly's TT-SVD on the same tensor gives the same reconstruction
    T = tensorize(lambda *r: sum(r), [10] * k)
    ref = tl.tt_to_tensor(tensor_train(T.numpy(), [1] + [2] * (k - 1) + [1]))
    assert np.abs(tt_decompose(T, 2, seed=1).full().numpy() - ref).max() < 1e-5


def test_tt_svd_equals_tensorly_on_a_truncated_random_tensor():
    # exact TT-SVD is unique up to gauge: the truncated reconstructions must coincide
    T = torch.as_tensor(np.random.default_rng(0).normal(size=(5, 6, 4)))
    ref = tl.tt_to_tensor(tensor_train(T.numpy(), [1, 3, 2, 1]))
    ours = tt_decompose(T, [3, 2], randomized=False).full().numpy()
    assert np.abs(ours - ref).max() < 1e-8


def test_exact_tt_svd_error_is_bounded_by_discarded_tails():
    # Oseledets (2011) Thm 2.2: ||T - T_hat||_F <= sqrt(sum of squared discarded singular values)
    T = torch.as_tensor(np.random.default_rng(1).normal(size=(6, 6, 6, 6)))
    sk = tt_decompose(T, 3, randomized=False)
    assert sk.error(T, relative=False) <= np.sqrt(np.sum(np.square(sk.tail))) + 1e-10
    assert sk.error(T, relative=False) > 0.1  # the truncation is real


def test_projection_error_matches_reconstruction():
    T = torch.as_tensor(np.random.default_rng(2).normal(size=(7, 5, 6)))
    sk = tt_decompose(T, 2, seed=0)
    norm = torch.linalg.vector_norm(T).item()
    assert abs(sk.projection_error(norm) - sk.error(T, relative=False)) < 1e-8


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 4), st.integers(2, 5), st.integers(0, 10_000))
def test_error_does_not_grow_with_rank(k, d, seed):
    # property (issue criterion 2): exact TT-SVD error is non-increasing in the rank, zero at full rank
    T = torch.as_tensor(np.random.default_rng(seed).normal(size=(d,) * k))
    errs = [tt_decompose(T, r, randomized=False).error(T) for r in range(1, d ** (k // 2) + 1)]
    assert all(b <= a + 1e-10 for a, b in zip(errs, errs[1:]))
    assert errs[-1] < 1e-10


def test_cp_and_tucker_reconstruct_low_rank_tensors():
    T = tensorize(lambda a, b, c: a + 2 * b + 3 * c, [4, 5, 3])
    # a + 2b + 3c is a sum of three rank-one terms (each times the all-ones vectors)
    assert cp_decompose(T, 3, seed=0).error(T) < 1e-5
    assert tucker_decompose(T, 2, seed=0).error(T) < 1e-8


def test_cp_tucker_full_agree_with_tensorly():
    T = np.random.default_rng(3).normal(size=(4, 3, 5))
    cp = cp_decompose(torch.as_tensor(T), 2, seed=0)
    ref = tl.cp_to_tensor((cp.weights.numpy(), [a.numpy() for a in cp.factors]))
    assert np.abs(cp.full().numpy() - ref).max() < 1e-10
    tk = tucker_decompose(torch.as_tensor(T), [2, 2, 3], seed=0)
    ref = tl.tucker_to_tensor((tk.core.numpy(), [u.numpy() for u in tk.factors]))
    assert np.abs(tk.full().numpy() - ref).max() < 1e-10


@pytest.mark.parametrize("rank", [0, -1, [2, 0]])
def test_rank_must_be_positive(rank):
    T = torch.ones(3, 3, 3)
    with pytest.raises(ValueError, match="`rank` must be >= 1"):
        tt_decompose(T, rank)


def test_bad_arguments():
    with pytest.raises(ValueError, match="must give 2 ranks"):
        tt_decompose(torch.ones(2, 2, 2), [1])
    with pytest.raises(TypeError, match="`rank`"):
        tt_decompose(torch.ones(2, 2), 1.5)
    with pytest.raises(ValueError, match="NaN"):
        tt_decompose(torch.tensor([[1.0, float("nan")]]), 1)
    with pytest.raises(ValueError, match="`method`"):
        decompose(torch.ones(2, 2), 1, method="ring")
    with pytest.raises(ValueError, match="`n_inputs`"):
        tt_decompose(torch.ones(2, 2), 1, n_inputs=3)


def test_n_trials_keeps_the_best_randomized_trial():
    # review of issue 8, bug 2: with several randomized trials the LOWEST-error sketch must be kept
    from neurips25.ctsketch.decompose import _tt_svd

    T = torch.randn(8, 8, 8, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    gen = torch.Generator().manual_seed(5)
    errors = [_tt_svd(T, [2, 2], 3, True, 0, 0, gen).error(T) for _ in range(4)]
    best = tt_decompose(T, 2, n_trials=4, oversample=0, n_power_iter=0, seed=5)
    assert len(set(round(e, 12) for e in errors)) > 1  # the trials differ, so the choice matters
    assert abs(best.error(T) - min(errors)) < 1e-12
