r"""The price of opportunity fairness through the polymatroid of group counts.

Agents ``N`` are split into groups ``N_1..N_C``; a matroid with rank ``r`` says which sets can be
served together. The *group rank function* :math:`f(S) = r(\bigcup_{c\in S} N_c)` for
:math:`S \subseteq [C]` is normalised, monotone and submodular, so

.. math:: P = \{x \ge 0 : \textstyle\sum_{c\in S} x_c \le f(S)\ \forall S\}

is a polymatroid whose integer points are the group-count vectors of independent sets (our reading of
the paper's characterization; reconstructed, see docs/fair_matroid.md). Group ``c``'s entitlement is
what it could get alone, :math:`u_c = f(\{c\}) = r(N_c)`; an allocation is opportunity-fair when
``x = lambda * u``. Then

.. math::

    \lambda^* = \min_{S \ne \emptyset} \frac{f(S)}{u(S)}, \qquad
    \mathrm{PoF} = \frac{f([C])}{\lambda^* u([C])} = \max_S \frac{f([C])\,u(S)}{f(S)\,u([C])},

computed from :math:`2^C - 1` rank evaluations. Groups with ``u_c = 0`` take no part in the ratio.
"""

from __future__ import annotations

import itertools
import math
import numbers
from fractions import Fraction

import numpy as np

from neurips25.fair_matroid.groups import MAX_GROUPS, check_groups  # noqa: F401  (re-exported)


def _rank_value(M, X, where) -> int:
    v = M.rank(X)
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v) or v != int(v):
        raise ValueError(f"the rank oracle must return a finite integer; got {v!r} on groups {where}")
    return int(v)


def group_rank_function(M, groups, check_axioms: bool = True) -> dict[frozenset, int]:
    """``f(S) = r(union of groups in S)`` for every subset ``S`` of group indices.

    Exactly ``2^C - 1`` rank-oracle calls (``f(empty) = 0`` needs none). With ``check_axioms`` the
    values are checked against what any matroid must satisfy on these sets (monotone, bounded by the
    set size, submodular across single-group additions when ``C <= 10``).
    """
    parts = check_groups(M, groups)
    C = len(parts)
    f: dict[frozenset, int] = {frozenset(): 0}
    for k in range(1, C + 1):
        for S in itertools.combinations(range(C), k):
            union = frozenset().union(*(parts[c] for c in S))
            f[frozenset(S)] = _rank_value(M, union, list(S))
    if check_axioms:
        _check_axioms(f, parts)
    return f


def _check_axioms(f, parts) -> None:
    C = len(parts)
    for S, v in f.items():
        size = sum(len(parts[c]) for c in S)
        if not 0 <= v <= size:
            raise ValueError(f"rank oracle violates 0 <= r(X) <= |X| on groups {sorted(S)}: r = {v}, |X| = {size}")
        for c in range(C):
            if c not in S and f[S | {c}] < v:
                raise ValueError(f"rank oracle is not monotone: r(groups {sorted(S)}) = {v} > "
                                 f"r(groups {sorted(S | {c})}) = {f[S | {c}]}")
    if C <= 10:
        for S in f:
            rest = [c for c in range(C) if c not in S]
            for a, b in itertools.combinations(rest, 2):
                if f[S | {a}] + f[S | {b}] < f[S | {a, b}] + f[S]:
                    raise ValueError(f"rank oracle is not submodular on groups {sorted(S)} + {a}, {b}")


def opportunity_entitlements(M, groups) -> np.ndarray:
    """``u_c = r(N_c)``: what each group could get if it were alone."""
    parts = check_groups(M, groups)
    return np.array([M.rank(p) for p in parts], dtype=int)


def _scale_from_f(f, C) -> tuple[Fraction, tuple[int, ...]]:
    u = [f[frozenset({c})] for c in range(C)]
    active = [c for c in range(C) if u[c] > 0]
    best, arg = Fraction(1), tuple(active)
    for k in range(1, len(active) + 1):
        for S in itertools.combinations(active, k):
            val = Fraction(f[frozenset(S)], sum(u[c] for c in S))
            if val < best or (val == best and len(S) < len(arg)):
                best, arg = val, S
    return best, arg


def max_fair_scale(M, groups) -> tuple[Fraction, tuple[int, ...]]:
    """``lambda* = min_S f(S) / u(S)`` (exact, a Fraction) and the minimising set of groups.

    Examples
    --------
    >>> from neurips25.fair_matroid.matroids import UniformMatroid
    >>> max_fair_scale(UniformMatroid(4, 1), [{0, 1}, {2}, {3}])[0]
    Fraction(1, 3)
    """
    f = group_rank_function(M, groups)
    return _scale_from_f(f, len(check_groups(M, groups)))


def price_of_fairness(M, groups, return_certificate: bool = False):
    """The price of opportunity fairness ``r(N) / (lambda* u([C]))``.

    Parameters
    ----------
    M : Matroid
        Any object with ``ground_set`` and ``rank(X)``.
    groups
        A partition of ``M.ground_set`` into at most 20 non-empty groups: a sequence of sets, a dict
        ``element -> label``, a label array in the order of ``M.elements``, or a node/edge attribute name
        (see :func:`~neurips25.fair_matroid.groups.resolve_groups`; with labels, group ``c`` is the
        ``c``-th label in sorted order).
    return_certificate : bool
        Also return the set of groups ``S`` attaining the maximum (the bottleneck groups, as indices).

    Returns
    -------
    float, or (float, tuple) with the certificate.

    Examples
    --------
    >>> from neurips25.fair_matroid.matroids import DirectSum, UniformMatroid
    >>> M = DirectSum([UniformMatroid(2, 1), UniformMatroid(3, 3)])   # 2 agents share one slot
    >>> groups = [{(0, 0)}, {(0, 1)}, {(1, 0), (1, 1), (1, 2)}]
    >>> round(price_of_fairness(M, groups), 6)                       # (1+K)(C-1)/(C-1+K), K=3, C=3
    1.6
    """
    parts = check_groups(M, groups)
    f = group_rank_function(M, parts)
    C = len(parts)
    lam, S = _scale_from_f(f, C)
    total_u = sum(f[frozenset({c})] for c in range(C))
    full = f[frozenset(range(C))]
    pof = 1.0 if total_u == 0 else float(Fraction(full) / (lam * total_u))
    return (pof, S) if return_certificate else pof


def integral_fair_allocation(M, groups) -> set:
    """An independent set with ``floor(lambda* u_c)`` agents of each group ``c`` (rounded down).

    Not the allocation that attains :func:`price_of_fairness`: the fractional optimum ``lambda* u``
    is attained only in expectation, by the lottery of :func:`~neurips25.fair_matroid.fair_lottery`.
    Rounding down can leave small groups with nothing (e.g. ``worst_case_instance(4, 10)`` gives counts
    ``[0, 0, 0, 3]``); the integral price ``r(N) / sum_c floor(lambda* u_c)`` is reported by
    :func:`integral_price_of_fairness`.

    ``floor(lambda* u)`` lies in the polymatroid, so such a set exists; it is found by matroid
    intersection with the partition matroid ``{|I cap N_c| <= floor(lambda* u_c)}`` (max-flow for a
    :class:`TransversalMatroid`). Every group's count is within 1 of ``lambda* u_c``.
    """
    parts = check_groups(M, groups)
    f = group_rank_function(M, parts)
    lam, _ = _scale_from_f(f, len(parts))
    target = [math.floor(lam * f[frozenset({c})]) for c in range(len(parts))]
    return realise_counts(M, parts, target)


#: the v1 name of :func:`integral_fair_allocation` (it is neither maximum nor exactly fair)
max_fair_allocation = integral_fair_allocation


def integral_price_of_fairness(M, groups) -> float:
    """``r(N) / sum_c floor(lambda* u_c)``: the price when the fair allocation must be one integral set.

    ``inf`` when rounding down leaves nothing to allocate. Always >= :func:`price_of_fairness`.
    """
    parts = check_groups(M, groups)
    f = group_rank_function(M, parts)
    C = len(parts)
    lam, _ = _scale_from_f(f, C)
    floor_total = sum(math.floor(lam * f[frozenset({c})]) for c in range(C))
    full = f[frozenset(range(C))]
    if full == 0:
        return 1.0
    return math.inf if floor_total == 0 else full / floor_total


def realise_counts(M, parts, target) -> set:
    """An independent set with exactly ``target[c]`` elements of group ``c`` (``target`` integral, in P)."""
    from neurips25.fair_matroid.intersection import matroid_intersection
    from neurips25.fair_matroid.matroids import PartitionMatroid, TransversalMatroid

    target = [int(x) for x in target]
    if isinstance(M, TransversalMatroid):
        alloc = _transversal_flow(M, parts, target)
    else:
        alloc = matroid_intersection(M, PartitionMatroid(parts, target))
    got = [len(alloc & p) for p in parts]
    if got != target:  # would contradict the polymatroid characterization
        raise RuntimeError(f"could not realise the counts {target}; got {got}")
    return alloc


def _transversal_flow(M, parts, target) -> set:
    """source -> group (cap x_c) -> agent (cap 1) -> resource (cap 1) -> sink, by networkx max-flow."""
    import networkx as nx

    G = nx.DiGraph()
    for c, (p, x) in enumerate(zip(parts, target)):
        G.add_edge("_s", ("_g", c), capacity=x)
        for a in p:
            G.add_edge(("_g", c), ("_a", a), capacity=1)
            for v in M.B.neighbors(a):
                G.add_edge(("_a", a), ("_r", v), capacity=1)
    for v in M.resources:
        G.add_edge(("_r", v), "_t", capacity=1)
    if "_t" not in G:
        return set()
    _, flow = nx.maximum_flow(G, "_s", "_t")
    return {a for c, p in enumerate(parts) for a in p
            if flow.get(("_g", c), {}).get(("_a", a), 0) > 0}
