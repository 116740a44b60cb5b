"""Random small matroid instances (all five families) for the exact checks, and brute force.

Everything is generated; no data file is needed.
"""

from __future__ import annotations

import networkx as nx
import numpy as np

from neurips25.fair_matroid.matroids import (
    DirectSum,
    GraphicMatroid,
    PartitionMatroid,
    TransversalMatroid,
    UniformMatroid,
)

FAMILIES = ("uniform", "partition", "graphic", "transversal", "direct_sum")


def random_matroid(rng: np.random.Generator, n: int, family: str | None = None):
    """A random matroid with about ``n`` elements from one of :data:`FAMILIES`."""
    family = family or FAMILIES[rng.integers(len(FAMILIES))]
    if family == "uniform":
        return UniformMatroid(n, int(rng.integers(1, n + 1)))
    if family == "partition":
        k = int(rng.integers(1, min(n, 4) + 1))
        cut = np.sort(rng.choice(np.arange(1, n), size=k - 1, replace=False)) if k > 1 else []
        blocks = np.split(np.arange(n), cut)
        return PartitionMatroid([b.tolist() for b in blocks], [int(rng.integers(1, len(b) + 1)) for b in blocks])
    if family == "graphic":
        G = nx.gnm_random_graph(max(3, int(rng.integers(3, n + 1))), n, seed=int(rng.integers(2**31)))
        if G.number_of_edges() < 2:
            return UniformMatroid(n, 1)
        return GraphicMatroid(G)
    if family == "transversal":
        m = int(rng.integers(1, n + 1))
        B = nx.Graph()
        B.add_nodes_from(range(n))
        for a in range(n):
            for r in range(m):
                if rng.random() < 0.35:
                    B.add_edge(a, ("r", r))
        return TransversalMatroid(B, range(n))
    if family == "direct_sum":
        k = max(2, n // 2)
        return DirectSum([random_matroid(rng, k, "uniform"), random_matroid(rng, n - k, "partition")
                          if n - k >= 2 else UniformMatroid(n - k, 1)])
    raise ValueError(f"family must be one of {FAMILIES}; got {family!r}")


def random_groups(rng: np.random.Generator, ground, C: int) -> list[set]:
    """A uniformly random partition of ``ground`` into ``C`` non-empty groups."""
    els = list(ground)
    rng.shuffle(els)
    label = np.concatenate([np.arange(C), rng.integers(0, C, size=len(els) - C)])
    return [{e for e, k in zip(els, label) if k == c} for c in range(C)]


def random_instance(rng: np.random.Generator, n_max: int = 12, C_choices=(2, 3, 4)):
    """``(matroid, groups)`` with ``4 <= n <= n_max`` elements and ``C`` in ``C_choices``."""
    C = int(rng.choice(C_choices))
    n = int(rng.integers(max(4, C), n_max + 1))
    M = random_matroid(rng, n)
    if len(M.ground_set) < C:
        M = UniformMatroid(n, 2)
    return M, random_groups(rng, M.ground_set, C)


def independent_count_vectors(M, groups) -> np.ndarray:
    """Distinct group-count vectors of ALL independent sets, by depth-first extension."""
    label = {e: c for c, g in enumerate(groups) for e in g}
    els = sorted(M.ground_set, key=repr)
    C = len(groups)
    seen = set()

    def extend(start: int, current: list, counts: tuple):
        seen.add(counts)
        for i in range(start, len(els)):
            cand = current + [els[i]]
            if M.is_independent(cand):
                c = label[els[i]]
                extend(i + 1, cand, counts[:c] + (counts[c] + 1,) + counts[c + 1:])

    extend(0, [], (0,) * C)
    return np.array(sorted(seen), dtype=float)


def brute_force_pof(M, groups) -> float:
    """PoF from the convex hull of independent sets' count vectors (an LP), never using ``f(S)``.

    ``lambda = max { l : l * u <= sum_v w_v v, sum w = 1, w >= 0 }`` over count vectors ``v`` of
    independent sets (lotteries over allocations), ``u_c`` = the largest count of group ``c``.
    """
    from scipy.optimize import linprog

    V = independent_count_vectors(M, groups)
    u = V.max(axis=0)
    rN = V.sum(axis=1).max()
    if u.sum() == 0:
        return 1.0
    m, C = V.shape
    # variables: w_1..w_m, l ; maximise l
    c = np.zeros(m + 1)
    c[-1] = -1.0
    A_ub = np.hstack([-V.T, u[:, None]])  # l u_c - sum_v w_v v_c <= 0
    A_eq = np.hstack([np.ones((1, m)), np.zeros((1, 1))])
    res = linprog(c, A_ub=A_ub, b_ub=np.zeros(C), A_eq=A_eq, b_eq=[1.0],
                  bounds=[(0, None)] * m + [(0, None)], method="highs")
    if not res.success:
        raise RuntimeError(f"LP failed: {res.message}")
    lam = res.x[-1]
    return float(rN / (lam * u.sum()))
