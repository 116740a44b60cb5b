"""Fair Minimum Labeling: cheap temporal edge activations that give every group access to a terminal.

Oettershagen & Michail, "Fair Minimum Labeling: Efficient Temporal Network Activations for
Reachability and Equity", NeurIPS 2025 (arXiv 2510.03899).

Give edges time labels so that at least ``demand[c]`` nodes of every colour ``c`` reach the terminal
(or any terminal of a set) along strictly increasing times, at minimum total labelling cost. NP-hard and
``Omega(log n)``-hard to approximate; :func:`fml_approx` (FRT tree embedding + an exact covering DP on the
tree + projection back onto shortest paths) matches that with an expected ``O(log n)`` ratio;
:func:`fml_approx_uncapped` runs the paper's uncapped DP; :func:`fml_biapprox` trades a ``(1+eps)^(H+1)``
loss of coverage for bucketed DP tables; :func:`fml_milp` solves small instances exactly. Baselines:
:func:`greedy_labeling`, :func:`closest_labeling`, :func:`alternating_labeling` (reconstructed).

Example
-------
>>> import networkx as nx
>>> G = nx.path_graph(5)
>>> colors = {0: "b", 1: "r", 2: "b", 3: "r", 4: "b"}
>>> fml_approx(G, colors, terminal=0, demand={"b": 2, "r": 1}, seed=0).cost
2.0
"""

from neurips25.fml.baselines import alternating_labeling, closest_labeling, greedy_labeling
from neurips25.fml.frt import FRTTree, frt_tree
from neurips25.fml.milp import fml_milp
from neurips25.fml.problem import FMLResult
from neurips25.fml.solvers import fml_approx, fml_approx_uncapped, fml_biapprox
from neurips25.fml.temporal import (
    TemporalLabeling,
    coverage,
    label_tree_toward,
    reaches,
    reaching_nodes,
    verify_labeling,
)
from neurips25.fml.tree_dp import TreeDP

__all__ = [
    "TemporalLabeling", "reaches", "reaching_nodes", "coverage", "verify_labeling", "label_tree_toward",
    "frt_tree", "FRTTree", "TreeDP", "fml_approx", "fml_approx_uncapped", "fml_biapprox", "fml_milp", "FMLResult",
    "greedy_labeling", "closest_labeling", "alternating_labeling",
]
