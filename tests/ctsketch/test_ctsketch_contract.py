"""Contracting sketches with distributions: brute-force oracle, the error bound, input checks."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from neurips25.ctsketch import (
    ExactEnumeration,
    SketchedProgram,
    contract,
    cp_decompose,
    dense_contract,
    error_bound,
    tensorize,
    tt_decompose,
    tucker_decompose,
)


def _dirichlet(b, d, seed):
    gen = torch.Generator().manual_seed(seed)
    x = torch.rand(b, d, generator=gen, dtype=torch.float64) + 1e-3
    return x / x.sum(-1, keepdim=True)


@pytest.mark.parametrize("k", [2, 3, 4])
def test_tt_contraction_equals_brute_force(k):
    # issue criterion 1: contraction of the rank-2 sketch = expectation over all 10^k worlds, to 1e-5
    ps = [_dirichlet(16, 10, s) for s in range(k)]
    sk = tt_decompose(tensorize(lambda *r: sum(r), [10] * k), 2, seed=0)
    exact = ExactEnumeration(lambda *r: sum(r), [10] * k)(*ps)
    assert torch.allclose(contract(sk, ps), exact, atol=1e-5, rtol=0)
    # the expected sum is the sum of expected digits: a closed form as a second oracle
    means = sum((p * torch.arange(10.0, dtype=torch.float64)).sum(-1) for p in ps)
    assert torch.allclose(exact, means, atol=1e-10)


@pytest.mark.parametrize(
    "make", [lambda T: cp_decompose(T, 3, seed=0), lambda T: tucker_decompose(T, 3, seed=0)]
)
def test_cp_tucker_contraction_equals_dense(make):
    T = tensorize(lambda a, b, c: a * b + c, [4, 4, 4])
    sk = make(T)
    ps = [_dirichlet(5, 4, s) for s in range(3)]
    assert torch.allclose(contract(sk, ps), dense_contract(sk.full(), ps), atol=1e-9)


@pytest.mark.filterwarnings("ignore:Trying to compute SVD")
@pytest.mark.parametrize("method", ["tt", "cp", "tucker"])
def test_onehot_output_mode_gives_output_distribution(method):
    # full-rank sketch of (a + b) % 5 with an output mode: the contraction is the exact output distribution
    prog = SketchedProgram(
        lambda a, b: (a + b) % 5,
        [5, 5],
        rank=25 if method == "cp" else 5,
        method=method,
        output="onehot",
        seed=0,
        dtype=torch.float64,
    )
    p, q = _dirichlet(7, 5, 0), _dirichlet(7, 5, 1)
    exact = ExactEnumeration(lambda a, b: (a + b) % 5, [5, 5], output="onehot")(p, q)
    tol = 1e-3 if method == "cp" else 1e-8
    assert torch.allclose(prog(p, q), exact, atol=tol)
    assert torch.allclose(exact.sum(-1), torch.ones(7, dtype=torch.float64))


def test_unbatched_and_stacked_inputs():
    sk = tt_decompose(tensorize(lambda a, b: a + b, [10, 10]), 2, seed=0)
    p = torch.full((10,), 0.1, dtype=torch.float64)
    assert contract(sk, [p, p]).shape == ()
    assert torch.allclose(
        contract(sk, torch.stack([p, p]).unsqueeze(0)), torch.tensor([9.0], dtype=torch.float64)
    )


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 4), st.integers(2, 5), st.integers(1, 3), st.integers(0, 2**31 - 1), st.booleans())
def test_error_bound_holds_on_random_programs(k, d, r, seed, randomized):
    # issue criterion 2 (property): |<T - T_hat, p_1 o ... o p_k>| <= ||T - T_hat||_F prod ||p_i||_2
    T = torch.as_tensor(np.random.default_rng(seed).normal(size=(d,) * k))
    sk = tt_decompose(T, r, randomized=randomized, seed=seed)
    ps = [_dirichlet(6, d, seed + i) for i in range(k)]
    err = (contract(sk, ps) - dense_contract(T, ps)).abs()
    assert (err <= error_bound(sk, T, ps) + 1e-10).all()
    assert (error_bound(sk, T, ps) <= error_bound(sk, T) + 1e-12).all()


def test_distribution_checks():
    sk = tt_decompose(tensorize(lambda a, b: a + b, [3, 4]), 2, seed=0)
    good = [torch.full((2, 3), 1 / 3), torch.full((2, 4), 0.25)]
    with pytest.raises(ValueError, match=r"`distributions\[0\]` rows must sum to 1"):
        contract(sk, [torch.full((2, 3), 0.5), good[1]])
    with pytest.raises(ValueError, match=r"`distributions\[1\]` must have domain size 4; got 3"):
        contract(sk, [good[0], torch.full((2, 3), 1 / 3)])
    with pytest.raises(ValueError, match="negative probabilities"):
        contract(sk, [torch.tensor([[1.5, -0.5, 0.0]]), torch.full((1, 4), 0.25)])
    with pytest.raises(ValueError, match="one distribution per program input"):
        contract(sk, good[:1])
    with pytest.raises(ValueError, match="share one batch size"):
        contract(sk, [good[0], torch.full((3, 4), 0.25)])
    with pytest.raises(ValueError, match="NaN"):
        contract(sk, [torch.tensor([[float("nan"), 0.5, 0.5]]), torch.full((1, 4), 0.25)])
    with pytest.raises(TypeError, match="`sketch` must be a Sketch"):
        contract(torch.ones(3, 4), good)


def test_enumeration_refuses_huge_tables():
    with pytest.raises(ValueError, match="infeasible.*GiB"):
        ExactEnumeration(lambda *r: sum(r), [10] * 9)
