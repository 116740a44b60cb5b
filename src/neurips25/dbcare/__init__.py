r"""DBCARE: cost-aware best-arm identification (Harding & Kandasamy, NeurIPS 2025, arXiv 2505.20583).

Best-arm identification without a budget or a confidence level: the learner pays ``cost`` for every
pull and, when it stops, a penalty for the arm it recommends (misidentification probability or
simple regret), and minimises the sum. :class:`DBCARE` is an elimination race whose stopping cap
grows as arms are eliminated; :func:`simulate` estimates any policy's risk with all replications
vectorised; :func:`lower_bound_mi` / :func:`lower_bound_sr` give the two-arm lower bounds and
:func:`k_arm_lower_bound_mi` / :func:`k_arm_lower_bound_sr` their K-arm forms (in terms of
:math:`H = \sum_k \sigma^2/\Delta_k^2`). Environments: Gaussian, Bernoulli, and
:class:`EmpiricalBandit` (bootstrap or replay over logged A/B outcomes).

Example
-------
>>> from neurips25.dbcare import DBCARE, simulate
>>> simulate(DBCARE(cost=1e-4), [0.0, -0.3], n_reps=1000, seed=0).p_error < 0.05
True
"""

from neurips25.dbcare.bandits import BernoulliBandit, EmpiricalBandit, GaussianBandit, RewardTable
from neurips25.dbcare.baselines import (
    LUCB,
    Guess,
    OracleFixedBudget,
    SequentialHalving,
    SuccessiveElimination,
    TrackAndStop,
    UniformFixedBudget,
)
from neurips25.dbcare.lower_bounds import (
    complexity_h,
    k_arm_lower_bound_mi,
    k_arm_lower_bound_sr,
    lower_bound_mi,
    lower_bound_sr,
    worst_case_lower_bound_sr,
)
from neurips25.dbcare.policy import DBCARE, radius_mi, radius_sr
from neurips25.dbcare.round_robin import RoundRobinPolicy, SigmaMismatchWarning, check_sigma
from neurips25.dbcare.simulate import RiskEstimate, simulate

__all__ = [
    "DBCARE", "radius_mi", "radius_sr", "RoundRobinPolicy", "simulate", "RiskEstimate", "SigmaMismatchWarning",
    "check_sigma",
    "GaussianBandit", "BernoulliBandit", "EmpiricalBandit", "RewardTable",
    "lower_bound_mi", "lower_bound_sr", "worst_case_lower_bound_sr",
    "k_arm_lower_bound_mi", "k_arm_lower_bound_sr", "complexity_h",
    "UniformFixedBudget", "SequentialHalving", "SuccessiveElimination", "LUCB", "TrackAndStop", "Guess",
    "OracleFixedBudget",
]
