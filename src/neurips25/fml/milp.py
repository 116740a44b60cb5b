"""Exact Fair Minimum Labeling for small graphs: a multi-commodity-flow MILP (scipy / HiGHS).

With one terminal an optimal labeling is a tree containing the terminal with one label per edge, so
OPT is the cheapest connected edge set that covers the demand:

- ``x_e`` in {0, 1}: edge ``e`` is used (cost ``w_e``);
- ``y_v`` in {0, 1}: node ``v`` is *counted* toward its colour's demand; exactly
  ``demand[c] - [colour(t) = c]`` non-terminal nodes of colour ``c`` are counted (other tree nodes are
  covered too, they are just not needed in the count);
- one commodity per node ``v != t``: the terminal sends ``y_v`` units to ``v`` along arcs with
  ``f^v_a <= x_e``. The multi-commodity form has the directed-cut LP relaxation, much tighter than a
  single flow with a big-M bound, so HiGHS proves optimality in seconds on 40-node graphs.

Minimise ``sum_e w_e x_e``.
"""

from __future__ import annotations

import contextlib
import numbers
import os
import sys
import time

import networkx as nx
import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp
from scipy.sparse import coo_matrix

from neurips25.fml.problem import finish, make_problem
from neurips25.fml.temporal import label_tree_toward


def fml_milp(G, colors, terminal, demand, time_limit: float | None = None, weight: str = "weight"):
    """Optimal labeling by MILP (HiGHS through ``scipy.optimize.milp``); for graphs of tens of nodes.

    Returns an :class:`FMLResult` with ``info["optimal"]`` (False when the time limit stopped the solver),
    ``info["objective"]`` and ``info["dual_bound"]`` (a lower bound on OPT, equal to it when optimal).

    Examples
    --------
    >>> G = nx.cycle_graph(6)
    >>> colors = {v: "b" if v % 2 else "r" for v in G}
    >>> fml_milp(G, colors, 0, {"b": 2, "r": 1}).cost
    2.0
    """
    t0 = time.perf_counter()
    if time_limit is not None and (isinstance(time_limit, bool) or not isinstance(time_limit, numbers.Real)
                                   or not time_limit > 0):
        raise ValueError(f"time_limit must be a positive number of seconds or None; got {time_limit!r}")
    problem = make_problem(G, colors, terminal, demand, weight)
    G, terminal = problem.G, problem.terminal  # a terminal set is contracted into one super-terminal
    nodes = list(G.nodes())
    idx = {v: i for i, v in enumerate(nodes)}
    edges = list(G.edges())
    n, m = len(nodes), len(edges)
    t_colour = problem.colors[terminal]
    counted = {col: max(d - (col == t_colour), 0) for col, d in problem.demand.items()}
    sinks = [v for v in nodes if v != terminal]
    K = len(sinks)
    # variable layout: x (m) | y (n) | f (K commodities x 2m arcs; arc 2e: a->b, 2e+1: b->a)
    N = m + n + K * 2 * m
    fbase = m + n
    head = np.array([[idx[b], idx[a]] for a, b in edges]).ravel()  # head node of arc j
    tail = np.array([[idx[a], idx[b]] for a, b in edges]).ravel()
    arcs = np.arange(2 * m)
    rows, cols, vals, lo, hi = [], [], [], [], []
    r = 0
    for k, v in enumerate(sinks):
        off = fbase + k * 2 * m
        # capacity f^k_a - x_e <= 0
        rr = r + arcs
        rows += [rr, rr]
        cols += [off + arcs, arcs // 2]
        vals += [np.ones(2 * m), -np.ones(2 * m)]
        lo.append(np.full(2 * m, -np.inf)), hi.append(np.zeros(2 * m))
        r += 2 * m
        # conservation at every node u: in - out - [u = v] y_v + [u = t] y_v = 0
        rows += [r + head, r + tail]
        cols += [off + arcs, off + arcs]
        vals += [np.ones(2 * m), -np.ones(2 * m)]
        rows += [np.array([r + idx[v], r + idx[terminal]])]
        cols += [np.array([m + idx[v], m + idx[v]])]
        vals += [np.array([-1.0, 1.0])]
        lo.append(np.zeros(n)), hi.append(np.zeros(n))
        r += n
    for col, d in counted.items():
        members = [idx[v] for v in sinks if problem.colors[v] == col]
        rows.append(np.full(len(members), r))
        cols.append(m + np.array(members, dtype=np.int64))
        vals.append(np.ones(len(members)))
        lo.append(np.array([float(d)])), hi.append(np.array([float(d)]))
        r += 1
    # a tree reaching D distinct non-terminal nodes has at least D edges (cuts symmetric branching)
    rows.append(np.full(m, r)), cols.append(np.arange(m)), vals.append(np.ones(m))
    lo.append(np.array([float(sum(counted.values()))])), hi.append(np.array([np.inf]))
    r += 1
    A = coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(r, N)).tocsr()
    c = np.zeros(N)
    c[:m] = [problem.w(u, v) for u, v in edges]
    lb, ub = np.zeros(N), np.ones(N)
    lb[m + idx[terminal]] = ub[m + idx[terminal]] = 0.0  # the terminal is not a commodity sink
    integrality = np.concatenate([np.ones(m + n), np.zeros(N - m - n)])
    opts = {} if time_limit is None else {"time_limit": float(time_limit)}
    with _quiet_native_stdout():  # this HiGHS build prints debug lines from C++ whatever `disp` says
        res = milp(c, constraints=[LinearConstraint(A, np.concatenate(lo), np.concatenate(hi))],
                   integrality=integrality, bounds=Bounds(lb, ub), options=opts)
    if res.x is None:
        raise RuntimeError(f"MILP found no solution: {res.message}")
    used = [edges[k] for k in range(m) if res.x[k] > 0.5]
    H = nx.Graph()
    H.add_node(terminal)
    H.add_edges_from(used)
    comp = nx.node_connected_component(H, terminal)
    tree = nx.bfs_tree(H.subgraph(comp), terminal).to_undirected()
    labeling = label_tree_toward(list(tree.edges()), terminal)
    counted = [nodes[k] for k in range(n) if res.x[m + k] > 0.5]
    return finish(problem, labeling, "MILP", time.perf_counter() - t0, counted,
                  optimal=bool(res.status == 0), objective=float(res.fun),
                  dual_bound=float(getattr(res, "mip_dual_bound", np.nan)))


@contextlib.contextmanager
def _quiet_native_stdout():
    """Send file descriptor 1 to /dev/null for the duration (native code ignores sys.stdout)."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        yield
        return
    sys.stdout.flush()
    saved = os.dup(fd)
    with open(os.devnull, "w") as null:
        os.dup2(null.fileno(), fd)
        try:
            yield
        finally:
            os.dup2(saved, fd)
            os.close(saved)
