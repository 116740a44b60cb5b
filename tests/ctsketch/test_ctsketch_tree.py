"""ProgramTree: level domains, one-hot exactness, re-binning, moments, padding, true-program evaluation."""

import numpy as np
import pytest
import torch

from neurips25.ctsketch import ExactEnumeration, ProgramTree, mod_sum_tree, sum_tree, to_distribution


@pytest.fixture(scope="module")
def tree16():
    return sum_tree(16, seed=0)


def test_level_domains_are_9_2l_plus_1(tree16):
    # the notes: level-l inputs are partial sums with 9 * 2^l + 1 values
    assert [len(d) for d in tree16.domains] == [9 * 2**lvl + 1 for lvl in range(5)]
    assert max(tree16.rel_errors) < 1e-6


def test_one_hot_digits_give_the_exact_sum_with_a_narrow_kernel():
    tree = sum_tree(16, sigma=0.01, seed=0)
    digits = torch.randint(0, 10, (32, 16), generator=torch.Generator().manual_seed(0))
    out = tree(torch.nn.functional.one_hot(digits, 10).float())
    assert torch.allclose(out, digits.sum(-1).float(), atol=1e-3)
    assert torch.equal(tree.evaluate(digits), digits.sum(-1).double())


def test_official_kernel_is_biased_only_near_domain_edges(tree16):
    # sigma = max(1/max p, 4) truncates at the ends of each level domain: partial sums at 0 or at the
    # maximum are pulled inwards, so one-hot inputs are not summed exactly (a property of the method)
    digits = torch.randint(0, 10, (64, 16), generator=torch.Generator().manual_seed(0))
    err = (tree16(torch.nn.functional.one_hot(digits, 10).float()) - digits.sum(-1).float()).abs()
    assert err.max() < 2.0 and err.max() > 0.1
    middle = torch.full((4, 16), 4) + torch.tensor([0, 1] * 8)  # partial sums far from the edges
    assert torch.allclose(
        tree16(torch.nn.functional.one_hot(middle, 10).float()), middle.sum(-1).float(), atol=1e-3
    )


def test_expected_sum_of_uncertain_digits_is_close_to_sum_of_means():
    # interior means: the Gaussian re-binning keeps the mean (only truncation at 0 or 18 biases it)
    tree = sum_tree(4, seed=0)
    p = torch.zeros(8, 4, 10)
    p[..., 4], p[..., 5] = 0.5, 0.5
    assert torch.allclose(tree(p), torch.full((8,), 18.0), atol=1e-3)


def test_to_distribution_mean_and_width():
    q = to_distribution(torch.tensor([7.3]), 20, sigma=4.0)
    mean = (q * torch.arange(20.0)).sum()
    var = (q * (torch.arange(20.0) - mean) ** 2).sum()
    assert abs(mean.item() - 7.3) < 1e-3
    assert abs(var.item() - 2.0) < 0.05  # exp(-(v - m)^2 / sigma) has variance sigma / 2
    with pytest.raises(ValueError, match="`sigma`"):
        to_distribution(torch.tensor([1.0]), 5, sigma=0.0)


def test_moments_tree_propagates_mean_and_variance():
    # two digits per node: the node variance must equal Var(a) + Var(b) exactly at level 0
    tree = sum_tree(2, rebin="moments", seed=0, dtype=torch.float64)
    p = torch.softmax(torch.randn(5, 2, 10, generator=torch.Generator().manual_seed(1)), -1).double()
    mean, var = tree.moments(p)
    v = torch.arange(10.0, dtype=torch.float64)
    mu = (p * v).sum(-1)
    assert torch.allclose(mean, mu.sum(-1), atol=1e-8)
    assert torch.allclose(var, ((p * v**2).sum(-1) - mu**2).sum(-1), atol=1e-6)
    with pytest.raises(ValueError, match="rebin='moments'"):
        sum_tree(2, seed=0).moments(p)


def test_padding_with_identity_for_odd_n():
    tree = sum_tree(5, seed=0)
    digits = torch.tensor([[1, 2, 3, 4, 9]])
    assert tree(torch.nn.functional.one_hot(digits, 10).float()).round().item() == 19.0
    assert tree.evaluate(digits).item() == 19.0
    with pytest.raises(ValueError, match="identity"):
        ProgramTree(lambda a, b: a + b, 5, 10, vectorized=True)


def test_full_rank_mod_tree_equals_enumeration_and_low_rank_does_not():
    ps = torch.softmax(torch.randn(4, 3, 10, generator=torch.Generator().manual_seed(2)), -1).double()
    exact = ExactEnumeration(lambda a, b, c: (a + b + c) % 10, [10, 10, 10], output="onehot")(*ps.unbind(1))
    full = mod_sum_tree(3, arity=3, rank=10, seed=0, dtype=torch.float64)
    assert torch.allclose(full(ps), exact, atol=1e-6)
    low = mod_sum_tree(3, arity=3, rank=2, seed=0, dtype=torch.float64)
    assert low.rel_errors[0] > 0.3
    assert (low(ps) - exact).abs().sum(-1).min() > 1e-3


def test_bad_inputs(tree16):
    with pytest.raises(ValueError, match=r"`ps` must have shape \[B, 16, 10\]"):
        tree16(torch.full((2, 15, 10), 0.1))
    with pytest.raises(ValueError, match="rows must be distributions"):
        tree16(torch.full((2, 16, 10), 0.2))
    with pytest.raises(ValueError, match="`symbols` must be indices"):
        tree16.evaluate(torch.full((1, 16), 10))
    with pytest.raises(ValueError, match="`n_inputs` must be >= 2"):
        sum_tree(1)
    with pytest.raises(ValueError, match="`rank` must be >= 1"):
        sum_tree(4, rank=0)
    with pytest.raises(ValueError, match="`rebin`"):
        sum_tree(4, rebin="kde")


def test_state_dict_round_trip_keeps_sketches(tree16):
    clone = sum_tree(16, seed=123)
    clone.load_state_dict(tree16.state_dict())
    p = torch.softmax(torch.randn(3, 16, 10), -1)
    assert torch.allclose(clone(p), tree16(p))
    assert all(not p.requires_grad for p in tree16.buffers())
    assert list(tree16.parameters()) == []  # the sketch is precomputed, never learned
    assert np.isfinite(tree16.error_bounds()).all()


def test_plain_python_program_without_vectorization():
    # the loop path of tabulation and of evaluate(): max over four digits, one-hot output
    tree = ProgramTree(lambda a, b: max(a, b), 4, 10, rank=10, output="onehot", seed=0, dtype=torch.float64)
    digits = torch.tensor([[3, 7, 1, 2], [0, 0, 0, 9]])
    out = tree(torch.nn.functional.one_hot(digits, 10).double())
    assert out.argmax(-1).tolist() == [7, 9]
    assert tree.evaluate(digits).tolist() == [7.0, 9.0]


def test_gradient_through_a_deep_tree_reaches_every_digit_with_slope_one():
    # issue 29 (review of issue 8, bug 1): at N = 1,024 (10 levels) the root is the expected sum, so
    # d root / d p_i(v) must be v + const_i for EVERY leaf i; a wrong sigma child, a lost gradient or a
    # precision loss at a deep level breaks the slope or the linearity
    tree = sum_tree(1024, n_trials=1, seed=0)
    assert len(tree.levels) == 10
    ps = torch.softmax(torch.randn(2, 1024, 10, generator=torch.Generator().manual_seed(0)), -1)
    ps.requires_grad_(True)
    out = tree(ps)
    mean_sum = (ps * torch.arange(10.0)).sum((-1, -2))
    assert torch.allclose(out, mean_sum, rtol=1e-5)  # interior partial sums: no truncation bias
    out.sum().backward()
    v = torch.arange(10.0) - 4.5
    g = ps.grad - ps.grad.mean(-1, keepdim=True)  # rows sum to 1: only differences matter
    slope = (g * v).sum(-1) / v.square().sum()
    assert slope.min() > 0.99 and slope.max() < 1.01, (slope.min(), slope.max())
    assert (g - slope.unsqueeze(-1) * v).abs().max() < 1e-3  # linear in v, leaf by leaf
