"""The bin-aware weighted loss.

Stated by the paper: a "bin-aware weighted loss". Reconstructed (configurable):

    L = mean_i w_{y_i} CE(p_i, y_i)  +  mu mean_i sum_b p_i(b) |b - y_i|  +  lambda mean_i Huber_d(s_hat_i - s_i) / d

with class weights ``w_b ∝ (1 / freq_b)^beta`` normalised so that ``mean_i w_{y_i} = 1`` over the training set.
The ``mu`` (ordinal) term makes a one-bin miss cheaper than a five-bin miss; the Huber term (on the 0-1 scale,
threshold ``d = delta``, divided by ``d`` so its gradient is O(1) like the CE's: smooth L1) trains the score head
that ranks. ``beta = 0`` and ``mu = 0`` give plain cross-entropy.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from neurips25.eareranker.checks import nonneg_real


def bin_weights(bin_counts, beta: float = 0.5) -> np.ndarray:
    """``w_b ∝ (1 / freq_b)^beta`` with ``sum_b count_b w_b = sum_b count_b`` (mean 1 over the examples).

    Empty bins get the weight of a bin with one example.

    >>> bin_weights([30, 10], beta=1.0).round(3).tolist()
    [0.667, 2.0]
    """
    c = np.asarray(bin_counts, dtype=np.float64)
    if c.ndim != 1 or c.size < 2 or np.any(c < 0) or not np.all(np.isfinite(c)) or c.sum() <= 0:
        raise ValueError(f"`bin_counts` must be >= 2 non-negative counts with a positive total; got {bin_counts!r}")
    beta = nonneg_real(beta, "beta")
    w = (c.sum() / np.maximum(c, 1.0)) ** beta
    return w * c.sum() / np.sum(c * w)


class BinAwareLoss(nn.Module):
    """Weighted CE + ordinal expected-distance + Huber score loss (module docstring).

    Parameters
    ----------
    bin_counts : sequence of int
        Training examples per bin (gives the weights ``w_b``).
    beta : float, default 0.5
        Exponent of the inverse-frequency weights (0 = unweighted).
    ordinal_weight : float, default 0.5
        mu.
    huber_weight : float, default 1.0
        lambda.
    delta : float, default 0.1
        Huber threshold d on the 0-1 score scale (> 0).

    Notes
    -----
    ``forward(bin_logits (B, n_bins), score_pred (B,) in [0, 100], bins (B,) long, scores (B,))`` -> scalar.
    """

    def __init__(self, bin_counts, beta: float = 0.5, ordinal_weight: float = 0.5, huber_weight: float = 1.0,
                 delta: float = 0.1):
        super().__init__()
        self.beta, self.mu = nonneg_real(beta, "beta"), nonneg_real(ordinal_weight, "ordinal_weight")
        self.lam, self.delta = nonneg_real(huber_weight, "huber_weight"), nonneg_real(delta, "delta")
        if self.delta <= 0:
            raise ValueError(f"`delta` must be > 0; got {delta!r}")
        w = torch.as_tensor(bin_weights(bin_counts, self.beta), dtype=torch.float32)
        self.register_buffer("weights", w)
        self.register_buffer("positions", torch.arange(w.numel(), dtype=torch.float32))

    def forward(self, bin_logits, score_pred, bins, scores):
        ce = F.cross_entropy(bin_logits, bins, reduction="none")
        loss = (self.weights[bins] * ce).mean()
        if self.mu:
            p = bin_logits.softmax(-1)
            dist = (self.positions[None, :] - bins[:, None].float()).abs()
            loss = loss + self.mu * (p * dist).sum(-1).mean()
        if self.lam:
            loss = loss + self.lam * F.smooth_l1_loss(score_pred / 100.0, scores / 100.0, beta=self.delta)
        return loss
