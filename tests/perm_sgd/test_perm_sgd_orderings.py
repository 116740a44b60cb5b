"""Permutation policies: valid orders, FlipFlop, GraB / PairGraB against slow transcriptions, errors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neurips25.perm_sgd import (
    FlipFlop,
    GraB,
    Incremental,
    PairGraB,
    RandomReshuffling,
    ShuffleOnce,
    WithReplacement,
    order_error,
    prefix_deviation,
)

PERMUTATIONS = [Incremental, ShuffleOnce, RandomReshuffling, FlipFlop, GraB, PairGraB]


def run_epochs(policy, G, epochs):
    """Feed fixed vectors G for ``epochs`` epochs; return the orders handed out (epochs + 1 of them)."""
    orders = []
    for _ in range(epochs):
        order = policy.next_epoch()
        orders.append(order)
        for i in order:
            policy.observe(int(i), G[i])
    orders.append(policy.next_epoch())
    return orders


def grab_slow(G, order, m):
    """Plain transcription of GraB's documented deterministic balance with norms (not dots)."""
    n = len(order)
    s = np.zeros(G.shape[1])
    nxt = np.empty(n, dtype=int)
    left, right = 0, n - 1
    for i in order:
        c = G[i] - m
        if np.linalg.norm(s + c) <= np.linalg.norm(s - c):
            s, nxt[left], left = s + c, i, left + 1
        else:
            s, nxt[right], right = s - c, i, right - 1
    return nxt


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 40), seed=st.integers(0, 2**16), cls=st.sampled_from(PERMUTATIONS))
def test_every_policy_returns_permutations(n, seed, cls):
    # guards: a balancer losing or duplicating a unit when filling from both ends (odd n, n = 1)
    G = np.random.default_rng(seed).normal(size=(n, 3))
    for order in run_epochs(cls(n, seed=seed), G, 3):
        assert order.dtype == np.int64
        assert sorted(order.tolist()) == list(range(n))


def test_with_replacement_is_not_a_permutation_but_in_range():
    p = WithReplacement(50, seed=0)
    order = p.next_epoch()
    assert not p.is_permutation
    assert order.shape == (50,) and order.min() >= 0 and order.max() < 50
    assert len(set(order.tolist())) < 50  # 50 draws from 50 repeat with prob 1 - 50!/50^50


def test_flipflop_reverses_previous_epoch_and_reshuffles_otherwise():
    p = FlipFlop(20, seed=3)
    e0, e1, e2, e3 = (p.next_epoch() for _ in range(4))
    assert np.array_equal(e1, e0[::-1])
    assert np.array_equal(e3, e2[::-1])
    assert not np.array_equal(e2, e0)


def test_shuffle_once_and_incremental_repeat_their_order():
    so = ShuffleOnce(30, seed=1)
    a, b = so.next_epoch(), so.next_epoch()
    assert np.array_equal(a, b) and not np.array_equal(a, np.arange(30))
    ig = Incremental(4, order=[3, 1, 0, 2])
    assert ig.next_epoch().tolist() == [3, 1, 0, 2] == ig.next_epoch().tolist()


@pytest.mark.parametrize("cls", [ShuffleOnce, RandomReshuffling, FlipFlop, GraB, PairGraB])
def test_same_seed_same_orders(cls):
    G = np.random.default_rng(0).normal(size=(25, 4))
    a = run_epochs(cls(25, seed=7), G, 3)
    b = run_epochs(cls(25, seed=7), G, 3)
    c = run_epochs(cls(25, seed=8), G, 3)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not all(np.array_equal(x, y) for x, y in zip(a, c))


def test_grab_reorder_on_hand_example_is_harvey_samadi():
    # 1-D vectors, visited in order 0..3, stale mean 0 in the first epoch:
    # s=0: c=+1 -> + (s=1); c=+2 -> - (s=-1); c=-1 -> - (s=0); c=+3 -> + (s=3)
    # next order = + in visiting order [0, 3], then - in reverse visiting order [2, 1]
    G = np.array([[1.0], [2.0], [-1.0], [3.0]])
    p = GraB(4, seed=0)
    p.next_epoch()
    p._order = np.arange(4)  # pin the random first epoch to the hand example's visiting order
    for i in range(4):
        p.observe(i, G[i])
    assert p.next_epoch().tolist() == [0, 3, 2, 1]


def test_grab_matches_slow_transcription_and_uses_stale_mean():
    rng = np.random.default_rng(1)
    G = rng.normal(size=(101, 6)) + 0.5
    p = GraB(101, seed=2)
    orders = run_epochs(p, G, 3)
    # epoch 0 balances against m = 0 (no stale mean yet); later epochs against the previous mean
    assert np.array_equal(orders[1], grab_slow(G, orders[0], np.zeros(6)))
    assert np.array_equal(orders[2], grab_slow(G, orders[1], G.mean(axis=0)))
    assert np.array_equal(orders[3], grab_slow(G, orders[2], G.mean(axis=0)))
    # with the *running* mean of the current epoch the construction differs (the naive bug)
    assert not np.array_equal(orders[1], grab_slow(G, orders[0], G.mean(axis=0))) or \
        not np.array_equal(orders[2], grab_slow(G, orders[1], np.zeros(6)))


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 60), d=st.integers(1, 8), seed=st.integers(0, 2**16))
def test_grab_reorder_bound_by_walk_and_previous_order(n, d, seed):
    # Harvey-Samadi: phi(new) <= (phi(old) + max_k ||s_k||) / 2 for the walk on centred vectors
    G = np.random.default_rng(seed).normal(size=(n, d))
    p = GraB(n, seed=seed)
    old = run_epochs(p, G, 1)[1]  # epoch 1 order; its walk uses the exact mean of epoch 0
    for i in old:
        p.observe(int(i), G[i])
    new = p.next_epoch()
    c = G - G.mean(axis=0)
    s, walk = np.zeros(d), 0.0
    for i in old:
        s = s + c[i] if np.linalg.norm(s + c[i]) <= np.linalg.norm(s - c[i]) else s - c[i]
        walk = max(walk, np.linalg.norm(s))
    assert order_error(G, new) <= 0.5 * (order_error(G, old) + walk) + 1e-9


def test_grab_and_pairgrab_beat_random_reshuffling_on_fixed_vectors():
    G = np.random.default_rng(0).random((1024, 16))
    rr = np.median([order_error(G, RandomReshuffling(1024, seed=s).next_epoch()) for s in range(5)])
    grab = order_error(G, run_epochs(GraB(1024, seed=0), G, 8)[-1])
    pair = order_error(G, run_epochs(PairGraB(1024, seed=0), G, 8)[-1])
    assert grab < rr / 3 and pair < rr / 3


def test_pairgrab_pair_rule_on_hand_example():
    # pairs (0,1): d = g0 - g1 = -1, s = 0 -> + : 0 front, 1 back (s = -1)
    # pairs (2,3): d = 5 - 1 = 4, <s, d> < 0 -> + : 2 front, 3 back; odd n: 4 in the middle
    G = np.array([[1.0], [2.0], [5.0], [1.0], [0.0]])
    p = PairGraB(5, seed=0)
    p.next_epoch()
    p._order = np.arange(5)
    for i in range(5):
        p.observe(i, G[i])
    assert p.next_epoch().tolist() == [0, 2, 4, 3, 1]


def test_probabilistic_grab_balances_better_than_random():
    G = np.random.default_rng(0).random((512, 32))
    prob = run_epochs(GraB(512, seed=0, balance="probabilistic"), G, 6)[-1]
    rr = np.median([order_error(G, RandomReshuffling(512, seed=s).next_epoch()) for s in range(5)])
    assert sorted(prob.tolist()) == list(range(512))
    assert order_error(G, prob) < rr / 2


def test_projected_grab_balances_the_projected_vectors():
    # with proj_dim < d only the sketch is balanced; the sketch's own order error must drop
    G = np.random.default_rng(0).random((512, 32))
    p = GraB(512, seed=0, proj_dim=8)
    order = run_epochs(p, G, 6)[-1]
    GP = G @ p._proj
    assert p._proj.shape == (32, 8)
    rr = np.median([order_error(GP, RandomReshuffling(512, seed=s).next_epoch()) for s in range(5)])
    assert order_error(GP, order) < rr / 2


def test_torch_cpu_gradients_give_the_numpy_orders():
    # CPU tensors are balanced in a float64 numpy state (zero-copy views): same orders as numpy input
    torch = pytest.importorskip("torch")
    G = np.random.default_rng(0).normal(size=(30, 5))
    a = run_epochs(GraB(30, seed=1), G, 3)
    p = GraB(30, seed=1)
    b = run_epochs(p, torch.tensor(G), 3)
    assert isinstance(p._m, np.ndarray) and p._m.dtype == np.float64
    assert all(np.array_equal(x, y) for x, y in zip(a, b))


def test_prefix_deviation_matches_loop():
    G = np.random.default_rng(0).normal(size=(7, 3))
    order = np.array([3, 1, 6, 0, 2, 5, 4])
    want = [np.linalg.norm(sum(G[order[j]] - G.mean(0) for j in range(k + 1))) for k in range(7)]
    assert np.allclose(prefix_deviation(G, order), want)
    assert order_error(G, order) == pytest.approx(max(want))


# ---------------------------------------------------------------- bad input

def test_bad_constructor_arguments():
    with pytest.raises(ValueError, match="n must be >= 1"):
        RandomReshuffling(0)
    with pytest.raises(TypeError, match="n must be an int"):
        GraB(3.5)
    with pytest.raises(ValueError, match="seed must be None or an int"):
        ShuffleOnce(3, seed=-1)
    with pytest.raises(ValueError, match="balance must be"):
        GraB(3, balance="greedy")
    with pytest.raises(ValueError, match="proj_dim"):
        PairGraB(3, proj_dim=0)
    with pytest.raises(ValueError, match="permutation of range"):
        Incremental(3, order=[0, 0, 1])


def test_observe_out_of_order_too_often_and_size_mismatch():
    p = GraB(3, seed=0)
    with pytest.raises(RuntimeError, match="call next_epoch"):
        p.observe(0, np.ones(2))
    order = p.next_epoch()
    with pytest.raises(ValueError, match="out of order; expected index"):
        p.observe(int(order[1]), np.ones(2))
    p.observe(int(order[0]), np.ones(2))
    with pytest.raises(ValueError, match="3 elements but earlier gradients had 2"):
        p.observe(int(order[1]), np.ones(3))
    p.observe(int(order[1]), np.ones(2))
    p.observe(int(order[2]), np.ones(2))
    with pytest.raises(ValueError, match="already observed"):
        p.observe(int(order[0]), np.ones(2))


def test_non_gradient_policies_validate_too():
    p = RandomReshuffling(2, seed=0)
    order = p.next_epoch()
    with pytest.raises(ValueError, match="out of order"):
        p.observe(int(order[1]), np.ones(2))


def test_nan_gradient_is_rejected():
    p = GraB(3, seed=0)
    order = p.next_epoch()
    p.observe(int(order[0]), np.ones(2))
    with pytest.raises(ValueError, match="NaN or inf"):
        p.observe(int(order[1]), np.array([np.nan, 1.0]))


def test_partial_epoch_warns_and_keeps_a_permutation():
    p = GraB(6, seed=0)
    order = p.next_epoch()
    for i in order[:4]:
        p.observe(int(i), np.ones(2) * i)
    with pytest.warns(RuntimeWarning, match="only 4 of 6"):
        nxt = p.next_epoch()
    assert sorted(nxt.tolist()) == list(range(6))
    with pytest.warns(RuntimeWarning, match="no gradients were observed"):
        nxt = p.next_epoch()
    assert sorted(nxt.tolist()) == list(range(6))


@pytest.mark.parametrize("balance", ["deterministic", "probabilistic"])
def test_observe_many_equals_sequential_observe(balance):
    # the Gram-matrix block path of GraB must give the sequential walk's orders and state
    G = np.random.default_rng(0).normal(size=(60, 7)) + 0.2
    seq, blk = GraB(60, seed=1, balance=balance), GraB(60, seed=1, balance=balance)
    for _ in range(3):
        a, b = seq.next_epoch(), blk.next_epoch()
        assert np.array_equal(a, b)
        for i in a:
            seq.observe(int(i), G[i])
        for start in range(0, 60, 16):
            blk.observe_many(b[start:start + 16], G[b[start:start + 16]])
    assert np.array_equal(seq.next_epoch(), blk.next_epoch())
    assert np.allclose(seq._m, blk._m)


def test_observe_many_validates_like_observe():
    p = PairGraB(5, seed=0)
    order = p.next_epoch()
    with pytest.raises(ValueError, match="out of order; expected index"):
        p.observe_many(order[[1, 0]], np.ones((2, 3)))
    with pytest.raises(ValueError, match="leading dimension 2"):
        p.observe_many(order[:2], np.ones((3, 3)))
    p.observe_many(order[:3], np.ones((3, 3)))  # pair + pending cache through the generic loop
    with pytest.raises(ValueError, match="only 2 of epoch 0 remain"):
        p.observe_many(order[:3], np.ones((3, 3)))
    with pytest.raises(ValueError, match="4 elements per unit"):
        p.observe_many(order[3:5], np.ones((2, 4)))


@pytest.mark.parametrize("n", [61, 64])
def test_pairgrab_observe_many_equals_sequential(n):
    # blocks that start mid-pair and end mid-pair must give the sequential pair walk
    G = np.random.default_rng(1).normal(size=(n, 5))
    seq, blk = PairGraB(n, seed=2), PairGraB(n, seed=2)
    for _ in range(3):
        a, b = seq.next_epoch(), blk.next_epoch()
        assert np.array_equal(a, b)
        for i in a:
            seq.observe(int(i), G[i])
        for start in range(0, n, 7):
            blk.observe_many(b[start:start + 7], G[b[start:start + 7]])
    assert np.array_equal(seq.next_epoch(), blk.next_epoch())
