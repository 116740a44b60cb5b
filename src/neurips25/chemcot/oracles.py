"""Property oracles of ChemCoTBench's molecule-optimisation family, with the official definitions.

The official scorer calls TDC oracles; their definitions, re-implemented here offline:

- ``qed``: RDKit's quantitative estimate of drug-likeness, ``QED.qed`` (Bickerton et al. 2012).
- ``logp``: TDC's ``Oracle("logp")`` is PENALIZED logP (the JT-VAE benchmark objective), not Crippen logP::

      f(m) = (logP(m) - 2.4570953) / 1.4343244 + (-SA(m) + 3.0525811) / 0.8335207
             + (-max(0, ring(m) - 6) + 0.0485697) / 0.2860212

  with Crippen logP, the Ertl-Schuffenhauer synthetic-accessibility score SA (RDKit Contrib) and ring(m)
  the largest cycle of a cycle basis of the molecular graph (networkx ``cycle_basis``, as TDC does).
- ``solubility``: ESOL log-solubility with Pat Walters' refit coefficients (RDKit descriptors)::

      logS = 0.26121 - 0.0066139 MW - 0.74167 logP + 0.0034515 RB - 0.42625 AP

  MW molecular weight, logP Crippen, RB rotatable bonds, AP aromatic fraction of heavy atoms.
- ``crippen_logp``: plain Crippen logP (not an official task; here to show it differs from ``logp``).
- ``drd2`` / ``jnk3`` / ``gsk3b``: TDC downloads scikit-learn pickles at run time; nothing ships them, so they
  are pluggable only: wrap an estimator you loaded yourself in :class:`SklearnFingerprintOracle`. The
  library unpickles nothing.

An oracle is a callable ``oracle(smiles) -> float | None`` (``None`` for an invalid SMILES) with ``.name``
and ``.maximize``; ``oracle.many(list)`` scores a batch.

Example
-------
>>> round(get_oracle("qed")("CCO"), 4)
0.4068
"""

from __future__ import annotations

import functools
import importlib.util
import math
import os
import sys
from collections.abc import Iterable
from typing import Protocol, runtime_checkable

import numpy as np
from rdkit import Chem, DataStructs, RDConfig
from rdkit.Chem import QED as _QED
from rdkit.Chem import Crippen, Descriptors, Lipinski, rdFingerprintGenerator

# JT-VAE / TDC normalisation constants for penalized logP (mean, std over ZINC-250k)
LOGP_MEAN, LOGP_STD = 2.4570953396190123, 1.434324401111988
SA_MEAN, SA_STD = -3.0525811293166134, 0.8335207024513095
CYCLE_MEAN, CYCLE_STD = -0.0485696876403053, 0.2860212110245455

# P. Walters' refit of Delaney's ESOL on the Delaney data set with RDKit descriptors
ESOL_INTERCEPT = 0.26121066137801696
ESOL_COEF = {"mw": -0.0066138847738667125, "logp": -0.7416739523408995, "rotors": 0.003451545565957996,
             "ap": -0.42624840441316975}


@runtime_checkable
class Oracle(Protocol):
    """What the optimisation metrics need: a name, a direction and ``__call__(smiles) -> float | None``."""

    name: str
    maximize: bool

    def __call__(self, smiles: str) -> float | None: ...


def _mol(smiles) -> Chem.Mol | None:
    if not isinstance(smiles, str) or not smiles.strip():
        return None
    return Chem.MolFromSmiles(smiles.strip())


class _MolOracle:
    name = "oracle"
    maximize = True

    def score_mol(self, mol: Chem.Mol) -> float:
        raise NotImplementedError

    def __call__(self, smiles: str) -> float | None:
        mol = _mol(smiles)
        return None if mol is None else float(self.score_mol(mol))

    def many(self, smiles: Iterable[str]) -> list[float | None]:
        """Score a batch (``None`` where a SMILES is invalid)."""
        return [self(s) for s in smiles]

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class QED(_MolOracle):
    """RDKit QED (TDC ``qed``), in [0, 1], higher is more drug-like."""

    name = "qed"

    def score_mol(self, mol):
        return _QED.qed(mol)


class CrippenLogP(_MolOracle):
    """Wildman-Crippen logP (RDKit ``MolLogP``). Not ChemCoTBench's "LogP" task, which is penalized."""

    name = "crippen_logp"

    def score_mol(self, mol):
        return Crippen.MolLogP(mol)


@functools.lru_cache(maxsize=1)
def _sascorer():
    """RDKit's Contrib SA scorer (reads the fragment table shipped inside the rdkit wheel)."""
    path = os.path.join(RDConfig.RDContribDir, "SA_Score", "sascorer.py")
    if not os.path.isfile(path):
        raise ImportError(f"RDKit's SA_Score contrib module is missing ({path}); reinstall rdkit")
    spec = importlib.util.spec_from_file_location("_neurips25_sascorer", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def sa_score(mol: Chem.Mol) -> float:
    """Synthetic accessibility (1 easy .. 10 hard), Ertl & Schuffenhauer 2009, RDKit Contrib."""
    return float(_sascorer().calculateScore(mol))


def largest_cycle(mol: Chem.Mol) -> int:
    """Largest cycle length in networkx's cycle basis of the heavy-atom graph (0 without rings), as TDC."""
    import networkx as nx

    g = nx.Graph()
    g.add_nodes_from(range(mol.GetNumAtoms()))
    g.add_edges_from((b.GetBeginAtomIdx(), b.GetEndAtomIdx()) for b in mol.GetBonds())
    cycles = nx.cycle_basis(g)
    return max((len(c) for c in cycles), default=0)


class PenalizedLogP(_MolOracle):
    """TDC's ``logp`` oracle: z-scored Crippen logP - SA - (largest ring above 6), constants above."""

    name = "logp"

    def score_mol(self, mol):
        log_p = Crippen.MolLogP(mol)
        sa = -sa_score(mol)
        ring = largest_cycle(mol)
        cycle = -max(ring - 6, 0)
        return (log_p - LOGP_MEAN) / LOGP_STD + (sa - SA_MEAN) / SA_STD + (cycle - CYCLE_MEAN) / CYCLE_STD


class ESOL(_MolOracle):
    """Refit ESOL log-solubility (log mol/L); higher is more soluble (ChemCoTBench "solubility")."""

    name = "solubility"

    def score_mol(self, mol):
        heavy = mol.GetNumHeavyAtoms()
        ap = sum(a.GetIsAromatic() for a in mol.GetAtoms()) / heavy if heavy else 0.0
        return (ESOL_INTERCEPT + ESOL_COEF["mw"] * Descriptors.MolWt(mol)
                + ESOL_COEF["logp"] * Crippen.MolLogP(mol)
                + ESOL_COEF["rotors"] * Lipinski.NumRotatableBonds(mol) + ESOL_COEF["ap"] * ap)


def fingerprint(mol: Chem.Mol, fp: str) -> np.ndarray:
    """Feature vector of ``mol`` for :class:`SklearnFingerprintOracle`.

    ``"morgan2_2048"``: Morgan radius 2, 2048-bit bit vector (TDC's JNK3 / GSK3b models).
    ``"drd2_counts"``: Morgan radius 3 with feature invariants, counts folded modulo 2048 (TDC's DRD2 SVM).
    """
    if fp == "morgan2_2048":
        gen = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=2048)
        arr = np.zeros((2048,), dtype=np.float64)
        DataStructs.ConvertToNumpyArray(gen.GetFingerprint(mol), arr)
        return arr
    if fp == "drd2_counts":
        gen = rdFingerprintGenerator.GetMorganGenerator(
            radius=3, atomInvariantsGenerator=rdFingerprintGenerator.GetMorganFeatureAtomInvGen())
        arr = np.zeros((2048,), dtype=np.float64)
        for key, val in gen.GetSparseCountFingerprint(mol).GetNonzeroElements().items():
            arr[key % 2048] += val
        return arr
    raise ValueError(f"`fp` must be 'morgan2_2048' or 'drd2_counts'; got {fp!r}")


class SklearnFingerprintOracle(_MolOracle):
    """A scikit-learn classifier on a fingerprint, scored as P(active) (how TDC's DRD2/JNK3/GSK3b work).

    Parameters
    ----------
    estimator : fitted classifier with ``predict_proba``
        Loaded by you (the library never unpickles a file); column 1 is taken as "active".
    fp : {"morgan2_2048", "drd2_counts"}
        Featurisation, see :func:`fingerprint`.
    name : str
        Oracle name used in reports (``"drd2"``, ``"jnk3"``, ``"gsk3b"``, ...).
    """

    def __init__(self, estimator, fp: str = "morgan2_2048", name: str = "custom"):
        if not callable(getattr(estimator, "predict_proba", None)):
            raise TypeError(f"`estimator` must have a predict_proba method; got {type(estimator).__name__}")
        fingerprint(Chem.MolFromSmiles("C"), fp)  # validates fp
        if not isinstance(name, str) or not name:
            raise ValueError(f"`name` must be a non-empty string; got {name!r}")
        self.estimator, self.fp, self.name = estimator, fp, name

    def score_mol(self, mol):
        x = fingerprint(mol, self.fp)[None, :]
        p = self.estimator.predict_proba(x)
        return float(p[0, 1])

    def many(self, smiles):
        mols = [_mol(s) for s in smiles]
        ok = [i for i, m in enumerate(mols) if m is not None]
        out: list[float | None] = [None] * len(mols)
        if ok:
            x = np.stack([fingerprint(mols[i], self.fp) for i in ok])
            p = self.estimator.predict_proba(x)[:, 1]
            for i, v in zip(ok, p):
                out[i] = float(v)
        return out

    def __repr__(self) -> str:
        return f"SklearnFingerprintOracle({type(self.estimator).__name__}, fp={self.fp!r}, name={self.name!r})"


_BUILTIN = {"qed": QED, "logp": PenalizedLogP, "penalized_logp": PenalizedLogP, "solubility": ESOL,
            "esol": ESOL, "crippen_logp": CrippenLogP}
_PLUGGABLE = ("drd2", "jnk3", "gsk3b")
_REGISTERED: dict[str, Oracle] = {}


def register_oracle(oracle: Oracle) -> None:
    """Make ``oracle`` available to :func:`get_oracle` under ``oracle.name`` (e.g. your own DRD2 model)."""
    if not isinstance(oracle, Oracle):
        raise TypeError(f"`oracle` must have name, maximize and __call__; got {type(oracle).__name__}")
    _REGISTERED[oracle.name] = oracle


def get_oracle(name: str) -> Oracle:
    """The oracle of a ChemCoTBench property: qed, logp (penalized), solubility (ESOL), or a registered one."""
    if not isinstance(name, str):
        raise TypeError(f"`name` must be a str; got {type(name).__name__}")
    key = name.strip().lower()
    if key in _REGISTERED:
        return _REGISTERED[key]
    if key in _BUILTIN:
        return _BUILTIN[key]()
    if key in _PLUGGABLE:
        raise LookupError(
            f"oracle {name!r} needs TDC's pretrained scikit-learn model, which is not available offline; load "
            f"it yourself and call register_oracle(SklearnFingerprintOracle(estimator, fp="
            f"{'drd2_counts' if key == 'drd2' else 'morgan2_2048'!r}, name={key!r}))")
    known = ", ".join(sorted({*_BUILTIN, *_REGISTERED}))
    raise LookupError(f"unknown oracle {name!r}; known: {known}; pluggable: {', '.join(_PLUGGABLE)}")


def is_finite(x) -> bool:
    return x is not None and math.isfinite(x)
