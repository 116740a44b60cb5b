"""Solutions as graphs of intermediate quantities (BRIDGE, Sec. 3 "reasoning DAG").

A solution is a directed acyclic graph: each node is a quantity; a leaf's value is given in the question,
an inner node is ``op(parent_1, parent_2)``. While a chain of thought runs, every node is *solved*,
*unlocked* (not solved, all parents solved) or *locked* (some parent unsolved); BRIDGE's exploration acts on
locked nodes and its exploitation on unlocked ones.
"""

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Iterable, Mapping, Sequence

OPS = ("+", "-", "*")


def apply_op(op: str, a: int, b: int, mod: int) -> int:
    """``a op b`` modulo ``mod`` (the arithmetic of mini-iGSM)."""
    if op == "+":
        return (a + b) % mod
    if op == "-":
        return (a - b) % mod
    if op == "*":
        return (a * b) % mod
    raise ValueError(f"`op` must be one of {OPS}, got {op!r}")


@dataclasses.dataclass(frozen=True)
class ReasoningDAG:
    """A solution graph: nodes, their parents, the operation of each inner node and every value.

    Parameters
    ----------
    nodes : sequence of str
        Node names (one word each, unique).
    parents : mapping str -> tuple of str
        Parents of each node; leaves have ``()``. Every parent must be a node; the graph must be acyclic.
    op : mapping str -> str
        Operation of each inner node (``"+"``, ``"-"``, ``"*"``); leaves have no entry.
    value : mapping str -> int
        Value of every node.
    query : str
        The node the question asks for.
    mod : int, optional
        The arithmetic's modulus; when given, every inner node's value is checked against ``op(parents)``.

    Notes
    -----
    Every inner node has exactly two parents (the operations are binary).

    Examples
    --------
    >>> g = ReasoningDAG(("a", "b", "c"), {"a": (), "b": (), "c": ("a", "b")}, {"c": "+"},
    ...                  {"a": 2, "b": 3, "c": 5}, query="c")
    >>> g.unlocked({"a", "b"}), g.locked({"a"})
    (['c'], ['c'])
    """

    nodes: tuple[str, ...]
    parents: Mapping[str, tuple[str, ...]]
    op: Mapping[str, str]
    value: Mapping[str, int]
    query: str
    mod: int | None = None

    def __post_init__(self) -> None:
        nodes = tuple(self.nodes)
        object.__setattr__(self, "nodes", nodes)
        if len(set(nodes)) != len(nodes):
            raise ValueError(f"`nodes` must be unique, got {list(nodes)}")
        for n in nodes:
            if not isinstance(n, str) or not n or any(c.isspace() for c in n):
                raise ValueError(f"`nodes` must be non-empty one-word strings, got {n!r}")
        missing = [n for n in nodes if n not in self.parents]
        if missing:
            raise ValueError(f"`parents` has no entry for nodes {missing}")
        for n, ps in self.parents.items():
            if n not in nodes:
                raise ValueError(f"`parents` names unknown node {n!r}")
            bad = [p for p in ps if p not in nodes]
            if bad:
                raise ValueError(f"`parents[{n!r}]` names unknown nodes {bad}")
            if ps and len(ps) != 2:
                raise ValueError(f"`parents[{n!r}]` must name exactly 2 parents (an inner node is a binary "
                                 f"operation) or none (a leaf), got {tuple(ps)}")
            if ps and self.op.get(n) not in OPS:
                raise ValueError(f"`op[{n!r}]` must be one of {OPS} for an inner node, got {self.op.get(n)!r}")
        if any(n not in self.value for n in nodes):
            raise ValueError("`value` must give every node a value")
        if self.query not in nodes:
            raise ValueError(f"`query` must be a node, got {self.query!r}")
        self.topo_order()  # raises on a cycle
        if self.mod is not None:
            if isinstance(self.mod, bool) or not isinstance(self.mod, numbers.Integral) or self.mod < 2:
                raise ValueError(f"`mod` must be an int >= 2 or None, got {self.mod!r}")
            object.__setattr__(self, "mod", int(self.mod))
            self.check_values(self.mod)

    # --- structure -------------------------------------------------------------------------------------
    def is_leaf(self, n: str) -> bool:
        return len(self.parents[n]) == 0

    def topo_order(self, nodes: Iterable[str] | None = None) -> list[str]:
        """A topological order (parents first) of ``nodes`` (default: all); raises ValueError on a cycle."""
        order, state = [], {}

        def visit(n: str, path: tuple[str, ...]) -> None:
            if state.get(n) == 2:
                return
            if state.get(n) == 1:
                cyc = " -> ".join((*path[path.index(n):], n))
                raise ValueError(f"`parents` must describe an acyclic graph; found the cycle {cyc}")
            state[n] = 1
            for p in self.parents[n]:
                visit(p, (*path, n))
            state[n] = 2
            order.append(n)

        for n in (self.nodes if nodes is None else nodes):
            visit(n, ())
        keep = set(self.nodes if nodes is None else self.ancestors_of(nodes, include_self=True))
        return [n for n in order if n in keep]

    def ancestors_of(self, nodes: Iterable[str], include_self: bool = False) -> set[str]:
        out: set[str] = set()
        stack = list(nodes)
        if include_self:
            out.update(stack)
        while stack:
            for p in self.parents[stack.pop()]:
                if p not in out:
                    out.add(p)
                    stack.append(p)
        return out

    def needed(self) -> list[str]:
        """Inner nodes the query depends on (itself included), in topological order: the solution's steps."""
        anc = self.ancestors_of([self.query], include_self=True)
        return [n for n in self.topo_order([self.query]) if n in anc and not self.is_leaf(n)]

    # --- state during a chain of thought (BRIDGE Sec. 3) -------------------------------------------------
    def unlocked(self, solved: Iterable[str], among: Sequence[str] | None = None) -> list[str]:
        """Nodes not solved whose parents are all solved."""
        s = set(solved)
        cand = self.nodes if among is None else among
        return [n for n in cand if n not in s and all(p in s for p in self.parents[n])]

    def locked(self, solved: Iterable[str], among: Sequence[str] | None = None) -> list[str]:
        """Nodes with at least one unsolved parent."""
        s = set(solved)
        cand = self.nodes if among is None else among
        return [n for n in cand if n not in s and any(p not in s for p in self.parents[n])]

    def check_values(self, mod: int) -> None:
        """Raise if some inner node's value is not ``op(parents)`` modulo ``mod``."""
        for n in self.nodes:
            ps = self.parents[n]
            if ps:
                want = apply_op(self.op[n], self.value[ps[0]], self.value[ps[1]], mod)
                if want != self.value[n]:
                    raise ValueError(f"`value[{n!r}]` is {self.value[n]}, but {self.op[n]} of its parents "
                                     f"gives {want}")
