"""fml: Fair Minimum Labeling on networkx graphs, colours from a node attribute, the labeling out as a graph."""

import networkx as nx
from contract_table import not_applicable, row

C = "fml"


def _graph():
    G = nx.karate_club_graph()
    for i, (u, v) in enumerate(G.edges):
        G.edges[u, v]["cost"] = 1.0 + (i % 3)
    return G


def _solver(name):
    from neurips25 import fml

    return {"fml_milp": lambda *a, **k: fml.fml_milp(*a, time_limit=20, **k),
            "fml_approx": lambda *a, **k: fml.fml_approx(*a, seed=0, **k),
            "greedy_labeling": fml.greedy_labeling}[name]


def _attr_in(name):
    def check(tmp_path):
        G = _graph()
        demand = {"Mr. Hi": 3, "Officer": 2}
        by_name = _solver(name)(G, "club", 0, demand, weight="cost")
        by_dict = _solver(name)(G, nx.get_node_attributes(G, "club"), 0, demand, weight="cost")
        assert by_name.cost == by_dict.cost and by_name.labeling.times == by_dict.labeling.times
        if name != "greedy_labeling":  # the colour-blind baseline need not meet the demand
            assert by_name.demand_met

    return check


for _name in ("fml_milp", "fml_approx", "greedy_labeling"):
    row(C, "networkx", f"{_name}: colors= a node-attribute name and weight= an edge-attribute name equal the "
        "explicit dict")(_attr_in(_name))


@row(C, "networkx", "FMLResult.to_networkx: edges of G with their data and 'times'; node 'reaches' flags "
     "recount the coverage")
def _out(tmp_path):
    G = _graph()
    res = _solver("fml_approx")(G, "club", 0, {"Mr. Hi": 3, "Officer": 2}, weight="cost")
    T = res.to_networkx()
    for u, v, data in T.edges(data=True):
        assert G.has_edge(u, v) and data["cost"] == G.edges[u, v]["cost"] and len(data["times"]) >= 1
    reached = [v for v, d in T.nodes(data=True) if d["reaches"]]  # a terminal reaches itself and counts
    for club in ("Mr. Hi", "Officer"):
        assert sum(G.nodes[v]["club"] == club for v in reached) == res.coverage[club]


not_applicable(C, "torch", "dtype / bfloat16 / torch.compile", "graph algorithms and a scipy MILP; no torch")
