"""Spectra: Schatten quasi-norms, effective ranks and the FFT conv-operator spectrum against dense oracles."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from neurips25.rank_bounds import (
    conv_operator_singular_values,
    effective_rank,
    numerical_rank,
    schatten_quasi_norm,
    singular_values,
)


def dense_conv_operator(kernel, hw, padding, mode):
    """The conv map as an explicit matrix, one column per input basis vector (slow oracle)."""
    c_out, c_in, kh, kw = kernel.shape
    n = c_in * hw[0] * hw[1]
    eye = torch.eye(n, dtype=torch.float64).reshape(n, c_in, *hw)
    k = torch.from_numpy(kernel)
    if mode == "circular":
        x = torch.nn.functional.pad(eye, (padding[1],) * 2 + (padding[0],) * 2, mode="circular")
        out = torch.nn.functional.conv2d(x, k)
    else:
        out = torch.nn.functional.conv2d(eye, k, padding=padding)
    return out.reshape(n, -1).T.numpy()


def test_schatten_matches_norm_oracles():
    # p = 1 is the nuclear norm and p = 2 the Frobenius norm (numpy's own implementations)
    A = np.random.default_rng(0).standard_normal((7, 5))
    assert schatten_quasi_norm(A, 1) == pytest.approx(np.linalg.norm(A, "nuc"), rel=1e-12)
    assert schatten_quasi_norm(A, 2) == pytest.approx(np.linalg.norm(A, "fro"), rel=1e-12)
    s = np.sqrt(np.sort(np.linalg.eigvalsh(A.T @ A))[::-1])
    for p in (0.1, 0.5, 0.75, 1.5):
        assert schatten_quasi_norm(A, p) == pytest.approx(np.sum(s**p) ** (1 / p), rel=1e-10)


def test_effective_rank_tends_to_rank_on_exact_low_rank():
    # float64 SVD noise (~1e-16) must not count as rank at tiny p
    rng = np.random.default_rng(1)
    A = rng.standard_normal((30, 3)) @ rng.standard_normal((3, 20))
    vals = [effective_rank(A, p) for p in (1.0, 0.5, 0.1, 1e-3, 1e-6)]
    assert all(a < b for a, b in zip(vals, vals[1:]))
    assert vals[-1] == pytest.approx(3.0, abs=1e-4)
    assert 1.0 <= vals[0] <= 3.0


def test_torch_float32_input_is_read_in_float64():
    A = torch.tensor([[3.0, 0.0], [0.0, 4.0]])
    assert singular_values(A).dtype == np.float64
    assert schatten_quasi_norm(A, 2) == pytest.approx(5.0, abs=1e-12)


def test_numerical_rank_counts_relative_to_top():
    assert numerical_rank(np.diag([1.0, 0.5, 1e-4, 0.0]), rtol=1e-3) == 2
    assert numerical_rank(np.diag([1.0, 0.5, 1e-4, 0.0]), rtol=1e-5) == 3


@settings(max_examples=40, deadline=None)
@given(
    st.integers(2, 8),
    st.integers(2, 8),
    st.integers(1, 4),
    st.integers(1, 4),
    st.floats(0.05, 1.0),
    st.integers(0, 10_000),
)
def test_pth_power_subadditivity_for_p_le_1(m, n, r1, r2, p, seed):
    # ||A + B||_p^p <= ||A||_p^p + ||B||_p^p holds for 0 < p <= 1 (and fails in general for p > 1)
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, min(r1, m, n))) @ rng.standard_normal((min(r1, m, n), n))
    B = rng.standard_normal((m, min(r2, m, n))) @ rng.standard_normal((min(r2, m, n), n))
    lhs = schatten_quasi_norm(A + B, p) ** p
    assert lhs <= (schatten_quasi_norm(A, p) ** p + schatten_quasi_norm(B, p) ** p) * (1 + 1e-10)


def test_conv_fft_matches_dense_circular_operator():
    rng = np.random.default_rng(2)
    K = rng.standard_normal((3, 2, 3, 3))
    dense = dense_conv_operator(K, (5, 6), (1, 1), "circular")
    ref = np.linalg.svd(dense, compute_uv=False)
    got = conv_operator_singular_values(K, (5, 6))
    np.testing.assert_allclose(got, ref[: got.size], rtol=1e-10, atol=1e-10)


def test_conv_zero_padding_is_dominated_by_circular_on_padded_grid():
    # zero-padded conv = restriction of the circular conv on the padded grid, so sigma_i <= sigma_i(circ)
    rng = np.random.default_rng(3)
    K = rng.standard_normal((2, 2, 3, 3))
    ref = np.linalg.svd(dense_conv_operator(K, (5, 5), (1, 1), "zeros"), compute_uv=False)
    upper = conv_operator_singular_values(K, (7, 7))
    assert np.all(ref <= upper[: ref.size] + 1e-10)
    # and the flattened-kernel norm is not the operator norm
    assert not np.isclose(np.linalg.norm(K.reshape(2, -1), 2), ref[0], rtol=1e-3)


def test_singular_values_of_kernel_needs_grid():
    with pytest.raises(ValueError, match="conv_input_shape"):
        singular_values(np.ones((2, 2, 3, 3)))


@pytest.mark.parametrize("p", [0, -1.0, float("nan"), float("inf")])
def test_bad_p_is_rejected(p):
    with pytest.raises(ValueError, match="`p` must be a finite number > 0"):
        schatten_quasi_norm(np.eye(2), p)


def test_non_finite_and_bad_shapes_are_rejected():
    with pytest.raises(ValueError, match="NaN or infinite"):
        effective_rank(np.array([[1.0, np.nan]]), 0.5)
    with pytest.raises(ValueError, match="must not be empty"):
        schatten_quasi_norm(np.zeros((0, 3)), 1)
    with pytest.raises(ValueError, match="2-D matrix or a 1-D array"):
        schatten_quasi_norm(np.ones((2, 2, 2)), 1)
    with pytest.raises(TypeError, match="`p` must be a real number"):
        schatten_quasi_norm(np.eye(2), "1")
    with pytest.raises(ValueError, match="at least the kernel size"):
        conv_operator_singular_values(np.ones((1, 1, 3, 3)), (2, 2))
