"""The official ChemCoTBench metrics, one function per subtask family; plain dicts out.

Every function takes the parsed predictions (``None`` where nothing could be extracted) and the items, and
keeps failed answers in the denominator:

- counting (``fg_count``, ``ring_count``): mean absolute error and exact-match rate; a missing answer
  counts as a prediction of 0.
- ``Murcko_scaffold``: 1 if the predicted scaffold equals the reference (canonical SMILES), otherwise the
  Tanimoto similarity of Morgan r=2 / 1024-bit fingerprints of the two scaffolds when they share a maximum
  common substructure, otherwise 0; averaged.
- yes/no (``ring_system_scaffold``, ``equivalence``): accuracy.
- editing (``add``, ``delete``, ``sub``): pass iff the answer is a valid molecule whose SMARTS count of the
  added group rose by exactly 1 / of the removed group fell by exactly 1 (both, for ``sub``).
- optimisation: delta = f(answer) - f(source), 0 for invalid answers; winsorised (5 %-95 %) mean delta,
  success rate (delta > 0), best rate (delta >= 0.5 for logp / solubility, >= 0.3 otherwise), scaffold
  consistency hard (same Murcko scaffold) and soft (scaffold similarity as above), validity.
- reactions (``fs``): top-1 exact match of canonical SMILES, validity, and FTS, the mean of RDKit, MACCS and
  Morgan Tanimoto similarities to the reference.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from rdkit import Chem, DataStructs
from rdkit.Chem import MACCSkeys, rdFingerprintGenerator, rdFMCS
from rdkit.Chem.Scaffolds import MurckoScaffold

from neurips25.chemcot.ops import FUNCTIONAL_GROUPS, count_mol
from neurips25.chemcot.oracles import get_oracle
from neurips25.chemcot.tasks import OPT_ORACLE, Item

BEST_THRESHOLD = {"logp": 0.5, "solubility": 0.5}
_MORGAN_1024 = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=1024)
_MORGAN_2048 = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=2048)
_RDK = rdFingerprintGenerator.GetRDKitFPGenerator()


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
    r = np.array([int(it.reference) for it in items], dtype=float)
    return {"n": len(items), "mae": float(np.mean(np.abs(p - r))) if len(r) else float("nan"),
            "exact": float(np.mean(p == r)) if len(r) else float("nan"),
            "answered": float(np.mean([v is not None for v in preds])) if len(r) else float("nan")}


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


def edit_passes(pred: str | None, item: Item) -> bool:
    """The official check of one editing answer (SMARTS-count semantics)."""
    out, src = _mol(pred), _mol(item.meta.get("source"))
    if out is None or src is None:
        return False
    added, removed = item.meta.get("added_group"), item.meta.get("removed_group")
    for g in (added, removed):
        if g is not None and g not in FUNCTIONAL_GROUPS:
            return False
    ok = True
    if item.subtask in ("add", "sub"):
        ok &= count_mol(out, added) == count_mol(src, added) + 1
    if item.subtask in ("delete", "sub"):
        ok &= count_mol(out, removed) == count_mol(src, removed) - 1
    return bool(ok)


def editing(preds: Sequence, items: Sequence[Item]) -> dict:
    """Pass rate of editing answers and validity of the output SMILES."""
    _check(preds, items)
    passes = [edit_passes(p, it) for p, it in zip(preds, items)]
    valid = [_mol(p) is not None for p in preds]
    return {"n": len(items), "pass": float(np.mean(passes)) if passes else float("nan"),
            "valid": float(np.mean(valid)) if valid else float("nan")}


def winsorized_mean(x: Sequence[float], limits: float = 0.05) -> float:
    """Mean after clipping the lowest and highest ``limits`` fraction (scipy ``mstats.winsorize``)."""
    from scipy.stats import mstats

    arr = np.asarray(x, dtype=float)
    if arr.size == 0:
        return float("nan")
    return float(np.mean(mstats.winsorize(arr, limits=(limits, limits))))


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
    deltas, valid, hard, soft = [], [], [], []
    for p, it in zip(preds, items):
        src = it.meta.get("source")
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
    """Fingerprint Tanimoto similarity: mean of RDKit, MACCS and Morgan (r=2, 2048) Tanimoto."""
    sims = [DataStructs.TanimotoSimilarity(_RDK.GetFingerprint(a), _RDK.GetFingerprint(b)),
            DataStructs.TanimotoSimilarity(MACCSkeys.GenMACCSKeys(a), MACCSkeys.GenMACCSKeys(b)),
            DataStructs.TanimotoSimilarity(_MORGAN_2048.GetFingerprint(a), _MORGAN_2048.GetFingerprint(b))]
    return float(np.mean(sims))


def reaction(preds: Sequence, items: Sequence[Item]) -> dict:
    """Top-1 exact match (canonical SMILES), validity and FTS against the reference product."""
    _check(preds, items)
    exact, valid, sim = [], [], []
    for p, it in zip(preds, items):
        mp, mr = _mol(p), _mol(it.reference)
        ok = mp is not None and mr is not None
        valid.append(mp is not None)
        exact.append(bool(ok and Chem.MolToSmiles(mp) == Chem.MolToSmiles(mr)))
        sim.append(fts(mp, mr) if ok else 0.0)
    return {"n": len(items), "exact": float(np.mean(exact)) if exact else float("nan"),
            "valid": float(np.mean(valid)) if valid else float("nan"),
            "fts": float(np.mean(sim)) if sim else float("nan")}


#: subtask -> (metric function, headline key of its result)
METRICS = {
    "fg_count": (counting, "mae"), "ring_count": (counting, "mae"), "Murcko_scaffold": (scaffold, "score"),
    "ring_system_scaffold": (yes_no, "accuracy"), "equivalence": (yes_no, "accuracy"),
    "add": (editing, "pass"), "delete": (editing, "pass"), "sub": (editing, "pass"),
    "qed": (optimization, "success"), "logp": (optimization, "success"),
    "solubility": (optimization, "success"), "drd": (optimization, "success"),
    "jnk": (optimization, "success"), "gsk": (optimization, "success"), "fs": (reaction, "exact"),
}


def score_subtask(subtask: str, preds: Sequence, items: Sequence[Item]) -> dict:
    """The official metric of ``subtask`` over parsed predictions."""
    if subtask not in METRICS:
        raise ValueError(f"no metric for subtask {subtask!r}; scored subtasks: {', '.join(METRICS)}")
    fn, _ = METRICS[subtask]
    return fn(preds, items)
