"""Simulated cohorts: coalescent genotypes (msprime) and multitask liability-threshold phenotypes.

Genotypes come from ``msprime`` (real coalescent LD structure, optionally two ancestries that split
``split_time`` generations ago). Phenotypes are a liability-threshold model with additive effects
plus many small pairwise interactions (epistasis) within and across LD blocks, correlated across
diseases, binarised at each disease's prevalence. The pair term is residualised on every per-SNP
column (dosages and carrier indicators), so its variance (the non-linear heritability) is out of reach
of any additive or additive + dominance model.
Nothing is downloaded.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import torch

from neurips25.extras import require

__all__ = [
    "Cohort",
    "GenotypeDataset",
    "simulate_genotypes",
    "simulate_phenotypes",
    "simulate_cohort",
    "cohort_from_genotypes",
    "standardize_genotypes",
]


@dataclasses.dataclass
class Cohort:
    """A genotyped cohort with phenotypes.

    Attributes
    ----------
    dosages : np.ndarray
        int8 ``[N, L]`` allele counts in {0, 1, 2}, ``-1`` = missing.
    labels : np.ndarray
        float32 ``[N, T]`` disease status (0/1).
    covariates : np.ndarray
        float32 ``[N, C]`` (sex, PC1).
    ancestry : np.ndarray
        int ``[N]`` population index (0 = majority).
    chromosome, position : np.ndarray
        ``[L]`` chromosome number and base-pair position of each SNP.
    truth : dict
        The planted genetic architecture (causal SNPs, effects, interacting pairs, liabilities).
    """

    dosages: np.ndarray
    labels: np.ndarray
    covariates: np.ndarray
    ancestry: np.ndarray
    chromosome: np.ndarray
    position: np.ndarray
    truth: dict = dataclasses.field(default_factory=dict)

    @property
    def n_individuals(self) -> int:
        return self.dosages.shape[0]

    def subset(self, index) -> Cohort:
        """The individuals ``index`` (SNP annotations and truth are shared)."""
        index = np.asarray(index)
        return dataclasses.replace(self, dosages=self.dosages[index], labels=self.labels[index],
                                   covariates=self.covariates[index], ancestry=self.ancestry[index])

    def dataset(self) -> GenotypeDataset:
        return GenotypeDataset(self.dosages, self.labels, self.covariates)


class GenotypeDataset(torch.utils.data.Dataset):
    """Torch dataset of (dosages ``[L]`` long, labels ``[T]`` float, covariates ``[C]`` float).

    Validates once: dosages in {-1, 0, 1, 2}, labels 0/1 without NaN, matching lengths.
    """

    def __init__(self, dosages, labels, covariates=None):
        d = np.asarray(dosages)
        if d.ndim != 2:
            raise ValueError(f"`dosages` must be 2-D [N, L], got shape {d.shape}")
        if d.dtype.kind == "f" and np.isnan(d).any():
            raise ValueError("`dosages` contains NaN; code missing genotypes as -1")
        if d.size and (d.min() < -1 or d.max() > 2 or (d.dtype.kind == "f" and (d != np.round(d)).any())):
            raise ValueError("`dosages` must hold values in {-1 (missing), 0, 1, 2}")
        y = np.asarray(labels, dtype=np.float32)
        if y.ndim == 1:
            y = y[:, None]
        if y.ndim != 2 or y.shape[0] != d.shape[0]:
            raise ValueError(f"`labels` must be [N, T] with N={d.shape[0]}, got shape {y.shape}")
        if np.isnan(y).any():
            raise ValueError("`labels` contains NaN phenotypes; drop or impute those individuals first")
        if not np.isin(y, (0.0, 1.0)).all():
            raise ValueError("`labels` must be binary (0/1)")
        self.dosages = torch.as_tensor(d.astype(np.int8))
        self.labels = torch.as_tensor(y)
        if covariates is None:
            self.covariates = torch.zeros(d.shape[0], 0)
        else:
            c = np.asarray(covariates, dtype=np.float32)
            if c.ndim != 2 or c.shape[0] != d.shape[0] or not np.isfinite(c).all():
                raise ValueError(f"`covariates` must be finite [N, C] with N={d.shape[0]}, "
                                 f"got shape {c.shape}")
            self.covariates = torch.as_tensor(c)

    def __len__(self) -> int:
        return self.dosages.shape[0]

    def __getitem__(self, i):
        return self.dosages[i], self.labels[i], self.covariates[i]


def simulate_genotypes(n_individuals: int | Sequence[int], n_snps: int, n_chromosomes: int = 2,
                       chromosome_length: float = 1e6, maf_min: float = 0.05, split_time: float = 1500.0,
                       population_sizes: Sequence[float] = (10_000, 5_000), recombination_rate: float = 1e-8,
                       mutation_rate: float = 1.25e-8, seed: int = 0):
    """Coalescent genotypes for one or two ancestries.

    Parameters
    ----------
    n_individuals : int or sequence of int
        Diploid individuals; a pair ``(n_major, n_minor)`` simulates two populations that split
        ``split_time`` generations ago (sizes ``population_sizes``).
    n_snps : int
        SNPs kept, split evenly over chromosomes: common variants (MAF > ``maf_min`` in the whole
        sample), thinned evenly along each chromosome.
    n_chromosomes : int, default=2
        Independent chromosomes (separate msprime runs).
    chromosome_length : float, default=1e6
        Base pairs per chromosome.
    seed : int
        Drives every msprime call.

    Returns
    -------
    dosages : np.ndarray
        int8 ``[N, n_snps]``, individuals of population 0 first.
    ancestry : np.ndarray
        int ``[N]``.
    chromosome, position : np.ndarray
        ``[n_snps]``.
    """
    msprime = require("msprime", "genomics")
    sizes = [int(n_individuals)] if np.isscalar(n_individuals) else [int(n) for n in n_individuals]
    if not 1 <= len(sizes) <= 2 or min(sizes) < 1:
        raise ValueError(f"`n_individuals` must be a positive int or a pair of them, got {n_individuals!r}")
    if n_snps < n_chromosomes or n_chromosomes < 1:
        raise ValueError(f"`n_snps` ({n_snps}) must be >= `n_chromosomes` ({n_chromosomes}) >= 1")
    if not 0 <= maf_min < 0.5:
        raise ValueError(f"`maf_min` must be in [0, 0.5), got {maf_min}")
    if len(sizes) == 1:
        kwargs = {"samples": sizes[0], "population_size": population_sizes[0]}
    else:
        dem = msprime.Demography()
        dem.add_population(name="major", initial_size=population_sizes[0])
        dem.add_population(name="minor", initial_size=population_sizes[1])
        dem.add_population(name="ancestral", initial_size=population_sizes[0])
        dem.add_population_split(time=split_time, derived=["major", "minor"], ancestral="ancestral")
        kwargs = {"samples": {"major": sizes[0], "minor": sizes[1]}, "demography": dem}
    rng = np.random.default_rng(seed)
    per_chrom = np.full(n_chromosomes, n_snps // n_chromosomes)
    per_chrom[: n_snps % n_chromosomes] += 1
    blocks, chrom, pos = [], [], []
    for c in range(n_chromosomes):
        s1, s2 = (int(x) for x in rng.integers(1, 2**31 - 1, size=2))
        ts = msprime.sim_ancestry(sequence_length=chromosome_length, recombination_rate=recombination_rate,
                                  ploidy=2, random_seed=s1, **kwargs)
        ts = msprime.sim_mutations(ts, rate=mutation_rate, random_seed=s2,
                                   model=msprime.BinaryMutationModel())  # biallelic sites only
        kept, kept_pos = [], []
        for var in ts.variants():
            hap = var.genotypes
            dos = hap[0::2] + hap[1::2]  # sample nodes 2i, 2i+1 belong to individual i
            f = dos.mean() / 2
            if maf_min < f < 1 - maf_min:
                kept.append(dos.astype(np.int8))
                kept_pos.append(var.site.position)
        if len(kept) < per_chrom[c]:
            raise ValueError(f"chromosome {c + 1} has only {len(kept)} SNPs with MAF > {maf_min}; "
                             f"increase `chromosome_length` or lower `n_snps`")
        pick = np.round(np.linspace(0, len(kept) - 1, per_chrom[c])).astype(int)
        blocks.append(np.stack([kept[i] for i in pick], axis=1))
        chrom.append(np.full(per_chrom[c], c + 1))
        pos.append(np.asarray(kept_pos)[pick].astype(np.int64))
    ancestry = np.repeat(np.arange(len(sizes)), sizes)
    return np.concatenate(blocks, axis=1), ancestry, np.concatenate(chrom), np.concatenate(pos)


def standardize_genotypes(dosages: np.ndarray, freq: np.ndarray | None = None):
    """Centre and scale dosages by allele frequency (missing -> 0). Returns (Z float32, freq)."""
    d = np.asarray(dosages)
    obs = d >= 0
    if freq is None:
        freq = np.where(obs, d, 0).sum(0) / np.maximum(2 * obs.sum(0), 1)
    sd = np.sqrt(np.maximum(2 * freq * (1 - freq), 1e-8))
    z = np.where(obs, (d - 2 * freq) / sd, 0.0)
    return z.astype(np.float32), freq


def _correlated_effects(rng, n: int, n_tasks: int, genetic_corr: float) -> np.ndarray:
    cov = np.full((n_tasks, n_tasks), genetic_corr) + (1 - genetic_corr) * np.eye(n_tasks)
    return rng.multivariate_normal(np.zeros(n_tasks), cov, size=n)


def _scale_to(g: np.ndarray, variance: float) -> np.ndarray:
    g = g - g.mean(0)
    sd = g.std(0)
    return np.where(sd > 0, g / np.where(sd > 0, sd, 1) * np.sqrt(variance), 0.0)


def _draw_pairs(rng, n_pairs: int, L: int, chrom: np.ndarray, window: int, cross_frac: float,
                cross_window: int) -> np.ndarray:
    """Distinct SNP pairs on one chromosome: ``1 - cross_frac`` of them at most ``window`` SNPs apart
    (inside an LD block), the rest ``window + 1 .. cross_window`` apart (across blocks)."""
    n_cross = int(round(cross_frac * n_pairs))
    chosen: list = []
    for count, lo, hi in ((n_pairs - n_cross, 1, window), (n_cross, window + 1, cross_window)):
        if count == 0 or hi < lo:
            continue
        first = rng.integers(0, L, size=8 * count + 16)
        second = first + rng.integers(lo, hi + 1, size=first.size)
        ok = second < L
        ok[ok] &= chrom[first[ok]] == chrom[second[ok]]
        cand = np.stack([first[ok], second[ok]], axis=1)
        _, keep = np.unique(cand, axis=0, return_index=True)
        taken = {tuple(p) for p in chosen}
        fresh = [tuple(p) for p in cand[np.sort(keep)] if tuple(p) not in taken]
        chosen.extend(fresh[:count])
    pairs = np.array(chosen, dtype=int).reshape(-1, 2)
    return pairs[np.argsort(pairs[:, 0], kind="stable")]


def _residualize(term: np.ndarray, z: np.ndarray, carriers: np.ndarray | None = None) -> tuple:
    """``term`` minus its least-squares projection on [1, z, carriers] (its per-SNP part).

    With the carrier indicators ``1[d >= 1]`` beside the dosages the columns span every function of one
    SNP's genotype (additive and dominance), so what is left is pure interaction: no per-SNP model, not
    even one coding each genotype separately, can fit it (v3, issue 44; v2 projected on [1, z] only and
    left about a fifth of the term as per-SNP dominance).
    """
    cols = [np.ones((z.shape[0], 1)), z.astype(np.float64)]
    if carriers is not None:
        cols.append(carriers.astype(np.float64))
    X = np.hstack(cols)
    coef, *_ = np.linalg.lstsq(X, term, rcond=None)
    fitted = X @ coef
    var = term.var(0)
    linear_share = np.where(var > 0, fitted.var(0) / np.where(var > 0, var, 1), 0.0)
    return term - fitted, linear_share


def simulate_phenotypes(dosages: np.ndarray, n_tasks: int = 6, h2: float = 0.4,
                        genetic_corr: float | Sequence[float] = (0.3, 0.6),
                        prevalence: Sequence[float] | float = (0.05, 0.2), epistasis_frac: float = 0.5,
                        causal_frac: float = 0.05, pairs_per_snp: float = 0.25, window: int = 4,
                        cross_frac: float = 0.25, cross_window: int = 16, residualize: bool = True,
                        h2_nonlinear: float | None = None, sex: np.ndarray | None = None,
                        sex_var: float = 0.02, chromosome=None, seed: int = 0):
    """Liability-threshold phenotypes with additive and pairwise (epistatic) genetic effects.

    ``liability_t = a_t + e_t + s_t + noise``:

    - ``a_t = Z[:, C] beta_t``, additive, variance ``h2 - h2_nl``;
    - ``e_t = R(sum_p gamma_pt z_i(p) z_j(p))``, the pair term, variance ``h2_nl`` (the *non-linear
      heritability*, ``h2_nl = epistasis_frac * h2`` or ``h2_nonlinear`` when given). ``R``
      residualises on every per-SNP column (least squares on ``[1, Z, 1[d >= 1]]``: dosages and
      carrier indicators, i.e. any function of one genotype) before scaling, so ``h2_nl`` is variance
      that no additive or additive + dominance model can capture; raw products of SNPs in LD are
      largely per-SNP (the v1 simulation: 37-80 % linear), which ``truth["linear_share_raw"]`` reports;
    - ``s_t`` a sex effect, and Gaussian noise.

    Many small pairs: ``pairs_per_snp * L`` of them, ``1 - cross_frac`` within ``window`` SNPs (inside
    an LD block) and ``cross_frac`` ``window + 1 .. cross_window`` apart (across blocks, reached by
    the dilated layers). Effects of the T diseases share SNPs and pairs, with genetic correlation
    ``rho``. Disease t is the top ``prevalence_t`` of ``liability_t``.

    Parameters
    ----------
    dosages : np.ndarray
        ``[N, L]`` in {-1, 0, 1, 2}.
    n_tasks : int
        T diseases.
    h2 : float
        Liability-scale heritability (additive + non-linear).
    genetic_corr : float or (low, high)
        Correlation of effects between diseases; a range draws one value per pair of diseases from
        it (the matrix is made positive definite by clipping eigenvalues).
    prevalence : float or sequence
        One per disease, or ``(low, high)`` spread geometrically over the T diseases.
    epistasis_frac : float
        Share of ``h2`` from the (residualised) pair term; 0 = purely additive.
    causal_frac, pairs_per_snp : float
        Causal additive SNPs and interacting pairs per SNP.
    window : int
        Maximum SNP-index distance of a within-block pair.
    cross_frac : float
        Share of pairs across blocks, ``window < |i - j| <= cross_window``.
    cross_window : int
        Maximum distance of an across-block pair.
    residualize : bool, default=True
        Remove the pair term's per-SNP part (dosage and carrier columns) before scaling (False: the v1
        raw products).
    h2_nonlinear : float, optional
        Non-linear heritability; overrides ``epistasis_frac`` (must be in [0, h2]).
    sex : np.ndarray, optional
        ``[N]`` 0/1; its effect explains ``sex_var`` of the liability.
    chromosome : np.ndarray, optional
        ``[L]``; pairs never span chromosomes.
    seed : int

    Returns
    -------
    labels : np.ndarray
        float32 ``[N, T]``.
    truth : dict
        ``causal``, ``beta``, ``pairs``, ``gamma``, ``liability``, ``additive``, ``epistatic``,
        ``genetic`` (additive + epistatic), ``prevalence``, ``genetic_corr``, ``h2_nonlinear``,
        ``linear_share_raw`` (per task, share of the raw pair term explained by the per-SNP columns).

    Examples
    --------
    >>> g = np.random.default_rng(0).integers(0, 3, size=(500, 40))
    >>> y, truth = simulate_phenotypes(g, n_tasks=2, h2=0.5, h2_nonlinear=0.2, prevalence=0.1)
    >>> round(float(truth["epistatic"].var(0).mean()), 3), truth["pairs"].shape
    (0.2, (10, 2))
    """
    d = np.asarray(dosages)
    if d.ndim != 2:
        raise ValueError(f"`dosages` must be [N, L], got shape {d.shape}")
    if not 0 < h2 < 1:
        raise ValueError(f"`h2` must be in (0, 1), got {h2}")
    if h2_nonlinear is not None:
        if not 0 <= h2_nonlinear <= h2:
            raise ValueError(f"`h2_nonlinear` must be in [0, h2={h2}], got {h2_nonlinear}")
        epistasis_frac = h2_nonlinear / h2
    if not 0 <= epistasis_frac <= 1:
        raise ValueError(f"`epistasis_frac` must be in [0, 1], got {epistasis_frac}")
    if window < 1 or cross_window < window:
        raise ValueError(f"need `window` >= 1 and `cross_window` >= `window`, got window={window}, "
                         f"cross_window={cross_window}")
    if not 0 <= cross_frac <= 1 or pairs_per_snp < 0:
        raise ValueError(f"need `cross_frac` in [0, 1] and `pairs_per_snp` >= 0, got {cross_frac}, "
                         f"{pairs_per_snp}")
    rng = np.random.default_rng(seed)
    N, L = d.shape
    if np.isscalar(prevalence):
        prev = np.full(n_tasks, float(prevalence))
    elif len(prevalence) == 2 and n_tasks != 2:
        prev = np.geomspace(prevalence[0], prevalence[1], n_tasks)
    else:
        prev = np.asarray(prevalence, dtype=float)
    if prev.shape != (n_tasks,) or not ((prev > 0) & (prev < 1)).all():
        raise ValueError(f"`prevalence` must give {n_tasks} values in (0, 1), got {prevalence!r}")
    if np.isscalar(genetic_corr):
        rho = np.full((n_tasks, n_tasks), float(genetic_corr))
    else:
        lo, hi = genetic_corr
        rho = np.zeros((n_tasks, n_tasks))
        iu = np.triu_indices(n_tasks, 1)
        rho[iu] = rng.uniform(lo, hi, size=len(iu[0]))
        rho = rho + rho.T
    np.fill_diagonal(rho, 1.0)
    w, V = np.linalg.eigh(rho)
    rho = (V * np.clip(w, 1e-3, None)) @ V.T
    rho = rho / np.sqrt(np.outer(np.diag(rho), np.diag(rho)))
    chol = np.linalg.cholesky(rho)
    z, _ = standardize_genotypes(d)

    n_causal = max(1, int(round(causal_frac * L)))
    causal = np.sort(rng.choice(L, size=n_causal, replace=False))
    beta = rng.standard_normal((n_causal, n_tasks)) @ chol.T
    additive = _scale_to(z[:, causal] @ beta, (1 - epistasis_frac) * h2)

    chrom = np.ones(L, dtype=int) if chromosome is None else np.asarray(chromosome)
    n_pairs = max(1, int(round(pairs_per_snp * L))) if epistasis_frac > 0 else 0
    pairs = (_draw_pairs(rng, n_pairs, L, chrom, window, cross_frac, cross_window) if n_pairs
             else np.zeros((0, 2), dtype=int))
    gamma = rng.standard_normal((len(pairs), n_tasks)) @ chol.T
    epistatic = np.zeros((N, n_tasks))
    linear_share = np.zeros(n_tasks)
    if len(pairs):
        raw = (z[:, pairs[:, 0]] * z[:, pairs[:, 1]]).astype(np.float64) @ gamma
        resid, linear_share = _residualize(raw, z, (d >= 1).astype(np.float64))
        epistatic = _scale_to(resid if residualize else raw, epistasis_frac * h2)

    sex_term = np.zeros((N, 1))
    if sex is not None:
        sex_term = _scale_to(np.asarray(sex, dtype=float)[:, None], sex_var)
    noise = rng.standard_normal((N, n_tasks)) * np.sqrt(1 - h2 - (sex_var if sex is not None else 0))
    liability = additive + epistatic + sex_term + noise
    thresholds = np.array([np.quantile(liability[:, t], 1 - prev[t]) for t in range(n_tasks)])
    labels = (liability > thresholds).astype(np.float32)
    truth = {"causal": causal, "beta": beta, "pairs": pairs, "gamma": gamma, "liability": liability,
             "additive": additive, "epistatic": epistatic, "genetic": additive + epistatic,
             "prevalence": prev, "genetic_corr": rho, "h2_nonlinear": epistasis_frac * h2 if len(pairs) else 0.0,
             "linear_share_raw": linear_share}
    return labels, truth


def simulate_cohort(n_individuals: int | Sequence[int], n_snps: int, n_tasks: int = 6, *,
                    epistasis_frac: float = 0.5, h2: float = 0.4, prevalence=(0.05, 0.2),
                    genetic_corr=(0.3, 0.6), window: int = 4, missing_rate: float = 0.0,
                    n_chromosomes: int = 2, chromosome_length: float = 1e6, seed: int = 0,
                    **phenotype_kwargs) -> Cohort:
    """Genotypes (:func:`simulate_genotypes`) + phenotypes (:func:`simulate_phenotypes`) + covariates.

    Covariates are sex (random, with a small liability effect) and PC1 of the standardised
    genotypes. ``missing_rate`` sets genotypes to -1 at random after the phenotypes are drawn.

    Examples
    --------
    >>> c = simulate_cohort(200, n_snps=64, n_tasks=2, chromosome_length=2e5, seed=1)
    >>> c.dosages.shape, c.labels.shape, c.covariates.shape
    ((200, 64), (200, 2), (200, 2))
    """
    if not 0 <= missing_rate < 1:
        raise ValueError(f"`missing_rate` must be in [0, 1), got {missing_rate}")
    rng = np.random.default_rng(seed)
    s_geno, s_pheno, s_sex, s_miss = (int(x) for x in rng.integers(0, 2**31 - 1, size=4))
    dosages, ancestry, chrom, pos = simulate_genotypes(
        n_individuals, n_snps, n_chromosomes=n_chromosomes, chromosome_length=chromosome_length, seed=s_geno)
    cohort = cohort_from_genotypes(dosages, n_tasks, ancestry=ancestry, chromosome=chrom, position=pos, h2=h2,
                                   genetic_corr=genetic_corr, prevalence=prevalence, epistasis_frac=epistasis_frac,
                                   window=window, seed=(s_pheno, s_sex), **phenotype_kwargs)
    if missing_rate > 0:
        miss = np.random.default_rng(s_miss).random(dosages.shape) < missing_rate
        cohort.dosages = np.where(miss, -1, dosages).astype(np.int8)
    return cohort


def cohort_from_genotypes(dosages: np.ndarray, n_tasks: int = 6, *, ancestry=None, chromosome=None,
                          position=None, h2: float = 0.4, seed: int | tuple = 0, **phenotype_kwargs) -> Cohort:
    """A :class:`Cohort` from given genotypes: phenotypes (:func:`simulate_phenotypes`) and covariates.

    Covariates are sex (random, with a small liability effect) and PC1 of the standardised genotypes
    (sign fixed so its sum is positive); :func:`simulate_cohort` and the chr22 mosaic cohorts
    (:func:`neurips25.prsformer.mosaic_cohort`) both build theirs here.

    Parameters
    ----------
    dosages : np.ndarray
        ``[N, L]`` in {0, 1, 2}.
    n_tasks : int
        T diseases.
    ancestry, chromosome, position : np.ndarray, optional
        ``[N]`` population index (default all 0), ``[L]`` chromosome (default 1) and base-pair position
        (default ``0..L-1``).
    h2 : float
        Liability-scale heritability; the other phenotype knobs pass through to :func:`simulate_phenotypes`.
    seed : int or (int, int)
        One seed, or the phenotype and sex seeds.

    Examples
    --------
    >>> g = np.random.default_rng(0).integers(0, 3, size=(300, 32)).astype(np.int8)
    >>> c = cohort_from_genotypes(g, 2, h2=0.5, h2_nonlinear=0.2, prevalence=0.1, seed=3)
    >>> c.labels.shape, c.covariates.shape, round(float(c.labels.mean()), 3)
    ((300, 2), (300, 2), 0.1)
    """
    dosages = np.asarray(dosages)
    if dosages.ndim != 2:
        raise ValueError(f"`dosages` must be 2-D [N, L], got shape {dosages.shape}")
    N, L = dosages.shape
    if np.isscalar(seed):
        s_pheno, s_sex = (int(x) for x in np.random.default_rng(seed).integers(0, 2**31 - 1, size=2))
    else:
        s_pheno, s_sex = seed
    chrom = np.ones(L, dtype=int) if chromosome is None else np.asarray(chromosome)
    pos = np.arange(L, dtype=np.int64) if position is None else np.asarray(position)
    ancestry = np.zeros(N, dtype=int) if ancestry is None else np.asarray(ancestry)
    if chrom.shape != (L,) or pos.shape != (L,) or ancestry.shape != (N,):
        raise ValueError(f"`chromosome` / `position` must have {L} entries and `ancestry` {N}; got "
                         f"{chrom.shape}, {pos.shape}, {ancestry.shape}")
    sex = np.random.default_rng(s_sex).integers(0, 2, size=N)
    labels, truth = simulate_phenotypes(dosages, n_tasks, h2=h2, sex=sex, chromosome=chrom, seed=s_pheno,
                                        **phenotype_kwargs)
    z, _ = standardize_genotypes(dosages)
    u, s, _ = np.linalg.svd(z - z.mean(0), full_matrices=False)
    pc1 = u[:, 0] * np.sign(u[:, 0].sum() or 1.0)
    pc1 = (pc1 - pc1.mean()) / (pc1.std() or 1.0)
    covariates = np.stack([sex.astype(np.float32), pc1.astype(np.float32)], axis=1)
    return Cohort(dosages, labels, covariates, ancestry, chrom, pos, truth)
