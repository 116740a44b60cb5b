"""DBCARE: cost-aware best-arm identification (Harding & Kandasamy, NeurIPS 2025, arXiv 2505.20583).

Best-arm identification without a budget or a confidence level: the learner pays ``cost`` for every
pull and, when it stops, a penalty for the arm it recommends (misidentification probability or
simple regret), and minimises the sum. :class:`DBCARE` is an elimination race whose stopping cap
grows as arms are eliminated; :func:`simulate` estimates any policy's risk with all replications
vectorised; :func:`lower_bound_mi` / :func:`lower_bound_sr` give the two-arm lower bounds.

Example
-------
>>> from neurips25.dbcare import DBCARE, simulate
>>> simulate(DBCARE(cost=1e-4), [0.0, -0.3], cost=1e-4, n_reps=1000, seed=0).p_error < 0.05
True
"""

from neurips25.dbcare.bandits import BernoulliBandit, GaussianBandit, RewardTable
from neurips25.dbcare.baselines import (
    LUCB,
    Guess,
    OracleFixedBudget,
    SequentialHalving,
    SuccessiveElimination,
    TrackAndStop,
    UniformFixedBudget,
)
from neurips25.dbcare.lower_bounds import lower_bound_mi, lower_bound_sr, worst_case_lower_bound_sr
from neurips25.dbcare.policy import DBCARE, radius_mi, radius_sr
from neurips25.dbcare.round_robin import RoundRobinPolicy
from neurips25.dbcare.simulate import RiskEstimate, simulate

__all__ = [
    "DBCARE", "radius_mi", "radius_sr", "RoundRobinPolicy", "simulate", "RiskEstimate",
    "GaussianBandit", "BernoulliBandit", "RewardTable", "lower_bound_mi", "lower_bound_sr",
    "worst_case_lower_bound_sr", "UniformFixedBudget", "SequentialHalving", "SuccessiveElimination",
    "LUCB", "TrackAndStop", "Guess", "OracleFixedBudget",
]
