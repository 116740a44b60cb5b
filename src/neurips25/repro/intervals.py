"""Student-t confidence intervals of a mean over seeds (or reps), shared by the reproductions.

A reproduction that averages a figure over ``k`` seeds reports the mean with an interval

    mean +- t_{q, k-1} * s / sqrt(k),     s = sample standard deviation (ddof = 1),

with ``q = 1 - (1 - level) / 2`` for a two-sided interval and ``q = level`` for a one-sided bound (the
upper end of a two-sided ``2 * level - 1`` interval). With few seeds the Student quantile matters: at
3 seeds it is 4.30, not the normal 1.96, so a normal interval would be less than half as wide as it should.
A paired comparison passes the per-seed differences ``a_s - b_s``. One value has no interval: its half
width is ``nan`` (never 0, which would read as certainty).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class MeanInterval:
    """The mean of ``n`` values and the ends of its interval at ``level``."""

    mean: float
    lo: float
    hi: float
    half: float
    sd: float
    n: int
    level: float

    def as_dict(self) -> dict:
        return {"mean": self.mean, "lo": self.lo, "hi": self.hi, "half": self.half, "sd": self.sd, "n": self.n,
                "level": self.level}


def t_quantile(q: float, df: int) -> float:
    """The ``q`` quantile of Student's t with ``df`` degrees of freedom."""
    from scipy.stats import t as student

    return float(student.ppf(q, df))


def mean_interval(values, level: float = 0.95, *, one_sided: bool = False) -> MeanInterval:
    """Mean of ``values`` (1-D, finite) with its Student-t interval at ``level``.

    ``one_sided=True`` gives the half width of a one-sided bound at ``level`` (``lo`` is then the lower
    confidence bound and ``hi`` the upper one, each one-sided).
    """
    if not isinstance(level, numbers.Real) or isinstance(level, bool) or not 0.0 < float(level) < 1.0:
        raise ValueError(f"level must be a number in (0, 1), got {level!r}")
    v = np.asarray(values, dtype=float)
    if v.ndim != 1 or v.size == 0:
        raise ValueError(f"values must be a non-empty 1-D sequence of numbers, got shape {v.shape}")
    if not np.all(np.isfinite(v)):
        raise ValueError("values must be finite (got NaN or inf)")
    k = int(v.size)
    mean = float(v.mean())
    if k < 2:
        return MeanInterval(mean, float("nan"), float("nan"), float("nan"), float("nan"), k, float(level))
    sd = float(v.std(ddof=1))
    q = float(level) if one_sided else 1.0 - (1.0 - float(level)) / 2.0
    half = t_quantile(q, k - 1) * sd / math.sqrt(k)
    return MeanInterval(mean, mean - half, mean + half, half, sd, k, float(level))


def bootstrap_interval(a, b=None, level: float = 0.95, *, n_boot: int = 2000, seed: int = 0,
                       statistic=np.mean) -> dict:
    """Percentile bootstrap interval of ``statistic(a - b)`` over paired units (or of ``statistic(a)``).

    ``a`` and ``b`` are 1-D, finite, the same length (the same units: datasets, items, seeds). Returns
    ``{"estimate", "lo", "hi", "n", "level"}``: a figures dict that :meth:`Criterion.interval` reads.
    """
    if not isinstance(level, numbers.Real) or isinstance(level, bool) or not 0.0 < float(level) < 1.0:
        raise ValueError(f"level must be a number in (0, 1), got {level!r}")
    if isinstance(n_boot, bool) or not isinstance(n_boot, numbers.Integral) or n_boot < 100:
        raise ValueError(f"n_boot must be an integer >= 100, got {n_boot!r}")
    x = np.asarray(a, dtype=float)
    if b is not None:
        y = np.asarray(b, dtype=float)
        if y.shape != x.shape:
            raise ValueError(f"a and b must be paired (same shape); got {x.shape} and {y.shape}")
        x = x - y
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"values must be a non-empty 1-D sequence, got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("values must be finite (got NaN or inf)")
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, x.size, size=(int(n_boot), x.size))
    stats = np.asarray([statistic(x[i]) for i in idx])
    q = (1.0 - float(level)) / 2.0
    return {"estimate": float(statistic(x)), "lo": float(np.quantile(stats, q)),
            "hi": float(np.quantile(stats, 1.0 - q)), "n": int(x.size), "level": float(level)}
