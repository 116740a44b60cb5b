"""EVA: Explained Variance Adaptation, a data-driven LoRA initialisation.

Paischer, Hauzenberger, Schmied, Alkin, Deisenroth, Hochreiter. "Parameter Efficient Fine-tuning via
Explained Variance Adaptation". NeurIPS 2025 (arXiv:2410.07170).

Idea: before fine-tuning, stream a few batches of downstream data through the frozen model and run an
incremental PCA of every LoRA target layer's input activations ``X`` (mean-centred, padding masked).
Each ``A_i`` is set to the top ``r_i`` right-singular vectors of ``X_i`` and ``B_i = 0``, so the model is
unchanged at step 0 while ``A_i`` captures the largest share of the input variance (which, with B = 0,
maximises the expected gradient signal reaching ``B``). The global rank budget ``R = sum_i r`` is then
redistributed: all layers' explained-variance ratios ``lambda_{i,j} = sigma_{ij}^2 / tr(Sigma_i)`` are
pooled, the top ``R`` win, so layer ``i`` gets ``r_i = |{j : lambda_{i,j} in top R}|`` (``0 <= r_i <= rho r``)
and ``alpha_i = alpha r_i / r``.

Reconstructed (full text not read): the theorem numbering and the whitening variant; see docs/eva.md.

Works on PEFT models (``peft.get_peft_model(model, LoraConfig(...))``); needs the ``lm`` extra.
"""

from neurips25.eva.activations import find_equal_inputs, select_tokens, token_mask
from neurips25.eva.baselines import INITIALIZERS, captured_variance, make_lora_model
from neurips25.eva.incremental_pca import IncrementalPCA
from neurips25.eva.init import EvaStatistics, eva_init, eva_state_dict, load_eva_state_dict, lora_layers
from neurips25.eva.rank import rank_distribution

__all__ = [
    "EvaStatistics",
    "INITIALIZERS",
    "IncrementalPCA",
    "captured_variance",
    "eva_init",
    "eva_state_dict",
    "find_equal_inputs",
    "load_eva_state_dict",
    "lora_layers",
    "make_lora_model",
    "rank_distribution",
    "select_tokens",
    "token_mask",
]
