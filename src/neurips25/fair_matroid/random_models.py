r"""Random colourings and the PoF bound they imply; instance generators.

Random colouring (Section on random groups of the paper; the statement here is reconstructed, the
full text was not available): every agent joins group ``c`` independently with probability ``p_c``.
Then ``N_S`` is a ``p_S``-random subset of ``N`` and ``r(N_S) / r(N)`` concentrates on ``g(p_S)``,
``g(q) = E r(q-random subset) / r(N)``, which is concave, non-decreasing, ``g(0) = 0``, ``g(1) = 1``
(the multilinear extension of a submodular rank along the diagonal). So the PoF tends to

.. math:: L_g(p) = \max_S rac{\sum_{c\in S} g(p_c)}{g(p_S) \sum_c g(p_c)}   \qquad (	ext{large-market limit})

The bound as a function of the largest group's share is the worst case over all matroids,
``B(p_max, C) = sup_g sup_{p : max p = p_max} L_g(p)``. Every such ``g`` is a mixture of
``min(1, q / theta)`` (uniform matroids of rank ``theta n``, mixed by direct sums); the supremum is
attained by ``g(q) = beta + (1 - beta) q`` (a congested part of vanishing rank that any positive
share saturates, plus a free part), with ``S`` = all groups but the largest. With ``k = C - 1`` and
``q = 1 - p_max``:

.. math::

    B(p_{max}, C) = \max_{eta\in[0,1]} rac{q + eta (k - q)}{(q + eta(1-q))(1 + keta)},
    \qquad k(1-q)(k-q)eta^2 + 2kq(1-q)eta - q(k - 1 - kq) = 0 	ext{ at the optimum},

so ``B = 1`` exactly when ``p_max <= 1 / (C - 1)``: no loss without a dominant group, including the
window ``(1/C, 1/(C-1)]`` where the largest group is already the largest. ``B`` increases in
``p_max`` and tends to ``C - 1`` as ``p_max -> 1`` (the worst case). The extremal form of ``g`` is our
derivation, checked by search over mixtures (docs/fair_matroid.md); the paper's constants may differ.
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Callable, Sequence

import numpy as np

from neurips25.fair_matroid.matroids import DirectSum, TransversalMatroid, UniformMatroid


def _check_probs(probs) -> np.ndarray:
    p = np.asarray(probs, dtype=float)
    if p.ndim != 1 or p.size < 1 or np.any(p < 0) or not np.isclose(p.sum(), 1.0):
        raise ValueError(f"probs must be a 1-D vector of non-negative probabilities summing to 1; got {probs!r}")
    return p


def random_coloring(agents: Sequence, probs, seed=None, *, empty: str = "raise") -> list[set]:
    """Colour each agent independently with group ``c`` w.p. ``probs[c]``; ``groups[c]`` has colour ``c``.

    Parameters
    ----------
    agents : sequence
        The elements to colour (e.g. ``M.elements``).
    probs : sequence of float
        Colour probabilities, non-negative, summing to 1.
    seed : int or numpy Generator, optional
    empty : {"raise", "keep"}
        What to do when a colour gets no agent: raise a ValueError (default), or keep the empty set at
        its index so that group ``c`` is still colour ``c`` (drop it yourself before computing a PoF;
        an empty group has entitlement 0 and does not change the PoF).
    """
    p = _check_probs(probs)
    if empty not in ("raise", "keep"):
        raise ValueError(f"empty must be 'raise' or 'keep'; got {empty!r}")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    agents = list(agents)
    colour = rng.choice(p.size, size=len(agents), p=p)
    groups = [{a for a, k in zip(agents, colour) if k == c} for c in range(p.size)]
    missing = [c for c, g in enumerate(groups) if not g]
    if missing and empty == "raise":
        raise ValueError(f"colour(s) {missing} got no agent among {len(agents)}; use more agents, or "
                         f"empty='keep' to keep colour ids with empty groups")
    return groups


def pof_bound_random_coloring(p_max: float, C: int, return_beta: bool = False):
    """``B(p_max, C)``: the large-market PoF bound under random colouring, for any matroid.

    ``B = 1`` for ``p_max <= 1/(C-1)``, increasing beyond, ``-> C - 1`` as ``p_max -> 1`` (the module
    docstring derives it; reconstructed). ``return_beta`` also returns the extremal matroid's congested
    rank share ``beta`` (0 when ``B = 1``), which :func:`extremal_coloring_instance` builds.

    Examples
    --------
    >>> pof_bound_random_coloring(0.5, 3), pof_bound_random_coloring(1/3, 4)
    (1.0, 1.0)
    >>> round(pof_bound_random_coloring(0.9, 4), 4)
    1.5839
    """
    if isinstance(C, bool) or not isinstance(C, numbers.Integral) or C < 2:
        raise ValueError(f"C must be an integer >= 2; got {C!r}")
    if not isinstance(p_max, numbers.Real) or not (1 / C - 1e-6 <= p_max <= 1):
        raise ValueError(f"p_max must be a share in [1/C, 1] (the largest of C shares); got {p_max!r}")
    k, q = int(C) - 1, 1.0 - float(p_max)
    if q <= 0:
        return (float(k), 1.0) if return_beta else float(k)  # the limit beta -> 0 gives k
    disc = (k * q * (1 - q)) ** 2 + k * (1 - q) * (k - q) * q * (k - 1 - k * q)
    if k - 1 - k * q <= 0:
        beta = 0.0
    else:
        beta = (-k * q * (1 - q) + math.sqrt(disc)) / (k * (1 - q) * (k - q))
        beta = min(max(beta, 0.0), 1.0)
    value = (q + beta * (k - q)) / ((q + beta * (1 - q)) * (1 + k * beta))
    value = max(1.0, float(value))
    return (value, beta) if return_beta else value


def extremal_coloring_instance(n: int, beta: float, congested_capacity: float = 0.01):
    """The matroid that attains :func:`pof_bound_random_coloring` as ``n`` grows.

    ``U(n_A, k_A)`` (a congested part: ``k_A = congested_capacity * n_A`` slots, saturated by any
    positive share of its agents) plus a free part ``U(n_F, n_F)`` holding the share ``1 - beta`` of
    the rank: ``n_F = k_A (1 - beta) / beta``, ``n_A = n - n_F``.
    """
    n = _positive_int(n, "n")
    if not 0 < beta < 1:
        raise ValueError(f"beta must lie in (0, 1); got {beta!r}")
    if not 0 < congested_capacity < 1:
        raise ValueError(f"congested_capacity must lie in (0, 1); got {congested_capacity!r}")
    # n_A + n_F = n with n_F = c n_A (1 - beta) / beta
    ratio = congested_capacity * (1 - beta) / beta
    n_a = int(round(n / (1 + ratio)))
    k_a = max(1, int(round(congested_capacity * n_a)))
    n_f = max(1, n - n_a)
    return DirectSum([UniformMatroid(n_a, k_a), UniformMatroid(n_f, n_f)])


def hub_market(n: int, hub_share: float = 0.8, hub_capacity: float = 0.03, seed=None) -> TransversalMatroid:
    """A congested bipartite market that is not a direct sum.

    ``hub_share * n`` agents each know 2 random resources of a small hub (``hub_capacity`` resources per
    hub agent); every other agent has a private resource and also knows one random hub resource.
    """
    import networkx as nx

    n = _positive_int(n, "n")
    if not (0 < hub_share < 1 and 0 < hub_capacity <= 1):
        raise ValueError("hub_share must lie in (0, 1) and hub_capacity in (0, 1]")
    rng = np.random.default_rng(seed)
    n_hub = int(round(hub_share * n))
    n_res = max(1, int(round(hub_capacity * n_hub)))
    B = nx.Graph()
    B.add_nodes_from(range(n))
    for a in range(n_hub):
        for r in rng.choice(n_res, size=min(2, n_res), replace=False):
            B.add_edge(a, ("hub", int(r)))
    for a in range(n_hub, n):
        B.add_edge(a, ("own", a))
        B.add_edge(a, ("hub", int(rng.integers(n_res))))
    return TransversalMatroid(B, range(n))


def bottleneck_graphic(n_edges: int, hub_share: float = 0.8, hub_vertices: float = 0.01, seed=None):
    """A congested graphic matroid with a bottleneck, in one 2-connected block (not a direct sum).

    ``hub_share * n_edges`` edges join random pairs of a small hub of ``hub_vertices * n_edges`` vertices
    (parallel edges allowed: a ``MultiGraph``); the other edges come in pairs, each pair a path
    ``h1 - leaf - h2`` through its own leaf vertex between two distinct hub vertices. The hub holds most
    agents but a small share of the rank (``h - 1`` of ``h - 1 + n_leaves``, about 0.09 at the defaults).
    Unlike :func:`congested_direct_sum` the congested part is not a separate summand: a group that does
    not connect the hub can use leaf paths to join hub components, so the rank of a union of groups is
    not the sum of a congested and a free part. At the defaults a small group nearly spans the hub, and
    random colourings lose welfare only when one group dominates (p_max near 0.9).

    Examples
    --------
    >>> M = bottleneck_graphic(200, seed=0)
    >>> len(M.elements), M.rank()
    (200, 21)
    """
    import networkx as nx

    from neurips25.fair_matroid.matroids import GraphicMatroid

    n_edges = _positive_int(n_edges, "n_edges")
    if not 0 < hub_share < 1:
        raise ValueError(f"hub_share must lie in (0, 1); got {hub_share!r}")
    if not 0 < hub_vertices < 1:
        raise ValueError(f"hub_vertices must lie in (0, 1); got {hub_vertices!r}")
    rng = np.random.default_rng(seed)
    h = max(2, int(round(hub_vertices * n_edges)))
    n_hub = int(round(hub_share * n_edges))
    G = nx.MultiGraph()
    G.add_nodes_from(("hub", i) for i in range(h))
    for _ in range(n_hub):
        a, b = rng.choice(h, size=2, replace=False)
        G.add_edge(("hub", int(a)), ("hub", int(b)))
    rest = n_edges - n_hub
    for leaf in range(rest // 2):
        a, b = rng.choice(h, size=2, replace=False)
        G.add_edge(("leaf", leaf), ("hub", int(a)))
        G.add_edge(("leaf", leaf), ("hub", int(b)))
    if rest % 2:  # one pendant edge keeps the element count at n_edges
        G.add_edge(("leaf", rest // 2), ("hub", int(rng.integers(h))))
    return GraphicMatroid(G)


def random_graphic(n_edges: int, mean_degree: float = 4.0, seed=None):
    """Graphic matroid of a random multigraph-free graph ``G(n_v, m)`` with ``m = n_edges`` edges and
    ``n_v = 2 m / mean_degree`` vertices."""
    import networkx as nx

    from neurips25.fair_matroid.matroids import GraphicMatroid

    n_edges = _positive_int(n_edges, "n_edges")
    if not mean_degree > 0:
        raise ValueError(f"mean_degree must be > 0; got {mean_degree!r}")
    n_v = max(2, int(round(2 * n_edges / mean_degree)))
    n_edges = min(n_edges, n_v * (n_v - 1) // 2)
    seed = int(np.random.default_rng(seed).integers(2**31))
    return GraphicMatroid(nx.gnm_random_graph(n_v, n_edges, seed=seed))


def _positive_int(value, name):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be a positive integer; got {value!r}")
    return int(value)


def worst_case_instance(C: int, K: int):
    """The tight family: ``C - 1`` one-agent groups share one slot, group ``C`` has ``K`` private slots.

    ``PoF = (1 + K)(C - 1) / (C - 1 + K)``, which tends to ``C - 1`` as ``K`` grows.
    Returns ``(matroid, groups)``.
    """
    if isinstance(C, bool) or not isinstance(C, numbers.Integral) or isinstance(K, bool) \
            or not isinstance(K, numbers.Integral) or C < 2 or K < 1:
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
    g1 = float(g(1.0))
    if not (math.isfinite(g1) and g1 > 0):
        raise ValueError(f"g must be positive at 1 (g(1) = E r(N) / r(N) = 1 for a normalised g); got g(1) = {g1!r}")
    gc = np.array([g(x) for x in p], dtype=float)
    if not np.all(np.isfinite(gc)) or np.any(gc < 0):
        raise ValueError(f"g must return finite non-negative values; got {gc.tolist()}")
    total = gc.sum() / g1
    best = 1.0
    for k in range(1, p.size + 1):
        for S in itertools.combinations(range(p.size), k):
            gs = g(float(p[list(S)].sum()))
            if gs > 0:
                best = max(best, gc[list(S)].sum() / (gs * total))
    return float(best)
