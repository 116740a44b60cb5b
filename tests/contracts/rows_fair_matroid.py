"""fair_matroid: matroids of networkx graphs with attribute-named groups in, allocations out."""

import networkx as nx
import pytest
from contract_table import not_applicable, row

C = "fair_matroid"


def _bipartite():
    """Agents a0..a5 (node attribute "team", mixed label types) who can take jobs 0..3."""
    B = nx.Graph()
    teams = {"a0": "red", "a1": "red", "a2": "red", "a3": 7, "a4": 7, "a5": ("x", 1)}
    for a, t in teams.items():
        B.add_node(a, team=t)
    B.add_edges_from([("a0", 0), ("a0", 1), ("a1", 0), ("a2", 1), ("a3", 2), ("a4", 2), ("a4", 3), ("a5", 3)])
    return B, list(teams)


@row(C, "networkx", "TransversalMatroid: groups= a node-attribute name equals the same groups as a dict")
def _node_attr(tmp_path):
    from neurips25.fair_matroid import TransversalMatroid, price_of_fairness

    B, agents = _bipartite()
    M = TransversalMatroid(B, agents)
    by_name = price_of_fairness(M, "team")
    by_dict = price_of_fairness(M, nx.get_node_attributes(B.subgraph(agents), "team"))
    assert by_name == pytest.approx(by_dict) and by_name >= 1.0


@row(C, "networkx", "GraphicMatroid: groups= an edge-attribute name; the allocation comes out as a forest of G")
def _edge_attr(tmp_path):
    from neurips25.fair_matroid import GraphicMatroid, integral_fair_allocation, price_of_fairness

    G = nx.karate_club_graph()
    for u, v in G.edges:  # an edge's group: the club of its lower endpoint
        G.edges[u, v]["side"] = G.nodes[min(u, v)]["club"]
    M = GraphicMatroid(G)
    pof = price_of_fairness(M, "side")
    labels = {e: G.edges[e]["side"] for e in M.elements} if hasattr(M, "elements") else None
    if labels is not None:
        assert pof == pytest.approx(price_of_fairness(M, labels))
    alloc = integral_fair_allocation(M, "side")
    edges = [tuple(e)[:2] for e in alloc]
    assert all(G.has_edge(u, v) for u, v in edges)
    assert nx.is_forest(nx.Graph(edges))


@row(C, "networkx", "an attribute that some nodes lack: a ValueError naming the attribute and the count")
def _missing_attr(tmp_path):
    from neurips25.fair_matroid import TransversalMatroid, price_of_fairness

    B, agents = _bipartite()
    del B.nodes["a5"]["team"]
    with pytest.raises(ValueError, match="1 agent\\(s\\) lack node attribute 'team'"):
        price_of_fairness(TransversalMatroid(B, agents), "team")


not_applicable(C, "torch", "dtype / bfloat16 / torch.compile", "combinatorics on networkx / scipy; no torch")
