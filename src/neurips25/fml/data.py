"""Synthetic instances: small random graphs for the exact comparison, and the aggregation task.

The paper's aggregation setting (as summarised; see docs/fml.md): a random geometric graph with radius
0.2, one aggregator, two groups whose local data follow orthogonal labelling rules. The geometry is
pre-registered in issue #27 (a far group): the aggregator is the node nearest ``(0.02, 0.5)`` (the left
edge) and the red group is the strip ``x >= 0.75``, four or more hops away, so the nearest nodes are all
blue and a fairness-agnostic plan never hears from the red group. Every node holds a few samples
``x ~ N(0, I_2)`` labelled ``1[x1 + x2 > 0]`` (blue) or ``1[x1 - x2 > 0]`` (red).

:func:`detour_instance` builds graphs on which shortest-path heuristics are provably bad: every target's
shortest path to the terminal is private, while a shared hub path is only two edges longer per target.
:func:`cycle_trap_instance` builds a cycle on which one given tree embedding is provably bad, so that only a
randomised tree (FRT) keeps the O(log n) guarantee.
"""

from __future__ import annotations

import numbers

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


def aggregation_instance(n: int, seed: int, radius: float = 0.2, samples_per_node: int = 20,
                         aggregator=(0.02, 0.5), red_from: float = 0.75):
    """RGG aggregation task: ``(G, colors, terminal, X, y, owner)``.

    ``X[i]`` (2 features), label ``y[i]`` and ``owner[i]`` (the node holding sample ``i``). The
    aggregator is the node nearest ``aggregator``; nodes with ``x >= red_from`` are red.
    """
    rng = np.random.default_rng(seed)
    G = nx.random_geometric_graph(n, radius, seed=int(rng.integers(2**31)))
    pos = nx.get_node_attributes(G, "pos")
    ax, ay = aggregator
    terminal = min(G, key=lambda v: (pos[v][0] - ax) ** 2 + (pos[v][1] - ay) ** 2)
    G = G.subgraph(nx.node_connected_component(G, terminal)).copy()
    colors = {v: ("red" if pos[v][0] >= red_from else "blue") for v in G}
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


def detour_instance(rng: np.random.Generator, k_range=(3, 4), length_range=(6, 9)):
    """A graph where every shortest path to the terminal is private but a hub path is nearly as short.

    ``k`` blue and ``k`` red targets; target ``i`` has a private path of ``L_i in {L, L+1}`` edges to the
    terminal ``"t"`` and a two-edge spoke to a hub ``"h"``, which sits ``L`` edges from the terminal. Via
    the hub a target is ``L + 2 > L_i`` away, so Closest / Alternating / Greedy label the private paths:
    cost ``>= 2 k L``, while the hub tree costs ``L + 4 k``. Path and spoke nodes are ``"grey"``.
    Returns ``(G, colors, terminal, demand, hub_tree_cost)``.
    """
    k = int(rng.integers(k_range[0], k_range[1] + 1))
    L = int(rng.integers(length_range[0], length_range[1] + 1))
    G = nx.Graph()
    colors = {"t": "grey", "h": "grey"}
    nx.add_path(G, ["t", *[("hub", j) for j in range(1, L)], "h"])
    colors.update({("hub", j): "grey" for j in range(1, L)})
    for colour in ("blue", "red"):
        for i in range(k):
            s = (colour, i)
            colors[s] = colour
            Li = L + int(rng.integers(0, 2))
            private = [(s, "p", j) for j in range(1, Li)]
            nx.add_path(G, [s, *private, "t"])
            colors.update({v: "grey" for v in private})
            nx.add_path(G, [s, (s, "spoke"), "h"])
            colors[(s, "spoke")] = "grey"
    return G, colors, "t", {"blue": k, "red": k}, float(L + 4 * k)


def cycle_trap_instance(n: int, tree):
    """A cycle on which one fixed tree embedding is provably bad (every tree stretches some cycle edge by Omega(n)).

    ``tree`` is an :class:`~neurips25.fml.frt.FRTTree` of ``nx.cycle_graph(n)``. The terminal ``u`` and a red
    node ``v`` are the ends of the cycle edge that ``tree`` stretches most; a second red node ``w`` is, among
    the nodes at least ``n // 4`` hops from ``u``, the one closest to ``u`` in ``tree``. Every other node is
    blue and the demand is one red node, so OPT = 1 (the edge ``u - v``) while a plan chosen on ``tree``
    alone takes ``w`` at cost ``n // 4`` whenever ``tree`` puts ``w`` nearer than ``v``. A randomised FRT
    stretches each edge by O(log n) in expectation, so a few samples find ``v``.
    Returns ``(G, colors, terminal, demand)``.
    """
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 8:
        raise ValueError(f"n must be an integer >= 8; got {n!r}")
    G = nx.cycle_graph(int(n))
    if sorted(tree.leaf_of) != list(G):
        raise ValueError(f"tree must be a tree embedding of nx.cycle_graph({n}) (its leaves are other nodes)")
    stretch = [tree.distance(i, (i + 1) % n) for i in range(n)]
    u = int(np.argmax(stretch))
    v = (u + 1) % n
    hops = nx.single_source_shortest_path_length(G, u)
    w = min((x for x in G if hops[x] >= n // 4), key=lambda x: (tree.distance(u, x), x))
    colors = {x: "blue" for x in G}
    colors[v] = colors[w] = "red"
    return G, colors, u, {"red": 1}
