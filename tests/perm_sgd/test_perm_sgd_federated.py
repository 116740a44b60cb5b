"""Federated schedules: regularized participation covers every client once per cycle; FedAvg loop."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neurips25.perm_sgd import (
    GraB,
    Incremental,
    RegularizedParticipation,
    UniformParticipation,
    WithReplacement,
    fedavg,
)
from neurips25.perm_sgd.data import label_skew_split


@settings(max_examples=30, deadline=None)
@given(M=st.integers(1, 30), S=st.integers(1, 30), seed=st.integers(0, 1000))
def test_each_client_exactly_once_per_cycle(M, S, seed):
    S = min(S, M)
    sched = RegularizedParticipation(M, S, seed=seed)
    R = -(-M // S)
    assert sched.rounds_per_cycle == R
    for _ in range(3):
        rounds = [sched.next_round() for _ in range(R)]
        assert all(1 <= len(r) <= S for r in rounds)
        assert sorted(np.concatenate(rounds).tolist()) == list(range(M))


def test_cyclic_participation_and_grab_client_order():
    sched = RegularizedParticipation(6, 2, Incremental(6))
    assert [sched.next_round().tolist() for _ in range(4)] == [[0, 1], [2, 3], [4, 5], [0, 1]]
    # a GraB client order is fed the participants' updates, in round order
    grab = RegularizedParticipation(4, 2, GraB(4, seed=0))
    updates = np.array([[1.0], [2.0], [-1.0], [3.0]])
    for _ in range(2):
        for c in grab.next_round():
            grab.observe(int(c), updates[c])
    assert grab.policy.position == 4


def test_uniform_participation_draws_distinct_clients_per_round():
    sched = UniformParticipation(10, 4, seed=0)
    rounds = [sched.next_round() for _ in range(50)]
    assert all(len(set(r.tolist())) == 4 for r in rounds)
    counts = np.bincount(np.concatenate(rounds), minlength=10)
    assert counts.min() < counts.max()  # not regularized: participation counts drift apart


def test_fedavg_reaches_the_average_minimiser():
    a = np.array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0])
    x = fedavg(lambda c, x, rng: x - a[c], np.zeros(1), RegularizedParticipation(6, 3, seed=0),
               rounds=200, local_steps=1, lr=0.05)
    assert x[0] == pytest.approx(2.5, abs=0.05)


def test_label_skew_split_partitions_with_two_labels_each():
    y = np.repeat(np.arange(10), 20)
    parts = label_skew_split(y, 10, classes_per_client=2, seed=0)
    assert sorted(np.concatenate(parts).tolist()) == list(range(200))
    assert all(len(np.unique(y[p])) <= 2 for p in parts)


def test_bad_input():
    with pytest.raises(ValueError, match="exceeds n_clients"):
        RegularizedParticipation(3, 4)
    with pytest.raises(ValueError, match="must equal n_clients"):
        RegularizedParticipation(4, 2, GraB(5))
    with pytest.raises(ValueError, match="does not return permutations"):
        RegularizedParticipation(4, 2, WithReplacement(4))
    with pytest.raises(ValueError, match="n_clients must be an int >= 1"):
        UniformParticipation(0, 1)
    with pytest.raises(ValueError, match="local_steps must be an int >= 1"):
        fedavg(lambda c, x, rng: x, np.zeros(1), UniformParticipation(2, 1), 1, 0, 0.1)


def test_arrival_order_and_drop_give_the_same_balance_as_round_order():
    updates = np.random.default_rng(0).normal(size=(6, 3))
    a = RegularizedParticipation(6, 3, GraB(6, seed=0))
    b = RegularizedParticipation(6, 3, GraB(6, seed=0))
    for _ in range(2):
        ra, rb = a.next_round(), b.next_round()
        assert ra.tolist() == rb.tolist()
        for c in ra:
            a.observe(int(c), updates[c])
        for c in rb[::-1]:  # arrival order reversed
            b.observe(int(c), updates[c])
    assert np.array_equal(a.policy._next, b.policy._next)
    # a straggler: its slot is filled with the round mean, the round still closes
    r = a.next_round()
    a.observe(int(r[0]), updates[r[0]])
    a.drop(int(r[1]))
    a.observe(int(r[2]), updates[r[2]])
    assert a.policy.position == 3
    with pytest.raises(ValueError, match="already reported"):
        a.observe(int(r[0]), updates[r[0]])
    with pytest.raises(ValueError, match="not in the current round"):
        b.next_round()
        b.observe(int(np.setdiff1d(np.arange(6), b._round)[0]), updates[0])


def test_round_level_balancing_lanes_and_shared_walk():
    M, S = 8, 2
    sched = RegularizedParticipation(M, S, seed=0, balance="round")
    seen = []
    G = np.random.default_rng(1).normal(size=(M, 4))
    for _ in range(3 * sched.rounds_per_cycle):
        r = sched.next_round()
        assert [int(c) % S for c in r] == list(range(S))  # lane w supplies the w-th client
        seen.append(r)
        for c in r[::-1]:
            sched.observe(int(c), G[c])
    for k in range(3):  # every client once per cycle
        cyc = np.concatenate(seen[k * 4:(k + 1) * 4])
        assert sorted(cyc.tolist()) == list(range(M))
    assert sched.lanes[0].epoch == 2 and sched.lanes[0].position == M // S
    with pytest.raises(ValueError, match="divide"):
        RegularizedParticipation(6, 4, balance="round")
    with pytest.raises(ValueError, match="pass policy=None"):
        RegularizedParticipation(4, 2, GraB(4), balance="round")
    with pytest.raises(ValueError, match="balance must be"):
        RegularizedParticipation(4, 2, balance="rounds")
