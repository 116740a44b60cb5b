"""The fast per-example path equals the slow one: the block walk vs sequential ``observe`` (bit for
bit on the host), and the Linear-hook gradients of one backward vs torch.func.vmap and a loop of
single-example backward passes (to 1e-6)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from neurips25.perm_sgd import GraB, GradientBalancer, PairGraB  # noqa: E402


def _feed_both(make, G, block, epochs=3):
    """Sequential observe and observe_many in blocks of ``block`` on the same gradients."""
    n = G.shape[0]
    seq, blk = make(), make()
    for _ in range(epochs):
        a, b = seq.next_epoch(), blk.next_epoch()
        assert np.array_equal(a, b)
        for i in a:
            seq.observe(int(i), G[int(i)])
        for start in range(0, n, block):
            idx = b[start:start + block]
            blk.observe_many(idx, G[torch.as_tensor(idx)])
        assert np.array_equal(seq._s, blk._s)  # same float64 operations in the same order
    assert np.array_equal(seq.next_epoch(), blk.next_epoch())
    return seq, blk


@pytest.mark.parametrize("balance", ["deterministic", "probabilistic"])
def test_grab_block_walk_is_bit_identical_to_sequential(balance):
    # float32 torch gradients, as GradientBalancer.backward feeds them; a ragged last block
    G = torch.randn(70, 41, generator=torch.Generator().manual_seed(3)) + 0.1
    seq, blk = _feed_both(lambda: GraB(70, seed=1, balance=balance), G, 32)
    assert np.array_equal(seq._m, blk._m)


@pytest.mark.parametrize("n", [61, 64])
def test_pairgrab_block_walk_is_bit_identical_to_sequential(n):
    G = torch.randn(n, 17, generator=torch.Generator().manual_seed(4))
    _feed_both(lambda: PairGraB(n, seed=2), G, 9)


def test_nan_in_a_block_leaves_the_walk_untouched():
    G = np.random.default_rng(0).normal(size=(8, 5))
    p = GraB(8, seed=0)
    order = p.next_epoch()
    p.observe_many(order[:2], G[order[:2]])
    s_before = p._s.copy()
    for bad in (np.nan, np.inf):
        H = G[order[2:6]].copy()
        H[2, 1] = bad
        with pytest.raises(ValueError, match="NaN or inf"):
            p.observe_many(order[2:6], H)
        assert np.array_equal(p._s, s_before) and p.position == 2
    p.observe_many(order[2:], G[order[2:]])  # the epoch can continue with clean gradients
    assert sorted(p.next_epoch().tolist()) == list(range(8))


class _Tokens(torch.nn.Module):
    """Linear layers on (B, T, d) inputs: per-example gradients sum over the T tokens."""

    def __init__(self):
        super().__init__()
        self.l1, self.l2 = torch.nn.Linear(5, 4), torch.nn.Linear(4, 3)

    def forward(self, x):
        return self.l2(torch.tanh(self.l1(x))).mean(dim=1)


def _models():
    torch.manual_seed(0)
    return {
        "tanh": (torch.nn.Sequential(torch.nn.Linear(5, 4), torch.nn.Tanh(), torch.nn.Linear(4, 3)), (5,)),
        # an in-place op on a Linear's output: v1's autograd.grad on that output got it wrong
        "relu_inplace": (torch.nn.Sequential(torch.nn.Linear(5, 6), torch.nn.ReLU(inplace=True),
                                             torch.nn.Linear(6, 3)), (5,)),
        "no_bias": (torch.nn.Sequential(torch.nn.Linear(5, 4, bias=False), torch.nn.Tanh(),
                                        torch.nn.Linear(4, 3)), (5,)),
        "tokens": (_Tokens(), (6, 5)),
    }


def _loop_grads(model, X, y, loss_fn):
    rows = []
    for b in range(len(X)):
        model.zero_grad()
        loss_fn(model(X[b:b + 1]), y[b:b + 1]).backward()
        rows.append(torch.cat([p.grad.reshape(-1) for p in model.parameters()]))
    return torch.stack(rows)


def _captured(balancer, fast):
    """Run one backward, returning the (B, d) gradients the policy received."""
    got = {}
    inner = balancer.policy._observe_checked

    def spy(idx, G):
        got.setdefault("G", G.materialize() if hasattr(G, "gram") else G.detach().clone())
        inner(idx, G)

    balancer.policy._observe_checked = spy
    if not fast:
        balancer._linear = None  # force torch.func.vmap
    return got


@pytest.mark.parametrize("name", ["tanh", "relu_inplace", "no_bias", "tokens"])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_linear_hooks_equal_vmap_and_a_loop_of_backward(name, reduction):
    model, shape = _models()[name]
    g = torch.Generator().manual_seed(1)
    X, y = torch.randn(7, *shape, generator=g), torch.randint(0, 3, (7,), generator=g)

    def loss_fn(out, t):
        return torch.nn.functional.cross_entropy(out, t, reduction=reduction)

    loop = _loop_grads(model, X, y, torch.nn.functional.cross_entropy)
    model.zero_grad()
    ref_loss = loss_fn(model(X), y)
    ref_loss.backward()
    ref_grad = [p.grad.clone() for p in model.parameters()]
    results = {}
    for fast in (True, False):
        policy = GraB(7, seed=0)
        order = policy.next_epoch()
        balancer = GradientBalancer(policy, model)
        assert balancer._linear is not None
        got = _captured(balancer, fast)
        model.zero_grad()
        loss = balancer.backward(loss_fn, X[order], y[order], indices=order, reduction=reduction)
        assert float(loss) == pytest.approx(float(ref_loss.detach()), rel=1e-6)
        for a, b in zip([p.grad for p in model.parameters()], ref_grad):
            assert torch.allclose(a, b, atol=1e-6)  # .grad is the ordinary batch gradient
        results[fast] = got["G"]
        assert torch.allclose(got["G"], loop[order], atol=1e-6), f"fast={fast}"
    assert torch.allclose(results[True], results[False], atol=1e-6)


def test_fast_and_vmap_training_give_the_same_orders():
    # a few epochs of real training: the two per-example paths pick the same permutations
    g = torch.Generator().manual_seed(2)
    X, y = torch.randn(40, 5, generator=g), torch.randint(0, 3, (40,), generator=g)
    orders = {}
    for fast in (True, False):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        policy = GraB(40, seed=0)
        balancer = GradientBalancer(policy, model)
        if not fast:
            balancer._linear = None
        seen = []
        for _ in range(4):
            order = policy.next_epoch()
            seen.append(order.copy())
            for start in range(0, 40, 8):
                idx = order[start:start + 8]
                opt.zero_grad()
                balancer.backward(torch.nn.functional.cross_entropy, X[idx], y[idx], indices=idx)
                opt.step()
        orders[fast] = np.stack(seen)
    assert np.array_equal(orders[True], orders[False])


def test_loss_fn_must_return_a_scalar():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(5, 3))
    policy = GraB(4, seed=0)
    order = policy.next_epoch()
    balancer = GradientBalancer(policy, net)
    X, y = torch.randn(4, 5), torch.randint(0, 3, (4,))

    def per_row(out, t):
        return torch.nn.functional.cross_entropy(out, t, reduction="none")

    with pytest.raises(ValueError, match="must return a scalar"):
        balancer.backward(per_row, X[order], y[order], indices=order)
    assert policy.position == 0


def test_out_of_order_batch_is_refused_before_grad_is_touched():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(5, 3))
    policy = GraB(6, seed=0)
    order = policy.next_epoch()
    balancer = GradientBalancer(policy, net)
    X, y = torch.randn(6, 5), torch.randint(0, 3, (6,))
    net.zero_grad(set_to_none=True)
    wrong = order[[1, 0]]
    with pytest.raises(ValueError, match="not the policy's next units"):
        balancer.backward(torch.nn.functional.cross_entropy, X[wrong], y[wrong], indices=wrong)
    assert all(p.grad is None for p in net.parameters()) and policy.position == 0


# ---------------------------------------------------------------- factored (never materialised) walk

def _random_factors(B, seed, scale=1.0, dtype=torch.float64):
    from neurips25.perm_sgd.factored import FactoredGrads

    g = torch.Generator().manual_seed(seed)
    a1, z1 = torch.randn(B, 5, generator=g, dtype=dtype), torch.randn(B, 4, generator=g, dtype=dtype)
    a2, z2 = torch.randn(B, 4, generator=g, dtype=dtype), torch.randn(B, 3, generator=g, dtype=dtype) + 0.3
    # layout: W1 (4x5) at 0, b1 at 20, W2 (3x4) at 24, no bias for layer 2 -> d = 36
    return FactoredGrads([(a1, z1, 0, 20), (a2, z2, 24, None)], dim=36, scale=scale)


def _rows(F, idx):
    """The examples ``idx`` of F (copies of the factors)."""
    t = torch.as_tensor(np.asarray(idx))
    return type(F)([(x[t], z[t], w, c) for x, z, w, c in F.layers], F.dim, F.scale)


def test_factored_products_equal_the_dense_ones():
    F = _random_factors(7, 0, scale=2.5)
    G = F.materialize()
    assert G.shape == (7, 36) and torch.all(G[:, 20:24] == 2.5 * F.layers[0][1])
    V = torch.randn(3, 36, dtype=torch.float64)
    for f in (F, F.host64()):
        K, D = f.gram(), f.dots(V if f is F else V.numpy())
        assert np.allclose(np.asarray(K), (G @ G.T).numpy(), rtol=1e-12)
        assert np.allclose(np.asarray(D), (V @ G.T).numpy(), rtol=1e-12)
        coef = torch.randn(2, 7, dtype=torch.float64)
        vs = [torch.zeros(36, dtype=torch.float64), torch.ones(36, dtype=torch.float64)]
        if f is not F:
            vs, coef = [v.numpy() for v in vs], coef.numpy()
        f.add_to(vs, coef)
        ref = torch.as_tensor(np.asarray(coef)) @ G
        assert np.allclose(np.asarray(vs[0]), ref[0].numpy()) and np.allclose(np.asarray(vs[1]), 1 + ref[1].numpy())


@pytest.mark.parametrize("balance", ["deterministic", "probabilistic"])
@pytest.mark.parametrize("block", [5, 32, 200])  # ragged blocks, window-sized, larger than the window
def test_factored_grab_matches_the_sequential_walk(balance, block):
    # the Gram-matrix walk (deferred over GraB.factor_window examples) picks the sequential walk's signs
    n = 300
    F = _random_factors(n, 1, scale=3.0)
    G = F.materialize()  # float64: the two walks differ only by rounding
    seq, fac = GraB(n, seed=2, balance=balance), GraB(n, seed=2, balance=balance)
    for _ in range(3):
        a, b = seq.next_epoch(), fac.next_epoch()
        assert np.array_equal(a, b)
        for i in a:
            seq.observe(int(i), G[int(i)])
        for start in range(0, n, block):
            idx = b[start:start + block]
            fac.observe_factored(idx, _rows(F, idx))
        fac._flush()
        assert np.allclose(fac._s, seq._s, rtol=1e-9, atol=1e-9)
    assert np.array_equal(seq.next_epoch(), fac.next_epoch())
    assert np.allclose(fac._m, seq._m, rtol=1e-12)


@pytest.mark.parametrize("n,block", [(61, 9), (64, 9), (301, 5)])  # 301 / 5: windows start at odd positions
def test_factored_pairgrab_matches_the_sequential_walk(n, block):
    F = _random_factors(n, 3)
    G = F.materialize()
    seq, fac = PairGraB(n, seed=0), PairGraB(n, seed=0)
    for _ in range(3):
        a, b = seq.next_epoch(), fac.next_epoch()
        assert np.array_equal(a, b)
        for i in a:
            seq.observe(int(i), G[int(i)])
        for start in range(0, n, block):  # odd blocks: pairs straddle the blocks and the windows
            fac.observe_factored(b[start:start + block], _rows(F, b[start:start + block]))
    assert np.array_equal(seq.next_epoch(), fac.next_epoch())


def test_factored_nan_is_refused_where_it_arrives():
    F = _random_factors(8, 4)
    p = GraB(8, seed=0)
    order = p.next_epoch()
    p.observe_factored(order[:3], _rows(F, np.arange(3)))
    bad = _rows(F, np.arange(3, 6))
    bad.layers[1][0][1, 2] = float("nan")
    with pytest.raises(ValueError, match="NaN or inf"):
        p.observe_factored(order[3:6], bad)
    assert p.position == 3
    p.observe_factored(order[3:], _rows(F, np.arange(3, 8)))
    assert sorted(p.next_epoch().tolist()) == list(range(8))
    with pytest.raises(TypeError, match="FactoredGrads"):
        p.observe_factored(p.order[:2], np.zeros((2, 36)))


def test_factored_and_bit_exact_balancers_give_the_same_orders():
    # real training: factored=True (Gram walk) and factored=False (row walk, bit-identical to observe)
    g = torch.Generator().manual_seed(5)
    X, y = torch.randn(96, 6, generator=g), torch.randint(0, 3, (96,), generator=g)
    orders = {}
    for factored in (True, False):
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        policy = GraB(96, seed=0)
        balancer = GradientBalancer(policy, model, factored=factored)
        seen = []
        for _ in range(4):
            order = policy.next_epoch()
            seen.append(order.copy())
            for start in range(0, 96, 16):
                idx = order[start:start + 16]
                opt.zero_grad()
                balancer.backward(torch.nn.functional.cross_entropy, X[idx], y[idx], indices=idx)
                opt.step()
        orders[factored] = np.stack(seen)
    assert np.array_equal(orders[True], orders[False])
    with pytest.raises(TypeError, match="factored must be a bool"):
        GradientBalancer(GraB(4), torch.nn.Linear(2, 2), factored="yes")


def _reference_grab_signs(G, m, s0):
    """The GraB walk written out step by step on materialised float64 vectors (the oracle)."""
    s = s0.copy()
    signs = []
    for g in G:
        c = g - m
        plus = float(s @ c) <= 0.0
        s = s + c if plus else s - c
        signs.append(plus)
    return np.array(signs), s


def _window_case(window_dtype):
    """A GraB in the middle of an epoch (non-zero stale mean and running sum), float32 factors of
    150 examples and their exact float64 rows G."""
    F64 = _random_factors(150, 7, scale=4.0)
    F = type(F64)([(a.float(), z.float(), w, c) for a, z, w, c in F64.layers], F64.dim, F64.scale)  # float32
    G = type(F64)([(a.double(), z.double(), w, c) for a, z, w, c in F.layers], F.dim, F.scale).materialize().numpy()
    rng = np.random.default_rng(7)
    p = GraB(150, seed=0, window_dtype=window_dtype)
    p.next_epoch()
    p._init_state(np.zeros(36))
    p._m[:] = G.mean(0) + 0.1 * rng.normal(size=36)
    p._s[:] = rng.normal(size=36)
    return p, F, G


@pytest.mark.parametrize("window_dtype", ["float64", "float32"])
def test_window_walk_gives_the_reference_signs_on_a_fixed_input(window_dtype):
    # the fast path (raw Gram, centring as scalars in the sign loop, ones column for biases, reused
    # buffers) against the plain step-by-step walk, from a non-zero stale mean and running sum; on
    # this input no <s_b, c_b> is near zero, so the float32 window gives the same signs too
    p, F, G = _window_case(window_dtype)
    s0, m = p._s.copy(), p._m.copy()
    want, s_want = _reference_grab_signs(G, m, s0)
    win_F = _window_of(F, float32=window_dtype == "float32")
    assert win_F._aug is not None  # the ones-column layout is the one exercised
    assert win_F.dtype == np.dtype(window_dtype)  # float32: the rows as they arrived, nothing converted
    p._walk_factored(0, np.arange(150), win_F)
    placed = p._next[:int(want.sum())]
    assert np.array_equal(placed, np.flatnonzero(want))  # "+" examples first, in visiting order
    assert np.array_equal(p._next[int(want.sum()):][::-1], np.flatnonzero(~want))
    tol = 1e-10 if window_dtype == "float64" else 1e-5  # float32 increments, float64 sums
    assert np.allclose(p._s, s_want, rtol=tol, atol=tol)
    assert np.allclose(p._acc, G.sum(0), rtol=tol, atol=tol)


@pytest.mark.parametrize("seed", range(4))
def test_float32_window_walk_is_the_grab_walk_up_to_float32_rounding(seed):
    # tolerance-aware oracle: replay the float32 window walk's own signs through the exact float64
    # walk; every sign must be GraB's rule on the exact <s_b, c_b> unless that value is within
    # float32 rounding (of the Gram entries and dot products it is computed from) of zero
    p, F, G = _window_case("float32")
    if seed:  # other inputs: shuffled examples, another state
        rng = np.random.default_rng(seed)
        perm = rng.permutation(150)
        F, G = _rows(F, perm), G[perm]
        p._s[:] = 3.0 * rng.normal(size=36)
    s, m = p._s.copy(), p._m.copy()
    p._walk_factored(0, np.arange(150), _window_of(F, float32=True))
    plus = np.zeros(150, dtype=bool)
    plus[p._next[:p._left]] = True
    assert p._placed.all() and p._left + (149 - p._right) == 150
    C = G - m
    scale = np.abs(G @ G.T).sum(0) + np.abs(G) @ (np.abs(s) + np.abs(m))  # bounds the float32 error of each value
    near, wrong = 0, 0
    for b in range(150):
        x = float(s @ C[b])
        if plus[b] != (x <= 0.0):
            wrong += abs(x) > 1e-6 * (scale[b] + abs(x))
            near += 1
        s = s + C[b] if plus[b] else s - C[b]
    assert wrong == 0, f"{wrong} signs differ from GraB's rule beyond float32 rounding"
    assert near <= 1  # a sign differing from the float64 walk is a rare tie, not the rule
    assert np.allclose(p._s, s, rtol=1e-5, atol=1e-5)
    assert np.allclose(p._acc, G.sum(0), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("balance", ["deterministic", "probabilistic"])
def test_float32_and_float64_windows_give_the_same_orders(balance):
    # 3 epochs through observe_factored in blocks of 32 float32 rows (windows of 192, the last one
    # shorter): the float32 window's products change no sign or probability draw on this input
    F64 = _random_factors(300, 11, scale=32.0)
    F = type(F64)([(a.float(), z.float(), w, c) for a, z, w, c in F64.layers], F64.dim, F64.scale)
    orders = {}
    for dtype in ("float32", "float64"):
        p = GraB(300, seed=4, balance=balance, window_dtype=dtype)
        seen = []
        for _ in range(3):
            order = p.next_epoch()
            seen.append(order)
            for start in range(0, 300, 32):
                idx = order[start:start + 32]
                p.observe_factored(idx, _rows(F, idx))
        seen.append(p.next_epoch())
        assert bool(p._work32) == (dtype == "float32")  # the float32 window walk ran
        orders[dtype] = (np.stack(seen), p._m.copy())
    assert np.array_equal(orders["float32"][0], orders["float64"][0])
    assert np.allclose(orders["float32"][1], orders["float64"][1], rtol=1e-5, atol=1e-6)


def test_float32_window_only_for_float32_rows_with_one_scale():
    from neurips25.perm_sgd.factored import FactoredGrads, FactorWindow

    F = _random_factors(8, 2)
    F32 = FactoredGrads([(a.float(), z.float(), w, c) for a, z, w, c in F.layers], F.dim, 2.0)
    assert _window_of(F, float32=True).dtype == np.float64  # float64 factors: the float64 window
    win = FactorWindow(8)
    win.append(np.arange(4), F32.slice(0, 4))
    win.append(np.arange(4, 8), FactoredGrads(F32.slice(4, 8).layers, F.dim, 3.0))  # another scale
    idx, W = win.take(float32=True)
    assert W.dtype == np.float64 and np.array_equal(idx, np.arange(8))
    assert np.allclose(W.materialize(), np.concatenate([F32.slice(0, 4).materialize().double().numpy(),
                                                        (1.5 * F32.slice(4, 8).materialize()).double().numpy()]))
    win.append(np.arange(8), F32)
    _, W = win.take(float32=True)
    assert W.dtype == np.float32 and W.scale == 2.0  # the rows as they arrived, the scale apart
    assert np.allclose(W.materialize(), F32.materialize().numpy())
    with pytest.raises(ValueError, match="window_dtype"):
        GraB(8, window_dtype="float16")
    assert "window_dtype='float32'" in repr(GraB(8))


def _window_of(F, float32=False):
    """F's examples as a FactorWindow hands them to the walk (blocks of 32 torch rows)."""
    from neurips25.perm_sgd.factored import FactorWindow

    win = FactorWindow(F.batch)
    for start in range(0, F.batch, 32):
        stop = min(start + 32, F.batch)
        win.append(np.arange(start, stop), F.slice(start, stop))
    return win.take(float32=float32)[1]


def test_retain_grad_switches_to_hooks_when_an_in_place_op_appears():
    # dL/dz comes from z.retain_grad() while no Linear output is modified in place; a model that
    # starts doing so later (here: a flag) is caught by z's version counter and redone with hooks
    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.l1, self.l2, self.inplace = torch.nn.Linear(5, 6), torch.nn.Linear(6, 3), False

        def forward(self, x):
            z = self.l1(x)
            z = z.relu_() if self.inplace else torch.relu(z)
            return self.l2(z)

    torch.manual_seed(0)
    model = Net()
    g = torch.Generator().manual_seed(2)
    X, y = torch.randn(6, 5, generator=g), torch.randint(0, 3, (6,), generator=g)
    loss_fn = torch.nn.functional.cross_entropy
    loop = _loop_grads(model, X, y, loss_fn)
    balancer = GradientBalancer(GraB(6, seed=0), model)
    for inplace, expect_retain in ((False, True), (False, True), (True, False)):  # hooks, retain, redo
        model.inplace = inplace
        balancer.policy.next_epoch()
        got = _captured(balancer, fast=True)
        model.zero_grad()
        balancer.backward(loss_fn, X, y, indices=balancer.policy.order[:6])
        del balancer.policy._observe_checked  # the spy
        assert balancer._retain is expect_retain
        assert torch.allclose(got["G"], loop, atol=1e-6)  # rows in the batch's order
    assert all("forward" not in m.__dict__ for m in (model.l1, model.l2))  # the wrappers are removed


def test_sampler_counts_served_units_from_its_iterator():
    from neurips25.perm_sgd import PermutationSampler

    policy = GraB(5, seed=0)
    sampler = PermutationSampler(policy, dataset=range(5))
    it = iter(sampler)
    assert sampler._served == 0
    next(it), next(it)
    assert sampler._served == 2
    list(it)
    assert sampler._served == 5
    iter(sampler)  # a new epoch: the old iterator no longer counts
    assert sampler._served == 0 and sampler._epoch == policy.epoch == 1
