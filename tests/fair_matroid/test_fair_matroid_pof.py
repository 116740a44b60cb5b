"""Price of opportunity fairness: oracles, exact formula vs brute force, bounds, allocations, errors."""

import itertools
from fractions import Fraction

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neurips25.fair_matroid import (
    DirectSum,
    GraphicMatroid,
    Matroid,
    PartitionMatroid,
    TransversalMatroid,
    UniformMatroid,
    group_rank_function,
    large_market_limit,
    matroid_intersection,
    max_fair_allocation,
    max_fair_scale,
    opportunity_entitlements,
    price_of_fairness,
    worst_case_instance,
    worst_case_value,
)
from neurips25.fair_matroid.data import brute_force_pof, random_groups, random_instance, random_matroid


def test_rank_oracles_on_hand_made_cases():
    assert UniformMatroid(5, 2).rank({0, 1, 4}) == 2
    assert PartitionMatroid([[0, 1, 2], [3]], [2, 1]).rank({0, 1, 2, 3}) == 3
    G = nx.cycle_graph(4)  # a 4-cycle: rank 3, any 3 edges are a forest
    M = GraphicMatroid(G)
    assert M.rank() == 3 and M.is_independent(list(M.ground_set)[:3]) and not M.is_independent(M.ground_set)
    B = nx.Graph([("a", 1), ("b", 1), ("c", 2)])  # a and b compete for resource 1
    T = TransversalMatroid(B, ["a", "b", "c"])
    assert T.rank({"a", "b"}) == 1 and T.rank() == 2
    D = DirectSum([UniformMatroid(2, 1), UniformMatroid(2, 2)])
    assert D.rank() == 3


def test_transversal_rank_equals_networkx_hopcroft_karp():
    rng = np.random.default_rng(0)
    for _ in range(20):
        B = nx.bipartite.random_graph(8, 6, 0.3, seed=int(rng.integers(1000)))
        T = TransversalMatroid(B, range(8))
        X = set(rng.choice(8, size=5, replace=False).tolist())
        H = B.subgraph(X | set(range(8, 14)))
        matching = nx.bipartite.hopcroft_karp_matching(H, top_nodes=X)
        assert T.rank(X) == len(matching) // 2


def test_formula_equals_brute_force_lp_on_random_instances():
    rng = np.random.default_rng(1)
    for _ in range(40):
        M, groups = random_instance(rng, n_max=9)
        assert price_of_fairness(M, groups) == pytest.approx(brute_force_pof(M, groups), abs=1e-9)


def test_two_groups_cost_nothing_and_bound_c_minus_1():
    rng = np.random.default_rng(2)
    for _ in range(60):
        M, groups = random_instance(rng, n_max=10, C_choices=(2, 3, 4, 5))
        pof = price_of_fairness(M, groups)
        C = len(groups)
        assert 1 - 1e-12 <= pof <= C - 1 + 1e-12 or (C == 2 and pof == pytest.approx(1))
        if C == 2:
            assert pof == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("C,K", [(3, 1), (3, 5), (4, 10), (6, 1000)])
def test_tight_family_exact(C, K):
    M, groups = worst_case_instance(C, K)
    assert price_of_fairness(M, groups) == pytest.approx(worst_case_value(C, K), rel=1e-12)


def test_tight_family_as_a_bipartite_market():
    # three one-agent groups share one resource, the fourth group has 4 agents with private resources
    B = nx.Graph([(f"s{i}", "shared") for i in range(3)] + [(f"p{j}", f"r{j}") for j in range(4)])
    T = TransversalMatroid(B, [f"s{i}" for i in range(3)] + [f"p{j}" for j in range(4)])
    groups = [{"s0"}, {"s1"}, {"s2"}, {f"p{j}" for j in range(4)}]
    assert price_of_fairness(T, groups) == pytest.approx(worst_case_value(4, 4))
    pof, cert = price_of_fairness(T, groups, return_certificate=True)
    assert cert == (0, 1, 2)  # the bottleneck: the groups sharing one slot


def test_exactly_2_to_the_C_minus_1_rank_calls():
    class Counting(Matroid):
        def __init__(self, inner):
            self.inner, self.ground_set, self.calls = inner, inner.ground_set, 0

        def _rank(self, S):
            self.calls += 1
            return self.inner.rank(S)

    M = Counting(UniformMatroid(12, 5))
    groups = [set(range(i, 12, 4)) for i in range(4)]
    group_rank_function(M, groups)
    assert M.calls == 2**4 - 1


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_fair_allocation_independent_and_within_one(seed):
    rng = np.random.default_rng(seed)
    M, groups = random_instance(rng, n_max=10)
    A = max_fair_allocation(M, groups)
    lam, _ = max_fair_scale(M, groups)
    u = opportunity_entitlements(M, groups)
    assert M.is_independent(A)
    counts = np.array([len(A & g) for g in groups])
    assert np.all(np.abs(counts - float(lam) * u) < 1)


def test_flow_and_generic_intersection_agree_on_transversal():
    rng = np.random.default_rng(3)
    for _ in range(15):
        M = random_matroid(rng, 9, "transversal")
        groups = random_groups(rng, M.ground_set, 3)
        A_flow = max_fair_allocation(M, groups)
        lam, _ = max_fair_scale(M, groups)
        target = [int(np.floor(lam * M.rank(g))) for g in groups]
        A_gen = matroid_intersection(M, PartitionMatroid(groups, target))
        assert [len(A_flow & g) for g in groups] == [len(A_gen & g) for g in groups] == target


def test_matroid_intersection_is_maximum_on_bipartite_matching():
    # two partition matroids = bipartite matching; compare with networkx
    rng = np.random.default_rng(4)
    for _ in range(10):
        edges = {(int(a), int(b)) for a, b in rng.integers(0, 6, size=(14, 2))}
        edges = sorted(edges)
        left = [[e for e in edges if e[0] == a] for a in range(6)]
        right = [[e for e in edges if e[1] == b] for b in range(6)]
        left, right = [b for b in left if b], [b for b in right if b]
        M1, M2 = PartitionMatroid(left, [1] * len(left)), PartitionMatroid(right, [1] * len(right))
        G = nx.Graph()
        G.add_edges_from((("L", a), ("R", b)) for a, b in edges)
        best = len(nx.max_weight_matching(G, maxcardinality=True))
        assert len(matroid_intersection(M1, M2)) == best


def test_large_market_limit_balanced_is_one_and_dominant_above_one():
    g = lambda p: min(1.0, p / 0.1)
    assert large_market_limit(g, [0.25] * 4) == pytest.approx(1.0)
    assert large_market_limit(lambda p: p, [0.9, 0.05, 0.05]) == pytest.approx(1.0)  # free matroid


def test_max_fair_scale_is_exact_fraction():
    lam, S = max_fair_scale(UniformMatroid(4, 1), [{0, 1}, {2}, {3}])
    assert lam == Fraction(1, 3) and S == (0, 1, 2)


def test_bad_groups():
    M = UniformMatroid(4, 2)
    with pytest.raises(ValueError, match="non-empty"):
        price_of_fairness(M, [{0, 1, 2, 3}, set()])
    with pytest.raises(ValueError, match="disjoint"):
        price_of_fairness(M, [{0, 1, 2}, {2, 3}])
    with pytest.raises(ValueError, match="cover the ground set"):
        price_of_fairness(M, [{0, 1}, {2}])
    with pytest.raises(ValueError, match="outside the ground set"):
        price_of_fairness(M, [{0, 1}, {2, 3, 9}])
    with pytest.raises(ValueError, match="at most 20 groups"):
        price_of_fairness(UniformMatroid(21, 3), [{i} for i in range(21)])


def test_rank_oracle_violating_axioms_is_detected():
    class Broken(Matroid):
        ground_set = frozenset(range(4))

        def _rank(self, S):  # not monotone: adding elements can lower the rank
            return 2 if len(S) == 2 else min(len(S), 1)

    with pytest.raises(ValueError, match="not monotone"):
        price_of_fairness(Broken(), [{0}, {1}, {2, 3}])

    class NotSubmodular(Matroid):
        ground_set = frozenset(range(3))

        def _rank(self, S):
            return len(S) if len(S) != 2 else 1 if S == frozenset({0, 1}) else 2

    with pytest.raises(ValueError, match="submodular|monotone"):
        price_of_fairness(NotSubmodular(), [{0}, {1}, {2}])


def test_two_balanced_groups_on_uniform_matroids_cost_nothing():
    # U(n, k) split in two halves, every small (n, k): the C = 2 identity on the simplest family
    for n, k in itertools.product(range(2, 7), range(1, 5)):
        if k > n:
            continue
        groups = [set(range(0, n // 2)), set(range(n // 2, n))]
        assert price_of_fairness(UniformMatroid(n, k), groups) == pytest.approx(1.0)
