"""rspool: RSPoolAggregation as a PyTorch Geometric aggregation; rs_pool as a torch function."""

import torch
from contract_fixtures import (
    LOW_PRECISION,
    assert_close,
    compiled_matches_eager,
    forward_in_dtype,
    pickle_round_trip,
    worker_batches,
)
from contract_table import row

C = "rspool"


def _graph(seed=0, n=12, d=5, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, d, generator=g, dtype=dtype)
    src = torch.randint(0, n, (30,), generator=g)
    dst = torch.randint(0, n, (30,), generator=g)
    return x, torch.stack([src, dst])


def _sage(aggr, **kw):
    from torch_geometric.nn import SAGEConv

    import neurips25.rspool  # noqa: F401 - registers "rspool" with PyG's resolver

    torch.manual_seed(0)
    return SAGEConv(5, 4, aggr=aggr, **kw)


def _aggr_form(form):
    def check(tmp_path):
        from torch_geometric.nn.aggr import MultiAggregation, SumAggregation

        from neurips25.rspool import RSPoolAggregation

        x, ei = _graph()
        ref = _sage(RSPoolAggregation(num_iterations=3))(x, ei)
        if form == "string":
            out = _sage("rspool", aggr_kwargs={"num_iterations": 3})(x, ei)
        elif form == "class name":
            out = _sage("RSPoolAggregation", aggr_kwargs={"num_iterations": 3})(x, ei)
        elif form == "list":
            conv = _sage(["rspool", "sum"], aggr_kwargs={"mode": "cat"})
            out = conv(x, ei)
            multi = MultiAggregation([RSPoolAggregation(), SumAggregation()], mode="cat")
            assert out.shape == (12, 4)
            assert isinstance(conv.aggr_module, MultiAggregation)
            assert repr(conv.aggr_module.aggrs[0]).startswith("RSPoolAggregation")
            assert len(multi.aggrs) == 2
            return
        else:
            raise KeyError(form)
        assert_close(out, ref, what=f"SAGEConv(aggr={form}) vs the instance")

    return check


for _form in ("string", "class name", "list"):
    row(C, "pyg", f"SAGEConv aggr= {_form} form resolves to RSPoolAggregation (equal to the instance form)")(
        _aggr_form(_form))


@row(C, "pyg", "MessagePassing(aggr=RSPoolAggregation()) equals rs_pool over each node's messages")
def _message_passing(tmp_path):
    from torch_geometric.nn import MessagePassing

    from neurips25.rspool import RSPoolAggregation, rs_pool

    class Copy(MessagePassing):
        def forward(self, x, edge_index):
            return self.propagate(edge_index, x=x)

    x, ei = _graph()
    out = Copy(aggr=RSPoolAggregation())(x, ei)
    # oracle: pool the source features of each destination node, graph-readout style
    ref = rs_pool(x[ei[0]], ei[1], size=x.shape[0])
    assert_close(out, ref, atol=1e-6, what="message passing vs rs_pool")


@row(C, "pyg", "index and ptr paths agree; a batch equals each graph alone (any order)")
def _index_ptr(tmp_path):
    from neurips25.rspool import RSPoolAggregation

    agg = RSPoolAggregation()
    x = torch.randn(9, 4, generator=torch.Generator().manual_seed(2))
    index = torch.tensor([0, 0, 0, 1, 1, 2, 2, 2, 2])
    a = agg(x, index)
    b = agg(x, ptr=torch.tensor([0, 3, 5, 9]))
    assert_close(a, b, what="index vs ptr")
    perm = torch.randperm(9, generator=torch.Generator().manual_seed(3))
    assert_close(agg(x[perm], index[perm]), a, atol=1e-6, what="batch in another order")
    for g in range(3):
        assert_close(agg(x[index == g], torch.zeros(int((index == g).sum()), dtype=torch.long))[0], a[g],
                     atol=1e-6, what=f"graph {g} alone")


def _dataset():
    from torch_geometric.data import Data

    return [Data(x=_graph(seed=s, n=6 + s % 4)[0], edge_index=_graph(seed=s, n=6 + s % 4)[1]) for s in range(12)]


def _pool_batches(num_workers):
    from torch_geometric.loader import DataLoader

    from neurips25.rspool import RSPoolAggregation

    agg = RSPoolAggregation()
    loader = DataLoader(_dataset(), batch_size=4, num_workers=num_workers,
                        multiprocessing_context="fork" if num_workers else None)
    return [agg(b.x, b.batch) for b in loader]


@row(C, "pyg", "PyG DataLoader with 2 workers: the readouts equal the single-process loader's")
def _loader_workers(tmp_path):
    for a, b in zip(_pool_batches(2), _pool_batches(0), strict=True):
        assert_close(a, b, what="readout from a worker batch")
    assert len(worker_batches(list(range(8)), num_workers=2)) == 2  # the shared helper itself runs workers


def _agg_inputs(dtype, device):
    x = torch.randn(9, 4, generator=torch.Generator().manual_seed(2)).to(device, dtype)
    return x, torch.tensor([0, 0, 0, 1, 1, 2, 2, 2, 2], device=device)


@row(C, "torch", "float64 input: float64 output")
def _f64(tmp_path):
    from neurips25.rspool import RSPoolAggregation

    forward_in_dtype(RSPoolAggregation(), _agg_inputs, torch.float64)


@row(C, "torch", "bfloat16 input: runs, bfloat16 output")
def _bf16(tmp_path):
    from neurips25.rspool import RSPoolAggregation

    out = forward_in_dtype(RSPoolAggregation(), _agg_inputs, LOW_PRECISION)
    ref = RSPoolAggregation()(*_agg_inputs(torch.float32, "cpu"))
    assert_close(out.float(), ref, atol=0.05, rtol=0.02, what="bfloat16 vs float32")


@row(C, "torch", "cuda input: output on cuda", device="cuda")
def _cuda(tmp_path):
    from neurips25.rspool import RSPoolAggregation

    forward_in_dtype(RSPoolAggregation(), _agg_inputs, torch.float32, device="cuda")


@row(C, "torch", "torch.compile of rs_pool matches eager")
def _compile(tmp_path):
    from neurips25.rspool import rs_pool

    x, b = _agg_inputs(torch.float32, "cpu")
    compiled_matches_eager(lambda x: rs_pool(x, b, size=3), (x,))


@row(C, "torch", "torch.func.vmap and jacrev through rs_pool_dense equal the loop / autograd")
def _functorch(tmp_path):
    from neurips25.rspool import rs_pool_dense

    h = torch.randn(3, 5, 4, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    assert_close(torch.func.vmap(rs_pool_dense)(h), torch.stack([rs_pool_dense(hh) for hh in h]), atol=1e-12,
                 what="vmap")
    jac = torch.func.jacrev(rs_pool_dense)(h[0])
    ref = torch.autograd.functional.jacobian(rs_pool_dense, h[0])
    assert_close(jac, ref, atol=1e-10, what="jacrev vs autograd")


@row(C, "torch", "RSPoolAggregation pickles and deep-copies (DataParallel / multiprocessing)")
def _pickle(tmp_path):
    from neurips25.rspool import RSPoolAggregation

    agg = RSPoolAggregation(num_iterations=4, alpha=7.0)
    again = pickle_round_trip(agg)
    x, b = _agg_inputs(torch.float32, "cpu")
    assert_close(again(x, b), agg(x, b), what="pickled aggregation")


class _PoolNet(torch.nn.Module):
    """SAGEConv with RSPoolAggregation messages, then an RSPoolAggregation readout per graph."""

    def __init__(self):
        super().__init__()
        from torch_geometric.nn import SAGEConv

        from neurips25.rspool import RSPoolAggregation

        torch.manual_seed(0)
        self.conv = SAGEConv(5, 4, aggr=RSPoolAggregation())
        self.pool = RSPoolAggregation(num_iterations=3)
        self.lin = torch.nn.Linear(4, 2)

    def forward(self, x, edge_index, batch, size: int | None = None):
        return self.lin(self.pool(self.conv(x, edge_index).relu(), batch, dim_size=size))


@row(C, "pyg", "torch.compile(fullgraph=True) of a model with RSPoolAggregation (messages and readout; index with "
    "and without dim_size, and ptr) matches eager, as PyG's own aggregations do (issue #59)")
def _compile_fullgraph(tmp_path):
    import torch._dynamo

    from neurips25.rspool import RSPoolAggregation, rs_pool

    x, ei = _graph()
    batch = torch.tensor([0] * 5 + [1] * 4 + [2] * 3)
    model = _PoolNet()
    torch._dynamo.reset()
    compiled = torch.compile(model, fullgraph=True, backend="aot_eager")
    with torch.no_grad():
        for size in (None, 3):
            assert_close(compiled(x, ei, batch, size), model(x, ei, batch, size), atol=1e-5,
                         what=f"compiled fullgraph vs eager (dim_size={size})")
        ptr = torch.tensor([0, 5, 9, 12])
        pool = RSPoolAggregation()
        assert_close(torch.compile(lambda h: pool(h, ptr=ptr), fullgraph=True, backend="aot_eager")(x),
                     pool(x, ptr=ptr), atol=1e-5, what="compiled ptr form")
        assert_close(torch.compile(lambda h: rs_pool(h, batch, size=3), fullgraph=True, backend="aot_eager")(x),
                     rs_pool(x, batch, size=3), atol=1e-5, what="compiled rs_pool")
    # the checks still hold inside the compiled graph: a negative index is refused, not read out of bounds
    try:
        compiled(x, ei, torch.cat([batch[:-1], torch.tensor([-1])]), None)
    except (RuntimeError, ValueError) as err:
        assert "`index` must be >= 0" in str(err), err
    else:
        raise AssertionError("a negative index passed the compiled check")
