"""Checks at the public boundary: each names the argument and what was expected."""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["check_designs", "check_objectives", "check_pair", "check_positive_int", "check_violation"]


def _as_2d_float(a, name: str) -> np.ndarray:
    if hasattr(a, "detach"):  # a torch tensor
        a = a.detach().cpu().numpy()
    try:
        arr = np.asarray(a, dtype=float)
    except (TypeError, ValueError) as err:
        raise TypeError(f"`{name}` must be a numeric array, got {type(a).__name__}") from err
    if arr.ndim != 2:
        raise ValueError(f"`{name}` must be 2-D (n_samples, n_columns), got shape {arr.shape}")
    return arr


def check_objectives(F, name: str = "Y", min_rows: int = 1, min_objectives: int = 1) -> np.ndarray:
    """``F`` as a finite float array of shape (n, m) with n >= ``min_rows`` and m >= ``min_objectives``."""
    F = _as_2d_float(F, name)
    if F.shape[0] < min_rows:
        raise ValueError(f"`{name}` needs at least {min_rows} rows, got {F.shape[0]}")
    if F.shape[1] < min_objectives:
        raise ValueError(f"`{name}` needs at least {min_objectives} objectives (columns), got {F.shape[1]}")
    if not np.all(np.isfinite(F)):
        bad = int(np.sum(~np.isfinite(F).all(axis=1)))
        raise ValueError(f"`{name}` contains NaN or inf in {bad} row(s); objectives must be finite")
    return F


def check_designs(X, name: str = "X", xl=None, xu=None, min_rows: int = 1) -> np.ndarray:
    """``X`` as a finite float array (n, d), inside [``xl``, ``xu``] when bounds are given."""
    X = _as_2d_float(X, name)
    if X.shape[0] < min_rows:
        raise ValueError(f"`{name}` needs at least {min_rows} rows, got {X.shape[0]}")
    if not np.all(np.isfinite(X)):
        raise ValueError(f"`{name}` contains NaN or inf; designs must be finite")
    if xl is not None and xu is not None:
        xl, xu = (
            np.broadcast_to(np.asarray(xl, float), X.shape[1:]),
            np.broadcast_to(np.asarray(xu, float), X.shape[1:]),
        )
        tol = 1e-9 * np.maximum(1.0, np.abs(xu - xl))
        outside = (X < xl - tol) | (X > xu + tol)
        if outside.any():
            i, j = np.argwhere(outside)[0]
            raise ValueError(
                f"`{name}` has {int(outside.any(axis=1).sum())} design(s) outside the bounds; "
                f"e.g. row {i}, column {j}: {X[i, j]:.6g} not in [{xl[j]:.6g}, {xu[j]:.6g}]"
            )
    return X


def check_pair(X, Y, x_name: str = "X", y_name: str = "Y", xl=None, xu=None) -> tuple[np.ndarray, np.ndarray]:
    """Designs and objectives of an offline dataset: same row count, >= 2 objectives, finite."""
    X = check_designs(X, x_name, xl, xu, min_rows=2)
    Y = _as_2d_float(Y, y_name)
    if X.shape[0] != Y.shape[0]:
        raise ValueError(
            f"`{x_name}` and `{y_name}` must have the same number of rows, got {X.shape[0]} and {Y.shape[0]}"
        )
    if Y.shape[1] < 2:
        raise ValueError(
            f"`{y_name}` must have at least 2 objectives (columns) for multi-objective "
            f"optimisation, got {Y.shape[1]}"
        )
    return X, check_objectives(Y, y_name, min_rows=2, min_objectives=2)


def check_violation(cv, n: int, name: str = "cv") -> np.ndarray:
    """Constraint violation ``cv`` as a finite float array of shape (n,) with every entry >= 0."""
    if hasattr(cv, "detach"):
        cv = cv.detach().cpu().numpy()
    try:
        arr = np.asarray(cv, dtype=float)
    except (TypeError, ValueError) as err:
        raise TypeError(f"`{name}` must be a numeric array, got {type(cv).__name__}") from err
    if arr.ndim == 2 and arr.shape[1] == 1:  # pymoo returns CV as a column
        arr = arr[:, 0]
    if arr.shape != (n,):
        raise ValueError(f"`{name}` must have shape ({n},), one violation per design, got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"`{name}` contains NaN or inf; constraint violations must be finite")
    if np.any(arr < 0):
        raise ValueError(f"`{name}` must be >= 0 (0 = feasible, pymoo's CV), got min {arr.min():.6g}")
    return arr


def check_positive_int(value, name: str) -> int:
    """``value`` as an int >= 1."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"`{name}` must be a positive integer, got {value!r}")
    return int(value)
