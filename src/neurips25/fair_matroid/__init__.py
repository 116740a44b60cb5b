"""Price of opportunity fairness in matroid allocation problems.

Castera, Garrido-Lucero, Loiseau, Mauras, Molina & Perchet, "The Price of Opportunity Fairness in
Matroid Allocation Problems", NeurIPS 2025 (arXiv 2403.00397).

Agents split into groups are served subject to a matroid (e.g. a bipartite matching market). An
allocation is opportunity-fair when every group gets the same fraction of what it could get alone;
the price of fairness (PoF) is the largest allocation over the largest fair one. Through the
polymatroid of group counts the PoF needs only ``2^C - 1`` rank evaluations; it is at most ``C - 1``
and equals 1 for two groups. It is attained by a lottery over allocations (:func:`fair_lottery`), not
in general by one allocation. When agents are coloured at random, the PoF of any matroid tends to at
most ``B(p_max, C)`` (:func:`pof_bound_random_coloring`), which is 1 while the largest group's share
``p_max <= 1/(C-1)`` (reconstructed statement; see docs/fair_matroid.md).

Example
-------
>>> from neurips25.fair_matroid import UniformMatroid, price_of_fairness
>>> price_of_fairness(UniformMatroid(4, 2), [{0, 1}, {2, 3}])
1.0
"""

from neurips25.fair_matroid.groups import resolve_groups
from neurips25.fair_matroid.intersection import matroid_intersection
from neurips25.fair_matroid.lottery import FairLottery, fair_lottery
from neurips25.fair_matroid.matroids import (
    DirectSum,
    GraphicMatroid,
    Matroid,
    PartitionMatroid,
    TransversalMatroid,
    UniformMatroid,
)
from neurips25.fair_matroid.pof import (
    group_rank_function,
    integral_fair_allocation,
    integral_price_of_fairness,
    max_fair_allocation,
    max_fair_scale,
    opportunity_entitlements,
    price_of_fairness,
)
from neurips25.fair_matroid.random_models import (
    bottleneck_graphic,
    congested_direct_sum,
    congested_g,
    er_market,
    extremal_coloring_instance,
    hub_market,
    large_market_limit,
    pof_bound_random_coloring,
    random_coloring,
    random_graphic,
    worst_case_instance,
    worst_case_value,
)

__all__ = [
    "Matroid", "UniformMatroid", "PartitionMatroid", "GraphicMatroid", "TransversalMatroid", "DirectSum",
    "matroid_intersection", "resolve_groups", "group_rank_function", "opportunity_entitlements",
    "max_fair_scale", "price_of_fairness", "integral_price_of_fairness", "fair_lottery", "FairLottery",
    "integral_fair_allocation", "max_fair_allocation", "random_coloring", "pof_bound_random_coloring",
    "extremal_coloring_instance", "hub_market", "random_graphic", "worst_case_instance", "worst_case_value",
    "er_market", "congested_direct_sum", "congested_g", "large_market_limit", "bottleneck_graphic",
]
