"""Partial detection (delay-k on token scores) and full detection (one score per complete response).

Macro-F1 is the mean of the harmful-class and benign-class F1 (the paper's metric). ``(k, tau)`` are chosen
on validation data only (:func:`select_k`); choosing them on test data inflates results.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import numpy as np

from neurips25.scm.stream import DelayKPolicy


def _labels(labels, n, name="labels"):
    y = np.asarray(labels)
    if y.shape != (n,) or not np.isin(y, (0, 1)).all():
        raise ValueError(f"`{name}` must be {n} values in {{0, 1}}; got shape {y.shape}")
    return y.astype(int)


def f1_scores(y_true, y_pred) -> dict[str, float]:
    """Per-class F1 (harmful = 1, benign = 0) and their mean, ``macro_f1``."""
    y, p = np.asarray(y_true).astype(int), np.asarray(y_pred).astype(int)
    out = {}
    for c, name in ((1, "f1_harmful"), (0, "f1_benign")):
        tp = np.sum((p == c) & (y == c))
        denom = np.sum(p == c) + np.sum(y == c)
        out[name] = float(2 * tp / denom) if denom else 1.0
    out["macro_f1"] = (out["f1_harmful"] + out["f1_benign"]) / 2
    return out


def _check_probs(token_probs):
    if isinstance(token_probs, np.ndarray) and token_probs.ndim == 1:
        raise ValueError("`token_probs` must be a list of per-response 1-D score arrays, not one array")
    out = []
    for i, p in enumerate(token_probs):
        a = np.asarray(p, dtype=float)
        if a.ndim != 1 or a.size == 0:
            raise ValueError(f"`token_probs[{i}]` must be a non-empty 1-D array (an empty response?); "
                             f"got shape {a.shape}")
        if not np.isfinite(a).all() or (a < 0).any() or (a > 1).any():
            raise ValueError(f"`token_probs[{i}]` must hold probabilities in [0, 1]")
        out.append(a)
    return out


def stop_positions(token_probs: Sequence, policy: DelayKPolicy) -> np.ndarray:
    """1-based stop position of the delay-k rule per response (0 = never flagged)."""
    return np.array([policy.first_stop(p) for p in _check_probs(token_probs)], dtype=int)


def partial_detection_report(token_probs: Sequence, labels, policy: DelayKPolicy, onsets=None,
                             harm_ends=None) -> dict:
    """Streaming detection: flagged iff the delay-k rule fires before the response ends.

    Reports macro-F1, per-class F1, false-alarm and miss rates, the mean / median fraction of response tokens
    seen when a harmful response is stopped, and, given ``onsets`` (1-based first harmful token, 0 = none),
    the share of flagged-harmful responses stopped within 1.25x their onset; given ``harm_ends`` (1-based last
    token of the first harmful sentence, 0 = none), the share of harmful responses stopped by then
    (``stopped_by_first_harm_end``) and the mean tokens seen minus onset on those stopped.
    """
    probs = _check_probs(token_probs)
    y = _labels(labels, len(probs))
    stops = stop_positions(probs, policy)
    pred = (stops > 0).astype(int)
    rep = f1_scores(y, pred)
    lens = np.array([len(p) for p in probs])
    rep["false_alarm_rate"] = float(pred[y == 0].mean()) if (y == 0).any() else float("nan")
    rep["miss_rate"] = float(1 - pred[y == 1].mean()) if (y == 1).any() else float("nan")
    hit = (y == 1) & (pred == 1)
    frac = stops[hit] / lens[hit]
    rep["mean_fraction_seen"] = float(frac.mean()) if hit.any() else float("nan")
    rep["median_fraction_seen"] = float(np.median(frac)) if hit.any() else float("nan")
    rep["k"], rep["threshold"] = policy.k, policy.threshold
    if onsets is not None:
        on = np.asarray(onsets, dtype=int)
        if on.shape != (len(probs),):
            raise ValueError(f"`onsets` must have one entry per response ({len(probs)}); got shape {on.shape}")
        harmful = (y == 1) & (on > 0)
        ok = (stops > 0) & (stops <= 1.25 * on)
        rep["stopped_within_1.25x_onset"] = float(ok[harmful].mean()) if harmful.any() else float("nan")
        rep["mean_onset_fraction"] = float((on[harmful] / lens[harmful]).mean()) if harmful.any() else float("nan")
        rep["mean_stop_over_onset"] = float(np.mean(stops[harmful & (stops > 0)] / on[harmful & (stops > 0)])) \
            if (harmful & (stops > 0)).any() else float("nan")
    if harm_ends is not None:
        end = np.asarray(harm_ends, dtype=int)
        if end.shape != (len(probs),):
            raise ValueError(f"`harm_ends` must have one entry per response ({len(probs)}); got shape {end.shape}")
        harmful = (y == 1) & (end > 0)
        ok = (stops > 0) & (stops <= end)
        rep["stopped_by_first_harm_end"] = float(ok[harmful].mean()) if harmful.any() else float("nan")
        if onsets is not None and (harmful & (stops > 0)).any():
            sel = harmful & (stops > 0)
            rep["mean_tokens_seen_minus_onset"] = float(np.mean(stops[sel] - np.asarray(onsets)[sel]))
    return rep


def full_detection_report(response_probs, labels, threshold: float = 0.5) -> dict:
    """Detection on complete responses: harmful iff ``p >= threshold``."""
    if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real) or not 0 < threshold < 1:
        raise ValueError(f"`threshold` must be in (0, 1); got {threshold!r}")
    p = np.asarray(response_probs, dtype=float)
    if p.ndim != 1 or p.size == 0 or not np.isfinite(p).all():
        raise ValueError(f"`response_probs` must be a non-empty finite 1-D array; got shape {p.shape}")
    y = _labels(labels, p.size)
    return {**f1_scores(y, (p >= threshold).astype(int)), "threshold": float(threshold)}


def select_k(token_probs: Sequence, labels, ks=range(1, 51), thresholds=(0.5, 0.6, 0.7, 0.8, 0.9)):
    """``(k, tau)`` with the best validation macro-F1 (ties: smaller tau, then smaller k); returns (policy, f1)."""
    probs = _check_probs(token_probs)
    y = _labels(labels, len(probs))
    ks, thresholds = list(ks), list(thresholds)
    if not ks or not thresholds:
        raise ValueError("`ks` and `thresholds` must be non-empty")
    best = (-1.0, None)
    for tau in thresholds:
        counts = [np.cumsum(p >= tau) for p in probs]
        totals = np.array([c[-1] for c in counts])
        for k in ks:
            f1 = f1_scores(y, (totals >= k).astype(int))["macro_f1"]
            if f1 > best[0] + 1e-12:
                best = (f1, (k, tau))
    k, tau = best[1]
    return DelayKPolicy(int(k), float(tau)), best[0]
