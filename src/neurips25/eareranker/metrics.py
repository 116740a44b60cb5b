"""Evaluation metrics: LACC under two readings, bin accuracy, macro-F1, NDCG@k (ties averaged), Spearman.

LACC is the paper's headline metric but its definition is not known here (reconstructed). The paper reports
LACC@10 = 92.85% > LACC@25 = 86.12%, which a score tolerance cannot produce (a wider tolerance never scores
lower), so both readings are offered:

- ``mode="tolerance"``: fraction of pairs with ``|s_hat - s| <= k`` on the 0-100 scale (monotone in k);
- ``mode="topk"``: bin accuracy over the top-k documents of each query ranked by predicted adequacy (can fall
  as k grows, as the paper's numbers do).
"""

from __future__ import annotations

import numpy as np
from scipy import stats


def _same_length(name_a, a, name_b, b):
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim != 1 or b.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"`{name_a}` and `{name_b}` must be 1-D of the same length; got {a.shape} and {b.shape}")
    if a.size == 0:
        raise ValueError(f"`{name_a}` is empty")
    return a, b


def bin_accuracy(pred_bins, true_bins) -> float:
    p, t = _same_length("pred_bins", pred_bins, "true_bins", true_bins)
    return float(np.mean(p == t))


def per_bin_f1(pred_bins, true_bins, n_bins: int) -> np.ndarray:
    """F1 of each bin (0 where a bin is neither predicted nor present)."""
    p, t = _same_length("pred_bins", pred_bins, "true_bins", true_bins)
    out = np.zeros(n_bins)
    for b in range(n_bins):
        tp, fp, fn = np.sum((p == b) & (t == b)), np.sum((p == b) & (t != b)), np.sum((p != b) & (t == b))
        out[b] = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0
    return out


def macro_f1(pred_bins, true_bins, n_bins: int | None = None) -> float:
    """Unweighted mean F1 over the bins present in ``true_bins`` (or all ``n_bins``)."""
    p, t = _same_length("pred_bins", pred_bins, "true_bins", true_bins)
    n = int(max(p.max(), t.max()) + 1) if n_bins is None else int(n_bins)
    f1 = per_bin_f1(p, t, n)
    present = np.isin(np.arange(n), t) if n_bins is None else np.ones(n, bool)
    return float(f1[present].mean())


def _groups(group):
    g = np.asarray(group)
    order = np.argsort(g, kind="stable")
    _, starts = np.unique(g[order], return_index=True)
    return np.split(order, starts[1:])


def _dcg_tie_averaged(pred, gain, disc) -> float:
    """DCG with ties in ``pred`` averaged (every ordering of a tied block counts alike, as sklearn's ndcg_score)."""
    order = np.argsort(-pred, kind="stable")
    p, g = pred[order], gain[order]
    _, starts = np.unique(-p, return_index=True)
    ends = np.append(starts[1:], p.size)
    total = 0.0
    for a, b in zip(starts, ends):
        if a >= disc.size:
            break
        total += float(np.mean(g[a:b]) * np.sum(disc[a:min(b, disc.size)]))
    return total


def ndcg_at_k(pred, true, group, k: int = 10, gain: str = "linear", true_bins=None) -> float:
    """Mean NDCG@k over queries; ties in ``pred`` are averaged (a constant predictor scores a random order's NDCG).

    ``gain="linear"``: the gain is the true adequacy score; ``gain="exponential"``: ``2^bin - 1`` of the true
    bin (``true_bins`` required), which rewards putting the best bins first. Queries whose gains are all 0 are
    skipped.
    """
    p, t = _same_length("pred", pred, "true", true)
    _same_length("pred", p, "group", group)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"`k` must be a positive integer; got {k!r}")
    if gain == "linear":
        if np.any(t < 0):
            raise ValueError("`true` gains must be >= 0")
        g = t.astype(np.float64)
    elif gain == "exponential":
        if true_bins is None:
            raise ValueError("gain='exponential' needs `true_bins` (the true bin of each pair)")
        tb = np.asarray(true_bins)
        _same_length("pred", p, "true_bins", tb)
        g = 2.0 ** tb - 1.0
    else:
        raise ValueError(f"`gain` must be 'linear' or 'exponential'; got {gain!r}")
    p = p.astype(np.float64)
    vals = []
    for idx in _groups(group):
        disc = 1.0 / np.log2(np.arange(2, min(k, idx.size) + 2))
        ideal = np.sort(g[idx])[::-1][:k]
        if ideal.sum() > 0:
            vals.append(_dcg_tie_averaged(p[idx], g[idx], disc) / float(np.sum(ideal * disc)))
    return float(np.mean(vals)) if vals else float("nan")


def spearman_per_group(pred, true, group, min_size: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Per-group Spearman correlation of ``pred`` with ``true`` (ties averaged): ``(group ids, values)``.

    The groups :func:`spearman_within` averages, one value each, in sorted group order: groups with fewer than
    ``min_size`` members or a constant ``true`` are left out; a constant ``pred`` counts 0. Two models scored on
    the same pairs give values for the same groups, paired unit by unit (c3b's bootstrap over queries).
    """
    p, t = _same_length("pred", pred, "true", true)
    _same_length("pred", p, "group", group)
    g = np.asarray(group)
    ids, vals = [], []
    for idx in _groups(g):
        if idx.size < min_size or np.ptp(t[idx]) == 0:
            continue
        ids.append(g[idx[0]])
        vals.append(0.0 if np.ptp(p[idx]) == 0 else float(stats.spearmanr(p[idx], t[idx]).statistic))
    return np.asarray(ids), np.asarray(vals, dtype=float)


def spearman_within(pred, true, group, min_size: int = 3) -> float:
    """Mean over groups of the Spearman correlation of ``pred`` with ``true`` inside each group (ties averaged).

    Used with group = query restricted to the queried entity's own documents: it measures ordering by
    adequacy among documents that are all relevant, which relevance alone cannot do. Groups with fewer than
    ``min_size`` members or a constant ``true`` are skipped; a group with constant ``pred`` counts 0 (no
    ordering information), so a collapsed model scores 0, not NaN. The per-group values are
    :func:`spearman_per_group`'s.
    """
    _, vals = spearman_per_group(pred, true, group, min_size)
    return float(np.mean(vals)) if vals.size else float("nan")


def spearman(pred, true) -> float:
    p, t = _same_length("pred", pred, "true", true)
    return float(stats.spearmanr(p, t).statistic)


def lacc(pred_scores, true_scores, k: float, mode: str = "topk", *, group=None, pred_bins=None, true_bins=None,
         rubric=None) -> float:
    """LACC@k (see the module docstring for the two readings).

    Parameters
    ----------
    pred_scores, true_scores : (n,) arrays on the 0-100 scale
    k : positive number
        Tolerance (``"tolerance"``) or documents per query (``"topk"``).
    mode : {"topk", "tolerance"}
    group : (n,) query ids, required for ``"topk"``
    pred_bins, true_bins : (n,) bins, or ``rubric`` to derive them from the scores (``"topk"``)

    Examples
    --------
    >>> lacc([10, 50, 95], [12, 80, 90], k=5, mode="tolerance")
    0.6666666666666666
    """
    p, t = _same_length("pred_scores", pred_scores, "true_scores", true_scores)
    if not np.isfinite(k) or k <= 0:
        raise ValueError(f"`k` must be a positive number; got {k!r}")
    if mode == "tolerance":
        return float(np.mean(np.abs(p - t) <= k))
    if mode != "topk":
        raise ValueError(f"`mode` must be 'topk' or 'tolerance'; got {mode!r}")
    if group is None:
        raise ValueError("`group` (query id of each pair) is required for mode='topk'")
    if pred_bins is None or true_bins is None:
        if rubric is None:
            raise ValueError("mode='topk' needs `pred_bins` and `true_bins`, or a `rubric` to derive them")
        pred_bins, true_bins = rubric.to_bin(np.clip(p, 0, 100)), rubric.to_bin(t)
    pb, tb = np.asarray(pred_bins), np.asarray(true_bins)
    hits = []
    for idx in _groups(group):
        top = idx[np.argsort(-p[idx], kind="stable")][: int(k)]
        hits.append(pb[top] == tb[top])
    return float(np.mean(np.concatenate(hits)))
