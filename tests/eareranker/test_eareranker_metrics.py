"""Metrics against sklearn / scipy oracles and hand cases; LACC's two readings."""

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import f1_score, ndcg_score

from neurips25.eareranker import AdequacyRubric, bin_accuracy, lacc, macro_f1, ndcg_at_k, spearman, spearman_within


def test_ndcg_matches_sklearn():
    rng = np.random.default_rng(0)
    pred, true = rng.normal(size=40), rng.uniform(0, 100, 40)
    group = np.repeat(np.arange(4), 10)
    want = np.mean([ndcg_score(true[group == g][None], pred[group == g][None], k=5) for g in range(4)])
    assert ndcg_at_k(pred, true, group, k=5) == pytest.approx(want)
    assert ndcg_at_k(true, true, group) == pytest.approx(1.0)


def test_ndcg_averages_ties_as_sklearn():
    # review bug: ties were broken by index order, so a constant predictor scored high when each query's own
    # (adequate) documents came first; tie-averaged, a constant predictor gets a random order's NDCG
    true = np.array([90.0, 80.0, 70.0, 5.0, 3.0, 1.0] * 3)
    group = np.repeat(np.arange(3), 6)
    const = np.zeros(18)
    want = np.mean([ndcg_score(true[group == g][None], const[group == g][None], k=5) for g in range(3)])
    assert ndcg_at_k(const, true, group, k=5) == pytest.approx(want)
    assert ndcg_at_k(const, true, group, k=5) < 0.8 < ndcg_at_k(true, true, group, k=5)
    rng = np.random.default_rng(3)
    pred = rng.integers(0, 3, 18).astype(float)  # partial ties
    want = np.mean([ndcg_score(true[group == g][None], pred[group == g][None], k=4) for g in range(3)])
    assert ndcg_at_k(pred, true, group, k=4) == pytest.approx(want)


def test_ndcg_exponential_gain_and_spearman_within():
    bins = np.array([5, 3, 0, 1])
    true = np.array([95.0, 65.0, 10.0, 25.0])
    g = np.zeros(4, int)
    pred = np.array([1.0, 2.0, 0.0, 3.0])  # ranks 1 (gain 1), 3 (gain 7), 5 (gain 31), 0
    disc = 1 / np.log2(np.arange(2, 6))
    want = (1 * disc[0] + 7 * disc[1] + 31 * disc[2]) / (31 * disc[0] + 7 * disc[1] + 1 * disc[2])
    assert ndcg_at_k(pred, true, g, 4, gain="exponential", true_bins=bins) == pytest.approx(want)
    rng = np.random.default_rng(4)
    p, t = rng.normal(size=12), rng.normal(size=12)
    grp = np.repeat([0, 1], 6)
    want = np.mean([stats.spearmanr(p[grp == k], t[grp == k]).statistic for k in (0, 1)])
    assert spearman_within(p, t, grp) == pytest.approx(want)
    assert spearman_within(np.zeros(12), t, grp) == 0.0  # a collapsed model carries no ordering
    with pytest.raises(ValueError, match="`true_bins`"):
        ndcg_at_k(pred, true, g, gain="exponential")
    with pytest.raises(ValueError, match="`gain`"):
        ndcg_at_k(pred, true, g, gain="log")


def test_f1_accuracy_spearman_oracles():
    rng = np.random.default_rng(1)
    p, t = rng.integers(0, 6, 200), rng.integers(0, 6, 200)
    assert macro_f1(p, t, 6) == pytest.approx(f1_score(t, p, average="macro", labels=range(6)))
    assert bin_accuracy(p, t) == pytest.approx(np.mean(p == t))
    a, b = rng.normal(size=30), rng.normal(size=30)
    assert spearman(a, b) == pytest.approx(stats.spearmanr(a, b).statistic)


def test_lacc_tolerance_hand_case_and_monotone():
    assert lacc([10, 50, 95], [12, 80, 90], k=5, mode="tolerance") == pytest.approx(2 / 3)
    rng = np.random.default_rng(2)
    p, t = rng.uniform(0, 100, 100), rng.uniform(0, 100, 100)
    vals = [lacc(p, t, k, "tolerance") for k in (5, 10, 25)]
    assert vals == sorted(vals)  # a tolerance never scores lower when widened


def test_lacc_topk_can_fall_with_k():
    # one query: the two best-ranked documents get their bin right, the third does not
    r = AdequacyRubric()
    pred, true = np.array([95.0, 80.0, 50.0]), np.array([95.0, 80.0, 10.0])
    g = np.zeros(3, int)
    assert lacc(pred, true, 2, "topk", group=g, rubric=r) == 1.0
    assert lacc(pred, true, 3, "topk", group=g, rubric=r) == pytest.approx(2 / 3)


def test_bad_inputs():
    with pytest.raises(ValueError, match="same length"):
        bin_accuracy([1, 2], [1])
    with pytest.raises(ValueError, match="`mode`"):
        lacc([1.0], [1.0], 5, mode="bogus")
    with pytest.raises(ValueError, match="`group`"):
        lacc([1.0], [1.0], 5, mode="topk")
    with pytest.raises(ValueError, match="`k`"):
        lacc([1.0], [1.0], 0, mode="tolerance")


def test_spearman_per_group_pairs_queries_and_averages_to_spearman_within():
    """c3b's paired bootstrap resamples queries: the per-query values are scipy's, in sorted query order, with
    too-small or constant-truth groups left out and a constant prediction counted 0."""
    from neurips25.eareranker import spearman_per_group

    rng = np.random.default_rng(0)
    g = np.repeat([7, 3, 5, 9], 5)
    t = rng.uniform(0, 100, g.size)
    t[g == 9] = 50.0  # constant truth: left out
    p = t + rng.normal(0, 30, g.size)
    p[g == 5] = 1.0  # constant prediction: 0
    ids, vals = spearman_per_group(p, t, g)
    assert ids.tolist() == [3, 5, 7]
    assert vals[1] == 0.0
    for q, v in zip(ids, vals):
        if q != 5:
            assert v == pytest.approx(stats.spearmanr(p[g == q], t[g == q]).statistic)
    assert spearman_within(p, t, g) == pytest.approx(vals.mean())
    with pytest.raises(ValueError, match="`pred` and `group`"):
        spearman_per_group(p, t, g[:-1])
