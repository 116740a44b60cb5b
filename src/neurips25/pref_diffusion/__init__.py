"""Preference-guided diffusion for offline multi-objective optimisation (PGD-MOO).

Annadani, Belakaria, Ermon, Bauer, Engelhardt, "Preference-Guided Diffusion for Multi-Objective Offline
Optimization", NeurIPS 2025 (arXiv:2503.17299).

Given only an offline dataset D = {(x_i, y_i)} of designs and their m objective values (minimised), a
DDPM prior p_theta(x) is trained on the designs and a classifier P_phi(x1 > x2 | t) -- a Bradley-Terry
model on a learned utility of *noised* designs -- is trained to predict which of two designs is
preferred. Labels are diversity-aware: first by non-dominated front, then, inside a front, by crowding
distance. At sampling time the reverse chain is pushed along the preference gradient (Eq. 6)::

    x_{t-1} = (x_t - beta_t / sqrt(1 - abar_t) eps_theta(x_t, t)) / sqrt(alpha_t) + sqrt(beta_t) z
              + w beta_t grad_x log P_phi(x_t > r | t),

with the reference r the particle's previous iterate, so designs move towards (and beyond) the best
data, spread along the front. Because r is the previous iterate, its utility was computed one step
earlier and is reused here (one preference pass fewer per step; the Bradley-Terry weight stays near 0.5,
so guidance is in effect utility ascent). Constrained pymoo problems are handled by constrained
dominance in the labels and in selection (``fit(X, Y, cv=...)``).

Reconstructed here (see docs/pref_diffusion.md): the offline datasets
(generated from pymoo problems and two RE problems, best 40 % pruned), the preference learning rate and
epoch budgets, the respaced sampler at reduced scales, and the hypervolume reference convention.

Citation::

    @inproceedings{annadani2025pgdmoo,
      title={Preference-Guided Diffusion for Multi-Objective Offline Optimization},
      author={Annadani, Yashas and Belakaria, Syrine and Ermon, Stefano and Bauer, Stefan and
              Engelhardt, Barbara E.},
      booktitle={Advances in Neural Information Processing Systems}, year={2025}}
"""

from neurips25.extras import require

require("torch", "moo")
require("pymoo", "moo")

from neurips25.pref_diffusion.algorithm import PreferenceGuidedDiffusion, Result, minimize_offline  # noqa: E402
from neurips25.pref_diffusion.baselines import (  # noqa: E402
    DataBest,
    EnsembleSurrogateNSGA2,
    MultiHeadSurrogateNSGA2,
    UnguidedDiffusion,
)
from neurips25.pref_diffusion.data import OfflineTask, make_offline_task, make_task  # noqa: E402
from neurips25.pref_diffusion.diffusion import DDPM  # noqa: E402
from neurips25.pref_diffusion.guidance import PreferenceGuidance  # noqa: E402
from neurips25.pref_diffusion.metrics import (  # noqa: E402
    deb_spread,
    hv,
    hv_percentile,
    igd,
    mean_pairwise_distance,
    non_dominated,
    normalize_objectives,
    spacing,
    spread,
)
from neurips25.pref_diffusion.nets import EpsMLP, PreferenceNet  # noqa: E402
from neurips25.pref_diffusion.preferences import (  # noqa: E402
    PairSampler,
    crowding_distance,
    diversity_ranks,
    dominance_labels,
    dominates,
    hv_contributions,
)
from neurips25.pref_diffusion.problems import (  # noqa: E402
    RE21,
    RE37,
    constraint_violation,
    get_problem,
    true_front,
)

__all__ = [
    "PreferenceGuidedDiffusion",
    "Result",
    "minimize_offline",
    "MultiHeadSurrogateNSGA2",
    "EnsembleSurrogateNSGA2",
    "UnguidedDiffusion",
    "DataBest",
    "OfflineTask",
    "make_offline_task",
    "make_task",
    "DDPM",
    "PreferenceGuidance",
    "EpsMLP",
    "PreferenceNet",
    "PairSampler",
    "dominates",
    "dominance_labels",
    "crowding_distance",
    "diversity_ranks",
    "hv_contributions",
    "hv",
    "deb_spread",
    "igd",
    "spread",
    "spacing",
    "mean_pairwise_distance",
    "hv_percentile",
    "non_dominated",
    "normalize_objectives",
    "RE21",
    "RE37",
    "get_problem",
    "true_front",
    "constraint_violation",
]
