"""GCN / DenseGCN: sparse-dense equivalence, drop-in readouts, training, bad input."""

import pytest
import torch
from torch_geometric.loader import DataLoader
from torch_geometric.nn import SumAggregation

from neurips25.rspool import GCN, DenseGCN, RSPoolAggregation
from neurips25.rspool.data import ba_2motifs
from neurips25.rspool.models import POOLINGS
from neurips25.rspool.training import accuracy, train_classifier


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    # Tiny tensors: one intra-op thread is much faster than two on a busy 2-core machine.
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


@pytest.fixture(scope="module")
def tiny():
    return ba_2motifs(8, seed=0)


@pytest.mark.parametrize("pooling", POOLINGS)
@pytest.mark.parametrize("bias", [False, True])
def test_dense_and_sparse_twins_agree(tiny, pooling, bias):
    # Same parameters -> same logits: the dense model the attacks use is the sparse model users run.
    torch.manual_seed(0)
    dense = DenseGCN(tiny.num_features, 2, pooling=pooling, bias=bias, readout_scale=0.5).eval()
    if bias:
        with torch.no_grad():
            dense.conv1.bias.normal_()
            dense.conv2.bias.normal_()
    sparse = GCN(tiny.num_features, 2, readout=pooling, bias=bias, readout_scale=0.5).eval()
    sparse.load_state_dict(dense.state_dict())
    x, adj, mask, _ = tiny.dense()
    batch = next(iter(DataLoader(tiny.to_pyg(), batch_size=len(tiny))))
    assert torch.allclose(dense(x, adj, mask), sparse(batch.x, batch.edge_index, batch.batch), atol=1e-5)


def test_any_pyg_aggregation_drops_in(tiny):
    batch = next(iter(DataLoader(tiny.to_pyg(), batch_size=len(tiny))))
    torch.manual_seed(0)
    a = GCN(tiny.num_features, 2, readout=SumAggregation()).eval()
    torch.manual_seed(0)
    b = GCN(tiny.num_features, 2, readout="sum").eval()
    args = (batch.x, batch.edge_index, batch.batch)
    assert torch.allclose(a(*args), b(*args))
    c = GCN(tiny.num_features, 2, readout=RSPoolAggregation(num_iterations=5, alpha=1.0))
    assert c(batch.x, batch.edge_index, batch.batch).shape == (len(tiny), 2)


def test_padding_does_not_change_logits(tiny):
    # A graph alone and the same graph padded inside a batch give the same logits.
    model = DenseGCN(tiny.num_features, 2, pooling="rs").eval()
    x, adj, mask, _ = tiny.dense([0])
    alone = model(x, adj, mask)
    xp = torch.nn.functional.pad(x, (0, 0, 0, 7))
    ap = torch.nn.functional.pad(adj, (0, 7, 0, 7))
    mp = torch.nn.functional.pad(mask, (0, 7))
    assert torch.allclose(model(xp, ap, mp), alone, atol=1e-6)


def test_training_learns_ba_2motifs():
    # The house motif is learnable: RS-Pool GCN beats chance clearly after a short training.
    ds = ba_2motifs(120, seed=3)
    torch.manual_seed(0)
    model = DenseGCN(ds.num_features, 2, pooling="rs")
    info = train_classifier(model, ds.subset(range(90)), ds.subset(range(90, 100)), epochs=30, lr=5e-3)
    assert info["train_loss"][-1] < info["train_loss"][0]
    assert accuracy(model, ds.subset(range(100, 120))) >= 0.75


@pytest.mark.parametrize("kwargs, match", [
    ({"pooling": "median"}, "`pooling` must be one of"),
    ({"num_classes": 1}, "`num_classes` must be an int >= 2"),
    ({"dropout": 1.0}, "`dropout` must be in \\[0, 1\\)"),
    ({"alpha": -1.0}, "`alpha` must be a float > 0"),
])
def test_dense_bad_arguments(kwargs, match):
    args = {"in_dim": 3, "num_classes": 2} | kwargs
    with pytest.raises(ValueError, match=match):
        DenseGCN(**args)


def test_sparse_bad_readout():
    with pytest.raises(ValueError, match="`readout` must be an Aggregation or one of"):
        GCN(3, 2, readout="median")
    with pytest.raises(TypeError, match="`readout` must be a torch_geometric Aggregation"):
        GCN(3, 2, readout=torch.nn.Identity())


def test_dense_shape_error():
    with pytest.raises(ValueError, match="expected `x` \\[B, N, F\\] and `adj` \\[B, N, N\\]"):
        DenseGCN(3, 2)(torch.rand(2, 4, 3), torch.rand(2, 5, 5))


def test_wrong_in_dim_and_numpy_input_are_named():
    import numpy as np

    with pytest.raises(ValueError, match="DenseGCN: `x` has 4 features per node, the model was built with in_dim=3"):
        DenseGCN(3, 2)(torch.rand(2, 5, 4), torch.zeros(2, 5, 5))
    with pytest.raises(TypeError, match="DenseGCN: `x` and `adj` must be torch.Tensors"):
        DenseGCN(3, 2)(np.zeros((2, 5, 3)), torch.zeros(2, 5, 5))
    with pytest.raises(ValueError, match="GCN: `x` has 4 features per node, the model was built with in_dim=3"):
        GCN(3, 2)(torch.rand(5, 4), torch.tensor([[0, 1], [1, 0]]))
    with pytest.raises(ValueError, match="GCN: `edge_index` must be a tensor \\[2, E\\]"):
        GCN(3, 2)(torch.rand(5, 3), [[0, 1], [1, 0]])
    model = DenseGCN(np.int64(3), np.int64(2), hidden=np.int32(8))
    assert model(torch.rand(1, 4, 3), torch.zeros(1, 4, 4)).shape == (1, 2)


def test_training_keeps_the_last_best_validation_epoch():
    # official train_function: `if val_acc >= best` -> among tied epochs the LAST one is kept
    ds = ba_2motifs(40, seed=5)
    val = ds.subset(range(30, 32))  # 2 validation graphs: accuracy ties are certain
    runs = {}
    for keep in ("last", "first"):
        torch.manual_seed(0)
        model = DenseGCN(ds.num_features, 2, pooling="sum")
        runs[keep] = train_classifier(model, ds.subset(range(30)), val, epochs=12, lr=5e-3, keep=keep)
    assert runs["last"]["best_val_acc"] == runs["first"]["best_val_acc"]
    assert runs["last"]["best_epoch"] > runs["first"]["best_epoch"]
    with pytest.raises(ValueError, match="`epochs` must be an int >= 1, got 2.5"):
        train_classifier(DenseGCN(ds.num_features, 2), ds, epochs=2.5)
    with pytest.raises(ValueError, match="`keep` must be 'last' or 'first'"):
        train_classifier(DenseGCN(ds.num_features, 2), ds, keep="best")
