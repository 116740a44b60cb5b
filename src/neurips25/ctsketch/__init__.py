"""CTSketch: compositional tensor sketching for scalable neurosymbolic learning.

Paper: "CTSketch: Compositional Tensor Sketching for Scalable Neurosymbolic Learning", Seewon Choi,
Alaia Solko-Breslin, Rajeev Alur, Eric Wong (University of Pennsylvania), NeurIPS 2025 (arXiv 2503.24123).

Idea. A neural network maps each raw input ``x_i`` to a distribution ``p_i`` over symbols; a fixed
black-box program ``c`` maps the symbols to the output, and only ``(x_1..x_n, y)`` is observed. The
program is decomposed into a tree of small sub-programs; each is tabulated into its summary tensor
``T`` and replaced, once and before training, by a low-rank sketch ``T_hat`` (tensor train by default).
The expected output is then a chain of cheap multilinear contractions,

    E_{r ~ p_1 x ... x p_k}[c(r)] = T x_1 p_1 ... x_k p_k  ~  T_hat x_1 p_1 ... x_k p_k,

differentiable in every ``p_i``; between levels the expected value is re-binned into a distribution with
a Gaussian kernel. The sum of 1,024 digits becomes a 10-level binary tree of two-input sums.

Reconstructed here (not confirmed from the paper's full text): the error bound
``|<T - T_hat, p_1 o ... o p_k>| <= ||T - T_hat||_F prod ||p_i||_2``; per-node (rather than per-batch)
kernel widths. Not in the paper, offered as options: ``rebin="moments"`` with ``loss="gaussian_nll"``
(nodes carry propagated variances), ``entropy_weight``, and a curriculum over the number of inputs
(:func:`fit_curriculum`). See ``docs/ctsketch.md``.

Citation::

    @inproceedings{choi2025ctsketch,
      title={CTSketch: Compositional Tensor Sketching for Scalable Neurosymbolic Learning},
      author={Choi, Seewon and Solko-Breslin, Alaia and Alur, Rajeev and Wong, Eric},
      booktitle={Advances in Neural Information Processing Systems (NeurIPS)},
      year={2025}
    }
"""

from neurips25.extras import require

require("torch", "tensor")

from neurips25.ctsketch.baselines import ExactEnumeration, ReinforceLearner  # noqa: E402
from neurips25.ctsketch.contract import (  # noqa: E402
    check_distributions,
    contract,
    dense_contract,
    enumeration_memory_bytes,
    error_bound,
)
from neurips25.ctsketch.curriculum import CurriculumStage, fit_curriculum  # noqa: E402
from neurips25.ctsketch.data import DigitTupleDataset, load_digits_split, load_mnist_idx, make_tuples  # noqa: E402
from neurips25.ctsketch.decompose import (  # noqa: E402
    CPSketch,
    Sketch,
    TTSketch,
    TuckerSketch,
    cp_decompose,
    decompose,
    tt_decompose,
    tucker_decompose,
)
from neurips25.ctsketch.learner import CTSketchLearner, TupleLearner  # noqa: E402
from neurips25.ctsketch.program import program_image, tensorize  # noqa: E402
from neurips25.ctsketch.sketch import SketchedProgram  # noqa: E402
from neurips25.ctsketch.tree import ProgramTree, auto_sigma, mod_sum_tree, sum_tree, to_distribution  # noqa: E402

__all__ = [
    "tensorize",
    "program_image",
    "Sketch",
    "TTSketch",
    "CPSketch",
    "TuckerSketch",
    "tt_decompose",
    "cp_decompose",
    "tucker_decompose",
    "decompose",
    "contract",
    "dense_contract",
    "check_distributions",
    "error_bound",
    "enumeration_memory_bytes",
    "SketchedProgram",
    "ProgramTree",
    "to_distribution",
    "auto_sigma",
    "sum_tree",
    "mod_sum_tree",
    "TupleLearner",
    "CTSketchLearner",
    "CurriculumStage",
    "fit_curriculum",
    "ExactEnumeration",
    "ReinforceLearner",
    "DigitTupleDataset",
    "load_digits_split",
    "make_tuples",
    "load_mnist_idx",
]
