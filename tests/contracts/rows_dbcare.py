"""dbcare: the DBCARE policy as a plain numpy object: pickled mid-run it resumes identically; numpy scalars in."""

import copy

import numpy as np
from contract_fixtures import pickle_round_trip
from contract_table import not_applicable, row

C = "dbcare"


def _run(policy, rng, means, max_rounds=None):
    """Drive the policy; returns it and the arms it pulled."""
    pulls, rounds = [], 0
    while not policy.should_stop() and (max_rounds is None or rounds < max_rounds):
        for arm in policy.select_arms():
            policy.update(arm, rng.normal(means[arm], 1.0))
            pulls.append(int(arm))
        rounds += 1
    return policy, pulls


@row(C, "numpy", "a DBCARE policy pickled (and deep-copied) mid-run resumes to the same pulls and answer")
def _resume(tmp_path):
    from neurips25.dbcare import DBCARE

    means = [0.0, 0.4, 0.5]
    policy, first = _run(DBCARE(cost=1e-3, sigma=1.0).reset(n_arms=3), np.random.default_rng(0), means,
                         max_rounds=20)
    assert first and not policy.should_stop()
    outs = []
    for again in (pickle_round_trip(policy), copy.deepcopy(policy), policy):
        done, rest = _run(again, np.random.default_rng(1), means)
        outs.append((done.recommend(), rest))
    assert outs[0] == outs[1] == outs[2] and len(outs[0][1]) > 0


@row(C, "numpy", "numpy scalars and float32 means are accepted like Python numbers (same risk estimate)")
def _numpy_scalars(tmp_path):
    from neurips25.dbcare import DBCARE, simulate

    a = simulate(DBCARE(cost=1e-2, sigma=1.0), [0.0, 0.5], n_reps=50, seed=0)
    b = simulate(DBCARE(cost=np.float64(1e-2), sigma=np.float32(1.0)), np.array([0.0, 0.5], np.float32),
                 n_reps=np.int64(50), seed=np.int64(0))
    assert a.risk == b.risk and a.mean_samples == b.mean_samples


not_applicable(C, "torch", "dtype / bfloat16 / torch.compile", "numpy only (a sequential-testing policy)")
not_applicable(C, "sklearn", "check_estimator", "a bandit policy (select_arms / update / recommend), not an "
               "estimator")
