"""The official ChemCoTBench metrics, one function per subtask family; plain dicts out.

Every function takes the parsed predictions (``None`` where nothing could be extracted) and the items, and
keeps failed answers in the denominator:

- counting (``fg_count``, ``ring_count``): mean absolute error and exact-match rate; a missing answer
  counts as a prediction of 0; a reference that is not an integer count raises, naming the item.
- ``Murcko_scaffold``: 1 if the predicted scaffold equals the reference (canonical SMILES), otherwise the
  Tanimoto similarity of Morgan r=2 / 1024-bit fingerprints of the two scaffolds when they share a maximum
  common substructure, otherwise 0; averaged.
- yes/no (``ring_system_scaffold``, ``equivalence``): accuracy.
- editing (``add``, ``delete``, ``sub``): pass iff the answer is a valid molecule whose SMARTS count of the
  added group rose by exactly 1 / of the removed group fell by exactly 1 (both, for ``sub``); counted with the
  official ``GROUP_TO_SMARTS`` by default (``smarts="neurips25"`` for ours, see :mod:`.ops`).
- optimisation: delta = f(answer) - f(source), 0 for invalid answers (an item whose source is not a valid
  SMILES raises, naming it); winsorised mean delta (clipped at the
  interpolated 5th / 95th percentiles, ``np.clip(x, np.percentile(x, 5), np.percentile(x, 95))``, as the
  official ``eval_metric.py``), success rate (delta > 0), best rate (delta >= 0.5 for logp / solubility,
  >= 0.3 otherwise), scaffold consistency hard (same Murcko scaffold) and soft (scaffold similarity as
  above), validity.
- reactions (``fs``, ``retro``, ``nepp``, ``rcr``): top-1 exact match (InChI of the non-isomeric canonical
  SMILES, as the official ``evaluator.py``), validity, and FTS, the mean of the RDKit-path, MACCS and Morgan
  (r=2, unhashed counts) Tanimoto similarities to the reference, invalid answers 0; ``fts_official`` is the
  notebook's printed figure, ``fts * validity``.
- mechanism selection (``mechsel``): accuracy of the first letter of the answer against the reference letter.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import numpy as np
from rdkit import Chem, DataStructs
from rdkit.Chem import MACCSkeys, rdFingerprintGenerator, rdFMCS
from rdkit.Chem.Scaffolds import MurckoScaffold

from neurips25.chemcot.ops import SMARTS_SETS, OperationError, count_mol
from neurips25.chemcot.oracles import get_oracle
from neurips25.chemcot.tasks import OPT_ORACLE, Item, integer_count

BEST_THRESHOLD = {"logp": 0.5, "solubility": 0.5}
_MORGAN_1024 = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=1024)
_MORGAN_2048 = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=2048)
_RDK = rdFingerprintGenerator.GetRDKitFPGenerator()
_MORGAN_COUNTS = rdFingerprintGenerator.GetMorganGenerator(radius=2)  # == the official GetMorganFingerprint(m, 2)


def _mol(smiles) -> Chem.Mol | None:
    if not isinstance(smiles, str) or not smiles.strip():
        return None
    return Chem.MolFromSmiles(smiles.strip())


def murcko(smiles_or_mol) -> str | None:
    """Canonical Bemis-Murcko scaffold SMILES (``""`` for an acyclic molecule, ``None`` if invalid)."""
    mol = smiles_or_mol if isinstance(smiles_or_mol, Chem.Mol) else _mol(smiles_or_mol)
    if mol is None:
        return None
    return Chem.MolToSmiles(MurckoScaffold.GetScaffoldForMol(mol))


def scaffold_similarity(pred: str | None, ref: str | None, mcs_timeout: int = 2) -> float:
    """1 if equal, else Morgan-2/1024 Tanimoto of the two scaffolds when they have an MCS, else 0."""
    a, b = _mol(pred), _mol(ref)
    if a is None or b is None:
        return 0.0
    if Chem.MolToSmiles(a) == Chem.MolToSmiles(b):
        return 1.0
    if a.GetNumAtoms() == 0 or b.GetNumAtoms() == 0:
        return 0.0
    mcs = rdFMCS.FindMCS([a, b], timeout=mcs_timeout)
    if mcs.numAtoms == 0:
        return 0.0
    return float(DataStructs.TanimotoSimilarity(_MORGAN_1024.GetFingerprint(a), _MORGAN_1024.GetFingerprint(b)))


def tanimoto(a: str, b: str) -> float:
    """Morgan r=2 / 2048-bit Tanimoto of two SMILES (0 when either is invalid)."""
    ma, mb = _mol(a), _mol(b)
    if ma is None or mb is None:
        return 0.0
    return float(DataStructs.TanimotoSimilarity(_MORGAN_2048.GetFingerprint(ma), _MORGAN_2048.GetFingerprint(mb)))


def _check(preds: Sequence, items: Sequence[Item]) -> None:
    if len(preds) != len(items):
        raise ValueError(f"`preds` and `items` must have the same length; got {len(preds)} and {len(items)}")


def counting(preds: Sequence, items: Sequence[Item]) -> dict:
    """MAE and exact-match rate of integer answers (missing answers count as 0)."""
    _check(preds, items)
    p = np.array([0 if v is None else int(v) for v in preds], dtype=float)
    r = np.array([_count_reference(it) for it in items], dtype=float)
    return {"n": len(items), "mae": float(np.mean(np.abs(p - r))) if len(r) else float("nan"),
            "exact": float(np.mean(p == r)) if len(r) else float("nan"),
            "answered": float(np.mean([v is not None for v in preds])) if len(r) else float("nan")}


def _count_reference(item: Item) -> int:
    try:
        return integer_count(item.reference)
    except ValueError as err:
        raise ValueError(f"item {item.id!r} ({item.subtask}): the reference {err}") from err


def scaffold(preds: Sequence, items: Sequence[Item]) -> dict:
    """Mean scaffold score (exact 1, else MCS-gated Morgan similarity) and exact rate."""
    _check(preds, items)
    scores = [scaffold_similarity(p, it.reference) for p, it in zip(preds, items)]
    exact = [s == 1.0 for s in scores]
    return {"n": len(items), "score": float(np.mean(scores)) if scores else float("nan"),
            "exact": float(np.mean(exact)) if exact else float("nan")}


def yes_no(preds: Sequence, items: Sequence[Item]) -> dict:
    """Accuracy of yes/no answers (missing answers are wrong)."""
    _check(preds, items)
    hits = [p is not None and p == str(it.reference).lower() for p, it in zip(preds, items)]
    return {"n": len(items), "accuracy": float(np.mean(hits)) if hits else float("nan")}


def _source(item: Item) -> str:
    src = item.meta.get("source") if isinstance(item.meta, dict) else None
    if not isinstance(src, str) or not src.strip():
        raise ValueError(f"item {item.id!r} ({item.subtask}) has no meta['source'] SMILES: the metric needs the "
                         "source molecule (a release record whose prompt names no 'Input Molecule' / "
                         "'Source Molecule' cannot be scored)")
    return src


def edit_passes(pred: str | None, item: Item, smarts: str = "official") -> bool:
    """The official check of one editing answer (SMARTS-count semantics).

    Parameters
    ----------
    pred : str or None
        The parsed answer.
    item : Item
        An ``add`` / ``delete`` / ``sub`` item with ``meta["source"]`` and the group name(s).
    smarts : {"official", "neurips25"}
        The SMARTS set (default: the official ``GROUP_TO_SMARTS``).

    Raises
    ------
    ValueError
        When the item has no source, is not an editing item, or names a group outside the SMARTS set (the
        official checker asserts the same).
    """
    if smarts not in SMARTS_SETS:
        raise ValueError(f"`smarts` must be one of {', '.join(SMARTS_SETS)}; got {smarts!r}")
    if item.subtask not in ("add", "delete", "sub"):
        raise ValueError(f"item {item.id!r}: edit_passes needs an add / delete / sub item; got {item.subtask!r}")
    src = _mol(_source(item))
    if src is None:
        raise ValueError(f"item {item.id!r}: meta['source'] is not a valid SMILES: {item.meta.get('source')!r}")
    added, removed = item.meta.get("added_group"), item.meta.get("removed_group")
    need = {"add": (added,), "delete": (removed,), "sub": (added, removed)}[item.subtask]
    for g in need:
        if g not in SMARTS_SETS[smarts]:
            raise ValueError(f"item {item.id!r}: group {g!r} is not in the {smarts} SMARTS set "
                             f"({', '.join(sorted(SMARTS_SETS[smarts]))})")
    out = _mol(pred)
    if out is None:
        return False
    try:
        ok = True
        if item.subtask in ("add", "sub"):
            ok &= count_mol(out, added, smarts) == count_mol(src, added, smarts) + 1
        if item.subtask in ("delete", "sub"):
            ok &= count_mol(out, removed, smarts) == count_mol(src, removed, smarts) - 1
    except OperationError as err:  # not reachable after the checks above; kept as a named error
        raise ValueError(f"item {item.id!r}: {err}") from err
    return bool(ok)


def editing(preds: Sequence, items: Sequence[Item], smarts: str = "official") -> dict:
    """Pass rate of editing answers and validity of the output SMILES."""
    _check(preds, items)
    passes = [edit_passes(p, it, smarts) for p, it in zip(preds, items)]
    valid = [_mol(p) is not None for p in preds]
    return {"n": len(items), "pass": float(np.mean(passes)) if passes else float("nan"),
            "valid": float(np.mean(valid)) if valid else float("nan")}


def winsorized_mean(x: Sequence[float], limits: float = 0.05) -> float:
    """Mean after clipping at the interpolated ``limits`` / ``1 - limits`` percentiles (the official code).

    ``np.mean(np.clip(x, np.percentile(x, 100 * limits), np.percentile(x, 100 * (1 - limits))))``; scipy's
    rank-based ``mstats.winsorize`` differs from it (by up to 0.008 on 30 deltas).
    """
    if not isinstance(limits, numbers.Real) or not 0 <= limits < 0.5:
        raise ValueError(f"`limits` must be in [0, 0.5); got {limits!r}")
    arr = np.asarray(x, dtype=float)
    if arr.size == 0:
        return float("nan")
    if not np.all(np.isfinite(arr)):
        raise ValueError("`x` must be finite (invalid answers count as delta 0, not NaN)")
    lo, hi = np.percentile(arr, 100 * limits), np.percentile(arr, 100 * (1 - limits))
    return float(np.mean(np.clip(arr, lo, hi)))


def optimization(preds: Sequence, items: Sequence[Item], oracle=None) -> dict:
    """Official mol-opt statistics for one property (all items must share the subtask)."""
    _check(preds, items)
    if not items:
        return {"n": 0}
    subs = {it.subtask for it in items}
    if len(subs) != 1:
        raise ValueError(f"`items` must share one optimisation subtask; got {sorted(subs)}")
    sub = subs.pop()
    oracle = oracle or get_oracle(OPT_ORACLE[sub])
    best_t = BEST_THRESHOLD.get(sub, 0.3)
    for it in items:  # an item whose source is not a molecule is invalid: refused by name, never a 0 delta
        if _mol(_source(it)) is None:
            raise ValueError(f"item {it.id!r} ({it.subtask}): meta['source'] is not a valid SMILES: "
                             f"{it.meta['source']!r}; the item is invalid (fix or drop it), it cannot be scored")
    deltas, valid, hard, soft = [], [], [], []
    for p, it in zip(preds, items):
        src = _source(it)
        f_src = it.meta.get("source_score")
        f_src = oracle(src) if f_src is None else f_src
        f_out = oracle(p) if _mol(p) is not None else None
        ok = f_out is not None and f_src is not None
        valid.append(ok)
        deltas.append(float(f_out - f_src) if ok else 0.0)
        s_src, s_out = murcko(src), murcko(p) if ok else None
        hard.append(bool(ok and s_out == s_src))
        soft.append(scaffold_similarity(s_out, s_src) if ok and s_src else float(ok and s_out == s_src))
    d = np.array(deltas)
    return {"n": len(items), "mean_delta": winsorized_mean(d), "raw_mean_delta": float(np.mean(d)),
            "success": float(np.mean(d > 0)), "best": float(np.mean(d >= best_t)),
            "scaffold_hard": float(np.mean(hard)), "scaffold_soft": float(np.mean(soft)),
            "valid": float(np.mean(valid)), "deltas": d.tolist()}


def fts(a: Chem.Mol, b: Chem.Mol) -> float:
    """Fingerprint Tanimoto similarity: mean of RDKit-path, MACCS and Morgan (r=2, counts) Tanimoto (official)."""
    sims = [DataStructs.TanimotoSimilarity(_RDK.GetFingerprint(a), _RDK.GetFingerprint(b)),
            DataStructs.TanimotoSimilarity(MACCSkeys.GenMACCSKeys(a), MACCSkeys.GenMACCSKeys(b)),
            DataStructs.TanimotoSimilarity(_MORGAN_COUNTS.GetSparseCountFingerprint(a),
                                           _MORGAN_COUNTS.GetSparseCountFingerprint(b))]
    return float(np.mean(sims))


def _flat(smiles) -> Chem.Mol | None:
    """The official canonicalisation: non-isomeric canonical SMILES, parsed again (None if invalid)."""
    m = _mol(smiles)
    if m is None:
        return None
    return Chem.MolFromSmiles(Chem.MolToSmiles(m, isomericSmiles=False, canonical=True))


def same_molecule(a: Chem.Mol, b: Chem.Mol) -> bool:
    """The official exact match: equal InChI (of the non-isomeric canonical forms)."""
    try:
        return Chem.MolToInchi(a) == Chem.MolToInchi(b)
    except Exception:  # noqa: BLE001 - an InChI failure is a miss, as in the official code
        return False


def reaction(preds: Sequence, items: Sequence[Item]) -> dict:
    """Top-1 exact match, validity and FTS against the reference SMILES (``fs``, ``retro``, ``nepp``, ``rcr``)."""
    _check(preds, items)
    exact, valid, sim = [], [], []
    for p, it in zip(preds, items):
        if not isinstance(it.reference, str):
            raise ValueError(f"item {it.id!r} ({it.subtask}): the reference must be a SMILES string; got "
                             f"{type(it.reference).__name__} (load release records with load_official_json, "
                             "which parses the fs gt JSON)")
        mp, mr = _flat(p), _flat(it.reference)
        ok = mp is not None and mr is not None
        valid.append(mp is not None)
        exact.append(bool(ok and same_molecule(mp, mr)))
        sim.append(fts(mp, mr) if ok else 0.0)
    n = len(items)
    out = {"n": n, "exact": float(np.mean(exact)) if n else float("nan"),
           "valid": float(np.mean(valid)) if n else float("nan"), "fts": float(np.mean(sim)) if n else float("nan")}
    out["fts_official"] = out["fts"] * out["valid"] if n else float("nan")
    return out


def choice(preds: Sequence, items: Sequence[Item]) -> dict:
    """Multiple-choice accuracy (``mechsel``): the first character of the answer, case-insensitive, vs the letter."""
    _check(preds, items)
    hits = []
    for p, it in zip(preds, items):
        letter = str(p).strip()[:1].lower() if p is not None else ""
        hits.append(letter.isalpha() and letter == str(it.reference).strip().lower())
    return {"n": len(items), "accuracy": float(np.mean(hits)) if hits else float("nan")}


#: subtask -> (metric function, headline key of its result)
METRICS = {
    "fg_count": (counting, "mae"), "ring_count": (counting, "mae"), "Murcko_scaffold": (scaffold, "score"),
    "ring_system_scaffold": (yes_no, "accuracy"), "equivalence": (yes_no, "accuracy"),
    "add": (editing, "pass"), "delete": (editing, "pass"), "sub": (editing, "pass"),
    "qed": (optimization, "success"), "logp": (optimization, "success"),
    "solubility": (optimization, "success"), "drd": (optimization, "success"),
    "jnk": (optimization, "success"), "gsk": (optimization, "success"), "fs": (reaction, "exact"),
    "retro": (reaction, "exact"), "nepp": (reaction, "exact"), "rcr": (reaction, "exact"),
    "mechsel": (choice, "accuracy"),
}


def score_subtask(subtask: str, preds: Sequence, items: Sequence[Item], smarts: str = "official") -> dict:
    """The official metric of ``subtask`` over parsed predictions (``smarts`` only matters for editing)."""
    if subtask not in METRICS:
        raise ValueError(f"no metric for subtask {subtask!r}; scored subtasks: {', '.join(METRICS)}")
    fn, _ = METRICS[subtask]
    if fn is editing:
        return fn(preds, items, smarts)
    return fn(preds, items)
