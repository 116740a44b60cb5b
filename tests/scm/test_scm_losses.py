"""The SCM objective: closed forms, the gamma = 0 reduction, gradients, bad inputs."""

import numpy as np
import pytest
import torch

from neurips25.scm import logic_consistency_loss, scm_loss


def _sig(z):
    return 1 / (1 + np.exp(-z))


def _loop_logic(r, t, mask, reduce):
    """Slow transcription of -log(max(1e-8, 1 - p_r + p_r m)) with m pooled over valid tokens."""
    out = []
    for b in range(r.shape[0]):
        p_r = _sig(r[b, 1] - r[b, 0])
        p = [_sig(t[b, i, 1] - t[b, i, 0]) for i in range(t.shape[1]) if mask[b, i]]
        if not p:
            m = 0.0
        else:
            m = {"max": max(p), "mean": float(np.mean(p)), "min": min(p)}[reduce]
        out.append(-np.log(max(1e-8, 1 - p_r + p_r * m)))
    return float(np.mean(out))


@pytest.mark.parametrize("reduce", ["max", "mean", "min"])
def test_logic_matches_loop_transcription(reduce):
    g = torch.Generator().manual_seed(1)
    r, t = torch.randn(5, 2, generator=g, dtype=torch.float64), torch.randn(5, 7, 2, generator=g, dtype=torch.float64)
    mask = (torch.rand(5, 7, generator=g) > 0.3).double()
    mask[2] = 0  # a row without response tokens: m = 0
    got = float(logic_consistency_loss(r, t, mask, reduce))
    assert got == pytest.approx(_loop_logic(r.numpy(), t.numpy(), mask.numpy(), reduce), abs=1e-9)


def test_logic_hand_values():
    # p_r = 0.5, one token with p = 0.5: -log(1 - .5 + .25) = -log(.75)
    r = torch.zeros(1, 2)
    t = torch.zeros(1, 1, 2)
    assert float(logic_consistency_loss(r, t, torch.ones(1, 1))) == pytest.approx(-np.log(0.75), abs=1e-6)
    # a benign response (p_r ~ 0) is never penalised, whatever the tokens say
    r = torch.tensor([[20.0, -20.0]])
    assert float(logic_consistency_loss(r, torch.randn(1, 4, 2), torch.ones(1, 4))) < 1e-6
    # harmful response, every token benign: the penalty approaches -log(1e-8)
    r, t = torch.tensor([[-30.0, 30.0]]), torch.tensor([[[30.0, -30.0]]])
    assert float(logic_consistency_loss(r, t, torch.ones(1, 1))) == pytest.approx(-np.log(1e-8), rel=1e-3)


def test_logic_ignores_masked_positions():
    r, t = torch.randn(2, 2), torch.randn(2, 3, 2)
    mask = torch.tensor([[1, 1, 0], [1, 0, 0]])
    t2 = t.clone()
    t2[0, 2] = torch.tensor([-9.0, 9.0])  # a very harmful-looking masked token changes nothing
    assert torch.allclose(logic_consistency_loss(r, t, mask), logic_consistency_loss(r, t2, mask))


def test_gamma_zero_is_two_cross_entropies():
    g = torch.Generator().manual_seed(2)
    t, r = torch.randn(3, 4, 2, generator=g), torch.randn(3, 2, generator=g)
    labels = torch.tensor([[0, 1, -100, 1], [-100, 0, 0, 0], [1, -100, -100, 0]])
    y = torch.tensor([1, 0, 1])
    loss, parts = scm_loss(t, r, labels, y, torch.ones(3, 4), alpha=0.3, gamma=0.0)
    ce_t = torch.nn.functional.cross_entropy(t.reshape(-1, 2), labels.reshape(-1), ignore_index=-100)
    ce_r = torch.nn.functional.cross_entropy(r, y)
    assert float(loss) == pytest.approx(float(0.3 * ce_t + 0.7 * ce_r), abs=1e-6)
    assert parts["logic"] == 0.0


def test_gamma_adds_logic_term():
    t, r = torch.randn(2, 3, 2), torch.randn(2, 2)
    labels, y, mask = torch.zeros(2, 3, dtype=torch.long), torch.tensor([1, 0]), torch.ones(2, 3)
    l0, _ = scm_loss(t, r, labels, y, mask, alpha=0.5, gamma=0.0)
    l2, _ = scm_loss(t, r, labels, y, mask, alpha=0.5, gamma=2.0)
    assert float(l2 - l0) == pytest.approx(2 * float(logic_consistency_loss(r, t, mask)), abs=1e-6)


def test_gradcheck():
    g = torch.Generator().manual_seed(3)
    r = torch.randn(3, 2, generator=g, dtype=torch.float64, requires_grad=True)
    t = torch.randn(3, 4, 2, generator=g, dtype=torch.float64, requires_grad=True)
    mask = torch.ones(3, 4, dtype=torch.float64)
    for reduce in ("max", "mean", "min"):
        assert torch.autograd.gradcheck(lambda a, b, red=reduce: logic_consistency_loss(a, b, mask, red), (r, t))


def test_bad_inputs():
    r, t, m = torch.zeros(2, 2), torch.zeros(2, 3, 2), torch.ones(2, 3)
    with pytest.raises(ValueError, match="`token_logits` must have shape"):
        logic_consistency_loss(r, torch.zeros(2, 3), m)
    with pytest.raises(ValueError, match="`mask` must be a tensor of shape"):
        logic_consistency_loss(r, t, torch.ones(3, 2))
    with pytest.raises(ValueError, match="`reduce` must be one of"):
        logic_consistency_loss(r, t, m, "sum")
    with pytest.raises(ValueError, match="NaN"):
        logic_consistency_loss(torch.tensor([[float("nan"), 0.0], [0, 0]]), t, m)
    with pytest.raises(ValueError, match="`alpha` must be in"):
        scm_loss(t, r, None, None, m, alpha=1.5)
    with pytest.raises(ValueError, match="`token_labels` must have shape"):
        scm_loss(t, r, torch.zeros(2, 4, dtype=torch.long), None, m)
