r"""A fair lottery: random allocations whose expected group counts are exactly ``lambda* u``.

The price of fairness of :func:`~neurips25.fair_matroid.price_of_fairness` is attained by a point
``y = lambda* u`` of the polymatroid ``P = {x >= 0 : x(S) <= f(S)}``, generally not an integer one:
no single allocation attains it, a lottery over allocations does. The vertices of ``P`` are the
greedy vectors: for an ordering ``sigma_1, .., sigma_k`` of some groups,

.. math:: v_{\sigma_i} = f(\{\sigma_1..\sigma_i\}) - f(\{\sigma_1..\sigma_{i-1}\}),\ 0 \text{ elsewhere},

the counts of the allocation that serves group ``sigma_1`` as much as possible, then ``sigma_2``, and
so on (Edmonds' greedy algorithm). A linear programme mixes them so that ``sum_j w_j v_j = y``; its
columns are generated on demand, since the most valuable vertex for dual prices ``pi`` is again the
greedy one (groups with ``pi_c > 0`` in decreasing order of ``pi_c``), so ``C!`` orderings are never
enumerated. The lottery has at most ``C + 1`` allocations (a basic solution).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from neurips25.fair_matroid.groups import resolve_groups
from neurips25.fair_matroid.pof import _scale_from_f, group_rank_function, realise_counts


@dataclass
class FairLottery:
    """A lottery over independent sets, fair in expectation (see :func:`fair_lottery`).

    Attributes
    ----------
    groups : list of frozenset
        The groups, in the order every per-group array uses.
    labels : list or None
        The group labels when the groups were given by labels (dict, label array, attribute name).
    allocations : list of frozenset
        The independent sets the lottery draws from.
    orders : list of tuple
        The greedy order of groups that produced each allocation.
    weights : ndarray, shape (m,)
        Their probabilities (non-negative, summing to 1).
    counts : ndarray, shape (m, C)
        ``counts[j, c] = |allocations[j] cap groups[c]|``.
    lam : Fraction
        ``lambda*``, the common share every group receives in expectation.
    target : ndarray, shape (C,)
        ``lambda* u``, the fair expected counts.
    rank : int
        ``r(N)``, the size of a largest allocation.
    """

    groups: list
    labels: list | None
    allocations: list
    orders: list
    weights: np.ndarray
    counts: np.ndarray
    lam: Fraction
    target: np.ndarray
    rank: int
    entitlements: np.ndarray = field(repr=False)

    @property
    def expected_counts(self) -> np.ndarray:
        """``E |A cap N_c|`` under the lottery; equals :attr:`target`."""
        return self.weights @ self.counts

    @property
    def max_count_error(self) -> float:
        return float(np.max(np.abs(self.expected_counts - self.target)))

    @property
    def expected_size(self) -> float:
        return float(self.weights @ self.counts.sum(axis=1))

    @property
    def pof(self) -> float:
        """``r(N) / E|A|``: the price of fairness the lottery attains (= :func:`price_of_fairness`)."""
        return 1.0 if self.rank == 0 else float(self.rank / self.expected_size)

    @property
    def integral_pof(self) -> float:
        """``r(N) / sum_c floor(lambda* u_c)``: the price if one integral allocation must be fair."""
        floor_total = sum(math.floor(self.lam * int(u)) for u in self.entitlements)
        if self.rank == 0:
            return 1.0
        return math.inf if floor_total == 0 else self.rank / floor_total

    def sample(self, seed=None) -> frozenset:
        """Draw one allocation (``seed``: an int or a numpy Generator)."""
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        return self.allocations[int(rng.choice(len(self.weights), p=self.weights))]


def _vertex(f, order, C) -> np.ndarray:
    v = np.zeros(C)
    prefix: frozenset = frozenset()
    for c in order:
        nxt = prefix | {c}
        v[c] = f[nxt] - f[prefix]
        prefix = nxt
    return v


def _greedy_allocation(M, parts, order) -> frozenset:
    """Serve the groups in ``order``, each as much as possible (counts = the greedy vertex)."""
    from neurips25.fair_matroid.matroids import TransversalMatroid

    if isinstance(M, TransversalMatroid):  # one max-flow instead of |N| matchings
        f_counts = []
        prefix: set = set()
        r_prev = 0
        for c in order:
            prefix |= parts[c]
            r = M.rank(prefix)
            f_counts.append((c, r - r_prev))
            r_prev = r
        target = [0] * len(parts)
        for c, x in f_counts:
            target[c] = x
        return frozenset(realise_counts(M, parts, target))
    A: set = set()
    for c in order:
        for e in sorted(parts[c], key=repr):
            if M.is_independent(A | {e}):
                A.add(e)
    return frozenset(A)


def fair_lottery(M, groups, tol: float = 1e-12, max_iter: int = 500) -> FairLottery:
    """A lottery over allocations whose expected group counts are ``lambda* u`` (to ~1e-12).

    Parameters
    ----------
    M : Matroid
        Any object with ``ground_set`` and ``rank(X)``.
    groups
        Any encoding accepted by :func:`~neurips25.fair_matroid.groups.resolve_groups`.
    tol : float
        Column generation stops when no vertex improves the LP by more than ``tol``.
    max_iter : int
        At most this many generated columns.

    Returns
    -------
    FairLottery

    Examples
    --------
    >>> from neurips25.fair_matroid import fair_lottery, worst_case_instance
    >>> L = fair_lottery(*worst_case_instance(4, 10))
    >>> round(L.pof, 4), L.integral_pof, L.max_count_error < 1e-9
    (2.5385, 3.6666666666666665, True)
    """
    from scipy.optimize import linprog

    if not (isinstance(tol, float) and 0 < tol < 1e-3):
        raise ValueError(f"tol must be a float in (0, 1e-3); got {tol!r}")
    if isinstance(max_iter, bool) or not isinstance(max_iter, int) or max_iter < 1:
        raise ValueError(f"max_iter must be a positive int; got {max_iter!r}")
    parts, labels = resolve_groups(M, groups)
    C = len(parts)
    f = group_rank_function(M, parts)
    lam, _ = _scale_from_f(f, C)
    u = np.array([f[frozenset({c})] for c in range(C)], dtype=int)
    y = np.array([float(lam * int(x)) for x in u])
    # start: the empty allocation, each group alone, and one full greedy order by entitlement
    orders: list[tuple] = [()] + [(c,) for c in range(C)] + [tuple(np.argsort(-u, kind="stable").tolist())]
    V = [_vertex(f, o, C) for o in orders]
    for _ in range(max_iter):
        m = len(V)
        Vm = np.array(V).T  # (C, m)
        A_eq = np.vstack([np.hstack([Vm, np.eye(C), -np.eye(C)]),
                          np.hstack([np.ones((1, m)), np.zeros((1, 2 * C))])])
        b_eq = np.concatenate([y, [1.0]])
        cost = np.concatenate([np.zeros(m), np.ones(2 * C)])
        res = linprog(cost, A_eq=A_eq, b_eq=b_eq, bounds=(0, None), method="highs")
        if not res.success:
            raise RuntimeError(f"fair_lottery: the LP failed ({res.message})")
        pi, mu = res.eqlin.marginals[:C], res.eqlin.marginals[C]
        # pricing by the greedy algorithm: groups with positive price, most valuable first
        pos = [c for c in np.argsort(-pi, kind="stable").tolist() if pi[c] > 0]
        v = _vertex(f, pos, C)
        if pi @ v + mu <= tol or tuple(pos) in orders:
            break
        orders.append(tuple(pos))
        V.append(v)
    w = res.x[: len(V)]
    keep = np.flatnonzero(w > 1e-13)
    Vk = np.array(V)[keep]  # (k, C)
    # polish the support's weights: [V^T; 1] w = [y; 1] has a unique solution on a basic support
    sol, *_ = np.linalg.lstsq(np.vstack([Vk.T, np.ones((1, len(keep)))]), np.concatenate([y, [1.0]]), rcond=None)
    if np.all(sol >= -1e-12):
        w_k = np.clip(sol, 0, None)
    else:
        w_k = np.clip(w[keep], 0, None)
    w_k = w_k / w_k.sum()
    allocs, counts, ords = [], [], []
    for j in keep:
        A = _greedy_allocation(M, parts, orders[j])
        allocs.append(A)
        counts.append([len(A & p) for p in parts])
        ords.append(orders[j])
    counts = np.array(counts, dtype=int)
    if not np.array_equal(counts, Vk.astype(int)):  # would contradict the greedy characterization
        raise RuntimeError(f"greedy allocations have counts {counts.tolist()}, expected {Vk.astype(int).tolist()}")
    return FairLottery(groups=parts, labels=labels, allocations=allocs, orders=ords, weights=w_k,
                       counts=counts, lam=lam, target=y, rank=f[frozenset(range(C))], entitlements=u)
