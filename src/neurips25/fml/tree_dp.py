"""Exact (demand-capped) and bucketed dynamic programs on a tree for the covering problem.

Rooted at the terminal's leaf, every tree node keeps a table of *labels* ``(cost, counts)``: ``counts[c]``
coloured leaves of its subtree are selected and ``cost`` is the tree-edge weight needed to connect them to
the node. Children are merged by a (min, +) product; a child hangs on its parent edge only when it brings
something (its edge weight is paid then). One label is kept per *cell*:

- exact: the cell is ``min(counts, demand)`` (capping at the demand keeps tables at
  ``prod(demand + 1)`` cells instead of the paper's O(n^2) labels per node);
- bucketed (FMLbiApprox): the cell is the geometric bucket ``1 + floor(log_{1+eps} count)`` of each capped
  count, so a cell can hold a count up to ``(1+eps)`` times smaller than another in it; after ``H`` levels of
  merges, the coverage lost is at most a factor ``(1+eps)^(H+1)``.

The answer is the cheapest label at the root whose counts meet the demand (exact) or the demand divided by
``(1+eps)^(H+1)`` (bucketed); the selected leaves are recovered by following the stored provenance.
"""

from __future__ import annotations

import dataclasses

import numpy as np


@dataclasses.dataclass
class Table:
    cost: np.ndarray  # (m,)
    counts: np.ndarray  # (m, C) int
    prov: np.ndarray | None = None  # (m, 2) indices into the two merged tables


class TreeDP:
    """Covering DP on a rooted tree (see the module docstring).

    Parameters
    ----------
    parent, weight : ndarray
        Tree structure (any rooting; it is re-rooted at ``root``) and edge weights to the parent.
    leaf_colour : dict
        Tree node -> colour index for leaves that stand for coloured vertices.
    root : int
        Tree node of the terminal.
    demand : sequence of int
        Per colour.
    eps : float, optional
        None for the exact DP, else the bucket ratio of the bicriteria DP.
    """

    def __init__(self, parent, weight, leaf_colour: dict, root: int, demand, eps: float | None = None):
        self.demand = np.asarray(demand, dtype=np.int64)
        self.C = len(self.demand)
        self.eps = eps
        n = len(parent)
        adj: list[list[tuple[int, float]]] = [[] for _ in range(n)]
        for v, p in enumerate(parent):
            if p >= 0:
                adj[v].append((int(p), float(weight[v])))
                adj[int(p)].append((v, float(weight[v])))
        self.adj, self.root, self.leaf_colour = adj, root, leaf_colour
        # iterative DFS order from the root
        self.children: list[list[tuple[int, float]]] = [[] for _ in range(n)]
        self.depth = np.zeros(n, dtype=np.int64)
        order, seen, stack = [], np.zeros(n, dtype=bool), [root]
        seen[root] = True
        while stack:
            v = stack.pop()
            order.append(v)
            for u, w in adj[v]:
                if not seen[u]:
                    seen[u] = True
                    self.children[v].append((u, w))
                    self.depth[u] = self.depth[v] + 1
                    stack.append(u)
        self.order = order
        self.height = int(self.depth.max())

    def _key(self, counts: np.ndarray) -> np.ndarray:
        capped = np.minimum(counts, self.demand)
        if self.eps is None:
            cells = capped
            base = self.demand + 1
        else:
            cells = np.where(capped > 0, 1 + np.floor(np.log(np.maximum(capped, 1)) / np.log1p(self.eps)), 0)
            cells = cells.astype(np.int64)
            base = 2 + np.floor(np.log(np.maximum(self.demand, 1)) / np.log1p(self.eps)).astype(np.int64)
        key = np.zeros(len(counts), dtype=np.int64)
        for c in range(self.C):
            key = key * base[c] + cells[:, c]
        return key

    def _reduce(self, cost, counts, prov) -> Table:
        """Keep the cheapest label per cell (ties: the larger counts)."""
        key = self._key(counts)
        order = np.lexsort((-counts.sum(axis=1), cost, key))
        key_sorted = key[order]
        first = np.concatenate([[True], key_sorted[1:] != key_sorted[:-1]])
        keep = order[first]
        keep = keep[np.isfinite(cost[keep])]
        return Table(cost[keep], counts[keep], None if prov is None else prov[keep])

    def _merge(self, A: Table, B: Table) -> Table:
        ia, ib = np.meshgrid(np.arange(len(A.cost)), np.arange(len(B.cost)), indexing="ij")
        ia, ib = ia.ravel(), ib.ravel()
        counts = np.minimum(A.counts[ia] + B.counts[ib], self.demand)
        return self._reduce(A.cost[ia] + B.cost[ib], counts, np.stack([ia, ib], axis=1))

    def _own(self, v: int) -> Table:
        c = self.leaf_colour.get(v)
        zero = np.zeros((1, self.C), dtype=np.int64)
        if c is None:
            return Table(np.zeros(1), zero)
        one = zero.copy()
        one[0, c] = 1
        if v == self.root:  # the terminal is always covered
            return Table(np.zeros(1), one)
        return Table(np.zeros(2), np.vstack([zero, one]))

    def solve(self):
        """Run the DP; returns ``(cost, selected_leaves)`` or ``(inf, None)`` when infeasible."""
        self.prefix: dict[int, list[Table]] = {}
        self.hang: dict[int, Table] = {}
        tables: dict[int, Table] = {}
        for v in reversed(self.order):
            seq = [self._own(v)]
            for u, w in self.children[v]:
                T = tables.pop(u)
                # hanging u on edge (u, v) costs w unless u brings nothing
                empty = T.counts.sum(axis=1) == 0
                hung = Table(np.where(empty, 0.0, T.cost + w), T.counts)
                self.hang[u] = hung
                seq.append(self._merge(seq[-1], hung))
            self.prefix[v] = seq
            tables[v] = seq[-1]
        root = tables[self.root]
        need = self.demand if self.eps is None else self.demand / (1 + self.eps) ** (self.height + 1)
        ok = np.all(root.counts >= need - 1e-9, axis=1)
        if not ok.any():
            return np.inf, None
        best = np.flatnonzero(ok)[np.argmin(root.cost[ok])]
        selected: set[int] = set()
        self._collect(self.root, len(self.prefix[self.root]) - 1, int(best), selected)
        return float(root.cost[best]), selected

    def _collect(self, v: int, step: int, idx: int, out: set) -> None:
        """Follow provenance down the prefix merges of ``v`` and into its children."""
        seq = self.prefix[v]
        while step > 0:
            a, b = seq[step].prov[idx]
            u = self.children[v][step - 1][0]
            hung = self.hang[u]
            if hung.counts[b].sum() > 0:
                self._collect(u, len(self.prefix[u]) - 1, int(b), out)
            idx, step = int(a), step - 1
        if seq[0].counts[idx].sum() > 0:
            out.add(v)
