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


def test_fit_learns_digits_from_pair_sums():
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


def test_nan_and_out_of_image_labels_are_rejected(tree4):
    # issue 29: a NaN label used to train silently (loss history [nan]); sums of 4 digits lie in 0..36
    learner = CTSketchLearner(_net(), tree4)
    x = torch.randn(3, 4, 6)
    with pytest.raises(ValueError, match="NaN or infinite labels \\(first at position 1\\)"):
        learner.fit(x, torch.tensor([3.0, float("nan"), 5.0]))
    for bad in (-50.0, 400.0, 4.5):
        with pytest.raises(ValueError, match=f"outside the program's image .*0, 36.*bad label: {bad:g}"):
            learner.fit(x, torch.tensor([3.0, bad, 5.0]))
    with pytest.raises(ValueError, match="outside the program's image"):
        learner.loss(x, torch.tensor([3.0, 37.0, 5.0]))
    with pytest.raises(ValueError, match="NaN or infinite labels"):
        ReinforceLearner(_net(), lambda s: s.sum(-1).float(), 10).fit(x, torch.tensor([1.0, float("inf"), 2.0]))


def test_wrong_input_width_names_the_width(tree4):
    # issue 29: 63-feature images gave torch's "mat1 and mat2 shapes cannot be multiplied"
    learner = CTSketchLearner(_net(), tree4)
    with pytest.raises(ValueError, match="`x` has input width 5 .* expects 6 features"):
        learner.loss(torch.randn(2, 4, 5), torch.tensor([3.0, 4.0]))
    with pytest.raises(ValueError, match="`x` has input width 5"):
        learner.fit(torch.randn(7, 5), torch.ones(1), index=torch.tensor([[0, 1, 2, 3]]))

    class Wrapped(nn.Module):  # not a Sequential: the deep error is translated instead
        def __init__(self):
            super().__init__()
            self.body = _net()

        def forward(self, x):
            return self.body(x)

    with pytest.raises(ValueError, match="`perception` failed on inputs of shape \\(5,\\) each \\(input width 5\\)"):
        CTSketchLearner(Wrapped(), tree4).loss(torch.randn(2, 4, 5), torch.tensor([3.0, 4.0]))


def test_interrupted_fit_resumes_to_the_same_parameters(tree4, tmp_path):
    # issue 29: paper-scale cells checkpoint every epoch; an interruption must not change the result
    x, y = torch.randn(48, 4, 6), torch.randint(0, 37, (48,)).float()
    ref = CTSketchLearner(_net(1), tree4)
    ref.fit(x, y, epochs=3, batch_size=8, seed=4)

    def interrupt(epoch, hist):
        if epoch == 1:
            raise KeyboardInterrupt

    ckpt = tmp_path / "cell.pt"
    with pytest.raises(KeyboardInterrupt):
        CTSketchLearner(_net(1), tree4).fit(x, y, epochs=3, batch_size=8, seed=4, checkpoint=ckpt, callback=interrupt)
    resumed = CTSketchLearner(_net(1), tree4)
    hist = resumed.fit(x, y, epochs=3, batch_size=8, seed=4, checkpoint=ckpt)
    assert hist["resumed_from"] == 2 and len(hist["loss"]) == 3 and hist["steps"] == 18
    for pa, pb in zip(ref.parameters(), resumed.parameters()):
        assert torch.equal(pa, pb)
    with pytest.raises(ValueError, match="`checkpoint_every`"):
        resumed.fit(x, y, checkpoint=ckpt, checkpoint_every=0)


def test_loss_auto_docstring_warns_about_the_mean_only_l1():
    # issue 29: "auto" is the paper's L1 on value trees; its docstring must say it constrains only the mean
    doc = CTSketchLearner.__doc__
    assert "constrains only each symbol's MEAN" in doc and "72%" in doc and "20%" in doc
