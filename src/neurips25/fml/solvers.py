"""FMLapprox and FMLbiApprox: FRT tree + covering DP + projection back to shortest paths.

1. sample an FRT tree of the shortest-path metric (``frt.py``), rooted at the terminal's leaf;
2. solve the per-colour covering problem exactly on the tree (``tree_dp.py``; bucketed for biApprox);
3. map every chosen tree edge to a shortest path in ``G`` between the two clusters' centres, take the
   union, keep a shortest-path tree toward the terminal inside it, pruned to the selected vertices;
4. label that tree with one label per edge, times increasing toward the terminal.

Best of ``n_trees`` samples. Expected cost ``O(log n) OPT`` (the paper's guarantee, inherited from FRT).
"""

from __future__ import annotations

import dataclasses
import numbers
import time

import networkx as nx
import numpy as np
from scipy.sparse.csgraph import shortest_path

from neurips25.fml.frt import frt_tree
from neurips25.fml.problem import FMLProblem, FMLResult, finish, make_problem
from neurips25.fml.temporal import label_tree_toward
from neurips25.fml.tree_dp import TreeDP, coverage_factor


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


def _tree_plans(problem: FMLProblem, n_trees: int, seed, eps: float | None, cap):
    """Best of ``n_trees`` FRT samples on a connected single-terminal instance: (labeling, targets, info)."""
    metric = _Metric(problem)
    groups = problem.groups
    gidx = {c: i for i, c in enumerate(groups)}
    rng = np.random.default_rng(seed)
    best, dp_cpu, costs = None, 0.0, []
    for _ in range(n_trees):
        tree = frt_tree(problem.G, problem.weight, seed=rng, distances=(metric.nodes, metric.D))
        leaf_colour = {tree.leaf_of[v]: gidx[problem.colors[v]] for v in problem.G
                       if problem.colors[v] in gidx}
        t_dp = time.process_time()
        dp = TreeDP(tree.parent, tree.weight, leaf_colour, tree.leaf_of[problem.terminal],
                    [problem.demand[c] for c in groups], eps=eps, cap=cap)
        tree_cost, leaves = dp.solve()
        dp_cpu += time.process_time() - t_dp
        if leaves is None:
            raise RuntimeError("the tree DP found no feasible selection (should not happen on a valid instance)")
        edges, targets = _project(problem, metric, tree, dp, leaves)
        labeling = label_tree_toward(edges, problem.terminal)
        cost = labeling.cost(problem.G, problem.weight)
        costs.append(cost)
        if best is None or cost < best[0]:
            best = (cost, labeling, targets, {"tree_cost": tree_cost, "tree_height": dp.height})
    _, labeling, targets, info = best
    info.update(dp_cpu_s=dp_cpu, costs_per_tree=costs, n_trees=n_trees, eps=eps, cap=cap)
    return labeling, targets, info


def _solve(problem: FMLProblem, n_trees: int, seed, eps: float | None, method: str, cap=None) -> FMLResult:
    t0 = time.perf_counter()
    comp = nx.node_connected_component(problem.G, problem.terminal)
    work = problem
    if len(comp) < problem.G.number_of_nodes():
        # nodes outside the terminal's component can never be covered: drop them
        work = dataclasses.replace(problem, G=problem.G.subgraph(comp).copy(), source=None)
    labeling, targets, info = _tree_plans(work, n_trees, seed, eps, cap)
    return finish(problem, labeling, method, time.perf_counter() - t0, targets, **info)


def _check_n_trees(n_trees) -> int:
    if isinstance(n_trees, bool) or not isinstance(n_trees, numbers.Integral) or n_trees < 1:
        raise ValueError(f"n_trees must be an int >= 1; got {n_trees!r}")
    return int(n_trees)


def fml_approx(G: nx.Graph, colors, terminal, demand, n_trees: int = 5, seed=None, weight: str = "weight"
               ) -> FMLResult:
    """FMLapprox: an expected O(log n)-approximation of Fair Minimum Labeling.

    Parameters
    ----------
    G : networkx.Graph
        Undirected; edge attribute ``weight`` (any real >= 0, numpy scalars included; default 1) is the
        cost of one label.
    colors : dict or str
        Node -> colour (group), or the name of a node attribute holding it (``"club"``); any number of
        colours.
    terminal : node or set of nodes
        Where every covered node must arrive (the aggregator); with a set, arriving at any of them counts.
        A node of ``G`` is taken as one terminal even when it is a tuple.
    demand : dict
        Colour -> number of nodes (int) or fraction of the colour class (float in (0, 1]).
    n_trees : int
        FRT samples; the cheapest labeling is returned.
    seed : int or numpy Generator, optional

    Returns
    -------
    FMLResult
        ``labeling`` (one label per edge of a forest), ``cost``, verified ``coverage``, ``demand_met``;
        ``to_networkx()`` gives the labelled forest.

    Notes
    -----
    The tree DP caps counts at the demand (exact for the covering question, tables of ``prod(d_c + 1)``
    cells); :func:`fml_approx_uncapped` runs the paper's uncapped DP instead.

    Examples
    --------
    >>> G = nx.path_graph(5)
    >>> colors = {0: "b", 1: "r", 2: "b", 3: "r", 4: "b"}
    >>> res = fml_approx(G, colors, terminal=0, demand={"b": 2, "r": 1}, seed=0)
    >>> res.cost, res.demand_met
    (2.0, True)
    """
    n = _check_n_trees(n_trees)
    return _solve(make_problem(G, colors, terminal, demand, weight), n, seed, None, "FMLapprox")


def fml_approx_uncapped(G: nx.Graph, colors, terminal, demand, n_trees: int = 1, seed=None,
                        weight: str = "weight") -> FMLResult:
    """FMLapprox with the paper's exact tree DP: counts capped only at the class sizes.

    Same plans as :func:`fml_approx` (both DPs are exact on the tree), but the tables hold every
    reachable count vector (``O(n^2)`` cells per node for two colours), as in the paper's analysis; the
    comparator for FMLbiApprox's speed. Parameters as :func:`fml_approx`.
    """
    n = _check_n_trees(n_trees)
    return _solve(make_problem(G, colors, terminal, demand, weight), n, seed, None, "FMLapprox-uncapped",
                  cap="class")


def fml_biapprox(G: nx.Graph, colors, terminal, demand, eps: float = 0.01, n_trees: int = 1, seed=None,
                 weight: str = "weight", cap: str = "demand") -> FMLResult:
    """FMLbiApprox: the bucketed DP; coverage >= demand / (1+eps)^(H+1), cost <= the tree optimum.

    Same parameters as :func:`fml_approx`, plus

    eps : float in (0, 1]
        Bucket ratio; counts within a factor ``1 + eps`` share a bucket.
    cap : {"demand", "class"}
        Counts capped at the demand (default, a project choice) or only at the class sizes (the paper's
        form, whose tables the buckets shrink).

    ``demand_met`` checks the relaxed demand; ``info["coverage_factor"]`` is ``(1+eps)^(H+1)`` and
    ``info["exact_demand_met"]`` the unrelaxed check.
    """
    if isinstance(eps, bool) or not isinstance(eps, numbers.Real) or not 0 < eps <= 1:
        raise ValueError(f"eps must be a real number in (0, 1]; got {eps!r}")
    if cap not in ("demand", "class"):
        raise ValueError(f"cap must be 'demand' or 'class'; got {cap!r}")
    n = _check_n_trees(n_trees)
    res = _solve(make_problem(G, colors, terminal, demand, weight), n, seed, float(eps), "FMLbiApprox",
                 cap=None if cap == "demand" else "class")
    factor = coverage_factor(float(eps), res.info["tree_height"])
    res.info["coverage_factor"] = factor
    res.info["exact_demand_met"] = res.demand_met
    res.demand_met = all(res.coverage.get(c, 0) >= d / factor - 1e-9 for c, d in res.demand.items())
    return res
