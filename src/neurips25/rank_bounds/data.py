"""Offline data: scikit-learn's bundled digits, and a classification task from a rank-4 teacher network."""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["load_digits_split", "make_teacher_task", "make_matrix_regression"]


def _rng(seed) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"`seed` must be a non-negative int or a numpy Generator, got {seed!r}")
    return np.random.default_rng(int(seed))


def load_digits_split(n_train: int = 1400, seed=0):
    """sklearn's 8x8 digits (1,797 x 64, 10 classes), pixels scaled to [0, 1] and centred on the train mean.

    Returns
    -------
    X_train (n_train, 64) float32, y_train (n_train,) int64, X_test, y_test
    """
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    if not isinstance(n_train, numbers.Integral) or not (10 <= n_train < len(X)):
        raise ValueError(f"`n_train` must be an int in [10, {len(X)}), got {n_train!r}")
    idx = _rng(seed).permutation(len(X))
    X = X / 16.0
    tr, te = idx[:n_train], idx[n_train:]
    mu = X[tr].mean(axis=0)
    return (
        (X[tr] - mu).astype(np.float32),
        y[tr].astype(np.int64),
        (X[te] - mu).astype(np.float32),
        y[te].astype(np.int64),
    )


def make_teacher_task(
    n_train: int = 1000,
    n_test: int = 1000,
    d_in: int = 32,
    rank: int = 4,
    width: int = 64,
    n_classes: int = 4,
    seed=0,
):
    """Gaussian inputs labelled by a random ReLU teacher whose weight matrices all have rank ``rank``.

    ``y = argmax W_3 relu(W_2 relu(W_1 x))`` with ``W_1`` (width x d_in) and ``W_2`` (width x width) of rank
    ``rank``, so the labels depend on the input only through a ``rank``-dimensional projection: the planted
    bottleneck rank.

    Returns
    -------
    X_train (n_train, d_in) float32, y_train int64, X_test, y_test
    """
    for name, v in (
        ("n_train", n_train),
        ("n_test", n_test),
        ("d_in", d_in),
        ("rank", rank),
        ("width", width),
        ("n_classes", n_classes),
    ):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
            raise ValueError(f"`{name}` must be a positive int, got {v!r}")
    if rank > min(d_in, width):
        raise ValueError(f"`rank` must be <= min(d_in, width) = {min(d_in, width)}, got {rank}")
    rng = _rng(seed)

    def low_rank(m, n):
        return rng.standard_normal((m, rank)) @ rng.standard_normal((rank, n)) / np.sqrt(rank * n)

    W1, W2 = low_rank(width, d_in) * np.sqrt(d_in), low_rank(width, width) * np.sqrt(width)
    W3 = rng.standard_normal((n_classes, width)) / np.sqrt(width)
    X = rng.standard_normal((n_train + n_test, d_in))
    logits = np.maximum(np.maximum(X @ W1.T, 0) @ W2.T, 0) @ W3.T
    y = logits.argmax(axis=1)
    return (
        X[:n_train].astype(np.float32),
        y[:n_train].astype(np.int64),
        X[n_train:].astype(np.float32),
        y[n_train:].astype(np.int64),
    )


def make_matrix_regression(
    d_in: int = 12, d_out: int = 10, rank: int = 3, n: int = 200, noise: float = 0.1, seed=0
):
    """Linear regression ``Y = X A*^T + noise`` with a rank-``rank`` target ``A*`` (for deep linear nets).

    Returns
    -------
    X (n, d_in) float64, Y (n, d_out) float64, A_star (d_out, d_in)
    """
    rng = _rng(seed)
    A = rng.standard_normal((d_out, rank)) @ rng.standard_normal((rank, d_in)) / np.sqrt(rank)
    X = rng.standard_normal((n, d_in))
    Y = X @ A.T + noise * rng.standard_normal((n, d_out))
    return X, Y, A
