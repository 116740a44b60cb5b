"""Temporal labelings of a static graph, strict temporal reachability and coverage.

A labeling gives each edge a set of time labels; a node ``v`` reaches a terminal when a path from ``v``
to it can be traversed with strictly increasing labels. Coverage counts, per group (colour), the nodes
that reach some terminal (terminals reach themselves).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Iterable, Mapping

import networkx as nx
import numpy as np


def edge_key(u, v) -> frozenset:
    return frozenset((u, v))


@dataclasses.dataclass
class TemporalLabeling:
    """Edge -> sorted tuple of positive integer time labels (undirected edges, ``frozenset`` keys).

    Examples
    --------
    >>> lab = TemporalLabeling.from_pairs([((0, 1), 1), ((1, 2), 2)])
    >>> lab.n_labels, lab.labels(1, 0)
    (2, (1,))
    """

    times: dict[frozenset, tuple[int, ...]] = dataclasses.field(default_factory=dict)

    @classmethod
    def from_pairs(cls, pairs: Iterable[tuple[tuple[Hashable, Hashable], int]]) -> TemporalLabeling:
        acc: dict[frozenset, set[int]] = {}
        for (u, v), t in pairs:
            acc.setdefault(edge_key(u, v), set()).add(int(t))
        return cls({e: tuple(sorted(ts)) for e, ts in acc.items()})

    def labels(self, u, v) -> tuple[int, ...]:
        return self.times.get(edge_key(u, v), ())

    @property
    def n_labels(self) -> int:
        return sum(len(t) for t in self.times.values())

    def cost(self, G: nx.Graph | None = None, weight: str = "weight") -> float:
        """Total cost: each label on edge ``e`` costs ``w(e)`` (1 without a graph or weight)."""
        if G is None:
            return float(self.n_labels)
        total = 0.0
        for e, ts in self.times.items():
            u, v = tuple(e)
            total += len(ts) * float(G.edges[u, v].get(weight, 1.0))
        return total


def reaching_nodes(G: nx.Graph, labeling: TemporalLabeling, terminals: Iterable[Hashable]) -> set:
    """Every node with a strictly time-increasing path to some terminal.

    Scans labels from the latest to the earliest keeping, for each node, the latest time at which it can
    still leave and arrive (``latest[v]``); labels with equal times are applied from the state before
    them, so two edges with the same label are never chained.
    """
    latest = {t: np.inf for t in terminals}
    by_time: dict[int, list] = {}
    for e, ts in labeling.times.items():
        u, v = tuple(e)
        for t in ts:
            by_time.setdefault(t, []).append((u, v))
    for t in sorted(by_time, reverse=True):
        updates = []
        for u, v in by_time[t]:
            if latest.get(v, -np.inf) > t:
                updates.append((u, t))
            if latest.get(u, -np.inf) > t:
                updates.append((v, t))
        for node, time in updates:
            if latest.get(node, -np.inf) < time:
                latest[node] = time
    return set(latest)


def reaches(G: nx.Graph, labeling: TemporalLabeling, source: Hashable, terminals: Iterable[Hashable]) -> bool:
    """Whether ``source`` reaches one of ``terminals`` along strictly increasing labels."""
    return source in reaching_nodes(G, labeling, terminals)


def coverage(G: nx.Graph, labeling: TemporalLabeling, colors: Mapping[Hashable, Hashable],
             terminals: Iterable[Hashable]) -> dict:
    """Per colour, how many nodes reach a terminal."""
    reached = reaching_nodes(G, labeling, terminals)
    out = {c: 0 for c in set(colors.values())}
    for v in reached:
        if v in colors:
            out[colors[v]] += 1
    return out


def verify_labeling(G: nx.Graph, labeling: TemporalLabeling, colors: Mapping, terminals: Iterable[Hashable],
                    demand: Mapping | None = None) -> dict:
    """Independent check of a labeling: labels sit on graph edges and are positive integers; returns the
    coverage per colour and whether every demand is met.

    Raises
    ------
    ValueError
        If a label is on a non-edge or is not a positive integer.
    """
    for e, ts in labeling.times.items():
        if len(e) != 2:
            raise ValueError(f"labeling has a self-loop or malformed edge {tuple(e)!r}")
        u, v = tuple(e)
        if not G.has_edge(u, v):
            raise ValueError(f"labeling labels ({u!r}, {v!r}), which is not an edge of G")
        if not ts or any(int(t) != t or t < 1 for t in ts):
            raise ValueError(f"labels on ({u!r}, {v!r}) must be positive integers; got {ts!r}")
    cov = coverage(G, labeling, colors, terminals)
    met = None if demand is None else all(cov.get(c, 0) >= d for c, d in demand.items())
    return {"coverage": cov, "demand_met": met, "cost": labeling.cost(G), "n_labels": labeling.n_labels}


def label_tree_toward(tree_edges: Iterable[tuple], root: Hashable) -> TemporalLabeling:
    """One label per edge of a tree so that every tree node reaches ``root``.

    Edge ``(v, parent(v))`` gets ``height - depth(v) + 1``: times increase toward the root.
    """
    T = nx.Graph()
    T.add_edges_from(tree_edges)
    if T.number_of_edges() == 0:
        return TemporalLabeling()
    if root not in T:
        raise ValueError("the tree does not contain the root")
    depth = nx.single_source_shortest_path_length(T, root)
    if len(depth) != T.number_of_nodes() or T.number_of_edges() != T.number_of_nodes() - 1:
        raise ValueError("tree_edges must form a tree containing the root")
    height = max(depth.values())
    pairs = []
    for u, v in T.edges():
        child = u if depth[u] > depth[v] else v
        pairs.append(((u, v), height - depth[child] + 1))
    return TemporalLabeling.from_pairs(pairs)
