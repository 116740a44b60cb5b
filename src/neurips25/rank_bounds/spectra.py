"""Singular values, Schatten quasi-norms and effective ranks of layer operators (float64 throughout).

A dense layer's operator is its weight matrix. A convolution's operator is the linear map it applies to a
whole feature map, a matrix of shape ``(c_out * H_out * W_out, c_in * H * W)`` that is never formed here:
for a circular convolution it is block-diagonalised by the 2-D DFT (Sedghi, Gupta and Long, "The singular
values of convolutional layers", ICLR 2019), so its spectrum is the union over the ``H * W`` frequencies of
the spectra of ``c_out x c_in`` transfer matrices. The spectral norm of the flattened kernel, a common
stand-in, is *not* the operator norm (pytorch issues #99149, #13505).
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = [
    "singular_values",
    "schatten_quasi_norm",
    "effective_rank",
    "numerical_rank",
    "conv_operator_singular_values",
]


def _as_float64(W, name: str) -> np.ndarray:
    """Copy a numpy array or torch tensor to a finite float64 numpy array."""
    if hasattr(W, "detach"):  # torch tensor; keeps torch optional for numpy users
        W = W.detach().cpu().double().numpy()
    try:
        arr = np.asarray(W, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise TypeError(f"`{name}` must be a numeric array or tensor, got {type(W).__name__}") from err
    if arr.size == 0:
        raise ValueError(f"`{name}` must not be empty, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"`{name}` contains NaN or infinite entries")
    return arr


def _check_p(p) -> float:
    if isinstance(p, bool) or not isinstance(p, numbers.Real):
        raise TypeError(f"`p` must be a real number, got {type(p).__name__}")
    p = float(p)
    if not (p > 0 and np.isfinite(p)):
        raise ValueError(f"`p` must be a finite number > 0, got {p}")
    return p


def _spectrum_of(W, p_name: str = "W") -> np.ndarray:
    """Singular values of a matrix, or pass through a 1-D array already holding singular values.

    Values at or below the float64 resolution ``sigma_1 * max(m, n) * eps`` (numpy's ``matrix_rank``
    tolerance) are set to exactly 0: they are rounding noise of the SVD, and at small p each would otherwise
    add almost 1 to ``sum_i (sigma_i / sigma_1)^p`` (``(1e-16)^0.01 = 0.69``).
    """
    arr = _as_float64(W, p_name)
    if arr.ndim == 1:
        if np.any(arr < 0):
            raise ValueError(f"`{p_name}` as 1-D input is read as singular values and must be >= 0")
        s = np.sort(arr)[::-1]
        size = s.size
    elif arr.ndim == 2:
        s = np.linalg.svd(arr, compute_uv=False)
        size = max(arr.shape)
    else:
        raise ValueError(
            f"`{p_name}` must be a 2-D matrix or a 1-D array of singular values, got shape {arr.shape}; "
            "for a conv kernel call singular_values(kernel, conv_input_shape=...)"
        )
    return np.where(s > s[0] * size * np.finfo(np.float64).eps, s, 0.0)


def conv_operator_singular_values(kernel, hw) -> np.ndarray:
    """Singular values of the circular 2-D convolution operator on an ``hw`` grid (FFT method).

    For a stride-1 circular convolution with kernel ``K`` on an ``N1 x N2`` grid, the operator is
    block-diagonal in the Fourier basis with blocks
    ``P(u, v) = sum_{a, b} K[:, :, a, b] exp(-2 pi i (u a / N1 + v b / N2))`` (Sedghi et al. 2019, Thm 6), so
    its ``c_in * N1 * N2`` singular values are those of the ``N1 * N2`` matrices ``P(u, v)``.

    Parameters
    ----------
    kernel : array or tensor, shape (c_out, c_in, kh, kw)
        A ``torch.nn.Conv2d`` weight (cross-correlation has the same spectrum as convolution).
    hw : tuple of int (N1, N2)
        Grid size; must be at least the kernel size in each direction.

    Returns
    -------
    ndarray, shape (N1 * N2 * min(c_out, c_in),)
        Singular values in decreasing order, float64.

    Examples
    --------
    >>> import numpy as np
    >>> k = np.zeros((1, 1, 3, 3)); k[0, 0, 1, 1] = 2.0        # 2 x identity
    >>> conv_operator_singular_values(k, (4, 4))[:2]
    array([2., 2.])
    """
    K = _as_float64(kernel, "kernel")
    if K.ndim != 4:
        raise ValueError(f"`kernel` must have shape (c_out, c_in, kh, kw), got {K.shape}")
    try:
        n1, n2 = (int(v) for v in hw)
    except (TypeError, ValueError) as err:
        raise TypeError(f"`hw` must be a pair of ints (N1, N2), got {hw!r}") from err
    if n1 < K.shape[2] or n2 < K.shape[3]:
        raise ValueError(f"`hw` {hw} must be at least the kernel size {K.shape[2:]} in each direction")
    # transfer matrices at every frequency: (c_out, c_in, N1, N2) -> (N1, N2, c_out, c_in)
    P = np.fft.fft2(K, s=(n1, n2), axes=(2, 3)).transpose(2, 3, 0, 1)
    s = np.linalg.svd(P, compute_uv=False).ravel()
    return np.sort(s)[::-1]


def singular_values(W, conv_input_shape=None) -> np.ndarray:
    """Singular values of a weight matrix, or of a conv layer's true operator, in float64.

    Parameters
    ----------
    W : array or tensor
        Shape (d_out, d_in) for a dense layer, or (c_out, c_in, kh, kw) for a 2-D convolution.
    conv_input_shape : tuple of int (H, W), optional
        Required for a 4-D kernel: the grid on which the circular operator acts (see
        :func:`conv_operator_singular_values`).

    Returns
    -------
    ndarray, shape (min(d_out, d_in),) or (H * W * min(c_out, c_in),)
        Decreasing singular values.

    Examples
    --------
    >>> import numpy as np
    >>> singular_values(np.diag([3.0, 1.0]))
    array([3., 1.])
    """
    arr = _as_float64(W, "W")
    if arr.ndim == 4:
        if conv_input_shape is None:
            raise ValueError("`conv_input_shape` (H, W) is required for a 4-D conv kernel `W`")
        return conv_operator_singular_values(arr, conv_input_shape)
    if arr.ndim != 2:
        raise ValueError(f"`W` must be 2-D (dense) or 4-D (conv kernel), got shape {arr.shape}")
    return np.linalg.svd(arr, compute_uv=False)


def schatten_quasi_norm(W, p: float) -> float:
    """Schatten-p (quasi-)norm ``||W||_{S_p} = (sum_i sigma_i^p)^(1/p)``.

    A norm for ``p >= 1`` (p = 1 nuclear, p = 2 Frobenius), a quasi-norm for ``0 < p < 1``; as ``p -> 0``
    ``||W||_{S_p}^p`` counts the non-zero singular values, i.e. the rank.

    Parameters
    ----------
    W : array or tensor, shape (m, n), or 1-D array of singular values
    p : float > 0

    Examples
    --------
    >>> import numpy as np
    >>> round(schatten_quasi_norm(np.diag([3.0, 4.0]), 2), 12)
    5.0
    """
    p = _check_p(p)
    s = _spectrum_of(W)
    s_max = s[0]
    if s_max == 0:
        return 0.0
    # factor out sigma_1 so tiny p does not under/overflow
    s = s[s > 0]  # 0^p = 0 for p > 0
    return float(s_max * np.sum((s / s_max) ** p) ** (1.0 / p))


def effective_rank(W, p: float) -> float:
    """Schatten-p effective rank ``r_p(W) = sum_i (sigma_i / sigma_1)^p = (||W||_{S_p} / ||W||_sigma)^p``.

    Lies in ``[1, rank(W)]`` for a non-zero ``W`` (0 for the zero matrix); tends to ``rank(W)`` as ``p -> 0``
    and is the stable rank at ``p = 2``.
    This is the quantity the reconstructed bound (``bounds.schatten_rank_bound``) charges per layer.

    Parameters
    ----------
    W : array or tensor, shape (m, n), or 1-D array of singular values
    p : float > 0

    Examples
    --------
    >>> import numpy as np
    >>> effective_rank(np.diag([2.0, 2.0, 0.0]), 0.5)
    2.0
    """
    p = _check_p(p)
    s = _spectrum_of(W)
    if s[0] == 0:
        return 0.0
    return float(np.sum((s[s > 0] / s[0]) ** p))


def numerical_rank(W, rtol: float = 1e-3) -> int:
    """Number of singular values above ``rtol * sigma_1``.

    Parameters
    ----------
    W : array or tensor, shape (m, n), or 1-D array of singular values
    rtol : float in (0, 1)

    Examples
    --------
    >>> import numpy as np
    >>> numerical_rank(np.diag([1.0, 1e-2, 1e-6]), rtol=1e-3)
    2
    """
    if not isinstance(rtol, numbers.Real) or not (0 < float(rtol) < 1):
        raise ValueError(f"`rtol` must be a number in (0, 1), got {rtol!r}")
    s = _spectrum_of(W)
    if s[0] == 0:
        return 0
    return int(np.sum(s > float(rtol) * s[0]))
