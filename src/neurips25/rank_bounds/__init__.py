"""Rank-sparse generalization bounds: Schatten-p bounds and their classic rivals for torch models.

Paper: Antoine Ledent, Rodrigo Alves, Yunwen Lei, "Generalization Bounds for Rank-sparse Neural Networks",
NeurIPS 2025 (arXiv 2510.21945).

Idea. Networks trained by gradient methods with weight decay end with approximately low-rank weights (the
bottleneck rank of Jacot et al.). For a depth-L linear network, weight decay IS a Schatten quasi-norm penalty:
``min sum_l ||W_l||_F^2 = L ||A||_{S_{2/L}}^{2/L}`` over factorisations of ``A``. The paper bounds the
generalization gap by the Schatten-p quasi-norms ``||W||_{S_p} = (sum_i sigma_i^p)^{1/p}`` of the weights:
for small p the sample complexity is ``O~(W r L^2)`` (W width, r rank, L depth) instead of parameter
counting's ``O~(W^2 L)``, and as p grows the bound becomes norm-based.

Reconstructed. The paper's theorem and constants were not available. :func:`schatten_rank_bound` and
:func:`exact_rank_dudley_bound` are a self-consistent derivation (low-rank covers of each layer, telescoping
perturbation, Dudley's integral) with the paper's stated limits; their numbers are not the paper's. The
reported bound is the better of the Schatten-p relaxation (cover rank capped at ``min(d_l, d_{l-1})``) and the
exact singular-value count, priced in the union bound; :func:`full_rank_dudley_bound` is its control (rank
sparsity removed). The classic rivals follow their published statements (see each docstring).

Public API::

    from neurips25.rank_bounds import GeneralizationReport
    report = GeneralizationReport(model, X_train, y_train, margin=0.05)
    report.compute()            # {name: BoundResult(value, log10_value, terms)}
    print(report.to_markdown())

Citation::

    @inproceedings{ledent2025ranksparse,
      title={Generalization Bounds for Rank-sparse Neural Networks},
      author={Ledent, Antoine and Alves, Rodrigo and Lei, Yunwen},
      booktitle={Advances in Neural Information Processing Systems},
      year={2025}}
"""

from neurips25.rank_bounds.bounds import (
    DEFAULT_P_GRID,
    BoundResult,
    DataStats,
    LayerSpectrum,
    bartlett_spectral_bound,
    exact_rank_dudley_bound,
    full_rank_dudley_bound,
    golowich_frobenius_bound,
    neyshabur_pacbayes_bound,
    param_count_bound,
    path_norm_bound,
    schatten_rank_bound,
)
from neurips25.rank_bounds.linear_nets import (
    WeightDecayCheck,
    balanced_factorization,
    schatten_penalty,
    weight_decay_equals_schatten,
)
from neurips25.rank_bounds.spectra import (
    conv_operator_singular_values,
    effective_rank,
    numerical_rank,
    schatten_quasi_norm,
    singular_values,
)

_TORCH_NAMES = {
    "LayerInfo": "neurips25.rank_bounds.layers",
    "UnsupportedModelError": "neurips25.rank_bounds.layers",
    "extract_layers": "neurips25.rank_bounds.layers",
    "GeneralizationReport": "neurips25.rank_bounds.evaluate",
    "layer_spectra": "neurips25.rank_bounds.evaluate",
    "margins": "neurips25.rank_bounds.evaluate",
    "path_norm": "neurips25.rank_bounds.evaluate",
    "BOUND_NAMES": "neurips25.rank_bounds.evaluate",
}


def __getattr__(name):
    # the torch-facing half is imported lazily, so the pure-numpy bounds work without the torch extra
    if name in _TORCH_NAMES:
        import importlib

        return getattr(importlib.import_module(_TORCH_NAMES[name]), name)
    raise AttributeError(f"module 'neurips25.rank_bounds' has no attribute {name!r}")


__all__ = [
    "DEFAULT_P_GRID",
    "BoundResult",
    "DataStats",
    "LayerSpectrum",
    "schatten_rank_bound",
    "exact_rank_dudley_bound",
    "full_rank_dudley_bound",
    "param_count_bound",
    "bartlett_spectral_bound",
    "neyshabur_pacbayes_bound",
    "golowich_frobenius_bound",
    "path_norm_bound",
    "schatten_quasi_norm",
    "effective_rank",
    "numerical_rank",
    "singular_values",
    "conv_operator_singular_values",
    "schatten_penalty",
    "balanced_factorization",
    "weight_decay_equals_schatten",
    "WeightDecayCheck",
    *_TORCH_NAMES,
]
