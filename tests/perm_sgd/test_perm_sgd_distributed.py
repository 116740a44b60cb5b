"""Distributed use: PermutationSampler shards with set_epoch, and CD-GraB over two gloo processes (CPU)."""

import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

from neurips25.perm_sgd import CDGraB, GradientBalancer, PermutationSampler, RandomReshuffling  # noqa: E402

N, R, EPOCHS, BATCH = 16, 2, 3, 4


def _data():
    g = torch.Generator().manual_seed(0)
    return torch.randn(N, 5, generator=g), torch.randint(0, 3, (N,), generator=g)


def _worker(rank: int, init: str, out: str) -> None:
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=R)
    X, y = _data()
    torch.manual_seed(0)  # the same initial model on both ranks, as DDP would broadcast
    model = torch.nn.Sequential(torch.nn.Linear(5, 4), torch.nn.Tanh(), torch.nn.Linear(4, 3))
    policy = CDGraB(N // R, R, rank, seed=0)
    sampler = PermutationSampler(policy, dataset=range(N))  # num_replicas and rank from the group
    balancer = GradientBalancer(policy, model)
    served, orders, gathered = [], [], []
    orig = policy.observe_all

    def logged(indices, all_grads):
        gathered.append(np.array(all_grads))
        orig(indices, all_grads)

    policy.observe_all = logged
    for epoch in range(EPOCHS):
        sampler.set_epoch(epoch)
        idx = list(sampler)
        orders.append(policy.order.copy())
        served.append(idx)
        for b in range(0, len(idx), BATCH):
            model.zero_grad()
            batch = idx[b:b + BATCH]
            balancer.backward(torch.nn.functional.cross_entropy, X[batch], y[batch],
                              indices=policy.order[b:b + BATCH])
            for p in model.parameters():  # all-reduce the mean gradient, as DDP does
                dist.all_reduce(p.grad)
                p.grad /= R
            with torch.no_grad():
                for p in model.parameters():
                    p -= 0.1 * p.grad
    final = [p.detach().numpy().copy() for p in model.parameters()]
    np.savez(f"{out}/rank{rank}.npz", served=np.array(served), orders=np.array(orders),
             gathered=np.array(gathered), shard=sampler.shard, **{f"p{i}": v for i, v in enumerate(final)})
    dist.barrier()
    dist.destroy_process_group()
    os._exit(0)  # torch's gloo can abort at interpreter exit after destroy (see tests/contracts/rows_perm_sgd.py)


def test_two_gloo_processes_cd_grab(tmp_path):
    init = f"file://{tmp_path}/rendezvous"
    mp.start_processes(_worker, args=(init, str(tmp_path)), nprocs=R, join=True, start_method="spawn")
    res = [np.load(tmp_path / f"rank{r}.npz") for r in range(R)]
    # shards never overlap and cover the dataset; every epoch serves exactly the rank's shard
    assert set(res[0]["shard"]).isdisjoint(res[1]["shard"])
    assert sorted(np.concatenate([r["shard"] for r in res]).tolist()) == list(range(N))
    for r in res:
        for ep in r["served"]:
            assert sorted(ep.tolist()) == sorted(r["shard"].tolist())
    # the ranks saw the same gathered gradients and stayed in sync (same model)
    assert np.array_equal(res[0]["gathered"], res[1]["gathered"])
    for i in range(4):
        assert np.allclose(res[0][f"p{i}"], res[1][f"p{i}"])
    # oracle: a single-process replay of the coordinated walk on the gathered gradients gives the
    # orders each rank used; the walk is shared, so it differs from balancing each rank alone
    steps = N // R // BATCH
    differs = 0
    for rank in range(R):
        replay = CDGraB(N // R, R, rank, seed=0)
        for ep in range(EPOCHS):
            order = replay.next_epoch()
            assert np.array_equal(order, res[rank]["orders"][ep])
            alone = CDGraB(N // R, 1, 0, seed=0)  # the same units and gradients, this rank balanced alone
            alone._ready, alone._next = True, order.copy()
            alone.next_epoch()
            for s in range(steps):
                G = res[rank]["gathered"][ep * steps + s]
                replay.observe_all(order[s * BATCH:(s + 1) * BATCH], G)
                alone.observe_all(order[s * BATCH:(s + 1) * BATCH], G[rank:rank + 1])
            differs += int(not np.array_equal(replay._next, alone._next))
    assert differs > 0  # the shared walk is not the per-rank walk


def test_sampler_shards_and_set_epoch_single_process():
    s0 = PermutationSampler(RandomReshuffling(5, seed=1), 2, 0, dataset=range(9))
    s1 = PermutationSampler(RandomReshuffling(4, seed=1), 2, 1, dataset=range(9))
    a, b = list(s0), list(s1)
    assert sorted(a + b) == list(range(9)) and set(a).isdisjoint(b)
    s1.set_epoch(3)  # skips epochs 1, 2 (resume)
    list(s1)
    assert s1.policy.epoch == 3
    with pytest.raises(ValueError, match="cannot be served again"):
        s1.set_epoch(1)
    with pytest.raises(ValueError, match="owns 5 of the 9"):
        PermutationSampler(RandomReshuffling(4), 2, 0, dataset=range(9))
    with pytest.raises(ValueError, match="rank=2 must be < num_replicas=2"):
        PermutationSampler(RandomReshuffling(4), 2, 2)
    with pytest.raises(RuntimeError, match="observe_step"):
        p = CDGraB(4, 2, 0, seed=0)
        p.observe(int(p.next_epoch()[0]), np.ones(3))
