"""Instance generators: random colourings, the tight worst-case family, Erdos-Renyi markets,
congested direct sums, and the large-market limit of the PoF under random colouring.

The large-market limit is our reconstruction (the paper's random-colouring bound was not available):
with i.i.d. colours of probabilities ``p_c``, ``r(N_S) / r(N)`` concentrates on ``g(p_S)``, where
``g(p) = E r(p-random subset) / r(N)`` is concave, so the PoF tends to
``max_S sum_{c in S} g(p_c) / (g(p_S) * sum_c g(p_c))``. ``g`` is a parameter.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

import numpy as np

from neurips25.fair_matroid.matroids import DirectSum, TransversalMatroid, UniformMatroid


def _check_probs(probs) -> np.ndarray:
    p = np.asarray(probs, dtype=float)
    if p.ndim != 1 or p.size < 1 or np.any(p < 0) or not np.isclose(p.sum(), 1.0):
        raise ValueError(f"probs must be a 1-D vector of non-negative probabilities summing to 1; got {probs!r}")
    return p


def random_coloring(agents: Sequence, probs, seed=None) -> list[set]:
    """Colour each agent independently with group ``c`` w.p. ``probs[c]``; empty groups are dropped."""
    p = _check_probs(probs)
    rng = np.random.default_rng(seed)
    agents = list(agents)
    colour = rng.choice(p.size, size=len(agents), p=p)
    groups = [{a for a, k in zip(agents, colour) if k == c} for c in range(p.size)]
    return [g for g in groups if g]


def worst_case_instance(C: int, K: int):
    """The tight family: ``C - 1`` one-agent groups share one slot, group ``C`` has ``K`` private slots.

    ``PoF = (1 + K)(C - 1) / (C - 1 + K)``, which tends to ``C - 1`` as ``K`` grows.
    Returns ``(matroid, groups)``.
    """
    if C < 2 or K < 1:
        raise ValueError(f"need C >= 2 and K >= 1; got C={C}, K={K}")
    M = DirectSum([UniformMatroid(C - 1, 1), UniformMatroid(K, K)])
    groups = [{(0, i)} for i in range(C - 1)] + [{(1, j) for j in range(K)}]
    return M, groups


def worst_case_value(C: int, K: int) -> float:
    return (1 + K) * (C - 1) / (C - 1 + K)


def er_market(n_agents: int, n_resources: int, p: float, seed=None) -> TransversalMatroid:
    """Erdos-Renyi bipartite market: each agent-resource edge present w.p. ``p``."""
    import networkx as nx

    if not 0 <= p <= 1:
        raise ValueError(f"p must lie in [0, 1]; got {p}")
    B = nx.bipartite.random_graph(n_agents, n_resources, p, seed=seed)
    return TransversalMatroid(B, range(n_agents))


def congested_direct_sum(n: int, congested_share: float = 0.8, capacity_ratio: float = 0.03):
    """``U(n_A, k_A)`` (agents competing for few slots) plus a free part of ``n - n_A`` agents.

    ``n_A = round(congested_share * n)``, ``k_A = max(1, round(capacity_ratio * n_A))``.
    """
    if not (0 < congested_share < 1 and 0 < capacity_ratio <= 1):
        raise ValueError("congested_share must lie in (0, 1) and capacity_ratio in (0, 1]")
    n_a = int(round(congested_share * n))
    k_a = max(1, int(round(capacity_ratio * n_a)))
    return DirectSum([UniformMatroid(n_a, k_a), UniformMatroid(n - n_a, n - n_a)])


def congested_g(congested_share: float = 0.8, capacity_ratio: float = 0.03) -> Callable[[float], float]:
    """``g(p) = E r(p-subset) / r(N)`` for :func:`congested_direct_sum` in the large-market limit."""
    k = congested_share * capacity_ratio
    free = 1 - congested_share

    def g(p: float) -> float:
        return (min(p * congested_share, k) + p * free) / (k + free)

    return g


def large_market_limit(g: Callable[[float], float], probs) -> float:
    """``max_S sum_{c in S} g(p_c) / (g(p_S) * sum_c g(p_c) / g(1))``, the reconstructed limit PoF."""
    p = _check_probs(probs)
    gc = np.array([g(x) for x in p])
    total = gc.sum() / g(1.0)
    best = 1.0
    for k in range(1, p.size + 1):
        for S in itertools.combinations(range(p.size), k):
            gs = g(float(p[list(S)].sum()))
            if gs > 0:
                best = max(best, gc[list(S)].sum() / (gs * total))
    return float(best)
