"""Finite-sum objectives with exact per-example gradients (float64), for rate checks and examples.

- :class:`L2LogisticRegression`: binary logistic loss plus an L2 term, mu-strongly convex (the PL
  setting of the unified analysis); its minimiser is found to machine precision by Newton's method,
  so F(x) - F* can be measured down to ~1e-14.
- :class:`SoftmaxRegression`: multinomial logistic loss plus L2, used per client in the federated
  experiment.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
from scipy.special import expit, log_softmax, logsumexp

__all__ = ["L2LogisticRegression", "SoftmaxRegression"]


def _check_xy(X: Any, y: Any, owner: str) -> tuple[np.ndarray, np.ndarray]:
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    if X.ndim != 2 or X.shape[0] < 1 or X.shape[1] < 1:
        raise ValueError(f"{owner}: X must be 2-D of shape (n, d), got shape {X.shape}")
    if y.shape != (X.shape[0],):
        raise ValueError(f"{owner}: y must have shape ({X.shape[0]},), got {y.shape}")
    if not np.isfinite(X).all():
        raise ValueError(f"{owner}: X contains NaN or inf")
    return X, y


def _check_alpha(alpha: Any, owner: str) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not alpha > 0:
        raise ValueError(f"{owner}: alpha must be a float > 0, got {alpha!r}")
    return float(alpha)


class L2LogisticRegression:
    """F(w) = (1/n) sum_i f_i(w), f_i(w) = log(1 + exp(-y_i x_i^T w)) + (alpha / 2) ||w||^2.

    Parameters
    ----------
    X : array-like, shape (n, d)
    y : array-like, shape (n,)
        Labels in {-1, +1} (or {0, 1}, mapped to {-1, +1}).
    alpha : float
        L2 weight; F is alpha-strongly convex and each f_i is (max_i ||x_i||^2 / 4 + alpha)-smooth.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]); y = np.array([1, -1, 1])
    >>> prob = L2LogisticRegression(X, y, alpha=0.1)
    >>> w = prob.solve()
    >>> bool(np.linalg.norm(prob.grad(w)) < 1e-12)
    True
    """

    def __init__(self, X: Any, y: Any, alpha: float):
        X, y = _check_xy(X, y, "L2LogisticRegression")
        labels = set(np.unique(y).tolist())
        if labels <= {0, 1}:
            y = 2 * y - 1
        elif not labels <= {-1, 1}:
            raise ValueError("L2LogisticRegression: y must hold labels in {-1, +1} or {0, 1}, "
                             f"got {sorted(labels)}")
        self.X, self.y = X, y.astype(np.float64)
        self.alpha = _check_alpha(alpha, "L2LogisticRegression")
        self.n, self.dim = X.shape
        self.mu = self.alpha
        self.L = float((X * X).sum(axis=1).max()) / 4.0 + self.alpha

    def grad_i(self, i: int, w: np.ndarray) -> np.ndarray:
        """Gradient of f_i at w, shape (d,)."""
        xi, yi = self.X[i], self.y[i]
        return -yi * expit(-yi * (xi @ w)) * xi + self.alpha * w

    def grads(self, w: np.ndarray) -> np.ndarray:
        """All per-example gradients at w, shape (n, d)."""
        s = -self.y * expit(-self.y * (self.X @ w))
        return s[:, None] * self.X + self.alpha * w

    def loss(self, w: np.ndarray) -> float:
        return float(np.mean(np.logaddexp(0.0, -self.y * (self.X @ w))) + 0.5 * self.alpha * (w @ w))

    def grad(self, w: np.ndarray) -> np.ndarray:
        s = -self.y * expit(-self.y * (self.X @ w))
        return self.X.T @ s / self.n + self.alpha * w

    def solve(self, tol: float = 1e-13, max_iter: int = 100) -> np.ndarray:
        """The minimiser w* by Newton's method (quadratic convergence; F is smooth and strongly convex)."""
        w = np.zeros(self.dim)
        for _ in range(max_iter):
            p = expit(self.y * (self.X @ w))
            g = self.grad(w)
            if np.linalg.norm(g) < tol:
                break
            H = (self.X * (p * (1 - p))[:, None]).T @ self.X / self.n + self.alpha * np.eye(self.dim)
            w = w - np.linalg.solve(H, g)
        return w


class SoftmaxRegression:
    """Multinomial logistic regression with L2: F(W) = mean_i CE(softmax(x_i^T W), y_i) + alpha/2 ||W||^2.

    The parameter is the flattened (d, C) matrix W, shape ``(d * C,)``.

    Parameters
    ----------
    X : array-like, shape (n, d)
    y : array-like of int, shape (n,)
        Class ids in ``range(n_classes)``.
    n_classes : int
    alpha : float
        L2 weight.
    """

    def __init__(self, X: Any, y: Any, n_classes: int, alpha: float):
        X, y = _check_xy(X, y, "SoftmaxRegression")
        if isinstance(n_classes, bool) or not isinstance(n_classes, (int, np.integer)) or n_classes < 2:
            raise ValueError(f"SoftmaxRegression: n_classes must be an int >= 2, got {n_classes!r}")
        if not np.issubdtype(y.dtype, np.integer) or y.min() < 0 or y.max() >= n_classes:
            raise ValueError(f"SoftmaxRegression: y must be ints in range({n_classes})")
        self.X, self.y = X, y.astype(np.int64)
        self.n_classes = int(n_classes)
        self.alpha = _check_alpha(alpha, "SoftmaxRegression")
        self.n, self.d = X.shape
        self.dim = self.d * self.n_classes
        self._Y = np.eye(self.n_classes)[self.y]  # one-hot, (n, C)

    def loss(self, w: np.ndarray) -> float:
        Z = self.X @ w.reshape(self.d, self.n_classes)
        ce = logsumexp(Z, axis=1) - Z[np.arange(self.n), self.y]
        return float(ce.mean() + 0.5 * self.alpha * (w @ w))

    def grad(self, w: np.ndarray) -> np.ndarray:
        W = w.reshape(self.d, self.n_classes)
        P = np.exp(log_softmax(self.X @ W, axis=1))
        return (self.X.T @ (P - self._Y) / self.n + self.alpha * W).reshape(-1)
