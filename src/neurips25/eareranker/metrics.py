"""Evaluation metrics: LACC under two readings, bin accuracy, macro-F1, NDCG@k, Spearman.

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


def ndcg_at_k(pred, true, group, k: int = 10) -> float:
    """Mean NDCG@k over queries; gain = the true adequacy score, ties in ``pred`` broken by index order."""
    p, t = _same_length("pred", pred, "true", true)
    _same_length("pred", p, "group", group)
    if np.any(t < 0):
        raise ValueError("`true` gains must be >= 0")
    vals = []
    for idx in _groups(group):
        disc = 1.0 / np.log2(np.arange(2, min(k, idx.size) + 2))
        got = t[idx][np.argsort(-p[idx], kind="stable")][:k]
        ideal = np.sort(t[idx])[::-1][:k]
        if ideal.sum() > 0:
            vals.append(float(np.sum(got * disc) / np.sum(ideal * disc)))
    return float(np.mean(vals)) if vals else float("nan")


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
