"""Pair labels, crowding and diversity ranks against pymoo's non-dominated sort and crowding distance."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from pymoo.operators.survival.rank_and_crowding.metrics import calc_crowding_distance
from pymoo.util.nds.non_dominated_sorting import NonDominatedSorting

from neurips25.pref_diffusion import (
    PairSampler,
    PreferenceNet,
    crowding_distance,
    diversity_ranks,
    dominance_labels,
    dominates,
)

objective_sets = arrays(
    np.float64,
    st.tuples(st.integers(3, 30), st.integers(2, 4)),
    elements=st.floats(0, 10, allow_nan=False, width=32),
    unique=True,
)


def test_dominance_labels_hand_table():
    # guards the label convention: 0 = first member preferred, 1 = second, -1 = incomparable / equal
    Yi = np.array([[0, 0], [2, 2], [0, 1], [1, 1]])
    Yj = np.array([[1, 0], [1, 2], [1, 0], [1, 1]])
    assert dominance_labels(Yi, Yj).tolist() == [0, 1, -1, -1]


@settings(max_examples=30, deadline=None)
@given(objective_sets)
def test_dominance_agrees_with_pymoo_fronts(F):
    # a point in a better front is never dominated by one in a worse front, and each non-first-front point
    # is dominated by some point of the previous front (pymoo's definition of the fronts)
    fronts = NonDominatedSorting().do(F)
    rank = np.empty(len(F), int)
    for k, idx in enumerate(fronts):
        rank[idx] = k
    i, j = np.meshgrid(np.arange(len(F)), np.arange(len(F)), indexing="ij")
    lab = dominance_labels(F[i.ravel()], F[j.ravel()]).reshape(i.shape)
    assert np.all(rank[i[lab == 0]] < rank[j[lab == 0]])
    for k in range(1, len(fronts)):
        for p in fronts[k]:
            assert dominates(F[fronts[k - 1]], F[p][None]).any()


@settings(max_examples=30, deadline=None)
@given(objective_sets)
def test_crowding_equals_pymoo(F):
    np.testing.assert_allclose(crowding_distance(F), calc_crowding_distance(F))


@settings(max_examples=30, deadline=None)
@given(objective_sets)
def test_diversity_rank_is_front_then_descending_crowding(F):
    front, score, rank = diversity_ranks(F)
    assert sorted(rank.tolist()) == list(range(len(F)))
    order = np.argsort(rank)
    # fronts never decrease along the global order, and within a front the score never increases
    assert np.all(np.diff(front[order]) >= 0)
    same = front[order][1:] == front[order][:-1]
    assert np.all(score[order][1:][same] <= score[order][:-1][same])


def test_hv_contribution_metric_ranks_the_isolated_point_first():
    F = np.array([[0.0, 1.0], [0.1, 0.9], [0.5, 0.5], [1.0, 0.0]])
    front, score, rank = diversity_ranks(F, metric="hv_contrib")
    assert front.tolist() == [0, 0, 0, 0]
    assert np.argmax(score) == 2  # the middle point owns the largest exclusive box


def test_diversity_pairs_agree_with_dominance_across_fronts():
    rng = np.random.default_rng(1)
    Y = rng.random((300, 2))
    s = PairSampler(rng.random((300, 3)), Y, mode="diversity", seed=0)
    i, j, lab = s.draw()
    assert len(i) > 250
    win = np.where(lab == 0, i, j)
    lose = np.where(lab == 0, j, i)
    # the loser never dominates the winner: diversity labels are dominance-consistent
    assert not dominates(Y[lose], Y[win]).any()
    # same-front partners always have crowding above the threshold
    same = s.front[i] == s.front[j]
    assert np.all(s.score[j[same]] > 0)


def test_dominance_pairs_only_comparable_and_subset_ratio():
    rng = np.random.default_rng(2)
    X, Y = rng.random((200, 2)), rng.random((200, 2))
    s = PairSampler(X, Y, mode="dominance", seed=0)
    i, j, lab = s.draw()
    assert np.all(lab == np.where(dominates(Y[i], Y[j]), 0, 1))
    assert np.all(dominates(Y[i], Y[j]) | dominates(Y[j], Y[i]))
    sub = PairSampler(X, Y, subset_ratio=0.3, seed=0)
    assert len(sub) == 60
    # the subset holds the 60 best points by global rank
    _, _, rank = diversity_ranks(Y)
    assert {tuple(r) for r in sub.Y} == {tuple(r) for r in Y[np.argsort(rank)[:60]]}
    x1, x2, label = sub[0]
    assert x1.shape == (2,) and label in (0, 1)


def test_bradley_terry_probabilities_sum_to_one():
    torch.manual_seed(0)
    net = PreferenceNet(3, hidden=16)
    x1, x2, t = torch.randn(50, 3), torch.randn(50, 3), torch.randint(1, 1000, (50,))
    p12 = net.log_prob_prefers(x1, x2, t).exp()
    p21 = net.log_prob_prefers(x2, x1, t).exp()
    torch.testing.assert_close(p12 + p21, torch.ones(50))
    torch.testing.assert_close(p12, torch.sigmoid(net.utility(x1, t) - net.utility(x2, t)))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"mode": "best"}, "`mode` must be"),
        ({"subset_ratio": 1.5}, "`subset_ratio` must be in"),
    ],
)
def test_pair_sampler_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        PairSampler(np.zeros((5, 2)), np.random.default_rng(0).random((5, 2)), **kwargs)


def test_bad_objective_inputs():
    with pytest.raises(ValueError, match="same shape"):
        dominance_labels(np.zeros((3, 2)), np.zeros((2, 2)))
    with pytest.raises(ValueError, match="NaN or inf"):
        diversity_ranks(np.array([[0.0, np.nan], [1.0, 1.0]]))
    with pytest.raises(ValueError, match="`metric` must be"):
        diversity_ranks(np.zeros((3, 2)), metric="entropy")
