"""DBCARE: lower bounds, the vectorised engines against a plain loop, invariants, bad input."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neurips25.dbcare import (
    DBCARE,
    LUCB,
    GaussianBandit,
    Guess,
    OracleFixedBudget,
    RewardTable,
    SequentialHalving,
    SuccessiveElimination,
    TrackAndStop,
    UniformFixedBudget,
    lower_bound_mi,
    lower_bound_sr,
    simulate,
    worst_case_lower_bound_sr,
)
from neurips25.dbcare.simulate import run_round_robin, run_two_arm


def test_lower_bound_mi_hand_computed():
    # gap 0.1, sigma 1, c 1e-4: (1e-4 / (4 * 0.01)) * log(e * 100) = 0.0025 * (1 + ln 100)
    assert lower_bound_mi(0.1, 1.0, 1e-4) == pytest.approx(0.0025 * (1 + math.log(100)), rel=1e-12)
    # below the transition the bound is the constant 1/4
    assert lower_bound_mi(0.005, 1.0, 1e-4) == 0.25
    # sigma scales the gap: LB(gap, sigma) = LB(gap / sigma, 1)
    assert lower_bound_mi(0.2, 2.0, 1e-4) == pytest.approx(lower_bound_mi(0.1, 1.0, 1e-4))


def test_lower_bounds_continuous_at_their_transitions():
    c = 1e-4
    d = math.sqrt(c)
    assert lower_bound_mi(d * (1 + 1e-9), 1.0, c) == pytest.approx(0.25, rel=1e-6)
    d_sr = c ** (1 / 3)
    assert lower_bound_sr(d_sr * (1 + 1e-9), 1.0, c) == pytest.approx(d_sr / 4, rel=1e-6)
    assert lower_bound_sr(d_sr * (1 - 1e-9), 1.0, c) == pytest.approx(d_sr / 4, rel=1e-6)


def test_worst_case_sr_bound_is_the_max_over_gaps():
    gaps = np.logspace(-4, 1, 200_000)
    assert worst_case_lower_bound_sr(1.0, 1e-4) == pytest.approx(lower_bound_sr(gaps, 1.0, 1e-4).max(), rel=1e-6)


def _plain_loop(policy, table, reps):
    """One replication at a time through the episode interface, reading the same reward table."""
    recs, pulls = [], []
    for r in range(reps):
        policy.reset(table.bandit.n_arms)
        counts = np.zeros(table.bandit.n_arms, dtype=int)
        while not policy.should_stop():
            for arm in policy.select_arms():
                reward = table.lookup(np.array([r]), np.array([arm]), np.array([counts[arm]]))[0]
                counts[arm] += 1
                policy.update(arm, reward)
        recs.append(policy.recommend())
        pulls.append(policy.total_pulls)
    return np.array(recs), np.array(pulls)


@pytest.mark.parametrize("means,risk", [([0.0, -0.2], "mi"), ([0.0, -0.05, -0.3, -0.1], "mi"),
                                        ([0.0, -0.3, -0.15], "sr")])
def test_vectorised_engine_equals_plain_loop(means, risk):
    reps = 6
    policy = DBCARE(cost=1e-3, sigma=1.0, risk=risk)
    bandit = GaussianBandit(means, 1.0)
    table = RewardTable(bandit, reps, seed=11, block=37)  # a small block exercises block boundaries
    rec, pulls, _ = run_round_robin(policy, table, np.zeros((reps, len(means))), np.random.default_rng(0))
    rec_loop, pulls_loop = _plain_loop(policy, RewardTable(bandit, reps, seed=11, block=37), reps)
    np.testing.assert_array_equal(rec, rec_loop)
    np.testing.assert_array_equal(pulls, pulls_loop)


@pytest.mark.parametrize("policy", [DBCARE(1e-3), DBCARE(1e-3, risk="sr"), UniformFixedBudget(40),
                                    SequentialHalving(60), SuccessiveElimination(0.1, max_pulls=4000),
                                    LUCB(0.1, max_pulls=4000), TrackAndStop(0.1, max_pulls=4000)])
def test_two_arm_fast_path_equals_general_engine(policy):
    bandit = GaussianBandit([0.0, -0.15], 1.0)
    reps = 200
    jitter = np.zeros((reps, 2))
    a = run_two_arm(policy, RewardTable(bandit, reps, 5), jitter, np.random.default_rng(0))
    b = run_round_robin(policy, RewardTable(bandit, reps, 5), jitter, np.random.default_rng(0))
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


def test_common_random_numbers_and_seed_determinism():
    e1 = simulate(DBCARE(1e-4), [0.0, -0.1], 1.0, 1e-4, 500, seed=3)
    e2 = simulate(DBCARE(1e-4), [0.0, -0.1], 1.0, 1e-4, 500, seed=3)
    assert e1 == e2
    assert simulate(DBCARE(1e-4), [0.0, -0.1], 1.0, 1e-4, 500, seed=4) != e1


@settings(max_examples=25, deadline=None)
@given(gap=st.floats(1e-3, 2.0), k=st.integers(2, 5), log_c=st.floats(-4, -2), risk=st.sampled_from(["mi", "sr"]))
def test_dbcare_invariants(gap, k, log_c, risk):
    c = 10**log_c
    means = -gap * np.arange(k) / max(k - 1, 1)
    pol = DBCARE(c, 1.0, risk)
    est = simulate(pol, means, 1.0, c, n_reps=40, seed=1)
    assert 0 <= est.p_error <= 1 and est.simple_regret >= 0
    # every surviving arm is pulled once per round and a round never starts past N*(2)
    assert est.mean_samples <= k * math.ceil(float(pol.budget(2))) + 1e-9
    assert est.risk_mi == pytest.approx(est.p_error + c * est.mean_samples)
    assert est.risk_sr == pytest.approx(est.simple_regret + c * est.mean_samples)


def test_guess_and_oracle_references():
    g = simulate(Guess(), [0.0, -1.0], 1.0, 1e-4, 4000, seed=0)
    assert g.mean_samples == 0 and abs(g.p_error - 0.5) < 0.05
    # on a huge gap the oracle pulls little and is nearly always right
    o = simulate(OracleFixedBudget(1e-4), [0.0, -3.0], 1.0, 1e-4, 2000, seed=0)
    assert o.p_error < 0.01 and 0 < o.mean_samples < 50


def test_fixed_confidence_cap_is_counted():
    est = simulate(SuccessiveElimination(0.1, max_pulls=2000), [0.0, -1e-4], 1.0, 1e-4, 50, seed=0)
    assert est.cap_rate == 1.0 and est.mean_samples == pytest.approx(2000)


def test_k_arm_adaptive_policies_find_a_clear_best_arm():
    means = [0.0, -1.0, -1.2, -1.5]
    for pol in (LUCB(0.1, max_pulls=1e4), TrackAndStop(0.1, max_pulls=1e4)):
        est = simulate(pol, means, 1.0, 1e-4, 60, seed=0)
        assert est.p_error <= 0.1 and est.cap_rate == 0


def test_track_and_stop_weights_match_two_arm_closed_form():
    w = TrackAndStop(0.1).optimal_weights(np.array([[1.0, 0.3], [0.0, 2.0]]))
    np.testing.assert_allclose(w, 0.5, atol=1e-6)
    w3 = TrackAndStop(0.1).optimal_weights(np.array([[1.0, 0.0, 0.5]]))
    assert w3.sum() == pytest.approx(1) and w3[0, 2] > w3[0, 1]  # the closer arm needs more samples


def test_episode_interface_guards():
    pol = DBCARE(1e-3)
    with pytest.raises(RuntimeError, match="reset"):
        pol.select_arms()
    pol.reset(2)
    arms = pol.select_arms()
    with pytest.raises(ValueError, match="not requested"):
        pol.update(5, 0.0)
    with pytest.raises(ValueError, match="finite"):
        pol.update(arms[0], float("nan"))


@pytest.mark.parametrize("kwargs,match", [
    (dict(cost=0.0), "cost"), (dict(cost=-1.0), "cost"), (dict(cost=1e-4, sigma=0.0), "sigma"),
    (dict(cost=1e-4, risk="regret"), "risk"),
])
def test_dbcare_bad_parameters(kwargs, match):
    with pytest.raises(ValueError, match=match):
        DBCARE(**kwargs)


def test_simulate_bad_input():
    with pytest.raises(ValueError, match="at least 2 arms"):
        simulate(DBCARE(1e-4), [0.0], 1.0, 1e-4, 10, 0)
    with pytest.raises(ValueError, match="NaN"):
        simulate(DBCARE(1e-4), [0.0, float("nan")], 1.0, 1e-4, 10, 0)
    with pytest.raises(ValueError, match="cost"):
        simulate(DBCARE(1e-4), [0.0, 1.0], 1.0, 0.0, 10, 0)
    with pytest.raises(ValueError, match="sigma"):
        simulate(DBCARE(1e-4), [0.0, 1.0], -1.0, 1e-4, 10, 0)
    with pytest.raises(ValueError, match="Bernoulli"):
        simulate(DBCARE(1e-4), [0.0, 1.5], 1.0, 1e-4, 10, 0, env="bernoulli")
    with pytest.raises(ValueError, match="delta"):
        SuccessiveElimination(1.5)
