"""RSPoolAggregation / rs_pool / rs_pool_dense: oracle, invariances, gradients, bad input."""

import doctest

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch_geometric.nn import MessagePassing, global_add_pool

import neurips25.rspool.aggr as aggr_module
import neurips25.rspool.functional as functional_module
from neurips25.rspool import RSPoolAggregation, rs_pool, rs_pool_dense


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    # Tiny tensors: one intra-op thread is much faster than two on a busy 2-core machine.
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


def svd_oracle(h: torch.Tensor, alpha: float) -> torch.Tensor:
    """sigma_1 v_1 / alpha with the sign of v_1 fixed so that it sums to >= 0."""
    _, s, vh = torch.linalg.svd(h, full_matrices=False)
    v1 = vh[0] * torch.sign(vh[0].sum())
    return s[0] * v1 / alpha


def random_batch(seed: int, graphs: int = 6, d: int = 5, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    sizes = torch.randint(1, 12, (graphs,), generator=g)
    x = torch.rand(int(sizes.sum()), d, generator=g, dtype=dtype)
    index = torch.repeat_interleave(torch.arange(graphs), sizes)
    ptr = torch.cat([torch.zeros(1, dtype=torch.long), sizes.cumsum(0)])
    return x, index, ptr


def test_k50_matches_dense_svd_within_1e4():
    # Acceptance 1: the power iteration converges to the sign-fixed SVD pair.
    x, index, _ = random_batch(0, graphs=20, d=8)
    out = RSPoolAggregation(num_iterations=50, alpha=20.0)(x, index)
    for k in range(20):
        assert torch.allclose(out[k], svd_oracle(x[index == k], 20.0), atol=1e-4)


def test_default_k2_is_close_but_not_exact():
    # K=2 from the sum direction is already near v_1 on nonnegative H, but is not the SVD itself.
    x, index, _ = random_batch(1, graphs=10, d=8)
    out = RSPoolAggregation()(x, index)
    ref = torch.stack([svd_oracle(x[index == k], 20.0) for k in range(10)])
    cos = torch.nn.functional.cosine_similarity(out, ref, dim=-1)
    assert bool((cos > 0.99).all())


def test_batched_index_and_ptr_equal_per_graph_loop():
    x, index, ptr = random_batch(2, dtype=torch.float64)
    aggr = RSPoolAggregation(num_iterations=3, alpha=2.0)
    by_index, by_ptr = aggr(x, index), aggr(x, ptr=ptr)
    loop = torch.stack([rs_pool_dense(x[index == k], num_iterations=3, alpha=2.0) for k in range(6)])
    assert torch.allclose(by_index, loop, atol=1e-6)
    assert torch.allclose(by_ptr, loop, atol=1e-6)


def test_padded_dense_equals_flat():
    # Zero padding rows change neither H^T H nor 1^T H, so the padded computation is exact.
    x, index, _ = random_batch(3, dtype=torch.float64)
    n_max = int(torch.bincount(index).max())
    dense = torch.zeros(6, n_max, 5, dtype=torch.float64)
    mask = torch.zeros(6, n_max, dtype=torch.bool)
    for k in range(6):
        rows = x[index == k]
        dense[k, : len(rows)] = rows
        mask[k, : len(rows)] = True
    dense_garbage = dense + (~mask).unsqueeze(-1) * 7.0  # masked rows must be ignored
    assert torch.allclose(rs_pool_dense(dense_garbage, mask), rs_pool(x, index), atol=1e-10)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(0, 6))
def test_permutation_invariance(seed, k):
    x, index, _ = random_batch(seed, dtype=torch.float64)
    perm = torch.randperm(x.size(0), generator=torch.Generator().manual_seed(seed + 1))
    a = rs_pool(x, index, num_iterations=k)
    b = rs_pool(x[perm], index[perm], num_iterations=k)  # unsorted index is fine
    assert torch.allclose(a, b, atol=1e-10)


def test_zero_iterations_is_sum_direction():
    # K = 0: the normalised sum vector scaled by ||H v0|| / alpha ("a few steps from sum pooling").
    x, index, _ = random_batch(4, dtype=torch.float64)
    out = rs_pool(x, index, num_iterations=0, alpha=1.0)
    s = global_add_pool(x, index)
    v0 = s / s.norm(dim=-1, keepdim=True)
    sigma = torch.stack([(x[index == k] @ v0[k]).norm() for k in range(6)])
    assert torch.allclose(out, v0 * sigma[:, None], atol=1e-8)


def test_alpha_scales_output_linearly():
    x, index, _ = random_batch(5)
    assert torch.allclose(rs_pool(x, index, alpha=1.0), 20.0 * rs_pool(x, index, alpha=20.0), atol=1e-6)


def test_gradients_finite_where_svd_backward_fails():
    # sigma_1 == sigma_2 (H = I): SVD backward divides by sigma_1^2 - sigma_2^2.
    h = torch.eye(3, dtype=torch.float64, requires_grad=True)
    _, _, vh = torch.linalg.svd(h, full_matrices=False)
    (g_svd,) = torch.autograd.grad(vh[0].sum(), h)
    assert not bool(torch.isfinite(g_svd).all())
    out = rs_pool(h, torch.zeros(3, dtype=torch.long))
    (g_rs,) = torch.autograd.grad(out.sum(), h)
    assert bool(torch.isfinite(g_rs).all())


def test_empty_graph_gives_zero_vector_and_finite_grad():
    x = torch.rand(4, 3, requires_grad=True)
    index = torch.tensor([0, 0, 2, 2])  # graph 1 and graph 3 have no node
    out = RSPoolAggregation()(x, index, dim_size=4)
    assert out.shape == (4, 3)
    assert torch.equal(out[1], torch.zeros(3)) and torch.equal(out[3], torch.zeros(3))
    out.sum().backward()
    assert bool(torch.isfinite(x.grad).all())


def test_all_zero_graph_gives_zero_and_finite_grad():
    h = torch.zeros(1, 4, 3, requires_grad=True)
    out = rs_pool_dense(h)
    assert torch.equal(out, torch.zeros(1, 3))
    out.sum().backward()
    assert bool(torch.isfinite(h.grad).all())


def test_drop_in_message_passing_aggregation():
    # As MessagePassing(aggr=...), each node aggregates its incoming messages with RS-Pool.
    class Conv(MessagePassing):
        def __init__(self):
            super().__init__(aggr=RSPoolAggregation(num_iterations=50, alpha=1.0))

        def forward(self, x, edge_index):
            return self.propagate(edge_index, x=x)

    x = torch.tensor([[1.0, 0.0], [0.0, 2.0], [3.0, 4.0]])
    edge_index = torch.tensor([[0, 1, 2], [2, 2, 0]])
    out = Conv()(x, edge_index)
    assert torch.allclose(out[2], svd_oracle(x[[0, 1]], 1.0), atol=1e-5)  # messages from 0 and 1
    assert torch.allclose(out[0], x[2], atol=1e-5)  # a single message: sigma_1 v_1 = the row itself
    assert torch.equal(out[1], torch.zeros(2))  # no incoming edge


def test_nan_features_raise():
    x = torch.rand(3, 2)
    x[1, 0] = float("nan")
    with pytest.raises(ValueError, match="`x` contains NaN"):
        RSPoolAggregation()(x, torch.zeros(3, dtype=torch.long))
    with pytest.raises(ValueError, match="`x` contains NaN"):
        rs_pool(x)


def test_wrong_index_length_raises():
    with pytest.raises(ValueError, match="one entry per row of `x` \\(3\\)"):
        RSPoolAggregation()(torch.rand(3, 2), torch.tensor([0, 1]))
    with pytest.raises(ValueError, match="`batch` must have one entry per row of `x` \\(3\\)"):
        rs_pool(torch.rand(3, 2), torch.tensor([0, 1]))


@pytest.mark.parametrize("kwargs, match", [
    ({"num_iterations": -1}, "`num_iterations` must be an int >= 0"),
    ({"num_iterations": 2.5}, "`num_iterations` must be an int >= 0"),
    ({"alpha": 0.0}, "`alpha` must be a float > 0"),
    ({"eps": -1.0}, "`eps` must be a float > 0"),
])
def test_bad_hyperparameters_raise(kwargs, match):
    with pytest.raises(ValueError, match="RSPoolAggregation: " + match):
        RSPoolAggregation(**kwargs)


def test_other_bad_inputs():
    with pytest.raises(ValueError, match="`dim_size` must be an int >= index.max\\(\\) \\+ 1 = 3, got 2"):
        RSPoolAggregation()(torch.rand(3, 2), torch.tensor([0, 1, 2]), dim_size=2)
    with pytest.raises(ValueError, match="`ptr` must be a non-decreasing"):
        RSPoolAggregation()(torch.rand(3, 2), ptr=torch.tensor([0, 2]))
    with pytest.raises(TypeError, match="floating-point"):
        rs_pool(torch.ones(3, 2, dtype=torch.long))
    with pytest.raises(ValueError, match="`x` must be 2-D"):
        rs_pool(torch.rand(3))


def test_repr_names_hyperparameters():
    assert repr(RSPoolAggregation(5, 1.0)) == "RSPoolAggregation(num_iterations=5, alpha=1.0)"


def test_docstring_examples_run():
    for module in (aggr_module, functional_module):
        result = doctest.testmod(module)
        assert result.failed == 0 and result.attempted > 0


def official_loop(h: torch.Tensor, k: int, alpha: float) -> torch.Tensor:
    """Plain per-graph transcription of the official `_svd_pool`, differentiated by autograd."""
    outs = []
    for g in h:
        v = g.sum(0)
        v = v / (v.norm() + 1e-8)
        for _ in range(k):
            v = g.t() @ (g @ v)
            v = v / (v.norm() + 1e-8)
        outs.append(v * (g @ v).norm() / alpha)
    return torch.stack(outs)


@pytest.mark.parametrize("k", [0, 1, 2, 5])
def test_hand_written_backward_matches_autograd_of_official_loop(k):
    # The custom backward must give the gradient an attack needs, exactly.
    g = torch.Generator().manual_seed(k)
    h = torch.rand(3, 6, 4, generator=g, dtype=torch.float64, requires_grad=True)
    w = torch.randn(3, 4, generator=g, dtype=torch.float64)
    assert torch.allclose(rs_pool_dense(h, num_iterations=k, alpha=3.0), official_loop(h, k, 3.0), atol=1e-12)
    (ours,) = torch.autograd.grad((rs_pool_dense(h, num_iterations=k, alpha=3.0) * w).sum(), h)
    (ref,) = torch.autograd.grad((official_loop(h, k, 3.0) * w).sum(), h)
    assert torch.allclose(ours, ref, atol=1e-10)
    assert torch.autograd.gradcheck(lambda t: rs_pool_dense(t, num_iterations=k), (h,))


def test_gradcheck_through_unsorted_padding():
    x = torch.rand(10, 3, dtype=torch.float64, requires_grad=True)
    batch = torch.tensor([0, 0, 0, 2, 2, 1, 1, 1, 1, 0])
    assert torch.autograd.gradcheck(lambda t: rs_pool(t, batch, size=4), (x,))


def test_double_backward_refused_not_wrong():
    # The hand-written backward is first-order; a Hessian-vector product must fail loudly.
    h = torch.rand(2, 4, 3, dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(rs_pool_dense(h).sum(), h, create_graph=True)
    with pytest.raises(RuntimeError, match="does not require grad"):
        torch.autograd.grad(g.sum(), h)


def test_non_contiguous_input_and_infinities():
    x = torch.rand(3, 8)[:, ::2]  # non-contiguous [3, 4]
    assert torch.allclose(rs_pool(x, torch.tensor([0, 0, 1])), rs_pool(x.contiguous(), torch.tensor([0, 0, 1])))
    bad = torch.tensor([[float("inf"), 0.0], [float("-inf"), 0.0]])
    with pytest.raises(ValueError, match="`x` contains infinite values"):
        rs_pool(bad)


@pytest.mark.parametrize("value", [float("inf"), float("-inf")])
def test_single_infinity_raises_not_silent_nan(value):
    # review: one +inf gave NaN output silently (only mixed-sign infinities were caught)
    x = torch.rand(4, 3)
    x[2, 1] = value
    index = torch.tensor([0, 0, 1, 1])
    with pytest.raises(ValueError, match="RSPoolAggregation: `x` contains infinite values"):
        RSPoolAggregation()(x, index)
    with pytest.raises(ValueError, match="rs_pool: `x` contains infinite values"):
        rs_pool(x, index)
    with pytest.raises(ValueError, match="rs_pool_dense: `h` contains infinite values"):
        rs_pool_dense(x.view(2, 2, 3))
    star_index = torch.tensor([0, 1, 1, 1])  # skewed groups take the scatter path: same check
    with pytest.raises(ValueError, match="`x` contains infinite values"):
        rs_pool(x, star_index, size=50)


def test_numpy_and_list_inputs_get_clear_errors():
    import numpy as np

    with pytest.raises(TypeError, match="RSPoolAggregation: `x` must be a torch.Tensor, got ndarray"):
        RSPoolAggregation()(np.ones((3, 2), dtype=np.float32), torch.zeros(3, dtype=torch.long))
    with pytest.raises(TypeError, match="RSPoolAggregation: `index` must be a torch.Tensor, got list"):
        RSPoolAggregation()(torch.rand(3, 2), [0, 0, 1])
    with pytest.raises(TypeError, match="`index` must be an integer tensor"):
        RSPoolAggregation()(torch.rand(3, 2), torch.tensor([0.0, 0.0, 1.0]))
    with pytest.raises(TypeError, match="rs_pool: `x` must be a torch.Tensor"):
        rs_pool(np.ones((3, 2)))
    with pytest.raises(ValueError, match="rs_pool: `batch` must be a 1-D integer tensor"):
        rs_pool(torch.rand(3, 2), [0, 0, 1])
    # numpy integers are accepted as hyper-parameters
    assert RSPoolAggregation(np.int64(3), np.float32(2.0)).num_iterations == 3


def test_aggregation_resolver_finds_rspool():
    from torch_geometric.nn import SAGEConv
    from torch_geometric.nn.resolver import aggregation_resolver

    for name in ("rspool", "rs_pool", "RSPoolAggregation"):
        assert isinstance(aggregation_resolver(name), RSPoolAggregation)
    assert aggregation_resolver("rspool", num_iterations=5).num_iterations == 5
    conv = SAGEConv(3, 4, aggr="rspool")
    assert isinstance(conv.aggr_module, RSPoolAggregation)
    x, ei = torch.rand(4, 3), torch.tensor([[0, 1, 2], [3, 3, 0]])
    assert conv(x, ei).shape == (4, 4)


def test_jacrev_and_vmap_work_through_the_custom_backward():
    # setup_context + generated vmap rule: torch.func per-sample tools see the exact gradient
    x = torch.rand(7, 3, dtype=torch.float64)
    batch = torch.tensor([0, 0, 1, 1, 1, 2, 2])
    jac = torch.func.jacrev(lambda t: rs_pool(t, batch))(x)
    ref = torch.autograd.functional.jacobian(lambda t: rs_pool(t, batch), x)
    assert torch.allclose(jac, ref, atol=1e-12) and float(jac.abs().sum()) > 0
    hb = torch.rand(5, 2, 4, 3, dtype=torch.float64)
    out = torch.func.vmap(rs_pool_dense)(hb)
    assert torch.allclose(out, torch.stack([rs_pool_dense(h) for h in hb]), atol=1e-12)
    w = torch.rand(3, dtype=torch.float64)
    def loss(w, h):
        return rs_pool_dense(h * w).sum()

    per_sample = torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0))(w, hb)
    loop = torch.stack([torch.func.grad(loss)(w, h) for h in hb])
    assert torch.allclose(per_sample, loop, atol=1e-12)


def test_hub_node_uses_scatter_path_not_quadratic_padding(monkeypatch):
    # a star: one node receives n - 1 messages; padding would be [n, n - 1, d] (n^2 d floats)
    from torch_geometric.nn import SAGEConv

    def no_padding(*args):
        raise AssertionError("padded [B, N_max, d] tensor built for a hub node")

    n = 3000
    x = torch.rand(n, 4, dtype=torch.float64)
    ei = torch.stack([torch.arange(1, n), torch.zeros(n - 1, dtype=torch.long)])
    conv = SAGEConv(4, 4, aggr="rspool").double()
    monkeypatch.setattr(functional_module, "to_dense", no_padding)
    out = conv(x, ei)
    out.sum().backward()
    assert out.shape == (n, 4) and bool(torch.isfinite(x.grad if x.grad is not None else out).all())
    monkeypatch.undo()
    # the scatter path equals the padded path
    batch = torch.cat([torch.zeros(40, dtype=torch.long), torch.arange(1, 200)])
    xs = torch.rand(239, 5, dtype=torch.float64, requires_grad=True)
    assert 200 * 40 > functional_module.PAD_LIMIT * 239 + 64  # really the scatter branch
    flat = rs_pool(xs, batch, num_iterations=3)
    dense = torch.stack([rs_pool_dense(xs[batch == k], num_iterations=3) for k in range(200)])
    assert torch.allclose(flat, dense, atol=1e-12)
    assert torch.autograd.gradcheck(lambda t: rs_pool(t, batch, num_iterations=2, size=202), (xs,))
