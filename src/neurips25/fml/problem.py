"""The Fair Minimum Labeling problem: validated instance and result objects.

Input: an undirected graph with non-negative edge weights, a colour (group) for every node, one
terminal and a demand per colour (a count, or a fraction of the colour class in (0, 1]). Goal: a temporal
labeling of minimum cost under which at least ``demand[c]`` nodes of each colour reach the terminal.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Hashable, Mapping

import networkx as nx

from neurips25.fml.temporal import TemporalLabeling, verify_labeling


@dataclasses.dataclass
class FMLProblem:
    G: nx.Graph
    colors: dict
    terminal: Hashable
    demand: dict  # colour -> int
    weight: str = "weight"

    @property
    def groups(self) -> list:
        return sorted(self.demand, key=repr)

    def w(self, u, v) -> float:
        return float(self.G.edges[u, v].get(self.weight, 1.0))


def make_problem(G: nx.Graph, colors: Mapping, terminal: Hashable, demand: Mapping, weight: str = "weight"
                 ) -> FMLProblem:
    """Validate the inputs of every FML solver; errors name the argument and what was expected."""
    if not isinstance(G, nx.Graph) or G.is_directed() or G.is_multigraph():
        raise ValueError("G must be an undirected networkx.Graph (directed graphs and multigraphs are not supported)")
    if terminal not in G:
        raise ValueError(f"terminal {terminal!r} is not a node of G")
    missing = [v for v in G if v not in colors]
    if missing:
        raise ValueError(f"colors must give a colour for every node; missing e.g. {missing[:3]}")
    for u, v, d in G.edges(data=True):
        w = d.get(weight, 1.0)
        if not (isinstance(w, (int, float)) and math.isfinite(w) and w >= 0):
            raise ValueError(f"edge weights must be finite and >= 0; edge ({u!r}, {v!r}) has {weight}={w!r}")
    if not demand:
        raise ValueError("demand must give at least one colour")
    present = set(colors[v] for v in G)
    unknown = [c for c in demand if c not in present]
    if unknown:
        raise ValueError(f"demand names colour(s) {unknown} that no node has; colours are {sorted(present, key=repr)}")
    reach = nx.node_connected_component(G, terminal)
    need = {}
    for c, d in demand.items():
        size = sum(1 for v in G if colors[v] == c)
        reachable = sum(1 for v in reach if colors[v] == c)
        if isinstance(d, float) and 0 < d <= 1:
            d = math.ceil(d * size)
        if int(d) != d or d < 0:
            raise ValueError(f"demand[{c!r}] must be a non-negative count or a fraction in (0, 1]; got {demand[c]!r}")
        if d > size:
            raise ValueError(f"demand[{c!r}] = {d} exceeds the {size} nodes of that colour")
        if d > reachable:
            raise ValueError(f"infeasible: demand[{c!r}] = {d} but only {reachable} nodes of that colour are "
                             f"connected to the terminal")
        need[c] = int(d)
    return FMLProblem(G, {v: colors[v] for v in G}, terminal, need, weight)


@dataclasses.dataclass
class FMLResult:
    """A labeling, its cost and its independently verified coverage."""

    labeling: TemporalLabeling
    cost: float
    coverage: dict
    demand: dict
    demand_met: bool
    method: str
    runtime_s: float = 0.0
    selected: set = dataclasses.field(default_factory=set)
    info: dict = dataclasses.field(default_factory=dict)


def finish(problem: FMLProblem, labeling: TemporalLabeling, method: str, runtime: float, selected=(),
           **info) -> FMLResult:
    check = verify_labeling(problem.G, labeling, problem.colors, [problem.terminal], problem.demand)
    return FMLResult(labeling, labeling.cost(problem.G, problem.weight), check["coverage"], dict(problem.demand),
                     bool(check["demand_met"]), method, runtime, set(selected), info)
