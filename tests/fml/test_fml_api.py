"""networkx conveniences and bad input at the public boundary (issue #27)."""

import math

import networkx as nx
import numpy as np
import pytest

from neurips25.fml import (
    alternating_labeling,
    closest_labeling,
    fml_approx,
    fml_biapprox,
    fml_milp,
    verify_labeling,
)
from neurips25.fml.data import detour_instance


def test_karate_club_with_an_attribute_name_and_numpy_weights():
    G = nx.karate_club_graph()
    for u, v in G.edges():
        G.edges[u, v]["weight"] = np.float32(1.0)
    res = fml_approx(G, "club", 0, {"Mr. Hi": 0.5, "Officer": 0.5}, seed=0)
    assert res.demand_met
    T = res.to_networkx()
    assert nx.is_tree(T) and T.nodes[0]["terminal"] and all(T.nodes[v]["reaches"] for v in T)
    assert all(len(d["times"]) == 1 for _, _, d in T.edges(data=True))
    assert res.cost == pytest.approx(T.number_of_edges())
    opt = fml_milp(G, "club", 0, {"Mr. Hi": 0.5, "Officer": 0.5})
    assert opt.cost <= res.cost <= 2 * math.log(34) * opt.cost


def test_zero_weight_edges_are_free_and_handled():
    G = nx.path_graph(6)
    nx.set_edge_attributes(G, 1, "weight")
    G.edges[2, 3]["weight"] = 0
    G.edges[3, 4]["weight"] = np.int64(0)
    colors = {v: "b" for v in G}
    for solve in (fml_approx, fml_biapprox, fml_milp):
        res = solve(G, colors, 0, {"b": 6})
        assert res.demand_met and res.cost == pytest.approx(3.0)


def test_a_terminal_set_is_reached_at_any_terminal():
    G = nx.path_graph(9)
    colors = {v: ("b" if v % 2 else "r") for v in G}
    for terminals in ({0, 8}, [0, 8]):
        res = fml_approx(G, colors, terminals, {"b": 2, "r": 3}, seed=0)
        opt = fml_milp(G, colors, terminals, {"b": 2, "r": 3})
        assert res.demand_met and opt.demand_met and opt.cost == 3  # 0-1, 8-7 (blue) and 1-2 or 7-6 (red)
        assert res.cost >= opt.cost and sorted(res.terminals) == [0, 8]
        assert verify_labeling(G, res.labeling, colors, [0, 8], {"b": 2, "r": 3})["demand_met"]
        for base in (closest_labeling, alternating_labeling):
            assert base(G, colors, terminals, {"b": 2, "r": 3}).demand_met


def test_tuple_nodes_are_nodes_not_terminal_sets():
    G = nx.grid_2d_graph(3, 3)
    res = fml_approx(G, {v: "a" for v in G}, (0, 0), {"a": 3}, seed=0)
    assert res.terminals == [(0, 0)] and res.demand_met and 2 <= res.cost <= 4


def test_detour_graphs_make_shortest_path_heuristics_pay():
    G, colors, t, demand, hub_cost = detour_instance(np.random.default_rng(0))
    k = demand["blue"]
    L = nx.shortest_path_length(G, t, "h")
    c = closest_labeling(G, colors, t, demand, share_labels=False)
    assert c.cost >= 2 * k * L and c.demand_met
    res = fml_approx(G, colors, t, demand, seed=0)
    assert res.demand_met and res.cost <= 1.5 * hub_cost < c.cost


@pytest.mark.parametrize("kwargs,match", [
    (dict(n_trees=2.7), "n_trees must be an int"),
    (dict(n_trees=0), "n_trees must be an int"),
    (dict(demand=[2, 2]), "demand must be a mapping"),
    (dict(colors="missing"), "node attribute"),
    (dict(colors=[1, 2]), "colors must be a mapping"),
    (dict(terminal={0, 99}), "not node"),
    (dict(terminal=set()), "non-empty"),
    (dict(demand={"b": float("nan")}), "non-negative count"),
])
def test_bad_arguments_are_named(kwargs, match):
    G = nx.path_graph(6)
    args = dict(G=G, colors={v: "b" if v % 2 else "r" for v in G}, terminal=0, demand={"b": 1})
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        fml_approx(**args)


def test_bad_eps_and_weights():
    G = nx.path_graph(4)
    colors = {v: "b" for v in G}
    for eps in (0, 2.0, 1e6, float("nan")):
        with pytest.raises(ValueError, match="eps must be"):
            fml_biapprox(G, colors, 0, {"b": 2}, eps=eps)
    with pytest.raises(ValueError, match="cap must be"):
        fml_biapprox(G, colors, 0, {"b": 2}, cap="all")
    G.edges[0, 1]["weight"] = "heavy"
    with pytest.raises(ValueError, match="edge weights"):
        fml_approx(G, colors, 0, {"b": 2})
    G.edges[0, 1]["weight"] = np.float64("nan")
    with pytest.raises(ValueError, match="edge weights"):
        fml_approx(G, colors, 0, {"b": 2})
