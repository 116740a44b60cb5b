"""FRT tree embeddings (Fakcharoenphol, Rao & Talwar, 2004) of a graph's shortest-path metric.

A random hierarchical decomposition: scale distances so the smallest is 1, draw a random order
``pi`` of the vertices and ``beta in [1, 2)`` with density ``1 / (x ln 2)``; the level-``i`` clusters
refine the level-``i+1`` ones by assigning each vertex to the first centre in ``pi`` order within
``beta 2^(i-1)``. The edge from a level-``i`` cluster to its parent weighs ``2^(i+1)`` (times the
distance scale). The tree metric dominates the graph's and stretches it by ``O(log n)`` in expectation,
which is where FMLapprox's ``O(log n)`` guarantee comes from.
"""

from __future__ import annotations

import dataclasses

import networkx as nx
import numpy as np
from scipy.sparse.csgraph import shortest_path


@dataclasses.dataclass
class FRTTree:
    """A rooted FRT tree over the vertices of ``G``.

    Attributes
    ----------
    parent : ndarray of int
        Parent of each tree node (-1 for the root).
    weight : ndarray of float
        Weight of the edge to the parent.
    center : list
        The vertex of ``G`` each tree node is centred on (a leaf's centre is its vertex).
    level : ndarray of int
    leaf_of : dict
        Vertex of ``G`` -> its leaf's tree node index.
    """

    parent: np.ndarray
    weight: np.ndarray
    center: list
    level: np.ndarray
    leaf_of: dict

    def to_networkx(self) -> nx.Graph:
        T = nx.Graph()
        for i, p in enumerate(self.parent):
            T.add_node(i, center=self.center[i], level=int(self.level[i]))
            if p >= 0:
                T.add_edge(i, int(p), weight=float(self.weight[i]))
        return T

    def distance(self, u, v) -> float:
        """Tree distance between the leaves of vertices ``u`` and ``v``."""
        a, b = self.leaf_of[u], self.leaf_of[v]
        up_a, total = {}, 0.0
        while a >= 0:
            up_a[a] = total
            total += self.weight[a] if self.parent[a] >= 0 else 0.0
            a = self.parent[a]
        total = 0.0
        while b not in up_a:
            total += self.weight[b]
            b = self.parent[b]
        return float(total + up_a[b])


def graph_distances(G: nx.Graph, weight: str = "weight") -> tuple[list, np.ndarray]:
    """Vertex list and all-pairs shortest-path matrix (Dijkstra via scipy)."""
    nodes = list(G.nodes())
    A = nx.to_scipy_sparse_array(G, nodelist=nodes, weight=weight, format="csr")
    if A.nnz and A.data.min() < 0:
        raise ValueError("edge weights must be non-negative")
    D = shortest_path(A, method="D", directed=False)
    return nodes, D


def frt_tree(G: nx.Graph, weight: str = "weight", seed=None, distances=None) -> FRTTree:
    """Sample an FRT tree of ``G``'s shortest-path metric.

    Parameters
    ----------
    G : networkx.Graph
        Connected, undirected, non-negative weights (missing weights count 1).
    weight : str
    seed : int or Generator, optional
    distances : (nodes, D), optional
        Precomputed :func:`graph_distances`, to share between several trees.

    Returns
    -------
    FRTTree

    Examples
    --------
    >>> T = frt_tree(nx.path_graph(6), seed=0)
    >>> T.distance(0, 5) >= 5
    True
    """
    if not isinstance(G, nx.Graph):
        raise ValueError(f"G must be a networkx.Graph; got {type(G).__name__}")
    if G.is_directed():
        raise ValueError("frt_tree needs an undirected graph")
    if G.number_of_nodes() == 0:
        raise ValueError("G has no nodes")
    rng = np.random.default_rng(seed)
    nodes, D = distances if distances is not None else graph_distances(G, weight)
    n = len(nodes)
    if not np.all(np.isfinite(D)):
        raise ValueError("G must be connected")
    positive = D[D > 0]
    scale = float(positive.min()) if positive.size else 1.0
    Dn = D / scale
    top = int(np.ceil(np.log2(max(Dn.max(), 1.0)))) + 1
    beta = 2.0 ** rng.random()  # density 1 / (x ln 2) on [1, 2)
    order = rng.permutation(n)
    Dpi = Dn[order]  # rows in pi order
    labels = np.zeros(n, dtype=np.int64)  # level-`top` cluster: everything
    parent, weight_, center, level = [-1], [0.0], [nodes[int(order[0])]], [top]
    cluster_node = {0: 0}  # label at the current level -> tree node index
    for i in range(top - 1, -1, -1):
        r = beta * 2.0 ** (i - 1)
        first = np.argmax(Dpi <= r, axis=0)  # first centre in pi order within r of each vertex
        cent = order[first]
        pair = labels * n + cent
        uniq, new_labels = np.unique(pair, return_inverse=True)
        new_nodes = {}
        for k, p in enumerate(uniq):
            new_nodes[k] = len(parent)
            parent.append(cluster_node[int(p // n)])
            weight_.append(scale * 2.0 ** (i + 1))
            center.append(nodes[int(p % n)])
            level.append(i)
        labels, cluster_node = new_labels.astype(np.int64), new_nodes
    # at level 0 the radius beta/2 < 1 separates every pair at distance >= 1 (the smallest positive
    # distance); vertices joined by zero-weight paths share a level-0 cluster and hang below it as leaves
    # on zero-weight edges, which keeps the tree metric dominating the graph's
    members: dict[int, list[int]] = {}
    for v in range(n):
        members.setdefault(int(labels[v]), []).append(v)
    leaf_of = {}
    for lab, vs in members.items():
        node = cluster_node[lab]
        if len(vs) == 1:
            leaf_of[nodes[vs[0]]] = node
            center[node] = nodes[vs[0]]
            continue
        for v in vs:
            leaf_of[nodes[v]] = len(parent)
            parent.append(node)
            weight_.append(0.0)
            center.append(nodes[v])
            level.append(-1)
    return FRTTree(np.array(parent), np.array(weight_), center, np.array(level), leaf_of)
