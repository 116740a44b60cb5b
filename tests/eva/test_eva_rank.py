"""rank_distribution: the pure budget-sharing rule of EVA (step 4)."""

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from neurips25.eva import rank_distribution


def _brute_force(evr, budget):
    # slow transcription: repeatedly take the largest remaining ratio
    pool = [(float(v), i, name) for name, vals in evr.items() for i, v in enumerate(vals)]
    counts = dict.fromkeys(evr, 0)
    for _ in range(min(budget, len(pool))):
        best = max(pool, key=lambda t: t[0])
        pool.remove(best)
        counts[best[2]] += 1
    return counts


ratios = st.lists(st.lists(st.floats(1e-6, 1.0), min_size=1, max_size=6), min_size=1, max_size=5)


@settings(max_examples=60, deadline=None)
@given(ratios, st.integers(0, 40))
def test_budget_and_bounds(lists, budget):
    # sum of ranks == min(budget, all components); every layer within [0, k_i]; matches the greedy oracle
    evr = {f"l{i}": torch.tensor(sorted(v, reverse=True)) for i, v in enumerate(lists)}
    ranks = rank_distribution(evr, budget)
    assert sum(ranks.values()) == min(budget, sum(len(v) for v in lists))
    assert all(0 <= ranks[n] <= len(evr[n]) for n in evr)
    oracle = _brute_force(evr, budget)
    distinct = len({float(x) for v in evr.values() for x in v}) == sum(len(v) for v in evr.values())
    if distinct:
        assert ranks == oracle


def test_hand_example_moves_ranks():
    # layer a's second direction beats b's first: a takes both ranks, b gets 0
    assert rank_distribution({"a": torch.tensor([0.5, 0.45]), "b": torch.tensor([0.4, 0.1])}, 2) == {"a": 2, "b": 0}


def test_group_representative_gets_largest_rank():
    # members share the representative's ratios; a budget cutting the group gives the extra rank to the rep
    v = torch.tensor([0.5, 0.2])
    ranks = rank_distribution({"q": v, "k": v.clone(), "o": torch.tensor([0.3, 0.01])}, 4, groups={"k": "q"})
    assert sum(ranks.values()) == 4
    assert ranks["q"] >= ranks["k"]


def test_bad_budget():
    with pytest.raises(ValueError, match="`budget` must be a non-negative int"):
        rank_distribution({"a": torch.ones(2)}, -1)
    with pytest.raises(ValueError, match="is empty"):
        rank_distribution({}, 1)
