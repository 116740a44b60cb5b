"""Offline ChemCoTBench-style suites built from molecules that ship inside installed packages.

Sources (nothing is downloaded):

- ``"moses"``: the MOSES test split (176,074 ZINC clean-lead SMILES) inside the ``molsets`` wheel, read as a
  data file (``pip install --no-deps molsets==0.3.1``; ``moses`` is never imported);
- ``"nci"``: RDKit's ``Data/NCI/first_5K.smi`` (5,000 NCI compounds, always there with RDKit);
- a list of SMILES of your own.

:func:`generate_suite` builds every subtask of :data:`neurips25.chemcot.tasks.SUBTASKS` that runs offline:
understanding items with RDKit ground truth, editing items only where the operation is feasible (official
group names and SMARTS; ``fg_count`` asks for official group names),
optimisation items whose sources lie in the lower half of the property's distribution, and forward-reaction
items from a small set of textbook reaction templates applied to pool molecules (single product only).
"""

from __future__ import annotations

import functools
import gzip
import importlib.util
import numbers
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from rdkit import Chem, RDConfig
from rdkit.Chem import AllChem, rdMolDescriptors

from neurips25.chemcot.metrics import murcko
from neurips25.chemcot.ops import OFFICIAL_SMARTS, add_group, count_mol, delete_group, edit_groups, substitute_group
from neurips25.chemcot.oracles import get_oracle
from neurips25.chemcot.tasks import OPT_ORACLE, Item, prompt_for

OFFLINE_SUBTASKS = ("fg_count", "ring_count", "Murcko_scaffold", "ring_system_scaffold", "equivalence",
                    "add", "delete", "sub", "qed", "logp", "solubility", "fs")

#: ring systems asked about in ``ring_system_scaffold`` (SMILES, matched as substructures)
RING_SYSTEMS = ("c1ccccc1", "c1ccncc1", "c1ccsc1", "c1ccoc1", "C1CCNCC1", "C1CNCCN1", "C1COCCN1", "C1CCNC1",
                "c1cn[nH]c1", "c1cscn1", "c1cncnc1", "C1CCCCC1", "c1ccc2[nH]ccc2c1", "c1ccc2ccccc2c1")

#: forward-reaction templates: (name, reaction SMARTS, the second reactant, reagents)
REACTIONS = (
    ("amide coupling", "[CX3:1](=[O:2])[OX2H1].[NX3;H2;!$(NC=O):3]>>[C:1](=[O:2])[N:3]", "NCc1ccccc1",
     "HATU, DIPEA, DMF"),
    ("esterification", "[CX3:1](=[O:2])[OX2H1].[OX2H1:3][CH3:4]>>[C:1](=[O:2])[O:3][C:4]", "CO", "H2SO4"),
    ("N-acetylation", "[NX3;H2,H1;!$(NC=[O,S,N]);!$(N-a):1]>>[N:1]C(C)=O", "CC(=O)Cl", "Et3N, DCM"),
    ("nitro reduction", "[c:1][N+](=O)[O-]>>[c:1]N", "", "H2, Pd/C"),
    ("ester hydrolysis", "[CX3:1](=[O:2])O[CH3,CH2;!R]>>[C:1](=[O:2])O", "", "LiOH, THF/H2O"),
    ("Suzuki coupling", "[c:1][Br,I].[c:2]B(O)O>>[c:1][c:2]", "OB(O)c1ccccc1", "Pd(PPh3)4, K2CO3"),
    ("aldehyde reduction", "[CX3H1:1](=[O:2])[#6:3]>>[C:1]([O:2])[#6:3]", "", "NaBH4, MeOH"),
    ("nitrile hydrolysis", "[C:1]#N>>[C:1](=O)O", "", "NaOH, H2O, heat"),
)

_ORGANIC = {1, 5, 6, 7, 8, 9, 15, 16, 17, 35, 53}


def _moses_dir() -> Path | None:
    spec = importlib.util.find_spec("moses")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0]) / "dataset" / "data"


def available_sources() -> list[str]:
    """Sources that work in this environment (``nci`` always; ``moses`` when molsets is installed)."""
    d = _moses_dir()
    return (["moses"] if d is not None and (d / "test.csv.gz").is_file() else []) + ["nci"]


@functools.lru_cache(maxsize=4)
def _read_source(source: str) -> tuple[str, ...]:
    if source == "moses":
        d = _moses_dir()
        if d is None or not (d / "test.csv.gz").is_file():
            raise ImportError("source 'moses' needs the molsets wheel: pip install --no-deps molsets==0.3.1 "
                              "(or use source='nci')")
        with gzip.open(d / "test.csv.gz", "rt") as fh:
            lines = fh.read().splitlines()
        return tuple(line.split(",")[0] for line in lines[1:] if line)
    if source == "nci":
        path = Path(RDConfig.RDDataDir) / "NCI" / "first_5K.smi"
        with open(path) as fh:
            return tuple(line.split()[0] for line in fh if line.strip())
    raise ValueError(f"`source` must be 'moses', 'nci' or a list of SMILES; got {source!r}")


def molecule_pool(source: str | Sequence[str] = "nci", n: int | None = None, seed: int = 0,
                  min_atoms: int = 10, max_atoms: int = 35) -> list[str]:
    """Canonical, single-fragment, organic, neutral-enough molecules from ``source``, shuffled by ``seed``."""
    if isinstance(source, str):
        raw = list(_read_source(source))
    elif isinstance(source, Sequence) and all(isinstance(s, str) for s in source):
        raw = list(source)
    else:
        raise ValueError(f"`source` must be 'moses', 'nci' or a list of SMILES; got {type(source).__name__}")
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(raw))
    out, seen = [], set()
    for i in order:
        mol = Chem.MolFromSmiles(raw[i])
        if mol is None or len(Chem.GetMolFrags(mol)) != 1:
            continue
        if not min_atoms <= mol.GetNumHeavyAtoms() <= max_atoms:
            continue
        if any(a.GetAtomicNum() not in _ORGANIC for a in mol.GetAtoms()):
            continue
        smi = Chem.MolToSmiles(mol)
        if smi not in seen:
            seen.add(smi)
            out.append(smi)
        if n is not None and len(out) >= n:
            break
    return out


def _mutate(smiles: str, rng) -> str | None:
    """A one-atom change (element swap) that gives a different valid molecule."""
    mol = Chem.MolFromSmiles(smiles)
    swaps = {6: (7,), 7: (6,), 8: (16, 7), 16: (8,), 9: (17,), 17: (9, 35), 35: (17,)}
    idx = rng.permutation(mol.GetNumAtoms())
    for i in idx:
        atom = mol.GetAtomWithIdx(int(i))
        for z in swaps.get(atom.GetAtomicNum(), ()):
            rw = Chem.RWMol(mol)
            a = rw.GetAtomWithIdx(int(i))
            a.SetAtomicNum(z)
            a.SetNoImplicit(False)
            a.SetNumExplicitHs(0)
            try:
                m = rw.GetMol()
                Chem.SanitizeMol(m)
            except Exception:  # noqa: BLE001
                continue
            smi = Chem.MolToSmiles(m)
            if Chem.MolFromSmiles(smi) is not None and smi != smiles:
                return smi
    return None


@functools.cache
def _rxn(smarts: str):
    return AllChem.ReactionFromSmarts(smarts)


def forward_products(reactants: Sequence[str], smarts: str) -> list[str]:
    """Distinct sanitised products of one template on the given reactants (canonical SMILES)."""
    rxn = _rxn(smarts)
    mols = [Chem.MolFromSmiles(s) for s in reactants]
    if any(m is None for m in mols) or len(mols) != rxn.GetNumReactantTemplates():
        return []
    out = []
    for prods in rxn.RunReactants(tuple(mols)):
        for p in prods:
            try:
                Chem.SanitizeMol(p)
            except Exception:  # noqa: BLE001
                continue
            smi = Chem.MolToSmiles(p)
            if Chem.MolFromSmiles(smi) is not None and smi not in out:
                out.append(smi)
    return out


def _check_n(n, name):
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise ValueError(f"`{name}` must be a positive integer; got {n!r}")
    return int(n)


def generate_suite(source: str | Sequence[str] = "nci", n_per_subtask: int = 10, seed: int = 0,
                   subtasks: Sequence[str] | None = None, pool_size: int | None = None) -> list[Item]:
    """A ChemCoTBench-style suite built offline (see the module docstring).

    Parameters
    ----------
    source : {"moses", "nci"} or list of str
        Where the molecules come from.
    n_per_subtask : int
        Items per subtask (fewer when the pool has too few feasible molecules).
    seed : int
        Drives the molecule order and every random choice.
    subtasks : sequence of str, optional
        Subset of :data:`OFFLINE_SUBTASKS` (default: all).
    pool_size : int, optional
        Molecules drawn from the source (default ``max(300, 30 * n_per_subtask)``).

    Returns
    -------
    list of Item
    """
    n = _check_n(n_per_subtask, "n_per_subtask")
    subtasks = list(OFFLINE_SUBTASKS if subtasks is None else subtasks)
    bad = [s for s in subtasks if s not in OFFLINE_SUBTASKS]
    if bad:
        raise ValueError(f"`subtasks` must be among {', '.join(OFFLINE_SUBTASKS)}; got {bad}")
    pool = molecule_pool(source, _check_n(pool_size, "pool_size") if pool_size else max(300, 30 * n), seed)
    if len(pool) < n:
        raise ValueError(f"`source` gave only {len(pool)} usable molecules; need at least n_per_subtask={n}")
    rng = np.random.default_rng(seed + 1)
    groups = edit_groups("official")  # official names with an edit template (counts: official SMARTS)
    items: list[Item] = []

    def take(sub, build):
        made = 0
        for smi in pool[int(rng.integers(len(pool))):] + pool:
            if made >= n:
                break
            it = build(smi)
            if it is not None:
                reference, fields, meta = it
                items.append(Item(f"{sub}-{made}", _task(sub), sub, prompt_for(sub, **fields), reference, meta))
                made += 1

    for sub in subtasks:
        if sub == "fg_count":
            def b(smi):
                mol = Chem.MolFromSmiles(smi)
                present = [g for g in groups if count_mol(mol, g) > 0]
                g = str(rng.choice(present if present and rng.random() < 0.8 else groups))
                return count_mol(mol, g), {"smiles": smi, "group": g}, {"fg_smarts": OFFICIAL_SMARTS[g], "group": g}
        elif sub == "ring_count":
            def b(smi):
                return rdMolDescriptors.CalcNumRings(Chem.MolFromSmiles(smi)), {"smiles": smi}, {}
        elif sub == "Murcko_scaffold":
            def b(smi):
                sc = murcko(smi)
                return (sc, {"smiles": smi}, {}) if sc else None
        elif sub == "ring_system_scaffold":
            queries = [(r, Chem.MolFromSmiles(r)) for r in RING_SYSTEMS]

            def b(smi, queries=queries):
                mol = Chem.MolFromSmiles(smi)
                has = [r for r, q in queries if mol.HasSubstructMatch(q)]
                lacks = [r for r, q in queries if not mol.HasSubstructMatch(q)]
                want_yes = rng.random() < 0.5
                pick = has if want_yes else lacks
                if not pick:
                    return None
                ring = str(rng.choice(pick))
                return ("yes" if want_yes else "no"), {"smiles": smi, "ring": ring}, {"ring": ring}
        elif sub == "equivalence":
            def b(smi):
                if rng.random() < 0.5:
                    mol = Chem.MolFromSmiles(smi)
                    other = Chem.MolToSmiles(mol, doRandom=True, canonical=False)
                    return "yes", {"smiles": smi, "smiles_b": other}, {"type": "permutated"}
                other = _mutate(smi, rng)
                return None if other is None else ("no", {"smiles": smi, "smiles_b": other}, {"type": "mutated"})
        elif sub == "add":
            def b(smi):
                g = str(rng.choice(groups))
                prods = add_group(smi, g)
                if not prods:
                    return None
                return None, {"smiles": smi, "group": g}, {"source": smi, "added_group": g, "reference": prods[0]}
        elif sub == "delete":
            def b(smi):
                mol = Chem.MolFromSmiles(smi)
                present = [g for g in groups if count_mol(mol, g) > 0]
                if not present:
                    return None
                g = str(rng.choice(present))
                prods = delete_group(smi, g)
                if not prods:
                    return None
                return None, {"smiles": smi, "group": g}, {"source": smi, "removed_group": g, "reference": prods[0]}
        elif sub == "sub":
            def b(smi):
                mol = Chem.MolFromSmiles(smi)
                present = [g for g in groups if count_mol(mol, g) > 0 and g != "benzene_ring"]
                if not present:
                    return None
                old = str(rng.choice(present))
                new = str(rng.choice([g for g in groups if g != old]))
                prods = substitute_group(smi, old, new)
                if not prods:
                    return None
                return None, {"smiles": smi, "group": old, "new_group": new}, {
                    "source": smi, "removed_group": old, "added_group": new, "reference": prods[0]}
        elif sub in OPT_ORACLE:
            oracle = get_oracle(OPT_ORACLE[sub])
            scores = {s: oracle(s) for s in pool[: max(4 * n, 100)]}
            cut = float(np.median(list(scores.values())))
            low = {s: v for s, v in scores.items() if v <= cut}

            def b(smi, low=low, oracle=oracle):
                if smi not in low:
                    return None
                return None, {"smiles": smi}, {"source": smi, "source_score": low[smi], "oracle": oracle.name}
        elif sub == "fs":
            def b(smi):
                order = rng.permutation(len(REACTIONS))
                for k in order:
                    name, smarts, partner, reagents = REACTIONS[int(k)]
                    reactants = [smi] + ([partner] if partner else [])
                    prods = forward_products(reactants, smarts)
                    if len(prods) == 1:
                        return prods[0], {"reactants": ".".join(reactants), "reagents": reagents}, {
                            "reaction": name, "template": smarts}
                return None
        take(sub, b)
    return items


def _task(sub: str) -> str:
    from neurips25.chemcot.tasks import SUBTASKS

    return SUBTASKS[sub][0]


