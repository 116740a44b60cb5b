"""Covering dynamic programs on a tree: exact (capped or the paper's uncapped form) and bucketed.

Rooted at the terminal's leaf, every tree node ``v`` keeps a *table*: a dense grid over count vectors
``x = (x_1, ..., x_C)`` (``x_c`` coloured leaves of colour ``c`` selected in the subtree of ``v``, capped at
``cap_c``) holding the cheapest tree-edge weight that connects such a selection to ``v`` (``inf`` where no
selection has those counts). A child ``u`` hangs on its edge ``(u, v)`` of weight ``w`` only when it brings
something (``T_u(x) + w`` for ``x != 0``). Children are combined by the (min, +) product

    T(z) = min over x + y = z (capped) of  A(x) + B(y),

computed without materialising the ``|A| x |B|`` pairs: the loop runs over the finite cells of the smaller
table and each step is one vectorised shifted ``minimum`` over the other (memory ``O(|A| + |B|)``).

Caps. ``cap = demand`` (default) gives tables of ``prod(d_c + 1)`` cells and is still exact for the
covering question; ``cap = "class"`` (the class sizes) is the paper's exact DP, whose tables hold every
reachable count vector (``O(n^2)`` labels per node for two colours).

Buckets (FMLbiApprox, ``eps`` given). Count ``x > 0`` lies in bucket ``1 + floor(log_{1+eps} x)``, 0 in
bucket 0; two counts in one bucket differ by a factor ``< 1 + eps``. Once per node, after all its children
are merged, only the cheapest cell of every bucket (ties: the larger counts) is kept.

Why the coverage loss is ``(1+eps)^(H+1)`` (proof sketch). Let ``f_v = (1+eps)^{h(v)}`` with ``h(v)`` the
height of ``v``. Claim: for every selection ``S`` in the subtree of ``v`` with counts ``n(S)`` and
connection cost ``k(S)``, the table of ``v`` holds a cell ``x`` with cost ``<= k(S)`` and
``x >= min(n(S), cap) / f_v`` (componentwise), and every cell is realised by a real selection with at
least those counts. Leaves: exact (0 and 1 are separate buckets). Merging: if each child's cell ``x_i``
satisfies ``x_i >= n_i / f`` then ``sum x_i >= sum n_i / f`` and the costs add, so the exact (min, +)
products inside a node lose nothing; capping keeps the inequality (``min(a, cap) >= min(b, cap) / f``
when ``a >= b / f``, ``f >= 1``). The single rounding at ``v`` replaces ``x`` by a cheaper cell of its
bucket, which is ``> x / (1 + eps)``: one factor per node, hence ``f_v``. At the root (height ``H``)
the optimum tree selection is matched by a cell with cost ``<= OPT_tree`` and counts
``>= d / (1+eps)^H >= d / (1+eps)^(H+1)``. Rounding after *every* child merge instead compounds the
factor with the fan-out (a hub with ``k`` leaves loses up to ``(1+eps)^k``, and counts stall where
``c + 1`` shares the bucket of ``c``); ``_round_each_merge=True`` keeps that broken variant as a
control for the reproduction.

The answer is the cheapest root cell whose counts reach the demand (exact) or the demand divided by
``(1+eps)^(H+1)`` (bucketed); the selected leaves come back by following each merge's stored provenance.
"""

from __future__ import annotations

import numbers

import numpy as np

#: below this many finite-cell pairs a merge enumerates the pairs (fast for the many tiny tables)
PAIRWISE_LIMIT = 4096


class TreeDP:
    """Covering DP on a rooted tree (see the module docstring).

    Parameters
    ----------
    parent : ndarray of int
        Parent of each tree node (-1 for one root; any rooting, the DP re-roots at ``root``).
    weight : ndarray of float
        Weight of the edge from each node to its parent.
    leaf_colour : dict
        Tree node -> colour index (0..C-1) for the nodes that stand for coloured vertices.
    root : int
        Tree node of the terminal (always selected).
    demand : sequence of int
        Per colour, ``C`` entries.
    eps : float, optional
        None for the exact DP, else the bucket ratio of the bicriteria DP.
    cap : None, "class" or sequence of int
        Counts are capped at ``cap`` (default: the demand; "class": the class sizes, the paper's DP).

    Examples
    --------
    >>> import numpy as np
    >>> dp = TreeDP(np.array([-1, 0, 0]), np.array([0.0, 1.0, 2.0]), {1: 0, 2: 1}, root=1, demand=[1, 1])
    >>> dp.solve()
    (3.0, {1, 2})
    """

    def __init__(self, parent, weight, leaf_colour: dict, root: int, demand, eps: float | None = None, cap=None,
                 _round_each_merge: bool = False):
        self.demand = np.asarray(demand, dtype=np.int64)
        self.C = len(self.demand)
        self.eps = eps
        self._round_each_merge = bool(_round_each_merge)
        n = len(parent)
        sizes = np.bincount(np.fromiter(leaf_colour.values(), dtype=np.int64, count=len(leaf_colour)),
                            minlength=self.C)[: self.C]
        if cap is None:
            self.cap = self.demand.copy()
        elif isinstance(cap, str):
            if cap != "class":
                raise ValueError(f"cap must be None, 'class' or a sequence of counts; got {cap!r}")
            self.cap = sizes.astype(np.int64)
        else:
            self.cap = np.asarray(cap, dtype=np.int64)
            if self.cap.shape != self.demand.shape or np.any(self.cap < self.demand):
                raise ValueError(f"cap must give one count >= the demand per colour; got {cap!r}")
        adj: list[list[tuple[int, float]]] = [[] for _ in range(n)]
        for v, p in enumerate(parent):
            if p >= 0:
                adj[v].append((int(p), float(weight[v])))
                adj[int(p)].append((v, float(weight[v])))
        self.root, self.leaf_colour = root, leaf_colour
        # iterative DFS order from the root (re-roots the tree at the terminal's leaf)
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
        # merge small subtrees first: the running table stays small until the largest child arrives
        leaves = np.zeros(n, dtype=np.int64)
        for v in reversed(order):
            leaves[v] += v in leaf_colour
            for u, _ in self.children[v]:
                leaves[v] += leaves[u]
        for v in range(n):
            self.children[v].sort(key=lambda uw: leaves[uw[0]])
        if eps is not None:
            self._log_ratio = float(np.log1p(eps))

    # -- tables -------------------------------------------------------------------------------------------
    def _own(self, v: int) -> np.ndarray:
        shape = [1] * self.C
        c = self.leaf_colour.get(v)
        if c is None or self.cap[c] == 0:
            return np.zeros(shape)
        shape[c] = 2
        T = np.zeros(shape)
        if v == self.root:  # the terminal is always covered
            T.flat[0] = np.inf
        return T

    def _fold(self, out, pa, pb):
        """Cap the counts: cells beyond ``cap_c`` along axis ``c`` collapse onto ``cap_c`` (min cost)."""
        for c in range(self.C):
            k = int(self.cap[c])
            if out.shape[c] <= k + 1:
                continue
            tail = [slice(None)] * self.C
            tail[c] = slice(k, None)
            head = [slice(None)] * self.C
            head[c] = slice(0, k)
            t = out[tuple(tail)]
            arg = np.argmin(t, axis=c, keepdims=True)
            out = np.concatenate([out[tuple(head)], np.take_along_axis(t, arg, axis=c)], axis=c)
            pa = np.concatenate([pa[tuple(head)], np.take_along_axis(pa[tuple(tail)], arg, axis=c)], axis=c)
            pb = np.concatenate([pb[tuple(head)], np.take_along_axis(pb[tuple(tail)], arg, axis=c)], axis=c)
        return out, pa, pb

    def _merge(self, A: np.ndarray, B: np.ndarray):
        """(min, +) product of two tables; returns the capped table and, per cell, the flat indices of the
        cells of ``A`` and ``B`` it came from."""
        shape = tuple(a + b - 1 for a, b in zip(A.shape, B.shape))
        fa, fb = np.flatnonzero(np.isfinite(A)), np.flatnonzero(np.isfinite(B))
        if len(fa) * len(fb) <= PAIRWISE_LIMIT:
            ia, ib = np.repeat(fa, len(fb)), np.tile(fb, len(fa))
            ca, cb = np.unravel_index(ia, A.shape), np.unravel_index(ib, B.shape)
            key = np.ravel_multi_index(tuple(x + y for x, y in zip(ca, cb)), shape)
            cost = A.flat[ia] + B.flat[ib]
            order = np.lexsort((cost, key))
            first = order[np.concatenate([[True], key[order][1:] != key[order][:-1]])]
            out = np.full(shape, np.inf)
            pa, pb = np.full(shape, -1, dtype=np.int32), np.full(shape, -1, dtype=np.int32)
            out.flat[key[first]] = cost[first]
            pa.flat[key[first]], pb.flat[key[first]] = ia[first], ib[first]
            return self._fold(out, pa, pb)
        swap = len(fa) > len(fb)
        L, O, fl = (B, A, fb) if swap else (A, B, fa)
        out = np.full(shape, np.inf)
        src = np.full(shape, -1, dtype=np.int32)
        buf, mask = np.empty(O.shape), np.empty(O.shape, dtype=bool)
        coords = np.unravel_index(fl, L.shape)
        for k, flat in enumerate(fl):
            sl = tuple(slice(int(c[k]), int(c[k]) + s) for c, s in zip(coords, O.shape))
            view, sview = out[sl], src[sl]
            np.add(O, L.flat[flat], out=buf)
            np.less(buf, view, out=mask)
            np.copyto(view, buf, where=mask)
            np.copyto(sview, flat, where=mask)
        hit = src >= 0
        other = np.full(shape, -1, dtype=np.int32)
        zc = np.nonzero(hit)
        lc = np.unravel_index(src[hit], L.shape)
        other[hit] = np.ravel_multi_index(tuple(z - x for z, x in zip(zc, lc)), O.shape)
        pa, pb = (other, src) if swap else (src, other)
        return self._fold(out, pa, pb)

    def _buckets(self, counts: np.ndarray) -> np.ndarray:
        b = np.floor(np.log(np.maximum(counts, 1)) / self._log_ratio + 1e-9).astype(np.int64) + 1
        return np.where(counts > 0, b, 0)

    def _round(self, T: np.ndarray) -> np.ndarray:
        """Keep the cheapest finite cell of every bucket (ties: the larger counts); the rest -> inf."""
        if self.eps is None:
            return T
        flat = np.flatnonzero(np.isfinite(T))
        coords = np.unravel_index(flat, T.shape)
        key = np.zeros(len(flat), dtype=np.int64)
        total = np.zeros(len(flat), dtype=np.int64)
        for c in range(self.C):
            key = key * (int(self._buckets(np.array([T.shape[c]]))[0]) + 1) + self._buckets(coords[c])
            total += coords[c]
        order = np.lexsort((-total, T.flat[flat], key))
        keep = flat[order[np.concatenate([[True], key[order][1:] != key[order][:-1]])]]
        R = np.full(T.shape, np.inf)
        R.flat[keep] = T.flat[keep]
        return R

    def solve(self):
        """Run the DP; returns ``(cost, selected_leaves)`` or ``(inf, None)`` when no cell meets the demand."""
        self.steps: dict[int, list[tuple[int, np.ndarray, np.ndarray]]] = {}
        tables: dict[int, np.ndarray] = {}
        zero = (0,) * self.C
        for v in reversed(self.order):
            acc = self._own(v)
            steps = []
            for u, w in self.children[v]:
                T = tables.pop(u)
                hung = T + w  # hanging u on edge (u, v) costs w unless u brings nothing
                hung[zero] = T[zero]
                acc, pa, pb = self._merge(acc, hung)
                if self._round_each_merge:
                    acc = self._round(acc)
                steps.append((u, pa, pb))
            self.steps[v] = steps
            tables[v] = self._round(acc)
        root = tables[self.root]
        need = self.demand if self.eps is None else self.demand / (1 + self.eps) ** (self.height + 1)
        flat = np.flatnonzero(np.isfinite(root))
        counts = np.stack(np.unravel_index(flat, root.shape), axis=1)
        ok = np.all(counts >= need - 1e-9, axis=1)
        if not ok.any():
            return np.inf, None
        best = int(flat[ok][np.argmin(root.flat[flat[ok]])])
        self.root_counts = counts[np.flatnonzero(flat == best)[0]]
        selected: set[int] = set()
        self._collect(self.root, best, selected)
        return float(root.flat[best]), selected

    def _collect(self, v: int, cell: int, out: set) -> None:
        """Follow the provenance of ``cell`` back through the merges of ``v`` and into its children."""
        stack = [(v, cell)]
        while stack:
            v, cell = stack.pop()
            for u, pa, pb in reversed(self.steps[v]):
                b = int(pb.flat[cell])
                if b != 0:  # flat index 0 is the empty selection
                    stack.append((u, b))
                cell = int(pa.flat[cell])
            if cell != 0:
                out.add(v)


def coverage_factor(eps: float | None, height: int) -> float:
    """``(1+eps)^(H+1)``: the bicriteria DP covers at least ``demand`` divided by this (1 when exact)."""
    if eps is None:
        return 1.0
    if not isinstance(height, numbers.Integral) or height < 0:
        raise ValueError(f"height must be a non-negative int; got {height!r}")
    return float((1 + eps) ** (height + 1))
