"""Matroid intersection with independence oracles (Edmonds; Lawler's augmenting-path form).

A largest set independent in two matroids at once. Here it realises prescribed group counts: the
intersection of the allocation matroid with the partition matroid ``{|I cap N_c| <= x_c}``.

Each augmentation builds the exchange graph of the current common independent set ``I``:
``y -> x`` when ``I - y + x`` is independent in ``M1``, ``x -> y`` when it is independent in ``M2``,
sources ``X1 = {x : I + x in I(M1)}``, sinks ``X2 = {x : I + x in I(M2)}``, and flips a shortest
source-sink path (breadth-first search), which keeps ``I`` independent in both.
"""

from __future__ import annotations

from collections import deque


def matroid_intersection(M1, M2, initial=None) -> set:
    """A maximum common independent set of two matroids on the same ground set.

    Parameters
    ----------
    M1, M2 : Matroid
        Objects with ``ground_set`` and ``is_independent(X)`` (or ``rank``).
    initial : set, optional
        A common independent set to start from (e.g. a greedy one).

    Returns
    -------
    set

    Examples
    --------
    >>> from neurips25.fair_matroid.matroids import PartitionMatroid
    >>> A = PartitionMatroid([[0, 1], [2, 3]], [1, 1])
    >>> B = PartitionMatroid([[0, 2], [1, 3]], [1, 1])
    >>> len(matroid_intersection(A, B))
    2
    """
    if frozenset(M1.ground_set) != frozenset(M2.ground_set):
        raise ValueError("M1 and M2 must have the same ground set")
    ind1 = getattr(M1, "is_independent", None) or (lambda X: M1.rank(X) == len(set(X)))
    ind2 = getattr(M2, "is_independent", None) or (lambda X: M2.rank(X) == len(set(X)))
    I = set(initial or ())
    if not (ind1(I) and ind2(I)):
        raise ValueError("initial must be independent in both matroids")
    ground = list(M1.ground_set)
    # greedy start: cheap and often most of the answer
    for x in ground:
        if x not in I and ind1(I | {x}) and ind2(I | {x}):
            I.add(x)
    while True:
        out = [x for x in ground if x not in I]
        if not out:
            return I
        X1 = {x for x in out if ind1(I | {x})}
        X2 = {x for x in out if ind2(I | {x})}
        common = X1 & X2
        if common:
            I.add(next(iter(common)))
            continue
        if not X1 or not X2:
            return I
        path = _shortest_path(I, out, X1, X2, ind1, ind2)
        if path is None:
            return I
        for v in path:
            if v in I:
                I.remove(v)
            else:
                I.add(v)


def _shortest_path(I, out, X1, X2, ind1, ind2):
    """BFS from X1 to X2 in the exchange graph, edges computed lazily."""
    inside = list(I)
    parent = {x: None for x in X1}
    queue = deque(X1)
    while queue:
        v = queue.popleft()
        if v in X2:
            path = []
            while v is not None:
                path.append(v)
                v = parent[v]
            return path[::-1]
        if v in I:  # y in I -> x outside: I - y + x independent in M1
            for x in out:
                if x not in parent and ind1((I - {v}) | {x}):
                    parent[x] = v
                    queue.append(x)
        else:  # x outside -> y in I: I - y + x independent in M2
            for y in inside:
                if y not in parent and ind2((I - {y}) | {v}):
                    parent[y] = v
                    queue.append(y)
    return None
