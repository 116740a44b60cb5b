"""Offline data for the perm_sgd experiments: generated vectors and scikit-learn's bundled datasets.

- :func:`herding_vectors`: centred z_i ~ U[0, 1]^d, the toy of GraB's Figure 1 (Lu et al. 2022);
- :func:`sorted_order`: an adversarial fixed order of such vectors (prefix sums grow linearly);
- :func:`load_binary`: ``breast_cancer`` or ``digits`` (digit >= 5 vs < 5), standardised, with an
  intercept column, rows scaled to unit norm (so every f_i is (1/4 + alpha)-smooth);
- :func:`load_digits_multiclass` and :func:`label_skew_split` for the federated experiment.
"""

from __future__ import annotations

import numpy as np

__all__ = ["herding_vectors", "sorted_order", "load_binary", "load_digits_multiclass", "label_skew_split"]


def herding_vectors(n: int, d: int = 128, seed: int | None = None) -> np.ndarray:
    """n vectors z_i ~ U[0, 1]^d minus their mean, shape (n, d), float64."""
    if n < 1 or d < 1:
        raise ValueError(f"n and d must be >= 1, got n={n}, d={d}")
    Z = np.random.default_rng(seed).random((n, d))
    return Z - Z.mean(axis=0)


def sorted_order(vectors: np.ndarray) -> np.ndarray:
    """Order the vectors by their projection on the top principal direction (an adversarial IG order).

    Consecutive vectors then point the same way, so the centred prefix sums grow like n.
    """
    V = np.asarray(vectors, dtype=np.float64)
    V = V - V.mean(axis=0)
    _, _, vt = np.linalg.svd(V, full_matrices=False)
    return np.argsort(V @ vt[0], kind="stable")


def _standardise(X: np.ndarray) -> np.ndarray:
    X = (X - X.mean(axis=0)) / np.where(X.std(axis=0) > 0, X.std(axis=0), 1.0)
    X = np.hstack([X, np.ones((X.shape[0], 1))])
    return X / np.linalg.norm(X, axis=1, keepdims=True)


def load_binary(name: str) -> tuple[np.ndarray, np.ndarray]:
    """A bundled binary classification set: X of unit-norm rows (with intercept), y in {-1, +1}.

    Parameters
    ----------
    name : {"breast_cancer", "digits"}
        ``breast_cancer``: 569 x 31; ``digits``: 1797 x 65, label = (digit >= 5).
    """
    from sklearn.datasets import load_breast_cancer, load_digits

    if name == "breast_cancer":
        X, y = load_breast_cancer(return_X_y=True)
    elif name == "digits":
        X, y = load_digits(return_X_y=True)
        y = (y >= 5).astype(int)
    else:
        raise ValueError(f"name must be 'breast_cancer' or 'digits', got {name!r}")
    return _standardise(X.astype(np.float64)), 2.0 * y - 1.0


def load_digits_multiclass() -> tuple[np.ndarray, np.ndarray]:
    """sklearn digits (1797 x 64, 10 classes), standardised, intercept column added (no row scaling)."""
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    X = (X - X.mean(axis=0)) / np.where(X.std(axis=0) > 0, X.std(axis=0), 1.0)
    return np.hstack([X, np.ones((X.shape[0], 1))]), y.astype(np.int64)


def label_skew_split(y: np.ndarray, n_clients: int, classes_per_client: int = 2,
                     seed: int | None = None) -> list[np.ndarray]:
    """Pathological label-skew partition: each client holds examples of ``classes_per_client`` labels.

    The examples of each class are sorted into ``n_clients * classes_per_client / n_classes`` shards
    and the shards are dealt to the clients at random (McMahan et al. 2017's split).

    Returns
    -------
    list of np.ndarray
        ``n_clients`` index arrays that partition ``range(len(y))``.
    """
    y = np.asarray(y)
    rng = np.random.default_rng(seed)
    n_shards = n_clients * classes_per_client
    # sort by label, cut into equal shards, deal them out at random
    idx = np.argsort(y, kind="stable")
    shards = np.array_split(idx, n_shards)
    deal = rng.permutation(n_shards).reshape(n_clients, classes_per_client)
    return [np.sort(np.concatenate([shards[s] for s in row])) for row in deal]
