"""The Fair Minimum Labeling problem: validated instance and result objects.

Input: an undirected graph with non-negative edge weights, a colour (group) for every node (a mapping,
or the name of a node attribute such as ``"club"``), one terminal or a set of terminals, and a demand per
colour (a count, or a fraction of the colour class in (0, 1]). Goal: a temporal labeling of minimum cost
under which at least ``demand[c]`` nodes of each colour reach some terminal.

Several terminals are contracted into one super-terminal (a node reaching any terminal is what counts);
every solver works on the single-terminal instance and :func:`finish` maps the labels back edge by edge:
an edge ``(x, T*)`` becomes the cheapest edge from ``x`` to a terminal, with the same times, so every
temporal path into ``T*`` stays a temporal path into a terminal and the cost is unchanged.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Hashable, Mapping

import networkx as nx

from neurips25.fml.temporal import TemporalLabeling, verify_labeling


class _Terminals:
    """The super-terminal standing for a set of terminals (colourless: terminals cover themselves)."""

    def __repr__(self) -> str:
        return "<terminals>"


@dataclasses.dataclass
class FMLProblem:
    G: nx.Graph
    colors: dict
    terminal: Hashable
    demand: dict  # colour -> int (already reduced by the colours of contracted terminals)
    weight: str = "weight"
    source: tuple | None = None  # (G, colors, terminals, demand, edge_map) of the original multi-terminal input

    @property
    def groups(self) -> list:
        return sorted(self.demand, key=repr)

    def w(self, u, v) -> float:
        return float(self.G.edges[u, v].get(self.weight, 1.0))


def _terminal_set(G: nx.Graph, terminal) -> list:
    try:
        if terminal in G:
            return [terminal]
    except TypeError:  # unhashable, e.g. a list of terminals
        pass
    if isinstance(terminal, (set, frozenset, list, tuple)):
        terms = list(dict.fromkeys(terminal))
        missing = [t for t in terms if t not in G]
        if not terms:
            raise ValueError("terminal must be a node of G or a non-empty set of nodes; got an empty collection")
        if missing:
            raise ValueError(f"terminal: {missing[:3]} not node(s) of G")
        return terms
    raise ValueError(f"terminal {terminal!r} is not a node of G (pass a node or a set of nodes)")


def _colors(G: nx.Graph, colors) -> dict:
    if isinstance(colors, str):
        attr = nx.get_node_attributes(G, colors)
        missing = [v for v in G if v not in attr]
        if missing:
            raise ValueError(f"colors={colors!r} names a node attribute that nodes {missing[:3]} lack")
        return attr
    if not isinstance(colors, Mapping):
        raise ValueError(f"colors must be a mapping node -> colour or a node attribute name; got "
                         f"{type(colors).__name__}")
    missing = [v for v in G if v not in colors]
    if missing:
        raise ValueError(f"colors must give a colour for every node; missing e.g. {missing[:3]}")
    return {v: colors[v] for v in G}


def make_problem(G: nx.Graph, colors, terminal, demand: Mapping, weight: str = "weight") -> FMLProblem:
    """Validate the inputs of every FML solver; errors name the argument and what was expected."""
    if not isinstance(G, nx.Graph) or G.is_directed() or G.is_multigraph():
        raise ValueError("G must be an undirected networkx.Graph (directed graphs and multigraphs are not supported)")
    if G.number_of_nodes() == 0:
        raise ValueError("G has no nodes")
    terms = _terminal_set(G, terminal)
    cols = _colors(G, colors)
    for u, v, d in G.edges(data=True):
        w = d.get(weight, 1.0)
        if isinstance(w, bool) or not isinstance(w, numbers.Real) or not math.isfinite(float(w)) or w < 0:
            raise ValueError(f"edge weights must be finite real numbers >= 0 (0 is allowed); edge ({u!r}, {v!r}) "
                             f"has {weight}={w!r}")
    if not isinstance(demand, Mapping):
        raise ValueError(f"demand must be a mapping colour -> count or fraction; got {type(demand).__name__} "
                         f"{demand!r}")
    if not demand:
        raise ValueError("demand must give at least one colour")
    present = set(cols.values())
    unknown = [c for c in demand if c not in present]
    if unknown:
        raise ValueError(f"demand names colour(s) {unknown} that no node has; colours are {sorted(present, key=repr)}")
    reach = set().union(*(nx.node_connected_component(G, t) for t in terms))
    need = {}
    for c, d in demand.items():
        size = sum(1 for v in G if cols[v] == c)
        reachable = sum(1 for v in reach if cols[v] == c)
        if isinstance(d, bool) or not isinstance(d, numbers.Real):
            raise ValueError(f"demand[{c!r}] must be a count or a fraction in (0, 1]; got {d!r}")
        if not isinstance(d, numbers.Integral) and 0 < d <= 1:
            d = math.ceil(float(d) * size)
        if not math.isfinite(float(d)) or int(d) != d or d < 0:
            raise ValueError(f"demand[{c!r}] must be a non-negative count or a fraction in (0, 1]; got {demand[c]!r}")
        d = int(d)
        if d > size:
            raise ValueError(f"demand[{c!r}] = {d} exceeds the {size} nodes of that colour")
        if d > reachable:
            raise ValueError(f"infeasible: demand[{c!r}] = {d} but only {reachable} nodes of that colour are "
                             f"connected to the terminal")
        need[c] = d
    if len(terms) == 1:
        return FMLProblem(G, cols, terms[0], need, weight)
    return _contract(G, cols, terms, need, weight)


def _contract(G, cols, terms, need, weight) -> FMLProblem:
    star = _Terminals()
    tset = set(terms)
    H = nx.Graph()
    H.add_nodes_from(v for v in G if v not in tset)
    H.add_node(star)
    edge_map = {}
    for u, v, d in G.edges(data=True):
        w = float(d.get(weight, 1.0))
        if u in tset and v in tset:
            continue
        if u in tset or v in tset:
            x, t = (v, u) if u in tset else (u, v)
            if H.has_edge(x, star) and H.edges[x, star][weight] <= w:
                continue
            H.add_edge(x, star, **{weight: w})
            edge_map[frozenset((x, star))] = (x, t)
        else:
            H.add_edge(u, v, **{weight: w})
    hcols = {v: cols[v] for v in H if v is not star}
    hcols[star] = star  # a colour no demand names
    covered = {c: sum(1 for t in terms if cols[t] == c) for c in need}
    reduced = {c: max(d - covered[c], 0) for c, d in need.items()}
    return FMLProblem(H, hcols, star, reduced, weight, source=(G, cols, list(terms), need, edge_map))


@dataclasses.dataclass
class FMLResult:
    """A labeling, its cost and its independently verified coverage.

    ``demand_met``: every demand reached (for :func:`~neurips25.fml.fml_biapprox`, the relaxed demand
    ``demand / coverage_factor``; ``info["exact_demand_met"]`` then holds the unrelaxed check).
    ``selected``: the nodes a solver aimed to cover (baselines: the path sources; FML: the selected
    vertices; MILP: the counted nodes). ``graph``: the input graph, for :meth:`to_networkx`.
    """

    labeling: TemporalLabeling
    cost: float
    coverage: dict
    demand: dict
    demand_met: bool
    method: str
    runtime_s: float = 0.0
    selected: set = dataclasses.field(default_factory=set)
    info: dict = dataclasses.field(default_factory=dict)
    terminals: list = dataclasses.field(default_factory=list)
    graph: nx.Graph | None = dataclasses.field(default=None, repr=False)

    def to_networkx(self) -> nx.Graph:
        """The labelled edges as an ``nx.Graph``: edge attribute ``times`` (tuple of labels) plus the input
        graph's edge data; node attributes ``terminal`` and ``reaches`` (reaches a terminal).

        For the tree-based solvers (FMLapprox, FMLbiApprox, MILP) this is a forest, one tree per terminal
        used, with one label per edge.
        """
        from neurips25.fml.temporal import reaching_nodes

        T = nx.Graph()
        T.add_nodes_from(self.terminals)
        for e, ts in self.labeling.times.items():
            u, v = tuple(e)
            data = dict(self.graph.edges[u, v]) if self.graph is not None else {}
            T.add_edge(u, v, **data, times=ts)
        reached = reaching_nodes(T, self.labeling, self.terminals)
        for v in T:
            T.nodes[v]["terminal"] = v in self.terminals
            T.nodes[v]["reaches"] = v in reached
        return T


def finish(problem: FMLProblem, labeling: TemporalLabeling, method: str, runtime: float, selected=(),
           **info) -> FMLResult:
    """Map a work-graph labeling back to the input graph, verify it there, wrap it in an :class:`FMLResult`."""
    if problem.source is None:
        G, colors, terms, demand = problem.G, problem.colors, [problem.terminal], problem.demand
    else:
        G, colors, terms, demand, edge_map = problem.source
        pairs = [(edge_map.get(e, tuple(e)), t) for e, ts in labeling.times.items() for t in ts]
        labeling = TemporalLabeling.from_pairs(pairs)
        selected = [v for v in selected if not isinstance(v, _Terminals)]
    check = verify_labeling(G, labeling, colors, terms, demand)
    return FMLResult(labeling, labeling.cost(G, problem.weight), check["coverage"], dict(demand),
                     bool(check["demand_met"]), method, runtime, set(selected), info, list(terms), G)
