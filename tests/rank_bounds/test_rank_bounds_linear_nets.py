"""Weight decay on deep linear nets equals a Schatten quasi-norm of the product (claim 2)."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from neurips25.rank_bounds import balanced_factorization, schatten_penalty, weight_decay_equals_schatten
from neurips25.rank_bounds.data import make_matrix_regression
from neurips25.rank_bounds.reproduce import fit_linear_net


def test_depth_two_is_twice_the_nuclear_norm():
    A = np.random.default_rng(0).standard_normal((5, 4))
    assert schatten_penalty(A, 2) == pytest.approx(2 * np.linalg.norm(A, "nuc"), rel=1e-12)


@pytest.mark.parametrize("L", [1, 2, 3, 4, 6])
def test_balanced_factorization_attains_the_penalty(L):
    A = np.random.default_rng(L).standard_normal((6, 4))
    Ws = balanced_factorization(A, L, width=7)
    P = Ws[0]
    for W in Ws[1:]:
        P = W @ P
    np.testing.assert_allclose(P, A, atol=1e-12)
    assert abs(weight_decay_equals_schatten(Ws).relative_gap) < 1e-8


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 4), st.integers(0, 10_000))
def test_any_factorization_pays_at_least_the_penalty(L, seed):
    # AM-GM: the Schatten penalty is the minimum of the weight decay over factorisations
    rng = np.random.default_rng(seed)
    Ws = [rng.standard_normal((4, 3))] + [rng.standard_normal((4, 4)) for _ in range(L - 2)]
    Ws.append(rng.standard_normal((2, 4)))
    assert weight_decay_equals_schatten(Ws).relative_gap >= -1e-10


@pytest.fixture
def one_thread():
    # on a shared 2-core machine two OpenMP threads spin against each other on these tiny ops
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


def test_trained_depth3_linear_net_meets_the_identity(one_thread):
    X, Y, _ = make_matrix_regression(d_in=6, d_out=5, rank=2, n=60, seed=1)
    Ws = fit_linear_net(3, X, Y, lam=0.05, seed=0, width=6, adam_steps=200)
    assert abs(weight_decay_equals_schatten(Ws).relative_gap) < 0.02


def test_bad_factors_are_rejected():
    with pytest.raises(ValueError, match="`factors` must be a non-empty list"):
        weight_decay_equals_schatten([])
    with pytest.raises(ValueError, match=r"`factors\[1\]` has shape"):
        weight_decay_equals_schatten([np.ones((3, 2)), np.ones((2, 2))])
    with pytest.raises(ValueError, match="`L` must be an int >= 1"):
        schatten_penalty(np.eye(2), 0)
    with pytest.raises(ValueError, match="`width` must be >= min"):
        balanced_factorization(np.ones((3, 3)), 2, width=2)
