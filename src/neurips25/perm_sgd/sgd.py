"""Permutation-based SGD (numpy core, float64) and the order error the unified analysis bounds.

Epoch q visits the n components of F(x) = (1/n) sum_i f_i(x) in the order pi_q of a
:class:`~neurips25.perm_sgd.orderings.PermutationPolicy`:

    x_{q,i+1} = x_{q,i} - eta_q * grad f_{pi_q(i)}(x_{q,i}),   i = 0..n-1,   x_{q+1,0} = x_{q,n}.

The order error (herding discrepancy) of an order pi over vectors v_1..v_n with mean v_bar is

    phi(pi) = max_{k=1..n} || sum_{i<k} (v_{pi(i)} - v_bar) ||,

and the optimisation error of the recursion above is driven by L * eta * phi_q (Li, Lyu & Liu,
NeurIPS 2025; Lu, Guo & De Sa, NeurIPS 2022).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any

import numpy as np

from neurips25.perm_sgd.orderings import PermutationPolicy, _host, _is_torch

__all__ = ["order_error", "prefix_deviation", "permuted_sgd"]


def _float64(v: Any) -> np.ndarray:
    """``v`` as a float64 numpy array; torch tensors of any float dtype (bfloat16 included, via float32)."""
    return np.asarray(_host(v) if _is_torch(v) else v, dtype=np.float64)


def _check_vectors(vectors: Any, name: str = "vectors") -> np.ndarray:
    V = _float64(vectors)
    if V.ndim != 2 or V.shape[0] < 1 or V.shape[1] < 1:
        raise ValueError(f"{name} must be a 2-D array of shape (n, d) with n, d >= 1, got shape {V.shape}")
    if not np.isfinite(V).all():
        raise ValueError(f"{name} contains NaN or inf")
    return V


def _check_order(order: Any, n: int, name: str = "order") -> np.ndarray:
    if order is None:
        return np.arange(n)
    o = np.asarray(order)
    if o.shape != (n,) or not np.issubdtype(o.dtype, np.integer):
        raise ValueError(f"{name} must be an integer array of shape ({n},), "
                         f"got shape {o.shape} dtype {o.dtype}")
    if not np.array_equal(np.sort(o), np.arange(n)):
        raise ValueError(f"{name} must be a permutation of range({n})")
    return o


def prefix_deviation(vectors: Any, order: Any = None) -> np.ndarray:
    """Norms of the centred prefix sums ``||sum_{i<k} (v_{order(i)} - v_bar)||`` for k = 1..n.

    Parameters
    ----------
    vectors : array-like, shape (n, d)
    order : array-like of int, shape (n,), optional
        A permutation of ``range(n)`` (default: the identity).

    Returns
    -------
    np.ndarray, shape (n,)
        The last entry is 0 up to rounding (the full sum of centred vectors).
    """
    V = _check_vectors(vectors)
    o = _check_order(order, V.shape[0])
    D = np.cumsum(V[o] - V.mean(axis=0), axis=0)  # (n, d) centred prefix sums
    return np.linalg.norm(D, axis=1)


def order_error(vectors: Any, order: Any = None) -> float:
    """Order error (herding discrepancy) ``max_k ||sum_{i<k} (v_{order(i)} - v_bar)||``.

    The quantity the unified analysis bounds per category: O(n) for an arbitrary (adversarial)
    fixed order, O(sqrt(n)) for random reshuffling, O~(1) for GraB-type balanced orders.

    Parameters
    ----------
    vectors : array-like, shape (n, d)
        One (gradient) vector per unit.
    order : array-like of int, shape (n,), optional
        A permutation of ``range(n)``; default the identity.

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> v = np.array([[1.0], [1.0], [-1.0], [-1.0]])
    >>> order_error(v, [0, 1, 2, 3]), order_error(v, [0, 2, 1, 3])
    (2.0, 1.0)
    """
    return float(prefix_deviation(vectors, order).max())


def permuted_sgd(grad_i: Callable[[int, np.ndarray], Any], x0: Any, n: int, epochs: int,
                 lr: float | Callable[[int], float], policy: PermutationPolicy,
                 callback: Callable[[int, np.ndarray], Any] | None = None) -> np.ndarray:
    """Run permutation-based SGD for ``epochs`` epochs (float64).

    Each step's gradient is also reported to ``policy.observe``, so dependent orders (GraB,
    PairGraB) reuse the gradients of the SGD steps and never make an extra pass.

    Parameters
    ----------
    grad_i : callable ``(i, x) -> array of shape (d,)``
        Gradient of the i-th component f_i at x.
    x0 : array-like, shape (d,)
        Starting point x_{0,0}.
    n : int
        Number of components; must equal ``policy.n``.
    epochs : int
        Number of epochs K (T = n K steps).
    lr : float or callable ``(epoch) -> float``
        Step size eta, constant or per epoch.
    policy : PermutationPolicy
        The ordering; it is advanced by one epoch per epoch here.
    callback : callable ``(epoch, x) -> Any``, optional
        Called after every epoch with the epoch-end iterate; returning ``False`` stops early.

    Returns
    -------
    np.ndarray, shape (d,)
        The last iterate x_{K,0}.

    Examples
    --------
    >>> import numpy as np
    >>> from neurips25.perm_sgd import RandomReshuffling
    >>> a = np.array([1.0, 2.0, 3.0, 4.0])      # f_i(x) = (x - a_i)^2 / 2, minimiser mean(a)
    >>> x = permuted_sgd(lambda i, x: x - a[i], np.zeros(1), 4, 200, lambda q: 1 / (q + 2),
    ...                  RandomReshuffling(4, seed=0))
    >>> bool(abs(x[0] - 2.5) < 0.05)
    True
    """
    if not isinstance(policy, PermutationPolicy):
        raise TypeError(f"policy must be a PermutationPolicy, got {type(policy).__name__}")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n != policy.n:
        raise ValueError(f"n must be an int equal to policy.n={policy.n}, got {n!r}")
    if isinstance(epochs, bool) or not isinstance(epochs, (int, np.integer)) or epochs < 0:
        raise ValueError(f"epochs must be an int >= 0, got {epochs!r}")
    if not callable(grad_i):
        raise TypeError("grad_i must be callable as grad_i(i, x)")
    x = _float64(x0).reshape(-1).copy()
    if not np.isfinite(x).all():
        raise ValueError("x0 contains NaN or inf")
    lr_of = lr if callable(lr) else (lambda q: lr)
    if not callable(lr) and not (isinstance(lr, numbers.Real) and not isinstance(lr, bool) and lr > 0):
        raise ValueError(f"lr must be a float > 0 or a callable epoch -> float, got {lr!r}")
    for q in range(epochs):
        eta = float(lr_of(q))
        for i in policy.next_epoch():
            g = _float64(grad_i(int(i), x))
            policy.observe(int(i), g)
            x -= eta * g
        if callback is not None and callback(q, x) is False:
            break
    return x
