"""Permutation-based SGD with arbitrary, independent and dependent data orders (NeurIPS 2025).

Li, Lyu & Liu, "A Unified Analysis of Stochastic Gradient Descent with Arbitrary Data Permutations
and Beyond" (NeurIPS 2025, arXiv 2501.16117) analyse SGD that visits the n components of
F(x) = (1/n) sum_i f_i(x) in an epoch-wise permutation pi_q. One generalized assumption bounds the
order error phi_q = max_k ||sum_{i<k} (grad f_{pi_q(i)} - grad F)|| by a contraction of the previous
epoch's order error plus the drift of the iterate (dependence across epochs), which covers

- arbitrary orders (incremental gradient, shuffle once): phi = O(n);
- independent orders (random reshuffling, FlipFlop): phi = O(sqrt(n));
- dependent orders (GraB, PairGraB, built from stale gradients): phi = O~(1);

and the same framework applies to federated learning with regularized client participation, where
clients are permuted across the rounds of a cycle.

Public API
----------
- policies (:mod:`.orderings`): :class:`PermutationPolicy`, :class:`Incremental`, :class:`ShuffleOnce`,
  :class:`RandomReshuffling`, :class:`FlipFlop`, :class:`GraB`, :class:`PairGraB`,
  :class:`WithReplacement`; :class:`CDGraB` (:mod:`.distributed`, coordinated over data-parallel ranks);
- numpy core (:mod:`.sgd`): :func:`permuted_sgd`, :func:`order_error`, :func:`prefix_deviation`;
- theory (:mod:`.theory`): :func:`rate`, :func:`fit_dependence`;
- federated (:mod:`.federated`): :class:`RegularizedParticipation`, :class:`UniformParticipation`,
  :func:`fedavg`;
- PyTorch (:mod:`.sampler`, needs the ``torch`` extra, imported on first use):
  :class:`PermutationSampler` (warns with :class:`UncheckedLengthWarning` when built without
  ``dataset=``), :class:`GradientBalancer`, :func:`make_blocks`; per-example Linear
  gradients as factors for the Gram-matrix walk: :class:`FactoredGrads` (:mod:`.factored`).

Reconstructed: the paper's full text was not available; its assumption is implemented as the
recursion phi_q <= A phi_{q-1} + B ||x_q - x_{q-1}|| + C (:func:`fit_dependence`) and the rates checked
are the known ones it must recover. See ``docs/perm_sgd.md``.

Citation::

    @inproceedings{li2025unified,
      title={A Unified Analysis of Stochastic Gradient Descent with Arbitrary Data Permutations and Beyond},
      author={Li, Yipeng and Lyu, Xinchen and Liu, Zhenyu},
      booktitle={Advances in Neural Information Processing Systems (NeurIPS)},
      year={2025}
    }
"""

from neurips25.perm_sgd.distributed import CDGraB
from neurips25.perm_sgd.federated import RegularizedParticipation, UniformParticipation, fedavg
from neurips25.perm_sgd.orderings import (
    FlipFlop,
    GraB,
    Incremental,
    PairGraB,
    PermutationPolicy,
    RandomReshuffling,
    ShuffleOnce,
    WithReplacement,
)
from neurips25.perm_sgd.sgd import order_error, permuted_sgd, prefix_deviation
from neurips25.perm_sgd.theory import fit_dependence, rate

_TORCH_NAMES = ("PermutationSampler", "GradientBalancer", "make_blocks", "FactoredGrads", "UncheckedLengthWarning")

__all__ = [
    "PermutationPolicy",
    "Incremental",
    "ShuffleOnce",
    "RandomReshuffling",
    "FlipFlop",
    "GraB",
    "PairGraB",
    "WithReplacement",
    "CDGraB",
    "order_error",
    "prefix_deviation",
    "permuted_sgd",
    "rate",
    "fit_dependence",
    "RegularizedParticipation",
    "UniformParticipation",
    "fedavg",
    *_TORCH_NAMES,
]


def __getattr__(name: str):
    # torch is an optional extra: the sampler module is imported only when one of its names is used
    if name in _TORCH_NAMES:
        from neurips25.extras import require

        require("torch", "torch")
        from neurips25.perm_sgd import sampler

        return getattr(sampler, name)
    raise AttributeError(f"module 'neurips25.perm_sgd' has no attribute {name!r}")
