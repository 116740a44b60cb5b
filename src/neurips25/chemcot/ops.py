"""Modular chemical operations: count, add, delete and substitute a named functional group (RDKit).

ChemCoTBench's editing family is scored by SMARTS counts: an "add hydroxyl" answer passes iff the output
is a valid molecule whose hydroxyl-SMARTS match count is exactly one more than the source's
(delete: one less; substitute: one less of the old group and one more of the new). Two SMARTS sets:

- :data:`OFFICIAL_SMARTS` -- the official group set and patterns (``GROUP_TO_SMARTS`` of the official
  ``eval_moledit.py``: 20 names, counts = ``len(GetSubstructMatches)``, a sulfide count less its disulfide
  matches). The **default** of every count and every check here.
- :data:`NEURIPS25_SMARTS` -- our earlier set (15 groups, atoms mapped ``:1`` are the group's own atoms);
  opt-in with ``smarts="neurips25"``. It differs from the official one on purpose-blind points: tertiary
  amines, ureas / carbamates and fused benzene rings count here, sulfonamides and thiophenes do not, and it
  has ``ether``, which is not an official group.

The operations produce exactly the molecules that pass the chosen check, at every valid site:

- :func:`count_group` -- number of SMARTS matches under the chosen set;
- :func:`add_group`   -- attach the group's fragment (:data:`GROUP_FRAGMENTS`) at every heavy atom with a
  hydrogen to spare;
- :func:`delete_group` -- remove the group's own atoms (the :data:`NEURIPS25_SMARTS` atoms mapped ``:1``) at
  every match, hydrogens filled in, the largest fragment kept;
- :func:`substitute_group` -- delete the old group at a site and attach the new one where it was;
- :func:`apply_plan` -- run a step-by-step plan and report the first step that fails, and why.

Every result is sanitised, canonical and deduplicated; products that do not change the count by the
official amount are dropped (adding a hydroxyl next to a carbonyl still passes: it makes a carboxyl, and a
carboxylic OH is a hydroxyl under SMARTS semantics). Groups without an edit template (``sulfoxide``,
``anhydride``, ...) can be counted and checked but not edited: the operations raise :class:`OperationError`.

Example
-------
>>> count_group("OCCO", "hydroxyl")
2
>>> count_group("CCN(C)C", "amine"), count_group("CCN(C)C", "amine", smarts="neurips25")
(0, 1)
>>> add_group("CC", "hydroxyl")
['CCO']
>>> delete_group("OCC(=O)O", "carboxyl")
['CO']
"""

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Iterable, Sequence

from rdkit import Chem, RDLogger

RDLogger.DisableLog("rdApp.*")

#: the official group set -> SMARTS (``GROUP_TO_SMARTS`` of the official ``eval_moledit.py``), the default
OFFICIAL_SMARTS: dict[str, str] = {
    "benzene": "[cR1]1[cR1][cR1][cR1][cR1][cR1]1",
    "benzene_ring": "[cR1]1[cR1][cR1][cR1][cR1][cR1]1",
    "hydroxyl": "[OX2H]",
    "aldehyde": "[CX3H1](=O)[#6]",
    "ketone": "[#6][CX3](=O)[#6]",
    "carboxyl": "[CX3](=O)[OX2H1]",
    "ester": "[#6][CX3](=O)[OX2H0][#6]",
    "anhydride": "[CX3](=[OX1])[OX2][CX3](=[OX1])",
    "amine": "[NX3;H2,H1;!$(NC=O)]",
    "amide": "[NX3][CX3](=[OX1])[#6]",
    "nitro": "[$([NX3](=O)=O),$([NX3+](=O)[O-])][!#8]",
    "halo": "[F,Cl,Br,I]",
    "thiol": "[#16X2H]",
    "thioether": "[SX2][CX4]",
    "disulfide": "[#16X2H0][#16X2H0]",
    "sulfoxide": "[$([#16X3]=[OX1]),$([#16X3+][OX1-])]",
    "sulfone": "[$([#16X4](=[OX1])=[OX1]),$([#16X4+2]([OX1-])[OX1-])]",
    "sulfide": "[#16X2H0]",
    "nitrile": "[NX1]#[CX2]",
    "borane": "[BX3]",
}
#: the official group names
OFFICIAL_GROUPS = frozenset(OFFICIAL_SMARTS)
#: groups whose official count subtracts the matches of another pattern (sulfide: not the disulfide S-S)
_OFFICIAL_EXCEPTIONS = {"sulfide": "[#16X2H0][#16X2H0]"}

#: our SMARTS (opt-in, ``smarts="neurips25"``); atoms mapped ``:1`` are the group's own atoms (what a deletion
#: removes, for either set)
NEURIPS25_SMARTS: dict[str, str] = {
    "aldehyde": "[CX3H1:1](=[OX1:1])[#6]",
    "ketone": "[#6][CX3:1](=[OX1:1])[#6]",
    "carboxyl": "[CX3:1](=[OX1:1])[OX2H1:1]",
    "ester": "[#6][CX3:1](=[OX1:1])[OX2H0:1][#6;!$(C=O)]",
    "amide": "[CX3:1](=[OX1:1])[NX3:1]",
    "amine": "[NX3;H2,H1,H0;+0;!$(N[C,S,P]=[O,S,N]);!$(N-N);!$(N-O);!$(N#*);!$(N=*):1]",
    "hydroxyl": "[OX2H1:1]",
    "halo": "[F,Cl,Br,I:1]",
    "nitrile": "[CX2:1]#[NX1:1]",
    "nitro": "[NX3+:1](=[OX1:1])[OX1-:1]",
    "thiol": "[SX2H1:1]",
    "ether": "[OD2;!$(O[C,S,P]=[O,S,N]):1]([#6])[#6]",
    "sulfide": "[SX2H0;!$(S[C,S,P]=[O,S,N]):1]([#6])[#6]",
    "sulfone": "[SX4:1](=[OX1:1])(=[OX1:1])([#6])[#6]",
    "benzene_ring": "[c:1]1[c:1][c:1][c:1][c:1][c:1]1",
}
#: the groups the edit operations can attach and remove (those with a template); kept for compatibility
FUNCTIONAL_GROUPS = NEURIPS25_SMARTS
SMARTS_SETS: dict[str, dict[str, str]] = {"official": OFFICIAL_SMARTS, "neurips25": NEURIPS25_SMARTS}

#: the fragment each group is attached as; ``*`` is the bond to the molecule
GROUP_FRAGMENTS: dict[str, str] = {
    "aldehyde": "*C=O",
    "ketone": "*C(C)=O",
    "carboxyl": "*C(=O)O",
    "ester": "*C(=O)OC",
    "amide": "*C(N)=O",
    "amine": "*N",
    "hydroxyl": "*O",
    "halo": "*Cl",
    "nitrile": "*C#N",
    "nitro": "*[N+](=O)[O-]",
    "thiol": "*S",
    "ether": "*OC",
    "sulfide": "*SC",
    "sulfone": "*S(C)(=O)=O",
    "benzene_ring": "*c1ccccc1",
}

_PATTERNS: dict[tuple[str, str], Chem.Mol] = {}
_FRAGMENTS: dict[str, Chem.Mol] = {}


class OperationError(ValueError):
    """An operation that cannot be applied (bad SMILES, unknown group, no valid site)."""


def group_names(smarts: str = "official") -> list[str]:
    """Names a count or check accepts under ``smarts`` (``"official"`` or ``"neurips25"``), sorted."""
    return sorted(SMARTS_SETS[_check_set(smarts)])


def edit_groups(smarts: str = "official") -> list[str]:
    """Names the edit operations accept under ``smarts``: a template exists and the set can check it."""
    return sorted(set(GROUP_FRAGMENTS) & set(SMARTS_SETS[_check_set(smarts)]))


def _check_set(smarts, arg: str = "smarts") -> str:
    if not isinstance(smarts, str) or smarts not in SMARTS_SETS:
        raise OperationError(f"`{arg}` must be one of {', '.join(SMARTS_SETS)}; got {smarts!r}")
    return smarts


def _compile(key: tuple[str, str], text: str) -> Chem.Mol:
    if key not in _PATTERNS:
        patt = Chem.MolFromSmarts(text)
        if patt is None:
            raise OperationError(f"the SMARTS of {key[1]!r} ({key[0]}) does not parse: {text!r}")
        _PATTERNS[key] = patt
    return _PATTERNS[key]


def _pattern(group: str, arg: str = "group", smarts: str = "neurips25") -> Chem.Mol:
    table = SMARTS_SETS[_check_set(smarts)]
    if not isinstance(group, str) or group not in table:
        hint = (" (an official group: pass smarts='official')" if group in OFFICIAL_SMARTS
                else " (not an official group: pass smarts='neurips25' for ours)" if group in NEURIPS25_SMARTS
                else "")
        raise OperationError(f"`{arg}` must be one of {', '.join(sorted(table))} under smarts={smarts!r}; "
                             f"got {group!r}{hint}")
    return _compile((smarts, group), table[group])


def _template(group: str, arg: str, check: str) -> None:
    """Raise unless ``group`` can be edited: it has a fragment / mapped SMARTS and ``check`` can count it."""
    _pattern(group, arg, check)
    if group not in GROUP_FRAGMENTS:
        raise OperationError(f"`{arg}`: no edit template for {group!r} (it can be counted and checked, not "
                             f"edited); editable groups: {', '.join(edit_groups(check))}")


def _fragment(group: str) -> Chem.Mol:
    if group not in _FRAGMENTS:
        _FRAGMENTS[group] = Chem.MolFromSmiles(GROUP_FRAGMENTS[group])
    return _FRAGMENTS[group]


def to_mol(smiles: str, arg: str = "smiles") -> Chem.Mol:
    """Parse a SMILES string or raise :class:`OperationError` naming ``arg``."""
    if not isinstance(smiles, str) or not smiles.strip():
        raise OperationError(f"`{arg}` must be a non-empty SMILES string; got {smiles!r}")
    mol = Chem.MolFromSmiles(smiles.strip())
    if mol is None:
        raise OperationError(f"`{arg}` is not a valid SMILES: {smiles!r}")
    return mol


def canonical(smiles: str) -> str | None:
    """Canonical SMILES, or ``None`` when ``smiles`` is not a valid molecule (never raises)."""
    if not isinstance(smiles, str) or not smiles.strip():
        return None
    mol = Chem.MolFromSmiles(smiles.strip())
    return None if mol is None else Chem.MolToSmiles(mol)


def count_mol(mol: Chem.Mol, group: str, smarts: str = "official") -> int:
    """:func:`count_group` on a parsed molecule."""
    patt = _pattern(group, "group", smarts)
    if smarts == "official":
        n = len(mol.GetSubstructMatches(patt))
        if group in _OFFICIAL_EXCEPTIONS:
            n -= len(mol.GetSubstructMatches(_compile(("official-exception", group), _OFFICIAL_EXCEPTIONS[group])))
        return n
    return len(mol.GetSubstructMatches(patt, uniquify=True, maxMatches=100000))


def count_group(smiles: str, group: str, smarts: str = "official") -> int:
    """Number of matches of ``group``'s SMARTS in ``smiles`` under ``smarts`` (``"official"`` or ``"neurips25"``).

    The official count is ``len(mol.GetSubstructMatches(pattern))`` (a sulfide count less its disulfide
    matches), exactly as the official checker computes it.
    """
    return count_mol(to_mol(smiles), group, smarts)


def _sanitized_smiles(rw: Chem.RWMol) -> str | None:
    mol = rw.GetMol()
    try:
        Chem.SanitizeMol(mol)
    except Exception:  # noqa: BLE001 - any sanitisation failure just drops the candidate
        return None
    smi = Chem.MolToSmiles(mol)
    return smi if Chem.MolFromSmiles(smi) is not None else None


def _attach(mol: Chem.Mol, atom_idx: int, group: str) -> str | None:
    """Bond ``group``'s fragment to atom ``atom_idx`` (which gives up one hydrogen)."""
    target = mol.GetAtomWithIdx(atom_idx)
    if target.GetTotalNumHs() < 1:
        return None
    frag = _fragment(group)
    rw = Chem.RWMol(Chem.CombineMols(mol, frag))
    offset = mol.GetNumAtoms()
    dummy = next(a for a in frag.GetAtoms() if a.GetAtomicNum() == 0)
    anchor = dummy.GetNeighbors()[0].GetIdx() + offset
    rw.AddBond(atom_idx, anchor, Chem.BondType.SINGLE)
    t = rw.GetAtomWithIdx(atom_idx)
    if t.GetNumExplicitHs() > 0:  # e.g. aromatic [nH]: the bond replaces the written hydrogen
        t.SetNumExplicitHs(t.GetNumExplicitHs() - 1)
    rw.RemoveAtom(dummy.GetIdx() + offset)
    return _sanitized_smiles(rw)


def _remove(mol: Chem.Mol, atoms: Iterable[int], keep_atom: int | None = None):
    """Remove ``atoms`` (hydrogens fill the broken bonds) and keep the largest fragment.

    Returns ``(product_mol, index of keep_atom in it or None)``, or ``None`` when the product is not a
    valid molecule.
    """
    atoms = set(atoms)
    rw = Chem.RWMol(mol)
    for a in rw.GetAtoms():
        a.SetIntProp("_orig", a.GetIdx())
    for idx in atoms:
        for b in mol.GetAtomWithIdx(idx).GetBonds():
            nb = b.GetOtherAtomIdx(idx)
            if nb in atoms:
                continue
            atom = rw.GetAtomWithIdx(nb)
            # atoms written with explicit H (aromatic [nH], charged atoms) need the hydrogens spelled out
            if atom.GetNoImplicit() or atom.GetNumExplicitHs() or atom.GetIsAromatic() and atom.GetAtomicNum() != 6:
                atom.SetNumExplicitHs(atom.GetNumExplicitHs() + int(round(b.GetBondTypeAsDouble())))
    for idx in sorted(atoms, reverse=True):
        rw.RemoveAtom(idx)
    if rw.GetNumAtoms() == 0:
        return None
    prod = rw.GetMol()
    try:
        Chem.SanitizeMol(prod)
        frags = Chem.GetMolFrags(prod, asMols=True)
    except Exception:  # noqa: BLE001
        return None
    best = max(frags, key=lambda f: f.GetNumHeavyAtoms())
    kept = None
    for a in best.GetAtoms():
        if keep_atom is not None and a.GetIntProp("_orig") == keep_atom:
            kept = a.GetIdx()
        a.ClearProp("_orig")
    return best, kept


def _group_atoms(group: str, match: Sequence[int]) -> list[int]:
    patt = _pattern(group)
    return [m for q, m in zip(patt.GetAtoms(), match) if q.GetAtomMapNum() == 1]


def _check_max(max_sites, arg="max_sites"):
    if max_sites is None:
        return None
    if isinstance(max_sites, bool) or not isinstance(max_sites, numbers.Integral) or max_sites < 1:
        raise OperationError(f"`{arg}` must be a positive integer or None; got {max_sites!r}")
    return int(max_sites)


def add_group(smiles: str, group: str, max_sites: int | None = None, check: str = "official") -> list[str]:
    """Every molecule made by attaching ``group`` once to ``smiles`` that passes the +1 check of ``check``.

    Parameters
    ----------
    smiles : str
        Source molecule.
    group : str
        A group with an edit template (:func:`edit_groups`).
    max_sites : int, optional
        Try at most this many attachment atoms (in atom order); default: all.
    check : {"official", "neurips25"}
        The SMARTS set whose count must rise by exactly one.

    Returns
    -------
    list of str
        Canonical, deduplicated SMILES, in order of the attachment atom; empty when no site works.
    """
    mol = to_mol(smiles)
    _template(group, "group", check)
    max_sites = _check_max(max_sites)
    before = count_mol(mol, group, check)
    out: dict[str, None] = {}
    tried = 0
    for atom in mol.GetAtoms():
        if atom.GetTotalNumHs() < 1 or atom.GetAtomicNum() not in (6, 7):
            continue
        if max_sites is not None and tried >= max_sites:
            break
        tried += 1
        smi = _attach(mol, atom.GetIdx(), group)
        if smi is not None and count_group(smi, group, check) == before + 1:
            out.setdefault(smi)
    return list(out)


def delete_group(smiles: str, group: str, check: str = "official") -> list[str]:
    """Every molecule made by removing one occurrence of ``group`` that passes the -1 check of ``check``.

    Sites are the matches of the group's :data:`NEURIPS25_SMARTS` pattern (its mapped atoms are removed).
    """
    mol = to_mol(smiles)
    _template(group, "group", check)
    before = count_mol(mol, group, check)
    out: dict[str, None] = {}
    for match in mol.GetSubstructMatches(_pattern(group), uniquify=True):
        res = _remove(mol, _group_atoms(group, match))
        smi = None if res is None else Chem.MolToSmiles(res[0])
        if smi is not None and Chem.MolFromSmiles(smi) is not None and count_group(smi, group, check) == before - 1:
            out.setdefault(smi)
    return list(out)


def substitute_group(smiles: str, old: str, new: str, check: str = "official") -> list[str]:
    """Replace one ``old`` group by ``new`` at the atom it hung on; passes the -1 / +1 check of ``check``."""
    mol = to_mol(smiles)
    _template(old, "old", check)
    _template(new, "new", check)
    if old == new:
        raise OperationError(f"`old` and `new` must differ; got {old!r} twice")
    before_old, before_new = count_mol(mol, old, check), count_mol(mol, new, check)
    out: dict[str, None] = {}
    for match in mol.GetSubstructMatches(_pattern(old), uniquify=True):
        gone = set(_group_atoms(old, match))
        anchors = sorted({nb.GetIdx() for i in gone for nb in mol.GetAtomWithIdx(i).GetNeighbors()} - gone)
        for anchor in anchors:
            res = _remove(mol, gone, keep_atom=anchor)
            if res is None or res[1] is None:
                continue
            smi = _attach(res[0], res[1], new)
            if smi is None:
                continue
            m2 = Chem.MolFromSmiles(smi)
            if count_mol(m2, old, check) == before_old - 1 and count_mol(m2, new, check) == before_new + 1:
                out.setdefault(smi)
    return list(out)


@dataclasses.dataclass(frozen=True)
class Step:
    """One operation of an edit plan: ``op`` in add / delete / substitute, the group(s), and which product.

    ``choice`` picks among the operation's products (index into its sorted-by-site list); ``target``, when
    given, is the SMILES the step must produce (the step fails if no product equals it).
    """

    op: str
    group: str
    new_group: str | None = None
    choice: int = 0
    target: str | None = None


@dataclasses.dataclass
class PlanResult:
    """Outcome of :func:`apply_plan`: the molecule after every step that ran and the first failure."""

    smiles: list[str]
    ok: bool
    failed_step: int | None = None
    reason: str = ""

    @property
    def final(self) -> str:
        return self.smiles[-1]


def _as_step(step, i: int) -> Step:
    if isinstance(step, Step):
        return step
    if isinstance(step, dict):
        known = {f.name for f in dataclasses.fields(Step)}
        bad = set(step) - known
        if bad or "op" not in step or "group" not in step:
            raise OperationError(f"`steps[{i}]` must have keys op, group (and optionally new_group, choice, "
                                 f"target); got {sorted(step)}")
        st = Step(**step)
        if st.new_group is not None and st.op != "substitute":
            raise OperationError(f"`steps[{i}]`: only a substitute step takes new_group; got op {st.op!r} with "
                                 f"new_group {st.new_group!r}")
        return st
    if isinstance(step, (tuple, list)) and 2 <= len(step) <= 3:
        if len(step) == 3 and step[0] != "substitute":
            raise OperationError(f"`steps[{i}]`: only a substitute step takes a second group; got {tuple(step)!r} "
                                 f"(write ({step[0]!r}, {step[1]!r}))")
        return Step(step[0], step[1], step[2] if len(step) == 3 else None)
    raise OperationError(f"`steps[{i}]` must be a Step, a dict or an (op, group[, new_group]) tuple; got {step!r}")


def apply_plan(smiles: str, steps: Sequence, check: str = "official") -> PlanResult:
    """Execute an edit plan step by step, verifying each step with the official count check.

    Parameters
    ----------
    smiles : str
        Starting molecule.
    steps : sequence of Step, dict or tuple
        ``("add", "hydroxyl")``, ``("substitute", "halo", "amine")``, ``{"op": "delete", "group": "nitro"}``.
        A second group on an add / delete step raises (it would be ignored).
    check : {"official", "neurips25"}
        The SMARTS set every step is verified with.

    Returns
    -------
    PlanResult
        ``ok`` is False at the first step that cannot run; ``failed_step`` and ``reason`` say why, and
        ``smiles`` holds the molecules up to that step. Malformed plans raise :class:`OperationError`.
    """
    start = canonical(smiles)
    if start is None:
        raise OperationError(f"`smiles` is not a valid SMILES: {smiles!r}")
    if isinstance(steps, (str, bytes)) or not isinstance(steps, Sequence) or len(steps) == 0:
        raise OperationError(f"`steps` must be a non-empty sequence of steps; got {steps!r}")
    _check_set(check, "check")
    parsed = [_as_step(s, i) for i, s in enumerate(steps)]
    trail = [start]
    for i, st in enumerate(parsed):
        try:
            if st.op == "add":
                prods = add_group(trail[-1], st.group, check=check)
            elif st.op == "delete":
                prods = delete_group(trail[-1], st.group, check=check)
            elif st.op == "substitute":
                if st.new_group is None:
                    raise OperationError(f"`steps[{i}]`: substitute needs new_group")
                prods = substitute_group(trail[-1], st.group, st.new_group, check=check)
            else:
                raise OperationError(f"`steps[{i}].op` must be add, delete or substitute; got {st.op!r}")
        except OperationError as err:
            return PlanResult(trail, False, i, str(err))
        if not prods:
            what = "no site to attach" if st.op == "add" else f"no {st.group} group to {st.op}"
            return PlanResult(trail, False, i, f"step {i} ({st.op} {st.group}): {what} in {trail[-1]}")
        if st.target is not None:
            tgt = canonical(st.target)
            if tgt not in prods:
                return PlanResult(trail, False, i, f"step {i} ({st.op} {st.group}): {st.target!r} is not a "
                                                   f"product of this operation on {trail[-1]}")
            trail.append(tgt)
            continue
        if not isinstance(st.choice, numbers.Integral) or not 0 <= st.choice < len(prods):
            return PlanResult(trail, False, i, f"step {i}: choice must be in [0, {len(prods)}); got {st.choice!r}")
        trail.append(prods[int(st.choice)])
    return PlanResult(trail, True)
