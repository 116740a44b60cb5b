"""The groups ``N_1..N_C``: the encodings users have, turned into one checked partition.

A partition of the ground set can be given as

- a sequence of sets of elements, one per group (group ``c`` is ``groups[c]``);
- a mapping ``element -> label`` (what ``nx.get_node_attributes(B, "group")`` returns);
- a label array, one label per element in the order of ``M.elements`` (agents of a
  :class:`TransversalMatroid` in the order given, edges of a :class:`GraphicMatroid` as ``G.edges()``);
- the name of a node attribute (transversal matroids: the agents' nodes) or of an edge attribute
  (graphic matroids) of the matroid's networkx graph.

With labels, groups are ordered by sorted label and :func:`resolve_groups` returns the labels too,
so results indexed by group can be mapped back.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping

import numpy as np

MAX_GROUPS = 20


def _is_label(x) -> bool:
    return isinstance(x, (str, numbers.Number, np.generic)) and not isinstance(x, bool)


def _sorted_labels(labels):
    uniq = list(dict.fromkeys(labels))
    try:
        return sorted(uniq)
    except TypeError:  # mixed label types: keep first appearance
        return uniq


def _from_labels(pairs) -> tuple[list[set], list]:
    pairs = list(pairs)
    order = _sorted_labels([lab for _, lab in pairs])
    index = {lab: i for i, lab in enumerate(order)}
    parts: list[set] = [set() for _ in order]
    for e, lab in pairs:
        parts[index[lab]].add(e)
    return parts, order


def _attribute_pairs(M, name: str):
    if hasattr(M, "B") and hasattr(M, "agents"):  # transversal: node attribute of the agents
        missing = [a for a in M.agents if name not in M.B.nodes[a]]
        if missing:
            raise ValueError(f"groups={name!r}: {len(missing)} agent(s) lack node attribute {name!r}, "
                             f"e.g. {missing[:3]}")
        return [(a, M.B.nodes[a][name]) for a in M.agents]
    if hasattr(M, "G") and hasattr(M, "multigraph"):  # graphic: edge attribute
        edges = M.G.edges(keys=True, data=True) if M.multigraph else M.G.edges(data=True)
        pairs, missing = [], []
        for *e, data in edges:
            if name not in data:
                missing.append(tuple(e))
            else:
                pairs.append((tuple(e), data[name]))
        if missing:
            raise ValueError(f"groups={name!r}: {len(missing)} edge(s) lack edge attribute {name!r}, "
                             f"e.g. {missing[:3]}")
        return pairs
    raise TypeError(f"groups={name!r} names a graph attribute, but {type(M).__name__} has no networkx graph; "
                    f"pass a sequence of sets, a dict element -> label or a label array")


def resolve_groups(M, groups) -> tuple[list[frozenset], list | None]:
    """Turn any accepted encoding into ``(parts, labels)`` and check that it partitions the ground set.

    ``labels`` is None when ``groups`` was a sequence of sets (group ``c`` is then ``groups[c]``).

    Raises
    ------
    ValueError
        Empty, overlapping or missing groups, elements outside the ground set, a label array of the
        wrong length, more than :data:`MAX_GROUPS` groups.
    TypeError
        An encoding that is none of the above.
    """
    labels = None
    if isinstance(groups, str):
        parts, labels = _from_labels(_attribute_pairs(M, groups))
    elif isinstance(groups, Mapping):
        parts, labels = _from_labels(groups.items())
    else:
        if isinstance(groups, np.ndarray):
            if groups.ndim != 1:
                raise ValueError(f"a label array must be 1-D (one label per element); got shape {groups.shape}")
            groups = groups.tolist()
        try:
            seq = list(groups)
        except TypeError:
            raise TypeError(f"groups must be a sequence of sets, a dict element -> label, a label array or an "
                            f"attribute name; got {type(groups).__name__}") from None
        if seq and all(_is_label(x) for x in seq):
            els = M.elements if hasattr(M, "elements") else sorted(M.ground_set, key=repr)
            if len(seq) != len(els):
                raise ValueError(
                    f"groups looks like a label array (one label per element) of length {len(seq)}, but the "
                    f"matroid has {len(els)} elements; to pass groups as sets of elements write "
                    f"e.g. [{{...}}, {{...}}]")
            parts, labels = _from_labels(zip(els, seq))
        else:
            parts = []
            for i, g in enumerate(seq):
                if _is_label(g) or g is None:
                    raise TypeError(f"groups[{i}] must be a set of elements; got {g!r} (mix of labels and sets?)")
                parts.append(g)
    canon = getattr(M, "canonical", frozenset)
    parts = [canon(g) for g in parts]
    C = len(parts)
    if C < 1:
        raise ValueError("groups must contain at least one group")
    if C > MAX_GROUPS:
        raise ValueError(
            f"{C} groups need 2^{C} rank evaluations; at most {MAX_GROUPS} groups are supported. For many "
            f"groups use the worst-case bound PoF <= C - 1 or merge small groups.")
    empty = [i for i, g in enumerate(parts) if not g]
    if empty:
        raise ValueError(f"groups must be non-empty; group(s) {empty} are empty")
    seen: set = set()
    for i, g in enumerate(parts):
        dup = seen & g
        if dup:
            raise ValueError(f"groups must be disjoint; {next(iter(dup))!r} appears twice (group {i})")
        seen |= g
    ground = frozenset(M.ground_set)
    if seen != ground:
        outside, missing = seen - ground, ground - seen
        if outside:
            raise ValueError(f"groups contain elements outside the ground set, e.g. {list(outside)[:3]}")
        raise ValueError(f"groups must cover the ground set; {len(missing)} element(s) in no group, "
                         f"e.g. {list(missing)[:3]}")
    return parts, labels


def check_groups(M, groups) -> list[frozenset]:
    """:func:`resolve_groups` without the labels."""
    return resolve_groups(M, groups)[0]
