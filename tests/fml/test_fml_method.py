"""Fair Minimum Labeling: reachability oracle, FRT, tree DP vs brute force, solvers vs MILP, bad input."""

import itertools
import math

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neurips25.fml import (
    TemporalLabeling,
    TreeDP,
    alternating_labeling,
    closest_labeling,
    coverage,
    fml_approx,
    fml_biapprox,
    fml_milp,
    frt_tree,
    greedy_labeling,
    label_tree_toward,
    reaches,
    verify_labeling,
)
from neurips25.fml.data import small_instance


def test_strictly_increasing_reachability_on_hand_made_cases():
    G = nx.path_graph(3)
    up = TemporalLabeling.from_pairs([((0, 1), 1), ((1, 2), 2)])
    down = TemporalLabeling.from_pairs([((0, 1), 2), ((1, 2), 1)])
    same = TemporalLabeling.from_pairs([((0, 1), 1), ((1, 2), 1)])
    assert reaches(G, up, 0, [2]) and not reaches(G, down, 0, [2])
    assert not reaches(G, same, 0, [2])  # equal times do not chain
    assert reaches(G, down, 1, [2]) and reaches(G, down, 2, [0])  # the reverse direction works for 'down'
    two = TemporalLabeling.from_pairs([((0, 1), 1), ((0, 1), 3), ((1, 2), 2)])
    assert reaches(G, two, 0, [2]) and two.n_labels == 3


def test_verify_rejects_bad_labelings():
    G = nx.path_graph(3)
    with pytest.raises(ValueError, match="not an edge"):
        verify_labeling(G, TemporalLabeling.from_pairs([((0, 2), 1)]), {0: "a", 1: "a", 2: "a"}, [2])
    with pytest.raises(ValueError, match="positive integers"):
        verify_labeling(G, TemporalLabeling({frozenset((0, 1)): (0,)}), {0: "a", 1: "a", 2: "a"}, [2])
    res = verify_labeling(G, label_tree_toward([(0, 1), (1, 2)], 2), {0: "a", 1: "b", 2: "a"}, [2], {"a": 2})
    assert res["coverage"] == {"a": 2, "b": 1} and res["demand_met"]


def test_tree_labeling_makes_every_tree_node_reach_the_root():
    T = nx.random_labeled_tree(30, seed=1) if hasattr(nx, "random_labeled_tree") else nx.random_tree(30, seed=1)
    lab = label_tree_toward(list(T.edges()), 0)
    assert lab.n_labels == 29
    assert coverage(T, lab, {v: "x" for v in T}, [0]) == {"x": 30}


def test_frt_is_random_with_logarithmic_expected_stretch():
    """FRT must randomise order and radius: on a 64-path, every edge's stretch averaged over 40 seeds
    stays O(log n) (a de-randomised FRT, identity order and beta = 1, has an edge of stretch 508)."""
    G = nx.path_graph(64)
    S = np.array([[frt_tree(G, seed=s).distance(i, i + 1) for i in range(63)] for s in range(40)])
    assert len({tuple(row) for row in S}) > 1
    assert S.mean(axis=0).max() <= 16 * math.log2(64)


def test_frt_dominates_the_graph_metric():
    G = nx.random_geometric_graph(40, 0.35, seed=3)
    G = G.subgraph(max(nx.connected_components(G), key=len)).copy()
    T = frt_tree(G, seed=0)
    d = dict(nx.all_pairs_shortest_path_length(G))
    for u, v in itertools.combinations(list(G)[:20], 2):
        assert T.distance(u, v) >= d[u][v] - 1e-9
    assert sorted(T.leaf_of) == sorted(G)


def _brute_tree(parent, weight, leaf_colour, root, demand):
    """Cheapest set of coloured leaves meeting the demand, connected to the root, by enumeration."""
    n = len(parent)
    adj = {i: [] for i in range(n)}
    for v, p in enumerate(parent):
        if p >= 0:
            adj[v].append((p, weight[v]))
            adj[p].append((v, weight[v]))
    # path (edge set) from each node to the root
    prev, stack = {root: None}, [root]
    while stack:
        v = stack.pop()
        for u, w in adj[v]:
            if u not in prev:
                prev[u] = (v, w)
                stack.append(u)
    leaves = [v for v in leaf_colour if v != root]
    best = math.inf
    for k in range(len(leaves) + 1):
        for S in itertools.combinations(leaves, k):
            counts = np.zeros(len(demand), dtype=int)
            counts[leaf_colour[root]] += 1 if root in leaf_colour else 0
            edges = {}
            for v in S:
                counts[leaf_colour[v]] += 1
                x = v
                while prev[x] is not None:
                    y, w = prev[x]
                    edges[frozenset((x, y))] = w
                    x = y
            if np.all(counts >= demand):
                best = min(best, sum(edges.values()))
    return best


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_tree_dp_equals_brute_force_on_tiny_trees(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 12))
    parent = np.array([-1] + [int(rng.integers(0, i)) for i in range(1, n)])
    weight = rng.integers(1, 5, size=n).astype(float)
    children = {p for p in parent if p >= 0}
    leaves = [v for v in range(n) if v not in children]
    leaf_colour = {v: int(rng.integers(0, 2)) for v in leaves}
    root = leaves[int(rng.integers(len(leaves)))]
    avail = np.bincount([leaf_colour[v] for v in leaves], minlength=2)
    demand = np.array([int(rng.integers(0, avail[c] + 1)) for c in range(2)])
    cost, selected = TreeDP(parent, weight, leaf_colour, root, demand).solve()
    assert cost == pytest.approx(_brute_tree(parent, weight, leaf_colour, root, demand))
    got = np.bincount([leaf_colour[v] for v in selected], minlength=2)
    assert np.all(got >= demand)


def test_approx_within_bounds_of_the_milp_on_small_graphs():
    rng = np.random.default_rng(7)
    for _ in range(4):
        G, colors, t, demand = small_instance(rng, n_range=(15, 25), demand_range=(2, 4))
        opt = fml_milp(G, colors, t, demand, time_limit=30)
        approx = fml_approx(G, colors, t, demand, n_trees=3, seed=0)
        assert opt.info["optimal"] and opt.demand_met and approx.demand_met
        assert opt.cost <= approx.cost + 1e-9 <= 2 * math.log(G.number_of_nodes()) * opt.cost
        for base in (closest_labeling, alternating_labeling):
            for share in (True, False):
                b = base(G, colors, t, demand, share_labels=share)
                # fair baselines always meet their demand (kills labels that decrease toward t)
                assert b.demand_met and b.cost >= opt.cost - 1e-9
        g = greedy_labeling(G, colors, t, demand)
        assert sum(g.coverage.values()) >= sum(demand.values())


def test_milp_on_a_hand_solved_cycle():
    G = nx.cycle_graph(6)
    colors = {v: "b" if v % 2 else "r" for v in G}
    res = fml_milp(G, colors, 0, {"b": 2, "r": 2})  # 0 (r) + 1 (b) + 5 (b) + 2 or 4 (r): 3 edges
    assert res.cost == 3 and res.demand_met and res.info["optimal"]


def test_biapprox_meets_its_coverage_guarantee():
    G = nx.random_geometric_graph(120, 0.2, seed=4)
    G = G.subgraph(max(nx.connected_components(G), key=len)).copy()
    colors = {v: "b" if G.nodes[v]["pos"][0] < 0.5 else "r" for v in G}
    t = next(iter(G))
    res = fml_biapprox(G, colors, t, {"b": 10, "r": 10}, eps=0.2, seed=0)
    factor = res.info["coverage_factor"]
    assert res.demand_met and all(res.coverage[c] >= 10 / factor for c in ("b", "r"))


def test_fractional_demand_and_more_than_two_colours():
    G = nx.grid_2d_graph(5, 5)
    colors = {v: ("a", "b", "c")[(v[0] + v[1]) % 3] for v in G}
    res = fml_approx(G, colors, (0, 0), {"a": 0.5, "b": 3, "c": 2}, seed=1)
    assert res.demand_met and res.coverage["b"] >= 3


@pytest.mark.parametrize("kwargs,match", [
    (dict(terminal=99), "terminal"),
    (dict(demand={"b": 50}), "exceeds"),
    (dict(demand={"green": 1}), "no node has"),
    (dict(demand={"b": -1}), "non-negative"),
])
def test_bad_input(kwargs, match):
    G = nx.path_graph(6)
    colors = {v: "b" if v % 2 else "r" for v in G}
    args = dict(G=G, colors=colors, terminal=0, demand={"b": 1})
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        fml_approx(**args)


def test_bad_graphs():
    colors = {v: "b" for v in range(4)}
    with pytest.raises(ValueError, match="undirected"):
        fml_approx(nx.DiGraph(nx.path_graph(4)), colors, 0, {"b": 1})
    G = nx.path_graph(4)
    G.edges[1, 2]["weight"] = -1
    with pytest.raises(ValueError, match="non-negative|>= 0"):
        fml_approx(G, colors, 0, {"b": 1})
    H = nx.Graph([(0, 1), (2, 3)])
    with pytest.raises(ValueError, match="infeasible"):
        fml_approx(H, colors, 0, {"b": 3})
    with pytest.raises(ValueError, match="every node"):
        fml_approx(nx.path_graph(4), {0: "b"}, 0, {"b": 1})


@pytest.mark.parametrize("module", ["__init__", "tree_dp", "solvers", "frt", "milp", "temporal"])
def test_docstring_examples_run(module):
    import doctest
    import importlib

    mod = importlib.import_module("neurips25.fml" if module == "__init__" else f"neurips25.fml.{module}")
    res = doctest.testmod(mod, extraglobs={"nx": nx, "np": np}, optionflags=doctest.ELLIPSIS)
    assert res.failed == 0 and res.attempted > 0
