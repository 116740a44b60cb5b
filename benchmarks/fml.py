"""FMLapprox / FMLbiApprox runtime against graph size, as a log-log slope (one FRT tree each).

    python benchmarks/fml.py [--sizes 256 512 1024 2048] [--demand 32]

Random geometric graphs (radius chosen for a mean degree of about 12) and Barabasi-Albert graphs (m=3),
terminal = node 0, two random colours. The DP tables are capped at the demand, so the DP grows with the
number of tree nodes (O(n log n)) and the all-pairs shortest paths dominate at large n.
"""

from __future__ import annotations

import argparse
import math
import time

import networkx as nx
import numpy as np

from neurips25.fml import fml_approx, fml_biapprox


def graph(kind: str, n: int, seed: int) -> nx.Graph:
    if kind == "rgg":
        G = nx.random_geometric_graph(n, math.sqrt(12 / (math.pi * n)), seed=seed)
        return G.subgraph(max(nx.connected_components(G), key=len)).copy()
    return nx.barabasi_albert_graph(n, 3, seed=seed)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[256, 512, 1024, 2048])
    ap.add_argument("--demand", type=int, default=32)
    args = ap.parse_args()
    for kind in ("rgg", "ba"):
        rows = []
        for n in args.sizes:
            G = graph(kind, n, 0)
            rng = np.random.default_rng(0)
            colors = {v: ("b" if rng.random() < 0.5 else "r") for v in G}
            t = next(iter(G))
            dem = {"b": args.demand, "r": args.demand}
            t0 = time.perf_counter()
            a = fml_approx(G, colors, t, dem, n_trees=1, seed=0)
            ta = time.perf_counter() - t0
            t0 = time.perf_counter()
            b = fml_biapprox(G, colors, t, dem, eps=0.01, seed=0)
            tb = time.perf_counter() - t0
            rows.append((G.number_of_nodes(), ta, a.info["dp_seconds"], tb, b.info["dp_seconds"], a.cost, b.cost))
            print(f"{kind} n={G.number_of_nodes():5d}: approx {ta:7.2f} s (DP {a.info['dp_seconds']:.2f} s, "
                  f"cost {a.cost:g}); biapprox {tb:7.2f} s (DP {b.info['dp_seconds']:.2f} s, cost {b.cost:g}); "
                  f"bi/exact DP time {b.info['dp_seconds'] / a.info['dp_seconds']:.2f}")
        ns = np.log([r[0] for r in rows])
        for col, name in ((1, "fml_approx"), (3, "fml_biapprox"), (2, "exact DP alone")):
            slope = np.polyfit(ns, np.log([r[col] for r in rows]), 1)[0]
            print(f"  {kind}: log-log slope of {name} time vs n = {slope:.2f}")


if __name__ == "__main__":
    main()
