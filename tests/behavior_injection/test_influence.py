"""The per-step influence identity, the first-order prediction and the readiness statistics."""

import numpy as np
import pytest
import torch

from neurips25.behavior_injection import (
    co_influence,
    first_order_check,
    frac_zero_std,
    influence_identity_error,
    informativeness,
    sample_groups,
)


@pytest.fixture()
def groups(model64, tok, task):
    rng = np.random.default_rng(3)
    qs = task.samples(6)
    reward = lambda q, c: float(rng.random() < 0.5)  # any binary reward: the identity is exact for all
    torch.manual_seed(0)
    return sample_groups(model64, tok, qs, reward, lambda q: q.question, n=8, max_new_tokens=10)


def test_identity_holds_and_fails_without_std(model64, groups):
    g = next(g for g in groups if 0 < g.alpha < 1)
    assert influence_identity_error(model64, g)["rel_error"] < 1e-6
    centred = torch.as_tensor(g.rewards - g.rewards.mean())
    assert influence_identity_error(model64, g, advantages=centred)["rel_error"] > 0.1


def test_first_order_prediction(model64, groups):
    fo = first_order_check(model64, groups[:3], groups[3:])
    assert fo["pearson_r"] > 0.95  # forward one-step change: first order plus a small second-order term
    fo = first_order_check(model64, groups[:3], groups[3:], central=True)
    scale = np.abs(fo["predicted"]).max()
    assert np.allclose(fo["predicted"], fo["measured"], rtol=0, atol=0.02 * scale)


def test_co_influence_is_symmetric_after_weights(model64, groups):
    ci = co_influence(model64, groups)
    C, a = ci["C"], np.array(ci["alpha"])
    w = np.sqrt(a * (1 - a))
    G = C / w[:, None]  # <d_i, d_j> must be symmetric with a non-negative diagonal
    assert np.allclose(G, G.T, rtol=1e-8, atol=1e-12) and np.all(np.diag(G) >= 0)
    assert -1 <= ci["cosine"] <= 1


def test_readiness_statistics():
    a = np.array([0.0, 0.5, 1.0, 0.25])
    assert informativeness(a) == pytest.approx((0.5 + np.sqrt(0.1875)) / 4)
    assert frac_zero_std(a) == 0.5
    with pytest.raises(ValueError, match="`alpha` must lie in"):
        informativeness([0.5, 1.2])
    with pytest.raises(ValueError, match="1-D array"):
        frac_zero_std(np.zeros((2, 2)))
