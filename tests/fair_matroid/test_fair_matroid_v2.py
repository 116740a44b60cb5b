"""v2 (issue #26): fair lotteries, the random-colouring bound, networkx group encodings, edge cases."""

import math

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neurips25.fair_matroid import (
    DirectSum,
    GraphicMatroid,
    Matroid,
    TransversalMatroid,
    UniformMatroid,
    extremal_coloring_instance,
    fair_lottery,
    integral_fair_allocation,
    integral_price_of_fairness,
    large_market_limit,
    max_fair_scale,
    opportunity_entitlements,
    pof_bound_random_coloring,
    price_of_fairness,
    random_coloring,
    resolve_groups,
    worst_case_instance,
)
from neurips25.fair_matroid.data import brute_force_pof, random_instance


# ------------------------------------------------------------------ fair lottery
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_lottery_expected_counts_are_lambda_u_and_pof_matches_lp(seed):
    # guards: the lottery attains the fractional optimum exactly, with independent allocations
    M, groups = random_instance(np.random.default_rng(seed), n_max=9)
    L = fair_lottery(M, groups)
    lam, _ = max_fair_scale(M, groups)
    u = opportunity_entitlements(M, groups)
    np.testing.assert_allclose(L.expected_counts, float(lam) * u, atol=1e-9)
    assert all(M.is_independent(A) for A in L.allocations)
    assert np.all(L.weights >= 0) and L.weights.sum() == pytest.approx(1.0, abs=1e-12)
    assert len(L.weights) <= len(groups) + 1  # a basic solution
    assert L.pof == pytest.approx(brute_force_pof(M, groups), abs=1e-9)
    assert L.integral_pof >= L.pof - 1e-12


def test_lottery_on_the_reviewed_worst_case_instance():
    # the review's example: rounding down gives the three small groups nothing; the lottery does not
    M, groups = worst_case_instance(4, 10)
    A = integral_fair_allocation(M, groups)
    assert [len(A & g) for g in groups] == [0, 0, 0, 3]
    L = fair_lottery(M, groups)
    assert L.pof == pytest.approx(33 / 13)  # (1+K)(C-1)/(C-1+K)
    assert L.integral_pof == pytest.approx(11 / 3) == integral_price_of_fairness(M, groups)
    np.testing.assert_allclose(L.expected_counts, [1 / 3, 1 / 3, 1 / 3, 10 / 3], atol=1e-12)
    draws = np.array([[len(L.sample(rng) & g) for g in groups]
                      for rng in [np.random.default_rng(0)] for _ in range(3000)])
    np.testing.assert_allclose(draws.mean(axis=0), L.expected_counts, atol=0.06)


def test_lottery_on_transversal_uses_flow_and_labels_come_back():
    B = nx.Graph([("a", "r1"), ("b", "r1"), ("c", "r1"), ("d", "r2"), ("e", "r3"), ("d", "r3")])
    for v, lab in zip("abcde", ["x", "y", "z", "w", "w"]):
        B.nodes[v]["group"] = lab
    M = TransversalMatroid(B, list("abcde"))
    L = fair_lottery(M, "group")
    assert L.labels == ["w", "x", "y", "z"]
    assert L.pof == pytest.approx(price_of_fairness(M, "group"))
    np.testing.assert_allclose(L.expected_counts, L.target, atol=1e-12)
    for A in L.allocations:
        edges = M.matching(A)
        assert {a for a, _ in edges} == set(A) and all(B.has_edge(a, r) for a, r in edges)
        assert len({r for _, r in edges}) == len(edges)


# ------------------------------------------------------------------ random-colouring bound
def _affine_grid(p_max, C):
    q, k = 1 - p_max, C - 1
    b = np.linspace(0, 1, 200_001)
    return float(((q + b * (k - q)) / ((q + b * (1 - q)) * (1 + k * b))).max())


@pytest.mark.parametrize("C", [3, 4, 6])
def test_bound_closed_form_and_threshold(C):
    for p in [1 / C, 1 / (C - 1), 0.55, 0.7, 0.9, 0.99]:
        if p >= 1 / C:
            assert pof_bound_random_coloring(p, C) == pytest.approx(max(1.0, _affine_grid(p, C)), abs=1e-9)
    t = 1 / (C - 1)
    assert pof_bound_random_coloring(t, C) == 1.0 and pof_bound_random_coloring(t + 1e-3, C) > 1.0
    vals = [pof_bound_random_coloring(p, C) for p in np.linspace(t, 1, 50)]
    assert np.all(np.diff(vals) >= -1e-12)
    assert pof_bound_random_coloring(1.0, C) == C - 1  # the worst case, approached


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 100_000))
def test_bound_dominates_the_large_market_limit_of_every_mixture(seed):
    # oracle for extremality: any concave g (a mixture of min(1, x/theta)) stays below B(p_max, C)
    rng = np.random.default_rng(seed)
    C = int(rng.integers(3, 6))
    thetas = rng.uniform(1e-4, 1, size=int(rng.integers(1, 4)))
    w = rng.dirichlet(np.ones(thetas.size))

    def g(x):
        return float((w * np.minimum(1, x / thetas)).sum())

    p = rng.dirichlet(np.ones(C) * 0.7)
    assert large_market_limit(g, p) <= pof_bound_random_coloring(float(p.max()), C) + 1e-9


def test_extremal_instance_approaches_the_bound():
    B, beta = pof_bound_random_coloring(0.9, 4, return_beta=True)
    M = extremal_coloring_instance(6000, beta)
    rng = np.random.default_rng(0)
    vals = [price_of_fairness(M, [g for g in random_coloring(M.elements, [0.9] + [0.1 / 3] * 3, seed=rng,
                                                                 empty="keep") if g]) for _ in range(5)]
    assert 0.85 * B <= np.mean(vals) <= B + 0.05


# ------------------------------------------------------------------ networkx inputs
def test_group_encodings_agree():
    B = nx.bipartite.random_graph(6, 4, 0.5, seed=1)
    M = TransversalMatroid(B, range(6))
    labels = np.array([0, 1, 0, 2, 1, 2])
    sets = [{0, 2}, {1, 4}, {3, 5}]
    ref = price_of_fairness(M, sets)
    assert price_of_fairness(M, labels) == ref
    assert price_of_fairness(M, dict(zip(range(6), labels.tolist()))) == ref
    nx.set_node_attributes(B, {a: int(lab) for a, lab in zip(range(6), labels)}, "g")
    assert price_of_fairness(M, "g") == ref
    parts, labs = resolve_groups(M, {a: f"grp{lab}" for a, lab in zip(range(6), labels)})
    assert labs == ["grp0", "grp1", "grp2"] and parts == [frozenset(s) for s in sets]


def test_graphic_edges_orientation_free_and_multigraph_parallel_edges():
    M = GraphicMatroid(nx.path_graph(3))
    assert price_of_fairness(M, [{(1, 0)}, {(2, 1)}]) == 1.0  # reversed edges accepted
    G = nx.MultiGraph([(0, 1), (0, 1), (1, 0), (1, 2)])
    MM = GraphicMatroid(G)
    assert len(MM.ground_set) == 4 and MM.rank() == 2
    assert MM.rank({(0, 1, 0), (0, 1, 1)}) == 1 and MM.is_independent({(1, 0, 0), (2, 1, 0)})
    nx.set_edge_attributes(G, {e: i % 2 for i, e in enumerate(G.edges(keys=True))}, "side")
    assert resolve_groups(MM, "side")[1] == [0, 1]


def test_random_coloring_keeps_colour_ids():
    with pytest.raises(ValueError, match=r"colour\(s\) \[1\] got no agent"):
        random_coloring(range(3), [0.5, 0.0, 0.5], seed=0)
    g = random_coloring(range(3), [0.5, 0.0, 0.5], seed=0, empty="keep")
    assert len(g) == 3 and g[1] == set() and g[0] | g[2] == {0, 1, 2}


# ------------------------------------------------------------------ bad input
def test_bad_group_encodings():
    M = UniformMatroid(4, 2)
    with pytest.raises(ValueError, match="label array .* length 2, but the matroid has 4"):
        price_of_fairness(M, ["ann", "bob"])
    with pytest.raises(ValueError, match="1-D"):
        price_of_fairness(M, np.zeros((2, 2)))
    with pytest.raises(TypeError, match="no networkx graph"):
        price_of_fairness(M, "group")
    T = TransversalMatroid(nx.Graph([("a", 1), ("b", 1)]), ["a", "b"])
    with pytest.raises(ValueError, match="lack node attribute 'group'"):
        price_of_fairness(T, "group")
    with pytest.raises(TypeError, match=r"groups\[1\] must be a set"):
        price_of_fairness(M, [{0, 1}, 2])


def test_bad_rank_oracles_and_constructors():
    class Oracle(Matroid):
        ground_set = frozenset(range(4))

        def __init__(self, value):
            self.value = value

        def _rank(self, S):
            return self.value if S else 0

    for value in (float("nan"), 0.5):
        with pytest.raises(ValueError, match="finite integer"):
            price_of_fairness(Oracle(value), [{0, 1}, {2, 3}])
    with pytest.raises(ValueError, match="n must be a non-negative integer"):
        UniformMatroid(2.5, 1)
    with pytest.raises(TypeError, match="part 0 is int"):
        DirectSum([1, 2])
    with pytest.raises(ValueError, match="g must be positive at 1"):
        large_market_limit(lambda x: 0.0, [0.5, 0.5])
    with pytest.raises(ValueError, match="C must be an integer >= 2"):
        pof_bound_random_coloring(0.9, 1)
    with pytest.raises(ValueError, match="p_max must be a share"):
        pof_bound_random_coloring(0.2, 3)
    with pytest.raises(ValueError, match="tol"):
        fair_lottery(UniformMatroid(2, 1), [{0}, {1}], tol=1)
    assert pof_bound_random_coloring(np.float64(0.9), np.int64(3)) == pytest.approx(_affine_grid(0.9, 3), abs=1e-9)
    # rounding down can leave nothing at all: two agents share one slot, lambda* = 1/2, floors are 0
    assert math.isinf(integral_price_of_fairness(UniformMatroid(2, 1), [{0}, {1}]))
