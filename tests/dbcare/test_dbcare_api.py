"""DBCARE v2 (issue #25): the episode API cannot be misused, EmpiricalBandit, K-arm lower bounds, bad input."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neurips25.dbcare import (
    DBCARE,
    LUCB,
    BernoulliBandit,
    EmpiricalBandit,
    GaussianBandit,
    Guess,
    RewardTable,
    TrackAndStop,
    UniformFixedBudget,
    complexity_h,
    k_arm_lower_bound_mi,
    k_arm_lower_bound_sr,
    lower_bound_mi,
    lower_bound_sr,
    simulate,
)
from neurips25.dbcare.simulate import run_adaptive


def _drive(policy, table, r):
    """One replication through the episode API, reading table[r, arm, pull]; returns (rec, pulls)."""
    policy.reset(table.bandit.n_arms)
    counts = np.zeros(table.bandit.n_arms, dtype=int)
    while not policy.should_stop():
        for arm in policy.select_arms():
            policy.update(arm, table.lookup(np.array([r]), np.array([arm]), np.array([counts[arm]]))[0])
            counts[arm] += 1
    return policy.recommend(), policy.total_pulls


# --- review bug 1: LUCB / Track-and-Stop with K > 2 ran round-robin through the episode API -------------
@pytest.mark.parametrize("policy", [LUCB(0.1, max_pulls=3000), TrackAndStop(0.1, max_pulls=3000),
                                    LUCB(0.1, max_pulls=3000, lazy=0.05), TrackAndStop(0.1, max_pulls=3000, lazy=0.05)])
def test_adaptive_episode_api_equals_step_engine(policy):
    bandit = GaussianBandit([0.0, -1.0, -1.2, -1.5], 1.0)
    reps = 5
    rec, pulls, _ = run_adaptive(policy, RewardTable(bandit, reps, seed=3, block=64), np.zeros((reps, 4)))
    table = RewardTable(bandit, reps, seed=3, block=64)
    loop = [_drive(policy, table, r) for r in range(reps)]
    np.testing.assert_array_equal(rec, [x[0] for x in loop])
    np.testing.assert_array_equal(pulls, [x[1] for x in loop])


def test_adaptive_episode_api_is_not_round_robin():
    # Track-and-Stop asks for one arm per decision once every arm has its first pull
    pol = TrackAndStop(0.1).reset(4)
    assert pol.select_arms() == [0, 1, 2, 3]
    for arm, x in enumerate([0.0, -1.0, -1.2, -1.5]):
        pol.update(arm, x)
    assert len(pol.select_arms()) == 1


def test_lazy_batches_speed_up_without_changing_the_answer_much():
    means = [0.0, -0.5, -0.6, -0.8]
    exact = simulate(TrackAndStop(0.1, max_pulls=2e4), means, cost=1e-4, n_reps=30, seed=1)
    lazy = simulate(TrackAndStop(0.1, max_pulls=2e4, lazy=0.02), means, cost=1e-4, n_reps=30, seed=1)
    assert lazy.p_error <= 0.1 and exact.p_error <= 0.1
    assert lazy.mean_samples == pytest.approx(exact.mean_samples, rel=0.15)


def test_lucb_two_arm_rule_uses_total_pulls_like_the_k_arm_rule():
    # review bug 3: the two-arm stop rule used t = rounds, the K-arm rule t = pulls
    pol = LUCB(0.1)
    n = np.array([[40]])
    counts, sums = np.array([[40, 40]]), np.array([[40 * 0.0, 40 * -0.9]])
    means = (sums / counts)[:, :, None]
    assert bool(pol.stop(n, means, np.ones((1, 2), bool))[0, 0]) == bool(pol.done(counts, sums, np.array([80.0]))[0])
    assert pol.two_arm_threshold(np.array([40]))[0] == pytest.approx(2 * pol._beta(40.0, 80.0, 2))


# --- review bug 2: select_arms() twice re-requested the round ------------------------------------------
def test_select_arms_while_pending_raises():
    pol = DBCARE(1e-3).reset(3)
    arms = pol.select_arms()
    pol.update(arms[0], 1.0)
    with pytest.raises(RuntimeError, match="still pending"):
        pol.select_arms()
    for arm in arms[1:]:
        pol.update(arm, 0.0)
    assert pol.select_arms() == [0, 1, 2]  # the next round is fine
    assert pol.empirical_means[0] == pytest.approx(1.0)


def test_recommend_before_any_pull_raises_but_guess_recommends():
    with pytest.raises(RuntimeError, match="before any observation"):
        DBCARE(1e-3).reset(2).recommend()
    g = Guess().reset(3)
    assert g.should_stop() and g.select_arms() == []
    assert g.recommend(np.random.default_rng(0)) in (0, 1, 2)


def test_survivors_and_means_are_public():
    pol = DBCARE(1e-2).reset(3)
    for _ in range(30):
        for arm in pol.select_arms():
            pol.update(arm, [5.0, 0.0, 0.1][arm])
        if pol.should_stop():
            break
    assert pol.survivors == [0] and pol.recommend() == 0
    assert pol.empirical_means[0] == pytest.approx(5.0) and np.isneginf(pol.empirical_means[1])


# --- simulate takes the cost and sigma from the policy, or raises --------------------------------------
def test_simulate_uses_the_policys_cost_and_sigma():
    a = simulate(DBCARE(1e-3, sigma=2.0), [0.0, -0.5], n_reps=200, seed=0)
    b = simulate(DBCARE(1e-3, sigma=2.0), GaussianBandit([0.0, -0.5], 2.0), n_reps=200, seed=0)
    c = simulate(DBCARE(1e-3, sigma=2.0), [0.0, -0.5], 2.0, 1e-3, 200, 0)
    assert a == b == c


@pytest.mark.parametrize("kwargs,match", [
    (dict(cost=1e-4), "policy was built for cost=0.01"),
    (dict(sigma=1.0), "sigma=3"),
])
def test_simulate_mismatch_raises(kwargs, match):
    with pytest.raises(ValueError, match=match):
        simulate(DBCARE(1e-2, sigma=3.0), [0.0, -0.5], n_reps=10, **kwargs)


def test_simulate_sigma_mismatch_with_bernoulli_and_missing_cost():
    with pytest.raises(ValueError, match="sigma=0.5"):
        simulate(DBCARE(1e-3, sigma=1.0), [0.4, 0.3], env="bernoulli", n_reps=10)
    with pytest.raises(ValueError, match="sigma=0.5"):
        simulate(DBCARE(1e-3, sigma=1.0), BernoulliBandit([0.4, 0.3]), n_reps=10)
    assert simulate(DBCARE(1e-3, sigma=0.5), [0.4, 0.3], env="bernoulli", n_reps=10).n_reps == 10
    with pytest.raises(ValueError, match="cost is required"):
        simulate(UniformFixedBudget(10), [0.0, -1.0], n_reps=10)
    with pytest.raises(ValueError, match="environment object"):
        simulate(Guess(), GaussianBandit([0.0, -1.0]), cost=1e-3, env="bernoulli")


# --- EmpiricalBandit ------------------------------------------------------------------------------------
def test_empirical_bandit_bootstrap_and_replay():
    logs = [[1, 0, 1, 1], [0, 0, 1], [0.5, 0.25]]
    b = EmpiricalBandit(logs, sigma=0.5)
    np.testing.assert_allclose(b.means, [0.75, 1 / 3, 0.375])
    draws = b.draw(np.random.default_rng(0), (50, 3, 20))
    for k, log in enumerate(logs):
        assert set(np.unique(draws[:, k])) <= set(log)
    assert abs(draws[:, 0].mean() - 0.75) < 0.05
    pull = b.replay()
    assert [pull(2), pull(2)] == [0.5, 0.25]
    with pytest.raises(ValueError, match="arm 2: its 2 logged outcomes are used up"):
        pull(2)
    with pytest.raises(ValueError, match="arm must be in"):
        pull(3)


def test_empirical_bandit_with_simulate_and_the_episode_api():
    rng = np.random.default_rng(0)
    logs = [rng.random(3000) < 0.30, rng.random(3000) < 0.10]
    b = EmpiricalBandit(logs, sigma=0.5)
    est = simulate(DBCARE(1e-3, sigma=0.5), b, n_reps=300, seed=0)
    assert est.p_error < 0.05 and est.mean_samples > 0
    pol, pull = DBCARE(1e-3, sigma=0.5).reset(2), b.replay()
    while not pol.should_stop():
        for arm in pol.select_arms():
            pol.update(arm, pull(arm))
    assert pol.recommend() == 0


def test_empirical_bandit_files(tmp_path):
    csv_path = tmp_path / "ab.csv"
    csv_path.write_text("arm,outcome\nA,1\nB,0\nA,0\nB,0\nA,1\n")
    b = EmpiricalBandit.from_csv(csv_path, sigma=0.5)
    assert b.arm_labels == ["A", "B"] and b.means.tolist() == [2 / 3, 0.0]
    (tmp_path / "bad.csv").write_text("arm,outcome\nA,yes\nB,0\n")
    with pytest.raises(ValueError, match="line 2: outcome 'yes'"):
        EmpiricalBandit.from_csv(tmp_path / "bad.csv")
    with pytest.raises(ValueError, match="no column 'reward'"):
        EmpiricalBandit.from_csv(csv_path, outcome_column="reward")
    np.savez(tmp_path / "ab.npz", control=np.array([0.0, 1.0]), variant=np.array([1.0, 1.0, 0.0]))
    z = EmpiricalBandit.from_npz(tmp_path / "ab.npz")
    assert z.arm_labels == ["control", "variant"] and z.sigma is None
    np.testing.assert_allclose(z.means, [0.5, 2 / 3])


@pytest.mark.parametrize("outcomes,match", [([[1.0, 2.0]], "at least 2 arms"), ([[1.0], []], "non-empty"),
                                            ([[1.0], [np.nan]], "finite"), ("ab", "sequence"),
                                            ([[1.0], ["x"]], "numbers"), (np.zeros(3), "2-D")])
def test_empirical_bandit_bad_input(outcomes, match):
    with pytest.raises((TypeError, ValueError), match=match):
        EmpiricalBandit(outcomes)


# --- bad input with clear errors ------------------------------------------------------------------------
def test_bad_inputs_named():
    with pytest.raises(TypeError, match="cost must be a real number; got 'abc'"):
        DBCARE("abc")
    with pytest.raises(TypeError, match="cost must be a real number"):
        simulate(Guess(), [0.0, 1.0], cost="abc")
    pol = DBCARE(1e-3).reset(2)
    arms = pol.select_arms()
    with pytest.raises(TypeError, match="reward must be a real number; got '1.0'"):
        pol.update(arms[0], "1.0")
    pol.update(arms[0], np.bool_(True))  # numpy booleans (conversions) are fine
    pol.update(arms[1], np.float32(0.5))
    with pytest.raises(TypeError, match="n_arms must be an integer"):
        DBCARE(1e-3).reset(2.7)
    assert DBCARE(1e-3).reset(np.int64(3)).survivors == [0, 1, 2]
    with pytest.raises(TypeError, match="n_reps must be an integer"):
        simulate(DBCARE(1e-3), [0.0, 1.0], n_reps=2.5)


@pytest.mark.parametrize("radius,match", [
    (lambda n, k, s, c: 0.1, r"must return an array of shape .*got shape \(\)"),
    (lambda n, k, s, c: np.zeros(3), r"got shape \(3,\)"),
    (lambda n, k, s, c: np.full(np.broadcast_shapes(n.shape, k.shape), np.nan), "returned NaN"),
    (lambda n, k, s, c: -np.ones(np.broadcast_shapes(n.shape, k.shape)), ">= 0"),
    (lambda n, k, s, c: "wide", "array of numbers"),
])
def test_bad_radius_is_caught_at_the_first_round(radius, match):
    pol = DBCARE(1e-3, radius=radius).reset(2)
    with pytest.raises((ValueError, TypeError), match=match):
        for arm in pol.select_arms():
            pol.update(arm, 0.0)
    with pytest.raises((ValueError, TypeError), match=match):
        simulate(DBCARE(1e-3, radius=radius), [0.0, -0.1, -0.2], n_reps=5)


# --- K-arm lower bounds ---------------------------------------------------------------------------------
@settings(max_examples=40, deadline=None)
@given(gap=st.floats(1e-4, 3.0), log_c=st.floats(-6, -2))
def test_k_arm_bounds_reduce_to_two_arms(gap, log_c):
    c = 10**log_c
    assert k_arm_lower_bound_mi([0.0, -gap], 1.0, c) == pytest.approx(lower_bound_mi(gap, 1.0, c), rel=1e-12)
    assert k_arm_lower_bound_sr([0.0, -gap], 1.0, c) == pytest.approx(lower_bound_sr(gap, 1.0, c), rel=1e-12)


def test_k_arm_bounds_hand_computed():
    c = 1e-4
    b = lambda d: (c / (4 * d**2)) * math.log(math.e * d**2 / c)  # noqa: E731
    # three resolvable arms: the sum of the two-arm terms (cheaper than giving up on any of them)
    assert k_arm_lower_bound_mi([0.0, -0.3, -0.5, -1.0], 1.0, c) == pytest.approx(b(0.3) + b(0.5) + b(1.0))
    # two hopeless arms (gap < sqrt(c)) and one resolvable: b(1) + 2/(2*3)
    assert k_arm_lower_bound_mi([0.0, -0.001, -0.002, -1.0], 1.0, c) == pytest.approx(b(1.0) + 1 / 3)
    # many arms at the transition: giving up on all (half of guessing, 8/18 + ...) beats paying 1/4 each
    assert k_arm_lower_bound_mi([0.0] + [-0.01] * 8 + [-0.5], 1.0, c) == pytest.approx(b(0.5) + 8 / 18)
    assert complexity_h([0.0, -0.5, -1.0], sigma=2.0) == pytest.approx(4 / 0.25 + 4)


@settings(max_examples=40, deadline=None)
@given(gaps=st.lists(st.floats(1e-4, 2.0), min_size=1, max_size=9), log_c=st.floats(-6, -2))
def test_k_arm_bounds_never_exceed_half_of_guessing(gaps, log_c):
    c, means = 10**log_c, [0.0] + [-g for g in gaps]
    K = len(means)
    assert 0 < k_arm_lower_bound_mi(means, 1.0, c) <= (K - 1) / (2 * K) + 1e-12
    assert 0 < k_arm_lower_bound_sr(means, 1.0, c) <= sum(gaps) / (2 * K) + 1e-12
