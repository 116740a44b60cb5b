"""Global rank redistribution by explained-variance ratio (EVA step 4)."""

from __future__ import annotations

from collections.abc import Mapping

import torch


def rank_distribution(
    explained_variance_ratios: Mapping[str, torch.Tensor],
    budget: int,
    groups: Mapping[str, str] | None = None,
) -> dict[str, int]:
    """Share a global rank budget among layers by their pooled explained-variance ratios.

    Every layer ``i`` offers its ratios ``lambda_{i,1} >= ... >= lambda_{i,k_i}`` (``k_i = round(rho r)``);
    all offers are sorted together, the top ``budget`` entries are kept and each layer gets as many
    ranks as it has entries among them, so ``sum_i r_i = min(budget, sum_i k_i)`` and ``0 <= r_i <= k_i``.

    Parameters
    ----------
    explained_variance_ratios : mapping of str to Tensor, shape (k_i,)
        One entry per layer, in layer order (ties break towards the earlier layer).
    budget : int
        ``R = sum_i r``, the uniform rank times the number of layers.
    groups : mapping of str to str, optional
        Layers that share another layer's input (``{member: representative}``); their ratios are the
        representative's. After counting, the representative is given the largest rank of its group,
        because only the representative's decomposition is computed (PEFT does the same swap).

    Returns
    -------
    dict of str to int
        Rank per layer, for every key of ``explained_variance_ratios``.

    Examples
    --------
    >>> import torch
    >>> rank_distribution({"a": torch.tensor([0.5, 0.3]), "b": torch.tensor([0.4, 0.1])}, budget=2)
    {'a': 1, 'b': 1}
    >>> rank_distribution({"a": torch.tensor([0.5, 0.45]), "b": torch.tensor([0.4, 0.1])}, budget=2)
    {'a': 2, 'b': 0}
    """
    if not isinstance(budget, int) or budget < 0:
        raise ValueError(f"`budget` must be a non-negative int, got {budget!r}")
    names = list(explained_variance_ratios)
    if not names:
        raise ValueError("`explained_variance_ratios` is empty")
    owners, values = [], []
    for name in names:
        v = torch.as_tensor(explained_variance_ratios[name]).reshape(-1).to(torch.float64)
        owners.extend([name] * v.numel())
        values.append(v)
    pooled = torch.cat(values)
    order = torch.argsort(pooled, descending=True, stable=True)[:budget]
    counts = dict.fromkeys(names, 0)
    for i in order.tolist():
        counts[owners[i]] += 1
    for member, rep in (groups or {}).items():
        if counts[member] > counts[rep]:
            counts[member], counts[rep] = counts[rep], counts[member]
    return counts
