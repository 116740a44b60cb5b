"""CTSketchLearner and ReinforceLearner: bank path = per-position path, true-program inference, fit."""

import pytest
import torch
from torch import nn

from neurips25.ctsketch import (
    CTSketchLearner,
    ProgramTree,
    ReinforceLearner,
    load_digits_split,
    make_tuples,
    sum_tree,
)


@pytest.fixture(scope="module")
def tree4():
    return sum_tree(4, seed=0)


def _net(seed=0):
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 10))


def test_bank_path_equals_per_position_path(tree4):
    # the image bank runs each distinct image once; loss and gradients must equal the per-position path
    bank = torch.randn(7, 6)
    index = torch.tensor([[0, 1, 1, 6], [2, 2, 2, 2], [3, 4, 5, 0]])
    y = torch.tensor([10.0, 3.0, 20.0])
    a, b = CTSketchLearner(_net(), tree4), CTSketchLearner(_net(), tree4)
    la, lb = a.loss(bank, y, index=index), b.loss(bank[index], y)
    la.backward()
    lb.backward()
    assert torch.allclose(la, lb)
    for pa, pb in zip(a.parameters(), b.parameters()):
        assert torch.allclose(pa.grad, pb.grad, atol=1e-6)


def test_predict_runs_the_true_program_on_argmax(tree4):
    learner = CTSketchLearner(_net(), tree4)
    x = torch.randn(5, 4, 6)
    sym = learner.predict_symbols(x)
    assert torch.equal(learner.predict(x), sym.sum(-1).double())


@pytest.fixture
def one_thread():
    old = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny matmuls: one thread is faster on a busy machine
    yield
    torch.set_num_threads(old)


def test_fit_learns_digits_from_pair_sums(one_thread):
    # end to end on real digits: NLL of the sum through a full-rank categorical sketch beats chance clearly
    x_tr, y_tr, x_te, y_te = load_digits_split(600, seed=0)
    index, sums = make_tuples(y_tr, 2, 1000, seed=0)
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
    tree = ProgramTree(lambda a, b: a + b, 2, 10, rank=19, output="onehot", vectorized=True, seed=0)
    learner = CTSketchLearner(net, tree)
    hist = learner.fit(x_tr, sums, index=index, epochs=3, batch_size=16, lr=3e-3, seed=0)
    assert hist["loss"][-1] < 0.5 * hist["loss"][0]
    acc = (learner.predict_symbols(x_te) == y_te).float().mean().item()
    assert acc > 0.6, acc


def test_reinforce_loss_has_gradients_and_baseline():
    learner = ReinforceLearner(_net(), lambda s: s.sum(-1).float(), 10, n_samples=4)
    loss = learner.loss(torch.randn(3, 4, 6), torch.tensor([4.0, 30.0, 12.0]))
    loss.backward()
    assert all(torch.isfinite(p.grad).all() for p in learner.parameters())
    with pytest.raises(ValueError, match="`n_samples`"):
        ReinforceLearner(_net(), lambda s: s.sum(-1), 10, n_samples=1)


def test_time_budget_stops_training(tree4):
    learner = CTSketchLearner(_net(), tree4)
    x, y = torch.randn(64, 4, 6), torch.randint(0, 37, (64,)).float()
    hist = learner.fit(x, y, epochs=1000, batch_size=8, time_budget=0.05)
    assert hist["stopped_early"] and len(hist["loss"]) < 1000


def test_bad_arguments(tree4):
    learner = CTSketchLearner(_net(), tree4)
    with pytest.raises(TypeError, match="`tree` must be a ProgramTree"):
        CTSketchLearner(_net(), object())
    with pytest.raises(ValueError, match="`loss`"):
        CTSketchLearner(_net(), tree4, loss="mse")
    with pytest.raises(ValueError, match="gaussian_nll.*rebin='moments'"):
        CTSketchLearner(_net(), tree4, loss="gaussian_nll")
    with pytest.raises(ValueError, match="`index` must hold rows"):
        learner.loss(torch.randn(3, 6), torch.ones(1), index=torch.tensor([[0, 1, 2, 3]]))
    with pytest.raises(ValueError, match="`perception` must map"):
        CTSketchLearner(nn.Linear(6, 7), tree4).loss(torch.randn(1, 4, 6), torch.ones(1))
    with pytest.raises(ValueError, match="`y` must be a 1-D tensor"):
        learner.fit(torch.randn(4, 4, 6), torch.ones(3))
    with pytest.raises(ValueError, match="`entropy_weight`"):
        CTSketchLearner(_net(), tree4, entropy_weight=-1.0)
