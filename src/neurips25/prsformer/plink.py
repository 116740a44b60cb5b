"""PLINK 1 binary genotype files (.bed/.bim/.fam) through ``bed-reader``.

Users bring their own cohort: :func:`read_plink` returns the int8 dosage matrix PRSformer takes
(``-1`` = missing) with the variant (.bim) and sample (.fam) tables as dicts of numpy arrays.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from neurips25.extras import require

__all__ = ["read_plink", "write_plink"]

BIM_FIELDS = ("chromosome", "sid", "cm_position", "bp_position", "allele_1", "allele_2")
FAM_FIELDS = ("fid", "iid", "father", "mother", "sex", "pheno")
_BED_MAGIC = bytes([0x6C, 0x1B, 0x01])  # PLINK 1 .bed, SNP-major


def _paths(prefix) -> dict[str, Path]:
    prefix = Path(prefix)
    if prefix.suffix in (".bed", ".bim", ".fam"):
        prefix = prefix.with_suffix("")
    return {ext: prefix.with_name(prefix.name + "." + ext) for ext in ("bed", "bim", "fam")}


def _count_lines(path: Path) -> int:
    with open(path, "rb") as fh:
        return sum(1 for line in fh if line.strip())


def read_plink(prefix, count_a1: bool = True):
    """Read a PLINK .bed/.bim/.fam trio.

    Parameters
    ----------
    prefix : str or Path
        Path without extension (``data/cohort`` for ``data/cohort.bed`` ...); an extension is dropped.
    count_a1 : bool, default=True
        Count allele 1 (PLINK's convention); False counts allele 2.

    Returns
    -------
    dosages : np.ndarray
        int8 ``[n_individuals, n_snps]`` in {0, 1, 2}, ``-1`` = missing.
    bim : dict
        ``chromosome, sid, cm_position, bp_position, allele_1, allele_2`` arrays of length n_snps.
    fam : dict
        ``fid, iid, father, mother, sex, pheno`` arrays of length n_individuals.

    Raises
    ------
    FileNotFoundError
        A file of the trio is missing.
    ValueError
        The .bed is not SNP-major PLINK 1, or its size does not match the .bim/.fam counts.

    Examples
    --------
    >>> import tempfile, os
    >>> d = tempfile.mkdtemp()
    >>> write_plink(os.path.join(d, "toy"), np.array([[0, 1], [2, -1], [1, 1]], dtype=np.int8))
    >>> read_plink(os.path.join(d, "toy"))[0].tolist()
    [[0, 1], [2, -1], [1, 1]]
    """
    bed_reader = require("bed_reader", "genomics")
    paths = _paths(prefix)
    for ext, path in paths.items():
        if not path.is_file():
            raise FileNotFoundError(f"PLINK .{ext} file not found: {path}")
    n_iid, n_sid = _count_lines(paths["fam"]), _count_lines(paths["bim"])
    with open(paths["bed"], "rb") as fh:
        magic = fh.read(3)
    if magic != _BED_MAGIC:
        raise ValueError(f"{paths['bed']} is not a SNP-major PLINK 1 .bed file (magic bytes {magic.hex()})")
    expected = 3 + -(-n_iid // 4) * n_sid
    size = paths["bed"].stat().st_size
    if size != expected:
        raise ValueError(f"{paths['bed']} has {size} bytes but the .fam ({n_iid} individuals) and .bim "
                         f"({n_sid} SNPs) imply {expected}; the three files do not belong together")
    with bed_reader.open_bed(paths["bed"], count_A1=count_a1, iid_count=n_iid, sid_count=n_sid) as bed:
        g = bed.read(dtype="int8")  # missing -> -127
        bim = {f: np.asarray(getattr(bed, f)) for f in BIM_FIELDS}
        fam = {f: np.asarray(getattr(bed, f)) for f in FAM_FIELDS}
    g[g == -127] = -1
    return g, bim, fam


def write_plink(prefix, dosages, bim: dict | None = None, fam: dict | None = None, count_a1: bool = True):
    """Write dosages ``[n_individuals, n_snps]`` (int, ``-1`` = missing) as a .bed/.bim/.fam trio.

    ``bim`` / ``fam`` may give any of the fields listed in :func:`read_plink`; missing ones get
    PLINK-style defaults (chromosome 1, ids ``iid0``, ``sid0`` ...).
    """
    bed_reader = require("bed_reader", "genomics")
    d = np.asarray(dosages)
    if d.ndim != 2:
        raise ValueError(f"`dosages` must be 2-D [n_individuals, n_snps], got shape {d.shape}")
    if d.dtype.kind == "f":
        if np.isnan(d).any() or (d != np.round(d)).any():
            raise ValueError("`dosages` must hold integer counts; code missing as -1, not NaN")
    if d.size and (d.min() < -1 or d.max() > 2):
        raise ValueError(f"`dosages` must hold values in {{-1, 0, 1, 2}}, found range [{d.min()}, {d.max()}]")
    n_iid, n_sid = d.shape
    properties: dict = {}
    for fields, given, n, name in ((BIM_FIELDS, bim, n_sid, "bim"), (FAM_FIELDS, fam, n_iid, "fam")):
        for key, value in (given or {}).items():
            if key not in fields:
                raise ValueError(f"`{name}` has unknown field {key!r}; allowed: {', '.join(fields)}")
            if len(value) != n:
                raise ValueError(f"`{name}['{key}']` has {len(value)} entries, expected {n}")
            properties[key] = list(value)
    val = d.astype(np.int8)
    val[val == -1] = -127
    bed_reader.to_bed(str(_paths(prefix)["bed"]), val, properties=properties, count_A1=count_a1)
