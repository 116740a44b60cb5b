"""Attacks: budgets respected, PGD raises the loss and differentiates through RS-Pool, bad input."""

import pytest
import torch
import torch.nn.functional as F

from neurips25.rspool import DenseGCN
from neurips25.rspool import attacks as atk
from neurips25.rspool.data import ba_2motifs
from neurips25.rspool.training import train_classifier


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    # Tiny tensors: one intra-op thread is much faster than two on a busy 2-core machine.
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


@pytest.fixture(scope="module")
def setup():
    ds = ba_2motifs(80, seed=1)
    torch.manual_seed(0)
    model = DenseGCN(ds.num_features, 2, pooling="rs")
    train_classifier(model, ds.subset(range(60)), None, epochs=15, lr=5e-3)
    x, adj, mask, y = ds.dense(range(60, 80))
    return model.eval(), x, adj, mask, y


def test_edge_budget_matches_official_formula():
    adj = torch.zeros(2, 4, 4)
    adj[0, 0, 1] = adj[0, 1, 0] = 1  # 1 edge -> floor(0.3) + 1 = 1
    adj[1] = 1 - torch.eye(4)  # 6 edges -> floor(1.8) + 1 = 2
    assert atk.edge_budget(adj, 0.3).tolist() == [1, 2]


def test_flip_edges_is_xor_on_binary():
    adj = torch.tensor([[[0.0, 1, 0], [1, 0, 0], [0, 0, 0]]])
    s = torch.tensor([[[0.0, 1, 1], [0, 0, 0], [0, 0, 0]]])  # flip 0-1 (remove) and 0-2 (add)
    out = atk.flip_edges(adj, s)
    assert out.tolist() == [[[0, 0, 1], [0, 0, 0], [1, 0, 0]]]


def test_projection_oracle():
    # s = (0.9, 0.8, 0.1) with budget 1: mu solves sum clip(s - mu) = 1 -> mu = 0.35 -> (0.55, 0.45, 0)
    s = torch.zeros(1, 3, 3)
    s[0, 0, 1], s[0, 0, 2], s[0, 1, 2] = 0.9, 0.8, 0.1
    valid = atk._valid_pairs(torch.ones(1, 3, dtype=torch.bool))
    p = atk._project(s, torch.tensor([1]), valid)
    assert torch.allclose(p[0, 0, 1:], torch.tensor([0.55, 0.45]), atol=1e-6) and float(p[0, 1, 2]) == 0.0
    q = atk._project(s * 0.5, torch.tensor([5]), valid)  # already feasible: only clipped
    assert torch.allclose(q, s * 0.5)


def test_pgd_raises_loss_and_respects_budget(setup):
    # Acceptance: a 10-step PGD raises the attacked graph's loss; flips never exceed the budget.
    model, x, adj, mask, y = setup
    g = torch.Generator().manual_seed(0)
    res = atk.pgd_structure_attack(model, x, adj, y, mask, budget_frac=0.3, steps=10, generator=g)
    with torch.no_grad():
        before = F.cross_entropy(model(x, adj, mask), y, reduction="none")
        after = F.cross_entropy(model(x, res.adj, mask), y, reduction="none")
    assert bool((res.flips <= res.budget).all()) and int(res.flips.sum()) > 0
    assert float(after.mean()) > float(before.mean())
    # the perturbed graphs stay simple, symmetric, within their own nodes
    assert torch.equal(res.adj, res.adj.transpose(1, 2)) and float(res.adj.diagonal(0, 1, 2).abs().sum()) == 0
    assert float(res.adj[~mask].abs().sum()) == 0 and set(res.adj.unique().tolist()) <= {0.0, 1.0}
    assert torch.equal(res.success, model(x, res.adj, mask).argmax(-1) != y)


def test_pgd_gradient_flows_through_rs_pool(setup):
    model, x, adj, mask, y = setup
    s = torch.zeros_like(adj, requires_grad=True)
    loss = F.cross_entropy(model(x, atk.flip_edges(adj, s), mask), y)
    (grad,) = torch.autograd.grad(loss, s)
    assert bool(torch.isfinite(grad).all()) and float(grad.abs().sum()) > 0


@pytest.mark.parametrize("mode", ["flip", "add", "remove"])
def test_random_attack_flips_exactly_budget(setup, mode):
    model, x, adj, mask, y = setup
    res = atk.random_flip_attack(model, x, adj, y, mask, 0.3, queries=3, mode=mode,
                                 generator=torch.Generator().manual_seed(0))
    diff = (res.adj - adj).triu(1)
    if mode == "flip":
        assert torch.equal(res.flips, res.budget)
    if mode == "add":
        assert float(diff.min()) >= 0
    if mode == "remove":
        assert float(diff.max()) <= 0
    assert torch.equal(res.flips, diff.abs().sum((1, 2)).long())


def test_genetic_and_cw_respect_budget_and_report_truthfully(setup):
    model, x, adj, mask, y = setup
    g = torch.Generator().manual_seed(1)
    for res in (atk.genetic_attack(model, x, adj, y, mask, 0.3, population=8, generations=3, generator=g),
                atk.pgd_structure_attack(model, x, adj, y, mask, steps=5, samples=3, loss="cw", generator=g)):
        assert bool((res.flips <= res.budget).all())
        with torch.no_grad():
            assert torch.equal(res.success, model(x, res.adj, mask).argmax(-1) != y)


def test_feature_attack_stays_in_ball(setup):
    model, x, adj, mask, y = setup
    res = atk.pgd_feature_attack(model, x, adj, y, mask, epsilon=0.0, steps=3)
    with torch.no_grad():
        assert torch.equal(res.success, model(x, adj, mask).argmax(-1) != y)  # epsilon 0: nothing changes


def test_prbcd_runs_on_one_graph(setup):
    from neurips25.rspool import GCN
    from neurips25.rspool.data import ba_2motifs

    model, *_ = setup
    sparse = GCN(11, 2, readout="rs").eval()
    sparse.load_state_dict(model.state_dict())
    d = ba_2motifs(2, seed=4).to_pyg()[0]
    success, flips = atk.prbcd_attack(sparse, d.x, d.edge_index, int(d.y), budget=3, epochs=5)
    assert isinstance(success, bool) and 0 <= flips <= 3


def test_bad_inputs(setup):
    model, x, adj, mask, y = setup
    with pytest.raises(ValueError, match="`budget_frac` must be in \\[0, 1\\]"):
        atk.pgd_structure_attack(model, x, adj, y, mask, budget_frac=1.5)
    with pytest.raises(ValueError, match="`adj` must be a symmetric 0/1 adjacency"):
        atk.pgd_structure_attack(model, x, adj * 0.5, y, mask)
    with pytest.raises(ValueError, match="`y` must be a tensor \\[B\\]"):
        atk.random_flip_attack(model, x, adj, y[:3], mask)
    with pytest.raises(ValueError, match="`loss` must be 'ce' or 'cw'"):
        atk.pgd_structure_attack(model, x, adj, y, mask, loss="hinge")
    with pytest.raises(ValueError, match="`mode` must be 'flip', 'add' or 'remove'"):
        atk.random_flip_attack(model, x, adj, y, mask, mode="swap")


def test_bad_counts_labels_and_self_loops(setup):
    model, x, adj, mask, y = setup
    with pytest.raises(ValueError, match="pgd_structure_attack: `steps` must be an int >= 0, got 2.5"):
        atk.pgd_structure_attack(model, x, adj, y, mask, steps=2.5)
    with pytest.raises(ValueError, match="`samples` must be an int >= 1"):
        atk.pgd_structure_attack(model, x, adj, y, mask, samples=0)
    with pytest.raises(ValueError, match="genetic_attack: `population` must be an int >= 2"):
        atk.genetic_attack(model, x, adj, y, mask, population=10.0)
    with pytest.raises(ValueError, match="`queries` must be an int >= 1"):
        atk.random_flip_attack(model, x, adj, y, mask, queries=1.5)
    with pytest.raises(ValueError, match="`y` must be class labels in \\[0, 2\\) for this model, got max 2"):
        atk.pgd_structure_attack(model, x, adj, torch.full_like(y, 2), mask, steps=1)
    with pytest.raises(ValueError, match="`y` must be class labels >= 0"):
        atk.genetic_attack(model, x, adj, torch.full_like(y, -1), mask)
    with pytest.raises(TypeError, match="`y` must hold integer class labels"):
        atk.random_flip_attack(model, x, adj, y.float(), mask)
    looped = adj.clone()
    looped[0, 0, 0] = 1.0
    for attack in (atk.pgd_structure_attack, atk.random_flip_attack, atk.genetic_attack):
        with pytest.raises(ValueError, match="`adj` has self loops"):
            attack(model, x, looped, y, mask)
    with pytest.raises(ValueError, match="`x` contains NaN or infinite"):
        atk.pgd_structure_attack(model, x.clone().fill_(float("inf")), adj, y, mask)
    with pytest.raises(TypeError, match="`adj` must be a torch.Tensor, got ndarray"):
        atk.pgd_structure_attack(model, x, adj.numpy(), y, mask)


def test_genetic_never_flips_padding_pairs_on_one_node_graphs(setup):
    # review: for a 1-node graph the gene (0, 1) pointed at a padding node
    model, x, adj, mask, y = setup
    xs, adjs, masks = x[:4].clone(), adj[:4].clone(), mask[:4].clone()
    xs[0, 1:] = 0.0
    adjs[0] = 0.0
    masks[0, 1:] = False  # graph 0 has a single node
    for seed in range(3):
        res = atk.genetic_attack(model, xs, adjs, y[:4], masks, population=20, generations=3,
                                 generator=torch.Generator().manual_seed(seed))
        outside = res.adj * ~(masks.unsqueeze(1) & masks.unsqueeze(2))
        assert float(outside.abs().sum()) == 0.0
        assert int(res.flips[0]) == 0 and torch.equal(res.adj[0], adjs[0])
        assert bool((res.flips[1:] <= res.budget[1:]).all())
