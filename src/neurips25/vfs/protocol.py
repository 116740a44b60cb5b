"""The coarse-to-fine VFS protocol run in-process between one active and K passive parties.

Reconstructed protocol (see docs/vfs.md; the paper's full text was not available):

1. The active party A samples rows (all ``n1`` positives, ``n0' = r n1`` negatives) and sends
   ``Enc(y_i)`` of the sampled rows to every passive party (``n_s`` encryptions, done once).
2. Stage 1 (coarse): each passive party returns ``Enc(D_g)`` for each of its group aggregates
   ``z_g``; A decrypts the ``G`` values, ranks the groups by the statistic and keeps the top ``d1``.
3. Stage 2 (fine): A sends the surviving group ids; each party returns ``Enc(D_j)`` for the features
   of its surviving groups; A decrypts ``m d1`` values and keeps the top ``d2`` features.

With ``two_stage=False`` it is the one-stage baseline: every feature is scored, no groups.
"""

from __future__ import annotations

import dataclasses
import math
import time
import warnings

import numpy as np

from neurips25.vfs.crypto import CostMeter
from neurips25.vfs.parties import ActiveParty, PassiveParty

__all__ = ["DEFAULT_GROUP_FRACTION", "ScreeningResult", "resolve_keep", "run_protocol", "sis_model_size"]

#: stage 1 keeps this fraction of the groups when ``n_groups_keep`` is None
DEFAULT_GROUP_FRACTION = 0.05


def sis_model_size(n_pos: int) -> int:
    """The classic SIS size ``floor(n1 / log n1)`` with ``n1`` the number of positives (at least 1)."""
    if n_pos < 3:
        return 1
    return max(1, int(math.floor(n_pos / math.log(n_pos))))


def resolve_keep(value, total: int, argument: str, default_fraction: float | None = None) -> int:
    """Turn an int count or a fraction in (0, 1] of ``total`` into a count in ``[1, total]``.

    An int above ``total`` raises (the caller asked for more than exists).
    """
    if value is None:
        if default_fraction is None:
            raise ValueError(f"`{argument}` is required")
        value = default_fraction
    if isinstance(value, bool):
        raise ValueError(f"`{argument}` must be an int >= 1 or a float in (0, 1], got {value!r}")
    if isinstance(value, (int, np.integer)):
        if value < 1:
            raise ValueError(f"`{argument}` must be >= 1, got {value}")
        if value > total:
            raise ValueError(f"`{argument}`={value} is larger than the {total} available")
        return int(value)
    if isinstance(value, (float, np.floating)) and 0 < value <= 1:
        return max(1, min(total, int(math.ceil(value * total))))
    raise ValueError(f"`{argument}` must be an int >= 1 or a float in (0, 1], got {value!r}")


def _top(scores: np.ndarray, ids: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` ids with the highest score; ties broken by the smaller id (deterministic)."""
    order = np.lexsort((ids, -scores))
    return ids[order[:k]]


@dataclasses.dataclass
class ScreeningResult:
    """What one protocol run produced (global indices: columns of the concatenated parties).

    Attributes
    ----------
    support : numpy.ndarray of int
        Selected features, sorted (``M_hat``).
    ranking : numpy.ndarray of int
        Every scored feature, best first (stage 2 only scores features of surviving groups).
    feature_scores : numpy.ndarray of float, shape (p,)
        NaN for features never scored.
    feature_diffs : numpy.ndarray of object, shape (p,)
        Decrypted integers ``D_j`` (None where unscored).
    group_scores, group_diffs : numpy.ndarray, shape (G,) or None
        Stage-1 scores and decrypted ``D_g`` (None for the one-stage baseline).
    kept_groups : numpy.ndarray of int or None
        Surviving global group ids, best first.
    feature_group : numpy.ndarray of int, shape (p,)
        Global group id of each feature.
    cost : CostMeter
    n_pos, n_neg : int
        Positives and sampled negatives.
    wall_s : float
    """

    support: np.ndarray
    ranking: np.ndarray
    feature_scores: np.ndarray
    feature_diffs: np.ndarray
    group_scores: np.ndarray | None
    group_diffs: np.ndarray | None
    kept_groups: np.ndarray | None
    feature_group: np.ndarray
    cost: CostMeter
    n_pos: int
    n_neg: int
    wall_s: float


def run_protocol(
    active: ActiveParty,
    passives: list[PassiveParty],
    n_features_keep=None,
    n_groups_keep=None,
    two_stage: bool = True,
    party_columns: list[np.ndarray] | None = None,
) -> ScreeningResult:
    """Run two-stage VFS (or the one-stage baseline) between ``active`` and ``passives``.

    Parameters
    ----------
    active : ActiveParty
    passives : list of PassiveParty
        Row-aligned with ``active``.
    n_features_keep : int or float, optional
        ``d2``; None gives ``floor(n1 / log n1)`` (clipped to the features that reach stage 2).
    n_groups_keep : int or float, optional
        ``d1``, a count or a fraction of the ``G`` groups; None keeps ``DEFAULT_GROUP_FRACTION``.
    two_stage : bool, default=True
        False runs one-stage screening (every feature scored, no group stage).
    party_columns : list of int arrays, optional
        Global column index of each party's columns; default: parties' columns concatenated in order.

    Returns
    -------
    ScreeningResult

    Examples
    --------
    >>> import numpy as np
    >>> y = np.array([1, 1, 0, 0, 0, 0])
    >>> X = np.array([[1, 0, 0, 1], [1, 0, 1, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 1, 0, 1], [0, 0, 0, 0]])
    >>> parties = [PassiveParty(X[:, :2], group_size=1), PassiveParty(X[:, 2:], group_size=1)]
    >>> res = run_protocol(ActiveParty(y), parties,
    ...                    n_features_keep=1, n_groups_keep=2)
    >>> res.support.tolist(), res.cost.decryptions
    ([0], 6)
    """
    t0 = time.perf_counter()
    if not isinstance(active, ActiveParty):
        raise TypeError(f"`active` must be an ActiveParty, got {type(active).__name__}")
    if not passives or not all(isinstance(q, PassiveParty) for q in passives):
        raise TypeError("`passives` must be a non-empty list of PassiveParty")
    for q in passives:
        if q.n_samples != active.n_samples:
            raise ValueError(
                f"party {q.name!r} has {q.n_samples} rows but the active party has {active.n_samples} labels"
            )
    sizes = [q.n_features for q in passives]
    p = int(sum(sizes))
    if party_columns is None:
        bounds = np.cumsum([0, *sizes])
        party_columns = [np.arange(bounds[k], bounds[k + 1]) for k in range(len(passives))]
    group_offsets = np.cumsum([0, *[q.n_groups for q in passives]])
    n_groups = int(group_offsets[-1])
    feature_group = np.empty(p, dtype=np.int64)
    for k, q in enumerate(passives):
        feature_group[party_columns[k]] = q.groups + group_offsets[k]

    meter = CostMeter()
    backend = active.public_backend
    ct = backend.ciphertext_bytes
    lab = active.label_message(meter)
    for _ in passives:
        meter.record_message(lab.n_ciphertexts, lab.n_integers, ct, to="passive")

    group_scores = group_diffs = kept = None
    if two_stage:
        # Stage 1: coarse group screening (all G group aggregates)
        group_scores = np.full(n_groups, np.nan)
        group_diffs = np.full(n_groups, None, dtype=object)
        for k, q in enumerate(passives):
            msg = q.group_statistics(lab, backend, meter)
            meter.record_message(msg.n_ciphertexts, msg.n_integers, ct, to="active")
            D, s = active.decrypt_scores(msg, meter)
            gid = msg.ids + group_offsets[k]
            group_scores[gid], group_diffs[gid] = s, D
        d1 = resolve_keep(n_groups_keep, n_groups, "n_groups_keep", DEFAULT_GROUP_FRACTION)
        kept = _top(group_scores, np.arange(n_groups), d1)

    # Stage 2 (or one-stage): fine screening of the features of surviving groups
    feature_scores = np.full(p, np.nan)
    feature_diffs = np.full(p, None, dtype=object)
    for k, q in enumerate(passives):
        local_groups = None
        if kept is not None:
            local_groups = kept[(kept >= group_offsets[k]) & (kept < group_offsets[k + 1])] - group_offsets[k]
            meter.record_message(0, len(local_groups), ct, to="passive")
            if len(local_groups) == 0:
                continue
        msg = q.feature_statistics(lab, backend, local_groups, meter)
        meter.record_message(msg.n_ciphertexts, msg.n_integers, ct, to="active")
        D, s = active.decrypt_scores(msg, meter)
        cols = party_columns[k][msg.ids]
        feature_scores[cols], feature_diffs[cols] = s, D

    scored = np.flatnonzero(~np.isnan(feature_scores))
    ranking = _top(feature_scores[scored], scored, len(scored))
    if n_features_keep is None:
        d2 = min(sis_model_size(lab.n_pos), len(scored))
    else:
        if (
            isinstance(n_features_keep, (int, np.integer))
            and not isinstance(n_features_keep, bool)
            and n_features_keep > p
        ):
            raise ValueError(f"`n_features_keep`={n_features_keep} is larger than the {p} features")
        d2 = resolve_keep(n_features_keep, p, "n_features_keep")
        if d2 > len(scored):
            warnings.warn(
                f"`n_features_keep`={d2} exceeds the {len(scored)} features of the surviving groups; "
                "keeping all of them (raise `n_groups_keep` to screen more)",
                UserWarning,
                stacklevel=2,
            )
            d2 = len(scored)
    support = np.sort(ranking[:d2])
    for _ in passives:  # A announces M_hat
        meter.record_message(0, len(support), ct, to="passive")
    return ScreeningResult(
        support=support,
        ranking=ranking,
        feature_scores=feature_scores,
        feature_diffs=feature_diffs,
        group_scores=group_scores,
        group_diffs=group_diffs,
        kept_groups=kept,
        feature_group=feature_group,
        cost=meter,
        n_pos=lab.n_pos,
        n_neg=lab.n_neg,
        wall_s=time.perf_counter() - t0,
    )
