"""Matroids given by a rank oracle, and the concrete families used for allocation problems.

A matroid ``M = (N, I)`` says which sets of agents can be served together; everything here needs only
its rank function ``r(X)`` (the size of a largest independent subset of ``X``). Any object with
``ground_set`` and ``rank(X)`` works with :func:`~neurips25.fair_matroid.price_of_fairness`; subclass
:class:`Matroid` to get ``is_independent`` and argument checks for free.

Families: uniform, partition, graphic (forests of a networkx graph), transversal (agents that can be
matched to distinct resources of a bipartite graph; rank by Hopcroft-Karp) and direct sums.
"""

from __future__ import annotations

import numbers
from collections.abc import Hashable, Iterable, Sequence

import numpy as np


def _count(value, name: str) -> int:
    """A non-negative integer (numpy integers accepted; 2.5 or True rejected)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer; got {value!r}")
    return int(value)


class Matroid:
    """Base class: a ground set and a rank oracle.

    Subclasses implement :meth:`_rank` on a ``frozenset`` of ground-set elements.
    """

    ground_set: frozenset

    def rank(self, X: Iterable[Hashable] | None = None) -> int:
        """Rank of ``X`` (the whole ground set when None)."""
        S = self.ground_set if X is None else self.canonical(X)
        if X is not None and not S <= self.ground_set:
            extra = list(S - self.ground_set)[:5]
            raise ValueError(f"X has elements outside the ground set, e.g. {extra}")
        v = self._rank(S)
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not np.isfinite(v) or v != int(v):
            raise ValueError(f"{type(self).__name__}._rank must return a finite integer; got {v!r}")
        return int(v)

    def is_independent(self, X: Iterable[Hashable]) -> bool:
        S = self.canonical(X)
        return self.rank(S) == len(S)

    def canonical(self, X: Iterable[Hashable]) -> frozenset:
        """``X`` as a frozenset of ground-set elements (graphic matroids map ``(v, u)`` to ``(u, v)``)."""
        return frozenset(X)

    @property
    def elements(self) -> list:
        """The ground set in a fixed order (the order a label array refers to)."""
        return sorted(self.ground_set, key=repr)

    def _rank(self, S: frozenset) -> int:
        raise NotImplementedError

    def __len__(self) -> int:
        return len(self.ground_set)


class UniformMatroid(Matroid):
    """``U(n, k)``: any ``k`` of the ``n`` elements (``0..n-1``, or the given ``elements``) can be served.

    Examples
    --------
    >>> UniformMatroid(5, 2).rank({0, 1, 2})
    2
    """

    def __init__(self, n: int, k: int, elements: Sequence[Hashable] | None = None):
        n, self.k = _count(n, "n"), _count(k, "k")
        els = list(range(n)) if elements is None else list(elements)
        if len(els) != n or len(set(els)) != len(els):
            raise ValueError(f"elements must be n = {n} distinct items; got {len(els)} ({len(set(els))} distinct)")
        self._order = els
        self.ground_set = frozenset(els)

    @property
    def elements(self) -> list:
        return list(self._order)

    def _rank(self, S):
        return min(len(S), self.k)


class PartitionMatroid(Matroid):
    """At most ``caps[i]`` elements from ``blocks[i]``; blocks are disjoint.

    Examples
    --------
    >>> PartitionMatroid([[0, 1, 2], [3, 4]], [1, 2]).rank({0, 1, 3})
    2
    """

    def __init__(self, blocks: Sequence[Iterable[Hashable]], caps: Sequence[int]):
        blocks = [frozenset(b) for b in blocks]
        if len(blocks) != len(caps):
            raise ValueError(f"blocks and caps must have the same length; got {len(blocks)} and {len(caps)}")
        caps = [_count(c, f"caps[{i}]") for i, c in enumerate(caps)]
        self.block_of = {}
        for i, b in enumerate(blocks):
            for e in b:
                if e in self.block_of:
                    raise ValueError(f"blocks must be disjoint; {e!r} is in two blocks")
                self.block_of[e] = i
        self.caps = [int(c) for c in caps]
        self.ground_set = frozenset(self.block_of)

    def _rank(self, S):
        counts = np.zeros(len(self.caps), dtype=int)
        for e in S:
            counts[self.block_of[e]] += 1
        return int(np.minimum(counts, self.caps).sum())


class GraphicMatroid(Matroid):
    """Edges of a networkx graph; a set is independent when it is a forest.

    ``rank(X) = |V(X)| - (number of components of (V(X), X))``, by union-find.

    Elements are the graph's edges ``(u, v)`` as ``G.edges()`` lists them; either orientation is
    accepted wherever an edge is expected. On a ``MultiGraph`` parallel edges stay distinct
    elements ``(u, v, key)``. Self-loops are elements of rank 0.

    Examples
    --------
    >>> import networkx as nx
    >>> M = GraphicMatroid(nx.cycle_graph(4))
    >>> M.rank(), M.is_independent([(1, 0), (1, 2), (2, 3)])
    (3, True)
    """

    def __init__(self, G):
        if not hasattr(G, "is_directed") or not hasattr(G, "edges"):
            raise TypeError(f"G must be a networkx graph; got {type(G).__name__}")
        if G.is_directed():
            raise ValueError("GraphicMatroid needs an undirected graph; got a directed one (use G.to_undirected())")
        self.G = G
        self.multigraph = bool(G.is_multigraph())
        edges = list(G.edges(keys=True)) if self.multigraph else list(G.edges())
        self._order = [tuple(e) for e in edges]
        self._canon = {}
        for e in self._order:
            self._canon[e] = e
            flipped = (e[1], e[0]) + e[2:]
            self._canon.setdefault(flipped, e)
        self.ground_set = frozenset(self._order)

    @property
    def elements(self) -> list:
        return list(self._order)

    def canonical(self, X):
        out = []
        for e in X:
            try:
                out.append(self._canon.get(tuple(e), tuple(e)))
            except TypeError:
                out.append(e)  # not an edge tuple: reported as outside the ground set
        return frozenset(out)

    def _rank(self, S):
        parent: dict = {}

        def find(x):
            while parent.setdefault(x, x) != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        r = 0
        for e in S:
            a, b = find(e[0]), find(e[1])
            if a != b:
                parent[a] = b
                r += 1
        return r


class TransversalMatroid(Matroid):
    """Agents of a bipartite graph; a set is independent when it can be matched to distinct resources.

    Parameters
    ----------
    B : networkx.Graph
        Bipartite graph between agents and resources.
    agents : iterable
        The agent side (the ground set); every other node is a resource.

    Notes
    -----
    Rank uses Hopcroft-Karp (``scipy.sparse.csgraph.maximum_bipartite_matching``) on the agents' rows.
    """

    def __init__(self, B, agents: Iterable[Hashable]):
        from scipy.sparse import csr_matrix

        agents = list(agents)
        if len(set(agents)) != len(agents):
            raise ValueError("agents must be distinct")
        missing = [a for a in agents if a not in B]
        if missing:
            raise ValueError(f"agents not in the graph, e.g. {missing[:5]}")
        aset = set(agents)
        resources = sorted({v for a in agents for v in B.neighbors(a)} - aset, key=repr)
        if any(v in aset for a in agents for v in B.neighbors(a)):
            raise ValueError("the graph is not bipartite between agents and resources (agent-agent edge)")
        self.B, self.agents, self.resources = B, agents, resources
        self.row = {a: i for i, a in enumerate(agents)}
        col = {r: j for j, r in enumerate(resources)}
        rows, cols = [], []
        for a in agents:
            for v in B.neighbors(a):
                rows.append(self.row[a])
                cols.append(col[v])
        self.A = csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(agents), max(len(resources), 1)))
        self.ground_set = frozenset(agents)

    @property
    def elements(self) -> list:
        return list(self.agents)

    def matching(self, X: Iterable[Hashable] | None = None) -> list[tuple]:
        """A maximum matching of the agents ``X`` (all agents when None) as ``(agent, resource)`` edges.

        For an independent ``X`` (e.g. an allocation) every agent of ``X`` is matched.

        Examples
        --------
        >>> import networkx as nx
        >>> T = TransversalMatroid(nx.Graph([("a", 1), ("b", 1), ("b", 2)]), ["a", "b"])
        >>> sorted(T.matching())
        [('a', 1), ('b', 2)]
        """
        from scipy.sparse.csgraph import maximum_bipartite_matching

        S = self.ground_set if X is None else self.canonical(X)
        if not S <= self.ground_set:
            raise ValueError(f"X has agents outside the ground set, e.g. {list(S - self.ground_set)[:5]}")
        rows = sorted(self.row[a] for a in S)
        if not rows:
            return []
        match = maximum_bipartite_matching(self.A[rows].tocsr(), perm_type="column")
        return [(self.agents[r], self.resources[j]) for r, j in zip(rows, match) if j >= 0]

    def _rank(self, S):
        from scipy.sparse.csgraph import maximum_bipartite_matching

        if not S:
            return 0
        idx = np.fromiter((self.row[a] for a in S), dtype=np.int64, count=len(S))
        sub = self.A[np.sort(idx)]
        if sub.nnz == 0:
            return 0
        match = maximum_bipartite_matching(sub.tocsr(), perm_type="column")
        return int((match >= 0).sum())


class DirectSum(Matroid):
    """Direct sum of matroids; elements are ``(i, e)`` for element ``e`` of the ``i``-th matroid.

    Examples
    --------
    >>> M = DirectSum([UniformMatroid(3, 1), UniformMatroid(2, 2)])
    >>> M.rank(M.ground_set)
    3
    """

    def __init__(self, parts: Sequence[Matroid]):
        parts = list(parts)
        if not parts:
            raise ValueError("DirectSum needs at least one matroid")
        bad = [i for i, M in enumerate(parts) if not (hasattr(M, "ground_set") and hasattr(M, "rank"))]
        if bad:
            raise TypeError(f"parts must be matroids (ground_set and rank); part {bad[0]} is "
                            f"{type(parts[bad[0]]).__name__}")
        self.parts = parts
        self.ground_set = frozenset((i, e) for i, M in enumerate(self.parts) for e in M.ground_set)

    def canonical(self, X):
        out = []
        for x in X:
            if isinstance(x, tuple) and len(x) == 2 and isinstance(x[0], numbers.Integral) \
                    and 0 <= x[0] < len(self.parts):
                out.append((x[0], next(iter(self.parts[x[0]].canonical([x[1]])), x[1])))
            else:
                out.append(x)
        return frozenset(out)

    def _rank(self, S):
        by_part: dict[int, list] = {}
        for i, e in S:
            by_part.setdefault(i, []).append(e)
        return sum(self.parts[i].rank(es) for i, es in by_part.items())
