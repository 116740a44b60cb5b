"""Partial / full detection reports and the validation-only choice of (k, tau)."""

import numpy as np
import pytest
from sklearn.metrics import f1_score

from neurips25.scm import DelayKPolicy, f1_scores, full_detection_report, partial_detection_report, select_k


@pytest.mark.parametrize("seed", range(4))
def test_macro_f1_matches_sklearn(seed):
    rng = np.random.default_rng(seed)
    y, p = rng.integers(0, 2, 50), rng.integers(0, 2, 50)
    assert f1_scores(y, p)["macro_f1"] == pytest.approx(f1_score(y, p, average="macro"))


def test_partial_report_hand_case():
    probs = [np.array([0.1, 0.9, 0.9, 0.2]), np.array([0.1, 0.2, 0.95, 0.1]), np.array([0.9, 0.1, 0.1, 0.1])]
    labels, onsets = [1, 1, 0], [2, 3, 0]
    rep = partial_detection_report(probs, labels, DelayKPolicy(1, 0.8), onsets)
    # every response is flagged: harmful F1 = 2*2/(3+2), benign F1 = 0
    assert rep["f1_harmful"] == pytest.approx(0.8) and rep["f1_benign"] == 0.0
    assert rep["false_alarm_rate"] == 1.0 and rep["miss_rate"] == 0.0
    assert rep["mean_fraction_seen"] == pytest.approx((2 / 4 + 3 / 4) / 2)
    assert rep["stopped_within_1.25x_onset"] == 1.0
    rep2 = partial_detection_report(probs, labels, DelayKPolicy(2, 0.8), onsets)
    assert rep2["macro_f1"] == pytest.approx(2 / 3)  # second harmful never reaches 2 hits: both F1s are 2/3


def test_select_k_finds_the_separating_rule():
    probs = [np.array([0.9, 0.9, 0.1]), np.array([0.95, 0.7, 0.9]), np.array([0.9, 0.1, 0.1])]
    pol, f1 = select_k(probs, [1, 1, 0], ks=range(1, 4), thresholds=(0.5, 0.8))
    assert f1 == 1.0 and (pol.k, pol.threshold) == (2, 0.5)


def test_full_report_threshold():
    rep = full_detection_report([0.2, 0.7, 0.4], [0, 1, 1], threshold=0.3)
    assert rep["macro_f1"] == 1.0


def test_bad_inputs():
    with pytest.raises(ValueError, match=r"`token_probs\[1\]` must be a non-empty"):
        partial_detection_report([np.array([0.5]), np.array([])], [0, 1], DelayKPolicy())
    with pytest.raises(ValueError, match="`labels` must be 2 values"):
        partial_detection_report([np.array([0.5]), np.array([0.2])], [0, 2], DelayKPolicy())
    with pytest.raises(ValueError, match="probabilities in"):
        select_k([np.array([1.5])], [1])
    with pytest.raises(ValueError, match=r"`threshold` must be in \(0, 1\)"):
        full_detection_report([0.5], [1], threshold=1.0)
