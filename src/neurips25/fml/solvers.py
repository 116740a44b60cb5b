"""FMLapprox and FMLbiApprox: FRT tree + covering DP + projection back to shortest paths.

1. sample an FRT tree of the shortest-path metric (``frt.py``), rooted at the terminal's leaf;
2. solve the per-colour covering problem exactly on the tree (``tree_dp.py``; bucketed for biApprox);
3. map every chosen tree edge to a shortest path in ``G`` between the two clusters' centres, take the
   union, keep a shortest-path tree toward the terminal inside it, pruned to the selected vertices;
4. label that tree with one label per edge, times increasing toward the terminal.

Best of ``n_trees`` samples. Expected cost ``O(log n) OPT`` (the paper's guarantee, inherited from FRT).
"""

from __future__ import annotations

import time

import networkx as nx
import numpy as np
from scipy.sparse.csgraph import shortest_path

from neurips25.fml.frt import frt_tree
from neurips25.fml.problem import FMLProblem, FMLResult, finish, make_problem
from neurips25.fml.temporal import label_tree_toward
from neurips25.fml.tree_dp import TreeDP


class _Metric:
    """All-pairs shortest paths with predecessors, shared by the trees of one run."""

    def __init__(self, problem: FMLProblem):
        G = problem.G
        self.nodes = list(G.nodes())
        self.index = {v: i for i, v in enumerate(self.nodes)}
        A = nx.to_scipy_sparse_array(G, nodelist=self.nodes, weight=problem.weight, format="csr")
        self.D, self.pred = shortest_path(A, method="D", directed=False, return_predecessors=True)

    def path(self, u, v) -> list:
        i, j = self.index[u], self.index[v]
        out = [j]
        while out[-1] != i:
            out.append(int(self.pred[i, out[-1]]))
        return [self.nodes[k] for k in out[::-1]]


def _project(problem: FMLProblem, metric: _Metric, tree, dp: TreeDP, selected_leaves: set) -> tuple[list, set]:
    """Tree solution -> edges of a tree in G containing the terminal and the selected vertices."""
    chosen: set[tuple[int, int]] = set()
    parent_of = {u: v for v in range(len(dp.children)) for u, _ in dp.children[v]}
    for leaf in selected_leaves:
        v = leaf
        while v != dp.root and (v, parent_of[v]) not in chosen:
            chosen.add((v, parent_of[v]))
            v = parent_of[v]
    H = nx.Graph()
    H.add_node(problem.terminal)
    for u, v in chosen:
        p = metric.path(tree.center[u], tree.center[v])
        nx.add_path(H, p)
    for a, b in H.edges():
        H.edges[a, b]["w"] = problem.w(a, b)
    _, paths = nx.single_source_dijkstra(H, problem.terminal, weight="w")
    targets = {tree.center[leaf] for leaf in selected_leaves}
    edges = set()
    for x in targets:
        p = paths[x]
        edges.update(frozenset(e) for e in zip(p[:-1], p[1:]))
    return [tuple(e) for e in edges], targets


def _solve(problem: FMLProblem, n_trees: int, seed, eps: float | None, method: str) -> FMLResult:
    t0 = time.perf_counter()
    metric = _Metric(problem)
    if not np.all(np.isfinite(metric.D[metric.index[problem.terminal]])):
        # nodes outside the terminal's component can never be covered: drop them
        comp = nx.node_connected_component(problem.G, problem.terminal)
        sub = FMLProblem(problem.G.subgraph(comp).copy(), problem.colors, problem.terminal, problem.demand,
                         problem.weight)
        res = _solve(sub, n_trees, seed, eps, method)
        return finish(problem, res.labeling, method, time.perf_counter() - t0, res.selected, **res.info)
    groups = problem.groups
    gidx = {c: i for i, c in enumerate(groups)}
    rng = np.random.default_rng(seed)
    best, dp_seconds, tree_costs = None, 0.0, []
    for _ in range(n_trees):
        tree = frt_tree(problem.G, problem.weight, seed=rng, distances=(metric.nodes, metric.D))
        leaf_colour = {tree.leaf_of[v]: gidx[problem.colors[v]] for v in problem.G
                       if problem.colors[v] in gidx}
        t_dp = time.perf_counter()
        dp = TreeDP(tree.parent, tree.weight, leaf_colour, tree.leaf_of[problem.terminal],
                    [problem.demand[c] for c in groups], eps=eps)
        tree_cost, leaves = dp.solve()
        dp_seconds += time.perf_counter() - t_dp
        if leaves is None:
            raise RuntimeError("the tree DP found no feasible selection (should not happen on a valid instance)")
        edges, targets = _project(problem, metric, tree, dp, leaves)
        labeling = label_tree_toward(edges, problem.terminal)
        res = finish(problem, labeling, method, 0.0, targets, tree_cost=tree_cost, tree_height=dp.height)
        tree_costs.append(res.cost)
        if best is None or res.cost < best.cost:
            best = res
    best.runtime_s = time.perf_counter() - t0
    best.info.update(dp_seconds=dp_seconds, costs_per_tree=tree_costs, n_trees=n_trees, eps=eps)
    return best


def fml_approx(G: nx.Graph, colors, terminal, demand, n_trees: int = 5, seed=None, weight: str = "weight"
               ) -> FMLResult:
    """FMLapprox: an expected O(log n)-approximation of Fair Minimum Labeling (single terminal).

    Parameters
    ----------
    G : networkx.Graph
        Undirected; edge attribute ``weight`` is the cost of one label (default 1).
    colors : dict
        Node -> colour (group); any number of colours.
    terminal : node
        Where every covered node must arrive (the aggregator).
    demand : dict
        Colour -> number of nodes (int) or fraction of the colour class (float in (0, 1]).
    n_trees : int
        FRT samples; the cheapest labeling is returned.
    seed : int, optional

    Returns
    -------
    FMLResult
        ``labeling`` (one label per edge of a tree), ``cost``, verified ``coverage``, ``demand_met``.

    Examples
    --------
    >>> G = nx.path_graph(5)
    >>> colors = {0: "b", 1: "r", 2: "b", 3: "r", 4: "b"}
    >>> res = fml_approx(G, colors, terminal=0, demand={"b": 2, "r": 1}, seed=0)
    >>> res.cost, res.demand_met
    (2.0, True)
    """
    if int(n_trees) < 1:
        raise ValueError(f"n_trees must be >= 1; got {n_trees}")
    return _solve(make_problem(G, colors, terminal, demand, weight), int(n_trees), seed, None, "FMLapprox")


def fml_biapprox(G: nx.Graph, colors, terminal, demand, eps: float = 0.01, n_trees: int = 1, seed=None,
                 weight: str = "weight") -> FMLResult:
    """FMLbiApprox: the bucketed DP; coverage >= demand / (1+eps)^(H+1), H the tree height.

    Same parameters as :func:`fml_approx`, plus ``eps > 0``, the bucket ratio.
    """
    if not eps > 0:
        raise ValueError(f"eps must be > 0; got {eps!r}")
    if int(n_trees) < 1:
        raise ValueError(f"n_trees must be >= 1; got {n_trees}")
    res = _solve(make_problem(G, colors, terminal, demand, weight), int(n_trees), seed, float(eps), "FMLbiApprox")
    H = res.info["tree_height"]
    res.info["coverage_factor"] = (1 + eps) ** (H + 1)
    res.demand_met = all(res.coverage.get(c, 0) >= d / (1 + eps) ** (H + 1) for c, d in res.demand.items())
    return res
