"""Heuristic baselines (reconstructed from the paper's descriptions; see docs/fml.md).

Each connects chosen nodes to the terminal by shortest paths and labels every path on its own, times
increasing from the source toward the terminal (so the source, and every node on the path, reaches the
terminal). Two accountings, both valid labelings:

- ``share_labels=True`` (default): the ``k``-th edge from the source gets label ``k``; labels are sets
  per edge, so a shared edge pays again only for a *different* time (paths of different lengths);
- ``share_labels=False``: every path gets its own time window (path ``i`` starts after path ``i-1``
  ends), so no two paths share a label and the cost is the sum of the path costs, the accounting the
  paper's baseline costs imply (224 for 64 paths of 3-4 hops).

- :func:`greedy_labeling`: fairness-agnostic; nearest nodes of any colour until the total demand is met.
- :func:`closest_labeling`: for each colour, its ``demand[c]`` nearest nodes.
- :func:`alternating_labeling`: alternately the nearest still-uncovered node of each colour whose demand
  is not yet met (counting nodes covered on the way).
"""

from __future__ import annotations

import time

import networkx as nx

from neurips25.fml.problem import FMLProblem, FMLResult, finish, make_problem
from neurips25.fml.temporal import TemporalLabeling


def _paths(problem: FMLProblem):
    dist, paths = nx.single_source_dijkstra(problem.G, problem.terminal, weight=lambda u, v, d: problem.w(u, v))
    order = sorted(dist, key=lambda v: (dist[v], repr(v)))
    return order, paths


def _label_paths(sources, paths, share_labels: bool) -> TemporalLabeling:
    pairs, offset = [], 0
    for s in sources:
        p = paths[s][::-1]  # source -> terminal
        pairs.extend(((a, b), offset + k + 1) for k, (a, b) in enumerate(zip(p[:-1], p[1:])))
        if not share_labels:
            offset += len(p) - 1
    return TemporalLabeling.from_pairs(pairs)


def _on_paths(sources, paths) -> set:
    return {v for s in sources for v in paths[s]}


def greedy_labeling(G, colors, terminal, demand, weight: str = "weight", share_labels: bool = True) -> FMLResult:
    """Nearest nodes regardless of colour until as many nodes as the total demand reach the terminal."""
    t0 = time.perf_counter()
    problem = make_problem(G, colors, terminal, demand, weight)
    order, paths = _paths(problem)
    total = sum(problem.demand.values())
    chosen, covered = [], {problem.terminal}
    for v in order:
        if len(covered) >= total + 1:
            break
        if v not in covered:
            chosen.append(v)
            covered |= set(paths[v])
    return finish(problem, _label_paths(chosen, paths, share_labels), "Greedy", time.perf_counter() - t0, chosen)


def closest_labeling(G, colors, terminal, demand, weight: str = "weight", share_labels: bool = True) -> FMLResult:
    """For each colour ``c``, the ``demand[c]`` nodes of colour ``c`` nearest to the terminal."""
    t0 = time.perf_counter()
    problem = make_problem(G, colors, terminal, demand, weight)
    order, paths = _paths(problem)
    chosen = []
    for c, d in problem.demand.items():
        chosen += [v for v in order if problem.colors[v] == c and v != problem.terminal][:d]
    return finish(problem, _label_paths(chosen, paths, share_labels), "Closest", time.perf_counter() - t0, chosen)


def alternating_labeling(G, colors, terminal, demand, weight: str = "weight", share_labels: bool = True) -> FMLResult:
    """Alternate over colours, adding the nearest uncovered node of a colour still short of its demand."""
    t0 = time.perf_counter()
    problem = make_problem(G, colors, terminal, demand, weight)
    order, paths = _paths(problem)
    groups = problem.groups
    covered, chosen = {problem.terminal}, []

    def count(c):
        return sum(1 for v in covered if problem.colors[v] == c)

    turn = 0
    while any(count(c) < problem.demand[c] for c in groups):
        c = groups[turn % len(groups)]
        turn += 1
        if count(c) >= problem.demand[c]:
            continue
        v = next(v for v in order if problem.colors[v] == c and v not in covered)
        chosen.append(v)
        covered |= set(paths[v])
    return finish(problem, _label_paths(chosen, paths, share_labels), "Alternating", time.perf_counter() - t0, chosen)
