"""Constrained problems (issue 30): constrained dominance in labels, ranks and selection; pymoo's CV on the
task; algorithms that cannot handle constraints are refused instead of silently ignoring them."""

import numpy as np
import pytest
import torch
from pymoo.core.individual import calc_cv
from pymoo.problems import get_problem as pymoo_problem

from neurips25.pref_diffusion import (
    DataBest,
    MultiHeadSurrogateNSGA2,
    PairSampler,
    PreferenceGuidedDiffusion,
    diversity_ranks,
    dominance_labels,
    dominates,
    hv,
    make_offline_task,
    minimize_offline,
)
from neurips25.pref_diffusion.problems import constraint_violation

TINY = dict(n_steps=50, sample_steps=20, hidden=32, epochs=3, preference_epochs=3, patience=3)


def test_constrained_dominance_hand_table():
    Ya = np.array([[1, 1], [1, 1], [0, 0], [0, 0], [1, 1]], float)
    Yb = np.array([[0, 0], [0, 0], [1, 1], [1, 1], [1, 1]], float)
    ca = np.array([0.0, 0.0, 0.5, 0.2, 0.3])
    cb = np.array([0.1, 0.0, 0.1, 0.3, 0.3])
    # feasible beats infeasible; plain dominance between feasible; smaller violation between infeasible;
    # equal violations: neither
    assert dominates(Ya, Yb, ca, cb).tolist() == [True, False, False, True, False]
    assert dominance_labels(Ya, Yb, ca, cb).tolist() == [0, 1, 1, 0, -1]
    assert dominates(Ya, Yb).tolist() == [False, False, True, True, False]  # without cv: Pareto only
    with pytest.raises(ValueError, match="pass both `cv_i` and `cv_j`"):
        dominance_labels(Ya, Yb, ca)


def test_ranks_put_every_feasible_design_first_ordered_by_violation_after():
    rng = np.random.default_rng(0)
    Y = rng.random((40, 2))
    cv = np.where(rng.random(40) < 0.4, rng.integers(1, 4, 40) / 10, 0.0)
    front, score, rank = diversity_ranks(Y, cv=cv)
    feas = cv == 0
    assert rank[feas].max() < rank[~feas].min()
    # the feasible part is ranked exactly as if the infeasible rows did not exist
    f2, _, r2 = diversity_ranks(Y[feas])
    np.testing.assert_array_equal(np.argsort(np.argsort(rank[feas])), r2)
    np.testing.assert_array_equal(front[feas], f2)
    # infeasible rows: one front per violation level, ascending, after the last feasible front
    bad = np.flatnonzero(~feas)
    assert np.all(np.diff(cv[bad][np.argsort(rank[bad])]) >= 0)
    assert front[bad].min() == f2.max() + 1


def test_pair_labels_follow_constrained_dominance_in_both_modes():
    rng = np.random.default_rng(1)
    X, Y = rng.random((80, 2)), rng.random((80, 2))
    cv = np.where(rng.random(80) < 0.5, rng.random(80), 0.0)
    for mode in ("diversity", "dominance"):
        s = PairSampler(X, Y, mode=mode, cv=cv, seed=0)
        i, j, lab = s.draw()
        mixed = (cv[i] > 0) != (cv[j] > 0)
        assert mixed.any()
        # label 0 = first member preferred: across feasibility, always the feasible member
        assert np.all((lab[mixed] == 0) == (cv[i][mixed] == 0))


def test_constraint_violation_is_pymoos():
    p = pymoo_problem("bnh")
    X = np.random.default_rng(0).random((50, 2)) * [5, 3]
    G = p.evaluate(X, return_values_of=["G"])
    np.testing.assert_allclose(constraint_violation(p, X), calc_cv(G=G))
    assert constraint_violation(pymoo_problem("zdt1"), np.zeros((2, 30))) is None


@pytest.fixture(scope="module")
def bnh():
    # BNH: 2 variables, 2 objectives, 2 inequality constraints; the uniform part of the data is partly
    # infeasible
    return make_offline_task(pymoo_problem("bnh"), n=400, seed=0)


def test_constrained_task_keeps_cv_and_ranks_feasible_first(bnh):
    assert bnh.constrained and bnh.CV.shape == (400,)
    np.testing.assert_allclose(bnh.CV, constraint_violation(bnh.problem, bnh.X))
    assert (bnh.CV > 0).any() and (bnh.CV == 0).any()
    Xb, Yb = bnh.best(int((bnh.CV == 0).sum()))
    assert np.all(bnh.violation(Xb) == 0)
    feas = bnh.CV == 0
    np.testing.assert_allclose(bnh.nadir, bnh.Y[feas].max(0))
    best = DataBest().fit(bnh.X, bnh.Y, cv=bnh.CV).sample(10)
    assert np.all(bnh.violation(best) == 0)


def test_minimize_offline_passes_cv_and_refuses_unconstrained_algorithms(bnh):
    res = minimize_offline(bnh, PreferenceGuidedDiffusion(random_state=0, **TINY), n=16)
    np.testing.assert_allclose(res.CV, constraint_violation(bnh.problem, res.X))
    np.testing.assert_array_equal(res.feasible, res.CV <= 0)
    with pytest.raises(ValueError, match="does not model constraints"):
        minimize_offline(bnh, MultiHeadSurrogateNSGA2(hidden=8, epochs=1, n_gen=1), n=8)

    class NoCV:
        def fit(self, X, Y):
            return self

        def sample(self, n):
            return np.zeros((n, 2))

    with pytest.raises(ValueError, match="has constraints, but `algorithm` NoCV takes no `cv`"):
        minimize_offline(bnh, NoCV(), n=4)


def test_hv_counts_only_feasible_points():
    F = np.array([[0.0, 0.0], [0.5, 0.5]])
    assert hv(F, cv=np.array([0.3, 0.0]), ref_factor=1.0) == pytest.approx(0.25)
    assert hv(F, cv=np.array([0.0, 0.0]), ref_factor=1.0) == pytest.approx(1.0)


def test_preference_model_learns_feasibility_from_cv():
    # the objectives prefer small x1, the constraint forbids x1 < 0.4: with cv the utility must rank
    # feasible designs above infeasible ones; without cv it learns the opposite
    rng = np.random.default_rng(0)
    X = rng.random((400, 2))
    Y = np.column_stack([X[:, 0], 1 - X[:, 0] + X[:, 1]])
    cv = np.maximum(0.0, 0.4 - X[:, 1])
    feas = cv == 0

    def mean_gap(**fit_kw):
        m = PreferenceGuidedDiffusion(
            n_steps=50, hidden=32, epochs=1, preference_epochs=15, patience=15, random_state=0
        ).fit(X, Y, **fit_kw)
        with torch.no_grad():
            s = m.preference_model_.utility(
                torch.as_tensor(m._to_model(X), dtype=torch.float32), torch.full((len(X),), 1)
            ).numpy()
        return s[feas].mean() - s[~feas].mean()

    assert mean_gap(cv=cv) > 0 > mean_gap()


@pytest.mark.parametrize(
    ("cv", "match"),
    [
        (-np.ones(400), "must be >= 0"),
        (np.full(400, np.nan), "NaN or inf"),
        (np.zeros(399), r"must have shape \(400,\)"),
    ],
)
def test_bad_cv(bnh, cv, match):
    with pytest.raises(ValueError, match=match):
        PreferenceGuidedDiffusion(**TINY).fit(bnh.X, bnh.Y, cv=cv)


def test_tnk_builds_at_the_default_pruning():
    # guards the v2 review: pruning 40% of the whole pool by constrained dominance removed every feasible
    # design of pymoo's tnk; now the top share of the FEASIBLE designs is pruned and infeasible ones kept
    problem = pymoo_problem("tnk")
    task = make_offline_task(problem, n=400, seed=0)
    feas = task.CV <= 0
    assert feas.any() and (~feas).any()
    # D(best) of the constrained task puts its feasible designs first
    best = DataBest().fit(task.X, task.Y, cv=task.CV).sample(int(feas.sum()))
    assert (constraint_violation(problem, best) <= 0).all()
    with pytest.raises(ValueError, match="`prune_top` must be in"):
        make_offline_task(problem, n=400, prune_top=1.0)
