"""BinAwareLoss: weights follow (1/freq)^beta; each term against a slow transcription of the formula."""

import numpy as np
import pytest
import torch
from torch.nn import functional as F

from neurips25.eareranker import BinAwareLoss, bin_weights


def test_weights_closed_form():
    counts = np.array([50, 30, 10, 5, 3, 2])
    for beta in (0.0, 0.5, 1.0):
        w = bin_weights(counts, beta)
        raw = (counts.sum() / counts) ** beta
        np.testing.assert_allclose(w, raw * counts.sum() / np.sum(counts * raw))
        assert np.sum(counts * w) / counts.sum() == pytest.approx(1.0)  # mean 1 over the examples
    assert np.allclose(bin_weights(counts, 0.0), 1.0)
    assert np.all(np.diff(bin_weights(counts, 0.5)) > 0)  # rarer bin -> larger weight


def test_empty_bin_gets_finite_weight():
    w = bin_weights([10, 0, 5], 0.5)
    assert np.all(np.isfinite(w)) and w[1] > w[2] > w[0]


def test_loss_matches_slow_formula():
    torch.manual_seed(0)
    counts = [40, 20, 10, 5, 3, 2]
    logits, pred = torch.randn(7, 6), torch.rand(7) * 100
    y, s = torch.tensor([0, 1, 2, 3, 4, 5, 0]), torch.rand(7) * 100
    loss = BinAwareLoss(counts, beta=0.5, ordinal_weight=0.3, huber_weight=2.0, delta=0.1)(logits, pred, y, s)
    w = bin_weights(counts, 0.5)
    p = logits.softmax(-1).numpy()
    ce = [-np.log(p[i, y[i]]) * w[y[i]] for i in range(7)]
    ordinal = [sum(p[i, b] * abs(b - int(y[i])) for b in range(6)) for i in range(7)]
    r = np.abs((pred - s).numpy() / 100)
    huber = np.where(r < 0.1, 0.5 * r ** 2, 0.1 * (r - 0.05)) / 0.1  # Huber / delta
    assert float(loss) == pytest.approx(np.mean(ce) + 0.3 * np.mean(ordinal) + 2.0 * np.mean(huber), rel=1e-5)


def test_plain_ce_limit():
    logits, y = torch.randn(5, 6), torch.tensor([0, 1, 2, 3, 5])
    loss = BinAwareLoss([9, 1, 1, 1, 1, 1], beta=0, ordinal_weight=0, huber_weight=0)(logits, torch.zeros(5), y,
                                                                                        torch.zeros(5))
    assert float(loss) == pytest.approx(float(F.cross_entropy(logits, y)))


def test_bad_inputs():
    with pytest.raises(ValueError, match="`bin_counts`"):
        bin_weights([5])
    with pytest.raises(ValueError, match="`beta`"):
        bin_weights([5, 5], beta=-1)
    with pytest.raises(ValueError, match="`ordinal_weight`"):
        BinAwareLoss([1, 1], ordinal_weight=float("nan"))
