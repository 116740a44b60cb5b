"""The adequacy rubric: four dimension scores -> one score in [0, 100] -> one of six bins.

Stated by the paper: adequacy is built from verifiability, coverage, completeness and structural quality, and
is reported in six bins "with varying ranges". Reconstructed (configurable): the weighted-sum aggregation, the
equal weights and the bin edges ``(0, 20, 40, 60, 75, 90, 100)``.
"""

from __future__ import annotations

import numbers

import numpy as np

DIMENSIONS = ("verifiability", "coverage", "completeness", "structure")
DEFAULT_EDGES = (0.0, 20.0, 40.0, 60.0, 75.0, 90.0, 100.0)
DEFAULT_NAMES = ("inadequate", "poor", "partial", "fair", "good", "excellent")


class AdequacyRubric:
    """Weighted four-dimension adequacy score and its bins.

    ``s = sum_j w_j s_j`` over the dimensions of :data:`DIMENSIONS` (each ``s_j`` in [0, 100]); bin ``b`` holds
    ``edges[b] <= s < edges[b + 1]`` (the last bin also holds 100).

    Parameters
    ----------
    weights : sequence of 4 non-negative reals, default (0.25,) * 4
        ``w_j``; normalised to sum to 1.
    bin_edges : increasing sequence, default (0, 20, 40, 60, 75, 90, 100)
        ``len(bin_edges) - 1`` bins; must start at 0, end at 100 and be strictly increasing.
    bin_names : sequence of str, optional
        One name per bin (default: inadequate, poor, partial, fair, good, excellent for six bins).

    Examples
    --------
    >>> r = AdequacyRubric()
    >>> float(r.score([100, 100, 60, 20]))
    70.0
    >>> int(r.to_bin(70.0)), r.bin_names[3]
    (3, 'fair')
    """

    def __init__(self, weights=(0.25, 0.25, 0.25, 0.25), bin_edges=DEFAULT_EDGES, bin_names=None):
        w = np.asarray(weights, dtype=np.float64)
        if w.shape != (len(DIMENSIONS),) or not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
            raise ValueError(f"`weights` must be {len(DIMENSIONS)} non-negative numbers with a positive sum "
                             f"(one per dimension {DIMENSIONS}); got {weights!r}")
        e = np.asarray(bin_edges, dtype=np.float64)
        if e.ndim != 1 or e.size < 3 or not np.all(np.isfinite(e)):
            raise ValueError(f"`bin_edges` must be a 1-D sequence of at least 3 finite numbers; got {bin_edges!r}")
        if np.any(np.diff(e) <= 0):
            raise ValueError(f"`bin_edges` must be strictly increasing (sorted, no repeats); got {bin_edges!r}")
        if e[0] != 0 or e[-1] != 100:
            raise ValueError(f"`bin_edges` must start at 0 and end at 100; got {bin_edges!r}")
        n = e.size - 1
        if bin_names is None:
            bin_names = DEFAULT_NAMES if n == len(DEFAULT_NAMES) else tuple(f"bin{b}" for b in range(n))
        if len(bin_names) != n:
            raise ValueError(f"`bin_names` must give one name per bin ({n}); got {len(bin_names)}")
        self.weights = w / w.sum()
        self.bin_edges = e
        self.bin_names = tuple(str(b) for b in bin_names)

    @property
    def n_bins(self) -> int:
        return self.bin_edges.size - 1

    def score(self, dim_scores) -> np.ndarray:
        """``s = sum_j w_j s_j``; ``dim_scores`` has shape (4,) or (n, 4), values in [0, 100]."""
        d = np.asarray(dim_scores, dtype=np.float64)
        if d.shape[-1:] != (len(DIMENSIONS),) or d.ndim > 2:
            raise ValueError(f"`dim_scores` must have shape (4,) or (n, 4) (columns {DIMENSIONS}); got {d.shape}")
        if not np.all(np.isfinite(d)) or d.min() < 0 or d.max() > 100:
            raise ValueError("`dim_scores` must be finite and lie in [0, 100]")
        return d @ self.weights

    def to_bin(self, score) -> np.ndarray:
        """Bin index of each score (0 .. n_bins - 1)."""
        if isinstance(score, numbers.Real):
            score = float(score)
        s = np.asarray(score, dtype=np.float64)
        if not np.all(np.isfinite(s)) or (s.size and (s.min() < 0 or s.max() > 100)):
            raise ValueError("`score` must be finite and lie in [0, 100]")
        return np.clip(np.searchsorted(self.bin_edges, s, side="right") - 1, 0, self.n_bins - 1)

    def get_config(self) -> dict:
        return {"weights": self.weights.tolist(), "bin_edges": self.bin_edges.tolist(),
                "bin_names": list(self.bin_names)}

    def __repr__(self) -> str:
        return f"AdequacyRubric(weights={self.weights.tolist()}, bin_edges={self.bin_edges.tolist()})"
