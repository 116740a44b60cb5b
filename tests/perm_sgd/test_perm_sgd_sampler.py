"""PyTorch glue: the sampler in DataLoaders (workers 0 and 2, batch sampler) and the gradient feeder."""

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from torch.utils.data import DataLoader, TensorDataset  # noqa: E402

from neurips25.perm_sgd import (  # noqa: E402
    FlipFlop,
    GraB,
    GradientBalancer,
    PairGraB,
    PermutationSampler,
    RandomReshuffling,
    make_blocks,
)


@pytest.fixture
def dataset():
    g = torch.Generator().manual_seed(0)
    X = torch.randn(24, 5, generator=g)
    y = torch.randint(0, 3, (24,), generator=g)
    return TensorDataset(X, y, torch.arange(24))


@pytest.fixture
def model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(5, 4), torch.nn.Tanh(), torch.nn.Linear(4, 3))


def epoch_indices(loader):
    return torch.cat([batch[-1] for batch in loader]).tolist()


@pytest.mark.parametrize("workers", [0, 2])
def test_sampler_in_dataloader_follows_policy(dataset, workers):
    # the order is drawn in the main process, so worker processes change nothing
    loader = DataLoader(dataset, batch_size=5, sampler=PermutationSampler(FlipFlop(24, seed=1), dataset=dataset),
                        num_workers=workers)
    ref = FlipFlop(24, seed=1)
    e0, e1 = epoch_indices(loader), epoch_indices(loader)
    assert e0 == ref.next_epoch().tolist()
    assert e1 == e0[::-1]
    assert len(loader) == 5


def test_block_batch_sampler_permutes_whole_blocks(dataset):
    blocks = make_blocks(24, 8, seed=0)
    sampler = PermutationSampler(RandomReshuffling(3, seed=0), blocks=blocks)
    loader = DataLoader(dataset, batch_sampler=sampler)
    got = [b[-1].tolist() for b in loader]
    assert sorted(map(tuple, got)) == sorted(tuple(b.tolist()) for b in blocks)
    assert sorted(sum(got, [])) == list(range(24))


def test_make_blocks_partitions():
    blocks = make_blocks(10, 3, seed=1)
    assert [len(b) for b in blocks] == [3, 3, 3, 1]
    assert sorted(np.concatenate(blocks).tolist()) == list(range(10))


def test_step_feeds_the_flattened_gradient(dataset, model):
    # GraB fed through the balancer orders exactly like GraB fed the same per-example gradients by hand
    X, y, _ = dataset.tensors
    policy, twin = GraB(24, seed=3), GraB(24, seed=3)
    balancer = GradientBalancer(policy, model)
    loader = DataLoader(dataset, batch_size=1, sampler=PermutationSampler(policy, dataset=dataset))
    for _ in range(2):
        twin_order = twin.next_epoch()
        for (xb, yb, ib), i in zip(loader, twin_order):
            assert int(ib) == int(i)
            model.zero_grad()
            torch.nn.functional.cross_entropy(model(xb), yb).backward()
            flat = torch.cat([p.grad.reshape(-1) for p in model.parameters()]).clone()
            assert balancer.step() == int(ib)
            twin.observe(int(i), flat)
    assert np.array_equal(policy.next_epoch(), twin.next_epoch())
    assert balancer.dim == sum(p.numel() for p in model.parameters())


def test_backward_per_example_matches_autograd(dataset, model):
    # oracle: .grad equals the ordinary mean-loss backward; per-example gradients equal a loop of backward
    X, y, _ = dataset.tensors
    policy = PairGraB(24, seed=0)
    order = policy.next_epoch()
    idx = torch.as_tensor(order[:6])
    balancer = GradientBalancer(policy, model)
    model.zero_grad()
    loss = balancer.backward(torch.nn.functional.cross_entropy, X[idx], y[idx], indices=idx)
    got = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    ref_loss = torch.nn.functional.cross_entropy(model(X[idx]), y[idx])
    ref_loss.backward()
    for g, p in zip(got, model.parameters()):
        assert torch.allclose(g, p.grad, atol=1e-6)
    assert float(loss) == pytest.approx(float(ref_loss.detach()), rel=1e-6)
    assert policy.position == 6
    # 6 examples = 3 complete pairs; a 7th opens a pair whose cached gradient must be a copy of its own
    policy._flush()  # the factored walk is deferred by up to factor_window examples
    assert policy._cache_index == -1
    e6 = order[6:7]
    model.zero_grad()
    balancer.backward(torch.nn.functional.cross_entropy, X[e6], y[e6], indices=e6)
    model.zero_grad()
    torch.nn.functional.cross_entropy(model(X[e6]), y[e6]).backward()
    flat6 = torch.cat([p.grad.reshape(-1) for p in model.parameters()])
    policy._flush()
    assert policy._cache_index == int(order[6])
    assert np.allclose(policy._cache, flat6.numpy(), atol=1e-6)


def test_non_gradient_policy_step_is_bookkeeping_only(model):
    policy = RandomReshuffling(3, seed=0)
    balancer = GradientBalancer(policy, model)
    order = policy.next_epoch()
    assert [balancer.step(int(i)) for i in order] == order.tolist()
    with pytest.raises(ValueError, match="already observed"):
        balancer.step(int(order[0]))


def test_bad_input_sampler_and_balancer(model):
    with pytest.raises(TypeError, match="must be a PermutationPolicy"):
        PermutationSampler([0, 1, 2])
    with pytest.raises(ValueError, match="owns 2 of the 2 blocks"):
        PermutationSampler(RandomReshuffling(3), blocks=make_blocks(10, 5))
    with pytest.raises(TypeError, match="torch.nn.Module"):
        GradientBalancer(GraB(3), "model")
    balancer = GradientBalancer(GraB(3, seed=0), model)
    balancer.policy.next_epoch()
    model.zero_grad(set_to_none=True)
    with pytest.raises(RuntimeError, match="call loss.backward"):
        balancer.step(int(balancer.policy.order[0]))
    with pytest.raises(ValueError, match="same leading batch"):
        balancer.backward(torch.nn.functional.cross_entropy, torch.randn(2, 5), torch.tensor([0, 1, 2]))
    with pytest.raises(ValueError, match="make_blocks: batch_size"):
        make_blocks(10, 0)


def test_linear_trick_and_vmap_feed_the_same_per_example_gradients(dataset, model):
    # the Linear fast path (one backward) and the torch.func path must hand GraB identical vectors
    X, y, _ = dataset.tensors
    fast, slow = GraB(24, seed=0), GraB(24, seed=0)
    order = fast.next_epoch()
    slow.next_epoch()
    bal_fast, bal_slow = GradientBalancer(fast, model), GradientBalancer(slow, model)
    assert bal_fast._linear is not None
    bal_slow._linear = None  # force torch.func.vmap
    for start in (0, 8, 16):
        idx = order[start:start + 8]
        model.zero_grad()
        bal_fast.backward(torch.nn.functional.cross_entropy, X[idx], y[idx], indices=idx)
        model.zero_grad()
        bal_slow.backward(torch.nn.functional.cross_entropy, X[idx], y[idx], indices=idx)
    fast._flush()  # the factored walk is deferred by up to GraB.factor_window examples
    assert np.allclose(fast._acc, slow._acc, atol=1e-5)
    assert np.allclose(fast._s, slow._s, atol=1e-5)
    assert np.array_equal(fast.next_epoch(), slow.next_epoch())


def test_non_linear_parameters_use_vmap(dataset):
    X, y, _ = dataset.tensors
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(5, 4), torch.nn.LayerNorm(4), torch.nn.Linear(4, 3))
    policy = GraB(24, seed=0)
    order = policy.next_epoch()
    balancer = GradientBalancer(policy, net)
    assert balancer._linear is None
    idx = order[:6]
    balancer.backward(torch.nn.functional.cross_entropy, X[idx], y[idx], indices=idx)
    got = [p.grad.clone() for p in net.parameters()]
    net.zero_grad()
    torch.nn.functional.cross_entropy(net(X[idx]), y[idx]).backward()
    assert all(torch.allclose(g, p.grad, atol=1e-6) for g, p in zip(got, net.parameters()))


def test_sampler_without_dataset_warns_that_the_length_is_unchecked():
    # a DataLoader never tells its sampler N: a GraB(100) sampler over 200 examples would train on a prefix
    from neurips25.perm_sgd import UncheckedLengthWarning

    with pytest.warns(UncheckedLengthWarning, match=r"policy.n=100 cannot be checked.*only the first 100"):
        sampler = PermutationSampler(GraB(100, seed=0))
    assert sorted(iter(sampler)) == list(range(100))
    with pytest.raises(ValueError, match="policy.n=100 but this rank .* owns 200"):
        PermutationSampler(GraB(100, seed=0), dataset=range(200))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # given dataset= or blocks=, nothing to warn about
        PermutationSampler(GraB(200, seed=0), dataset=range(200))
        PermutationSampler(RandomReshuffling(3, seed=0), blocks=make_blocks(24, 8, seed=0))
