"""Boundary checks shared by the public entry points; each message names the argument and what was expected."""

from __future__ import annotations

import numbers

import numpy as np


def as_embeddings(x, name: str, *, ndim: int = 2) -> np.ndarray:
    """``x`` as a finite float32 array of ``ndim`` dimensions (rows = items, columns = embedding features)."""
    try:
        arr = np.asarray(x, dtype=np.float32)
    except (TypeError, ValueError) as err:
        raise TypeError(f"`{name}` must be a numeric array of embeddings; got {type(x).__name__}") from err
    if arr.ndim != ndim:
        want = "(n, d)" if ndim == 2 else "(d,)"
        raise ValueError(f"`{name}` must be {ndim}-D with shape {want}; got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"`{name}` is empty; got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        bad = int(np.sum(~np.isfinite(arr)))
        raise ValueError(f"`{name}` contains {bad} NaN or infinite value(s); embeddings must be finite")
    return arr


def as_scores(s, name: str, n: int | None = None) -> np.ndarray:
    """``s`` as a finite float array of adequacy scores in [0, 100] (length ``n`` when given)."""
    try:
        arr = np.asarray(s, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError(f"`{name}` must be numeric adequacy scores in [0, 100]; got {err}") from err
    if arr.ndim != 1:
        raise ValueError(f"`{name}` must be 1-D (one score per pair); got shape {arr.shape}")
    if n is not None and arr.shape[0] != n:
        raise ValueError(f"`{name}` has {arr.shape[0]} entries but there are {n} pairs")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"`{name}` contains NaN or infinite values; scores must be finite in [0, 100]")
    if arr.size and (arr.min() < 0 or arr.max() > 100):
        raise ValueError(f"`{name}` must lie in [0, 100]; got range [{arr.min():g}, {arr.max():g}]")
    return arr


def positive_int(v, name: str, minimum: int = 1) -> int:
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or int(v) < minimum:
        raise ValueError(f"`{name}` must be an integer >= {minimum}; got {v!r}")
    return int(v)


def unit_interval(v, name: str) -> float:
    """A real number in [0, 1) (dropout, fractions)."""
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not 0 <= float(v) < 1:
        raise ValueError(f"`{name}` must be in [0, 1); got {v!r}")
    return float(v)


def nonneg_real(v, name: str) -> float:
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not np.isfinite(v) or v < 0:
        raise ValueError(f"`{name}` must be a finite real number >= 0; got {v!r}")
    return float(v)
