"""Regressions for the silent-wrong cases of the v1 review: dataset length, out-of-order batches,
reduction="sum", numpy scalars, random layers under vmap."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch.utils.data import DataLoader, TensorDataset  # noqa: E402

from neurips25.perm_sgd import (  # noqa: E402
    GraB,
    GradientBalancer,
    PermutationSampler,
    RandomReshuffling,
    RegularizedParticipation,
    fedavg,
    permuted_sgd,
)
from neurips25.perm_sgd.problems import L2LogisticRegression  # noqa: E402


@pytest.fixture
def data():
    g = torch.Generator().manual_seed(0)
    return torch.randn(16, 5, generator=g), torch.randint(0, 3, (16,), generator=g)


def mlp(dropout=0.0):
    torch.manual_seed(0)
    layers = [torch.nn.Linear(5, 4), torch.nn.Tanh()] + ([torch.nn.Dropout(dropout)] if dropout else [])
    return torch.nn.Sequential(*layers, torch.nn.Linear(4, 3))


def test_sampler_checks_dataset_length_against_policy_n(data):
    ds = TensorDataset(*data)
    with pytest.raises(ValueError, match=r"policy.n=10 .*owns 16 .*n=16"):
        PermutationSampler(GraB(10), dataset=ds)
    assert sorted(PermutationSampler(GraB(16, seed=0), dataset=ds)) == list(range(16))


def test_balancer_refuses_batches_it_cannot_place(data):
    X, y = data
    policy = GraB(16, seed=0)
    balancer = GradientBalancer(policy, mlp())
    loader = DataLoader(TensorDataset(X, y), batch_size=4, shuffle=True)  # not the policy's order
    policy.next_epoch()
    xb, yb = next(iter(loader))
    with pytest.raises(ValueError, match="cannot tell which units.*indices="):
        balancer.backward(torch.nn.functional.cross_entropy, xb, yb)
    with pytest.raises(ValueError, match="cannot tell which units.*index="):
        balancer.step()
    assert policy.position == 0  # nothing was attributed
    # through the sampler the same call is accepted, batch after batch
    loader = DataLoader(TensorDataset(X, y), batch_size=4, sampler=PermutationSampler(policy, dataset=X))
    for xb, yb in loader:
        balancer.backward(torch.nn.functional.cross_entropy, xb, yb)
    assert policy.position == 16


@pytest.mark.parametrize("linear_path", [True, False])
def test_reduction_sum_matches_autograd_in_both_paths(data, linear_path):
    X, y = data
    model = mlp()
    policy = GraB(16, seed=0)
    order = policy.next_epoch()
    balancer = GradientBalancer(policy, model)
    if not linear_path:
        balancer._linear = None
    idx = order[:8]
    loss_fn = torch.nn.CrossEntropyLoss(reduction="sum")
    model.zero_grad()
    loss = balancer.backward(loss_fn, X[idx], y[idx], indices=idx, reduction="sum")
    got = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    ref = loss_fn(model(X[idx]), y[idx])
    ref.backward()
    assert float(loss) == pytest.approx(float(ref.detach()), rel=1e-5)
    for g, p in zip(got, model.parameters()):
        assert torch.allclose(g, p.grad, atol=1e-5)
    with pytest.raises(ValueError, match="reduction='sum' .*reduction='mean'|has reduction='sum'"):
        balancer.backward(loss_fn, X[order[8:10]], y[order[8:10]], indices=order[8:10])


def test_numpy_scalars_are_accepted():
    a = np.array([1.0, 2.0, 3.0, 4.0])
    x = permuted_sgd(lambda i, x: x - a[i], np.zeros(1), np.int64(4), np.int32(20), np.float32(0.1),
                     RandomReshuffling(4, seed=0))
    assert abs(x[0] - 2.5) < 0.2
    assert GraB(np.int64(5), c=np.float32(0.5), balance="probabilistic").c == 0.5
    x = fedavg(lambda c, x, rng: x - a[c], np.zeros(1), RegularizedParticipation(4, 2, seed=0), 10, 2,
               np.float32(0.1), server_lr=np.float64(1.0))
    assert np.isfinite(x).all()
    Xn = np.random.default_rng(0).normal(size=(8, 3))
    L2LogisticRegression(Xn, np.sign(Xn[:, 0]) + (Xn[:, 0] == 0), alpha=np.float32(0.1))


def test_random_layers_under_vmap_name_the_fix(data):
    X, y = data
    model = mlp(dropout=0.5)
    model.train()
    torch.nn.init.zeros_(model[-1].bias)
    # an extra non-Linear parameter forces the vmap path
    model.register_parameter("scale", torch.nn.Parameter(torch.ones(1)))
    policy = GraB(16, seed=0)
    order = policy.next_epoch()
    balancer = GradientBalancer(policy, model)
    assert balancer._linear is None
    with pytest.raises(RuntimeError, match="randomness='different'"):
        balancer.backward(torch.nn.functional.cross_entropy, X[order[:4]], y[order[:4]], indices=order[:4])
    ok = GradientBalancer(policy, model, randomness="different")
    ok.backward(torch.nn.functional.cross_entropy, X[order[:4]], y[order[:4]], indices=order[:4])
    assert policy.position == 4
    with pytest.raises(ValueError, match="randomness must be"):
        GradientBalancer(policy, model, randomness="sometimes")
