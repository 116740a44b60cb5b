"""Design metrics: Sim-Drag summary, novelty, coverage (definitions reconstructed, see docs/inverse3d.md).

* Novelty of a design: ``1 - max_train IoU(design, train)`` on solid voxels (0.5 threshold); higher = newer.
* Coverage (COV, as in point-cloud generation): the share of training shapes that are the nearest neighbour
  (highest IoU) of at least one design. With k designs over N shapes it cannot exceed k / N.
* Coverage without that cap (:func:`knn_coverage`, "density and coverage", Naeem et al. 2020): the share of
  training shapes with at least one design inside their own K-nearest-neighbour ball (distance 1 - IoU).
"""

from __future__ import annotations

import numpy as np


def _solid(x):
    x = np.asarray(x)
    if x.ndim < 2:
        raise ValueError(f"occupancies must be an array (n, ...); got shape {x.shape}")
    if len(x) == 0:
        raise ValueError("occupancies are empty: need at least one design / shape")
    return (x > 0.5).reshape(len(x), -1)


def iou_matrix(a, b):
    """Voxel IoU between every design in ``a`` (n, ...) and every shape in ``b`` (m, ...)."""
    A, B = _solid(a).astype(np.float32), _solid(b).astype(np.float32)
    if A.shape[1] != B.shape[1]:
        raise ValueError(f"grids differ: {A.shape[1]} vs {B.shape[1]} cells")
    inter = A @ B.T
    union = A.sum(1)[:, None] + B.sum(1)[None] - inter
    return inter / np.maximum(union, 1)


def novelty(designs, train):
    """Per-design ``1 - max IoU`` to the training set."""
    return 1.0 - iou_matrix(designs, train).max(1)


def coverage(designs, train):
    """Fraction of training shapes that are some design's nearest neighbour."""
    nn_idx = iou_matrix(designs, train).argmax(1)
    return len(np.unique(nn_idx)) / len(train)


def knn_coverage(designs, train, k=5):
    """Share of training shapes whose K-NN ball (radius: distance to their k-th nearest training shape, distance
    ``1 - IoU``) holds at least one design. One design can cover many shapes, so there is no k / N cap."""
    train = np.asarray(train)
    if len(train) <= k:
        raise ValueError(f"`k` must be below the number of training shapes ({len(train)}); got {k}")
    if len(designs) == 0:
        raise ValueError("`designs` is empty: coverage needs at least one design")
    d_tt = 1.0 - iou_matrix(train, train)
    radius = np.sort(d_tt, axis=1)[:, k]  # column 0 is the shape itself
    d_dt = 1.0 - iou_matrix(designs, train)
    return float((d_dt <= radius[None]).any(0).mean())


def bootstrap_ci(x, n_boot=2000, seed=0, level=0.95):
    """Percentile bootstrap interval of the mean."""
    x = np.asarray(x, dtype=float)
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, len(x), size=(n_boot, len(x)))].mean(1)
    a = (1 - level) / 2
    return float(np.quantile(means, a)), float(np.quantile(means, 1 - a))
