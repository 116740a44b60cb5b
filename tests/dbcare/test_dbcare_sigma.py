"""The step-by-step API checks the rewards against the policy's sigma, with simulate's check (issue #59).

A sigma far below the rewards' spread makes DBCARE eliminate on noise (a ~49% error rate on two arms);
``simulate`` refuses the mismatch against the environment's sigma, and the episode API now warns from the
rewards it is given: their pooled within-arm spread when an arm has two or more rewards, and for a decision
on one reward per arm, how far apart those rewards are in units of sigma.
"""

import warnings

import numpy as np
import pytest

from neurips25.dbcare import DBCARE, LUCB, SigmaMismatchWarning, SuccessiveElimination, TrackAndStop, simulate


def _episode(policy, means, sd, rng, n_arms=None, bernoulli=False):
    policy.reset(n_arms or len(means))
    while not policy.should_stop():
        for arm in policy.select_arms():
            r = float(rng.random() < means[arm]) if bernoulli else rng.normal(means[arm], sd)
            policy.update(arm, r)
    return policy.recommend()


@pytest.mark.parametrize("sigma", [0.01, 0.1])
def test_a_sigma_far_below_the_rewards_spread_warns_in_the_step_api(sigma):
    rng = np.random.default_rng(0)
    with pytest.warns(SigmaMismatchWarning, match=f"DBCARE assumes sigma={sigma:g}"):
        _episode(DBCARE(cost=1e-4, sigma=sigma), [0.0, -0.3], 1.0, rng)


def test_the_warning_estimates_the_rewards_sigma_when_arms_have_repeats():
    rng = np.random.default_rng(1)
    seen = []
    for _ in range(30):  # sigma 0.3 against sd 1: some episodes run several rounds before deciding
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            _episode(DBCARE(cost=1e-4, sigma=0.3), [0.0, -0.3], 1.0, rng)
        seen += [str(x.message) for x in w if issubclass(x.category, SigmaMismatchWarning)]
    assert any("the rewards have sigma ~" in m and "build DBCARE with sigma >=" in m for m in seen), seen


@pytest.mark.parametrize("make", [lambda: DBCARE(cost=1e-4, sigma=1.0), lambda: SuccessiveElimination(sigma=1.0),
                                  lambda: LUCB(sigma=1.0), lambda: TrackAndStop(sigma=1.0)])
def test_a_right_sigma_never_warns(make):
    rng = np.random.default_rng(2)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        for _ in range(20):
            _episode(make(), [0.0, -0.5, -0.8], 1.0, rng)
        for _ in range(20):  # Bernoulli rewards with their sub-Gaussian parameter 0.5
            _episode(DBCARE(cost=1e-3, sigma=0.5), [0.4, 0.2], None, rng, bernoulli=True)
    msgs = [str(x.message) for x in w if issubclass(x.category, SigmaMismatchWarning)]
    assert not [m for m in msgs if "the rewards have sigma" in m], msgs
    assert not msgs, msgs


@pytest.mark.parametrize("make", [lambda: SuccessiveElimination(sigma=0.02), lambda: LUCB(sigma=0.02),
                                  lambda: TrackAndStop(sigma=0.02)])
def test_the_baselines_with_a_sigma_warn_too(make):
    rng = np.random.default_rng(3)
    with pytest.warns(SigmaMismatchWarning, match="sigma=0.02"):
        for _ in range(5):
            _episode(make(), [0.0, -0.5, -0.8], 1.0, rng)


def test_simulate_and_the_step_api_share_the_message():
    with pytest.raises(ValueError) as err:
        simulate(DBCARE(1e-4, sigma=0.01), [0.0, -0.3], sigma=1.0, n_reps=10)
    assert "DBCARE assumes sigma=0.01 but the rewards have sigma=1" in str(err.value)


def test_simulate_on_logged_outcomes_without_a_sigma_checks_their_spread():
    from neurips25.dbcare import EmpiricalBandit

    rng = np.random.default_rng(4)
    logs = [rng.normal(0.0, 1.0, 500), rng.normal(-0.3, 1.0, 500)]
    with pytest.warns(SigmaMismatchWarning, match=r"DBCARE assumes sigma=0.01 but the rewards have sigma ~1"):
        simulate(DBCARE(1e-4, sigma=0.01), EmpiricalBandit(logs), n_reps=20, seed=0)
    binary = [rng.random(500) < 0.3, rng.random(500) < 0.2]
    with warnings.catch_warnings():
        warnings.simplefilter("error", SigmaMismatchWarning)
        simulate(DBCARE(1e-4, sigma=1.0), EmpiricalBandit(logs), n_reps=20, seed=0)
        simulate(DBCARE(1e-4, sigma=0.5), EmpiricalBandit(binary), n_reps=20, seed=0)
