"""Synthetic instances: small random graphs for the exact comparison, and the aggregation task.

The paper's aggregation setting (as summarised; see docs/fml.md): a random geometric graph with radius
0.2, one aggregator, two groups whose local data follow orthogonal labelling rules. Here the groups are
the two halves of the unit square and the aggregator sits in the blue half, so the nearest nodes are
all blue: a fairness-agnostic plan never hears from the red group. Every node holds a few samples
``x ~ N(0, I_2)`` labelled ``1[x1 + x2 > 0]`` (blue) or ``1[x1 - x2 > 0]`` (red).
"""

from __future__ import annotations

import networkx as nx
import numpy as np


def small_instance(rng: np.random.Generator, n_range=(25, 40), demand_range=(3, 6)):
    """A connected RGG (radius 0.3) or BA (m=2) graph, random two-colouring, random terminal/demand."""
    n = int(rng.integers(n_range[0], n_range[1] + 1))
    seed = int(rng.integers(2**31))
    if rng.random() < 0.5:
        G = nx.random_geometric_graph(n, 0.3, seed=seed)
        G = G.subgraph(max(nx.connected_components(G), key=len)).copy()
    else:
        G = nx.barabasi_albert_graph(n, 2, seed=seed)
    colors = {v: ("blue" if rng.random() < 0.5 else "red") for v in G}
    terminal = list(G)[int(rng.integers(G.number_of_nodes()))]
    demand = {}
    for c in ("blue", "red"):
        size = sum(1 for v in G if colors[v] == c)
        demand[c] = int(min(size, rng.integers(demand_range[0], demand_range[1] + 1)))
    return G, colors, terminal, demand


def aggregation_instance(n: int, seed: int, radius: float = 0.2, samples_per_node: int = 20):
    """RGG aggregation task: ``(G, colors, terminal, X, y, owner)``.

    ``X[i]`` (2 features), label ``y[i]`` and ``owner[i]`` (the node holding sample ``i``).
    """
    rng = np.random.default_rng(seed)
    G = nx.random_geometric_graph(n, radius, seed=int(rng.integers(2**31)))
    pos = nx.get_node_attributes(G, "pos")
    terminal = min(G, key=lambda v: (pos[v][0] - 0.25) ** 2 + (pos[v][1] - 0.5) ** 2)
    G = G.subgraph(nx.node_connected_component(G, terminal)).copy()
    colors = {v: ("blue" if pos[v][0] < 0.5 else "red") for v in G}
    owner = np.repeat(np.array(list(G)), samples_per_node)
    X = rng.standard_normal((owner.size, 2))
    red = np.array([colors[v] == "red" for v in owner])
    y = np.where(red, X[:, 0] - X[:, 1] > 0, X[:, 0] + X[:, 1] > 0).astype(int)
    return G, colors, terminal, X, y, owner


def group_test_set(n: int, seed: int):
    """Fresh test samples per group: ``{colour: (features with group flag, labels)}``."""
    rng = np.random.default_rng(seed)
    out = {}
    for flag, colour in ((0.0, "blue"), (1.0, "red")):
        X = rng.standard_normal((n, 2))
        y = (X[:, 0] - X[:, 1] > 0) if colour == "red" else (X[:, 0] + X[:, 1] > 0)
        out[colour] = (np.column_stack([X, np.full(n, flag)]), y.astype(int))
    return out
