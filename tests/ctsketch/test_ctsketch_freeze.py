"""The moments re-binning kernel floor (issue 44): a confident network keeps learning at N = 256.

v2's paper-scale curriculum+moments run did not change a single weight in its N = 256 and 1,024 stages.
Cause (reproduced here): with ``sigma = 2 Var + 1e-2`` a confident network's nodes re-bin into one-hot
softmaxes whose Jacobians (about ``exp(-1 / sigma)``) multiply to exactly 0 in float32 over the levels.
"""

import pytest
import torch
from torch import nn

import neurips25.ctsketch.tree as tree_module
from neurips25.ctsketch import CTSketchLearner, make_tuples, sum_tree


@pytest.fixture(scope="module")
def tree256():
    return sum_tree(256, rebin="moments", seed=0)


def _confident_but_wrong(scale: float = 12.0) -> nn.Linear:
    """Maps one-hot digit codes to confident logits, with digits 3 and 5 swapped (so sums are off)."""
    net = nn.Linear(10, 10)
    with torch.no_grad():
        net.weight.copy_(scale * torch.eye(10)[[0, 1, 2, 5, 4, 3, 6, 7, 8, 9]])
        net.bias.zero_()
    return net


def _data():
    digits = torch.randint(0, 10, (200,), generator=torch.Generator().manual_seed(0))
    index, sums = make_tuples(digits, 256, 8, 0)
    return nn.functional.one_hot(digits, 10).float(), sums.float(), index


def test_a_confident_network_gets_a_gradient_at_n256(tree256, monkeypatch):
    x, y, index = _data()
    net = _confident_but_wrong()
    CTSketchLearner(net, tree256, loss="gaussian_nll").loss(x, y, index).backward()
    assert net.weight.grad.abs().sum() > 0
    # the v2 floor is what froze it: the same network gets exactly zero gradient
    monkeypatch.setattr(tree_module, "MOMENTS_SIGMA_FLOOR", 1e-2)
    old = _confident_but_wrong()
    CTSketchLearner(old, tree256, loss="gaussian_nll").loss(x, y, index).backward()
    assert old.weight.grad.abs().sum() == 0


def test_training_at_n256_starts_and_progresses(tree256, monkeypatch):
    x, y, index = _data()
    net = _confident_but_wrong(4.0)  # confident (max p ~0.9), digits 3 and 5 swapped
    learner = CTSketchLearner(net, tree256, loss="gaussian_nll")
    with torch.no_grad():
        before = learner.loss(x, y, index).item()
    hist = learner.fit(x, y, index=index, epochs=10, batch_size=8, lr=1e-2, seed=0)
    assert hist["steps"] == 10
    with torch.no_grad():
        assert learner.loss(x, y, index).item() < before - 0.02
    # the v2 freeze itself: a very confident network under the v2 floor does not move a single bit
    monkeypatch.setattr(tree_module, "MOMENTS_SIGMA_FLOOR", 1e-2)
    frozen = _confident_but_wrong(12.0)
    w0 = frozen.weight.detach().clone()
    CTSketchLearner(frozen, tree256, loss="gaussian_nll").fit(x, y, index=index, epochs=3, batch_size=8, lr=1e-2)
    assert torch.equal(frozen.weight.detach(), w0)
    monkeypatch.undo()
    moving = _confident_but_wrong(12.0)
    CTSketchLearner(moving, tree256, loss="gaussian_nll").fit(x, y, index=index, epochs=3, batch_size=8, lr=1e-2)
    assert (moving.weight.detach() - w0).abs().max() > 1e-3
