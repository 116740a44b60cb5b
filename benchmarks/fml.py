"""FML against its anchor, networkx's Steiner tree approximations, and its DPs against each other.

    python benchmarks/fml.py [--sizes 256 512 1024] [--bi-sizes 512 1024]

1. Anchor. With all of a terminal set ``S`` demanded (one colour, demand = |S|), FML's plan is a Steiner
   tree on ``S`` plus the root: the task ``networkx.algorithms.approximation.steiner_tree`` solves
   (Kou / Mehlhorn, 2-approximations). Reported: cost and wall-time ratios of ``fml_approx`` (5 trees)
   to each, on random geometric graphs (mean degree ~12) with |S| = 24.
2. DPs. On BA graphs (m = 3, two random colours, demand half of each class) and one FRT tree, the CPU
   time of the demand-capped exact DP, the bucketed DP (eps = 0.01, capped and uncapped) relative to the
   paper's uncapped exact DP.
"""

from __future__ import annotations

import argparse
import math
import time

import networkx as nx
import numpy as np
from networkx.algorithms.approximation import steiner_tree

from neurips25.fml import fml_approx, fml_approx_uncapped, fml_biapprox


def rgg(n: int, seed: int) -> nx.Graph:
    G = nx.random_geometric_graph(n, math.sqrt(12 / (math.pi * n)), seed=seed)
    return G.subgraph(max(nx.connected_components(G), key=len)).copy()


def anchor(sizes) -> None:
    print("anchor: fml_approx (5 trees) vs networkx steiner_tree on a terminal set of 24 nodes")
    for n in sizes:
        G = rgg(n, 0)
        rng = np.random.default_rng(0)
        nodes = list(G)
        S = [nodes[i] for i in rng.choice(len(nodes), 24, replace=False)]
        colors = {v: "s" if v in S else "o" for v in G}
        t0 = time.perf_counter()
        res = fml_approx(G, colors, S[0], {"s": len(S)}, n_trees=5, seed=0)
        t_fml = time.perf_counter() - t0
        out = [f"n={G.number_of_nodes():5d}: fml cost {res.cost:g} in {t_fml:.2f} s"]
        for method in ("kou", "mehlhorn"):
            t0 = time.perf_counter()
            T = steiner_tree(G, S, method=method)
            t_st = time.perf_counter() - t0
            out.append(f"{method}: cost {T.number_of_edges()} (fml/{method} cost {res.cost / T.number_of_edges():.2f}, "
                       f"time {t_fml / t_st:.1f}x)")
        print("  " + "; ".join(out))


def dps(sizes) -> None:
    print("DP CPU time relative to the paper's uncapped exact DP (same FRT tree, BA m=3, demand = half a class)")
    for n in sizes:
        G = nx.barabasi_albert_graph(n, 3, seed=0)
        rng = np.random.default_rng(0)
        colors = {v: ("b" if rng.random() < 0.5 else "r") for v in G}
        dem = {"b": 0.5, "r": 0.5}
        ref = fml_approx_uncapped(G, colors, 0, dem, seed=0).info["dp_cpu_s"]
        capped = fml_approx(G, colors, 0, dem, n_trees=1, seed=0).info["dp_cpu_s"]
        bi_u = fml_biapprox(G, colors, 0, dem, eps=0.01, seed=0, cap="class")
        bi_c = fml_biapprox(G, colors, 0, dem, eps=0.01, seed=0).info["dp_cpu_s"]
        cov = min(bi_u.coverage[c] / d for c, d in bi_u.demand.items())
        print(f"  n={n:5d}: uncapped exact {ref:.2f} s; capped exact {capped / ref:.2f}; bucketed uncapped "
              f"{bi_u.info['dp_cpu_s'] / ref:.2f} (coverage {cov:.3f} of demand); bucketed capped {bi_c / ref:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[256, 512, 1024])
    ap.add_argument("--bi-sizes", type=int, nargs="+", default=[512, 1024])
    args = ap.parse_args()
    anchor(args.sizes)
    dps(args.bi_sizes)


if __name__ == "__main__":
    main()
