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
