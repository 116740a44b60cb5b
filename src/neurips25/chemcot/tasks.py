"""Benchmark items, the four task families, prompts, and the loader for the released benchmark JSON.

ChemCoTBench's release is one JSON list per subtask of ``{id, query, gt, task, subtask, meta}`` records
(``meta`` a JSON string). :data:`RELEASE_FORMAT` is the one place that says, per subtask, what the prompt
asks for and what shape ``gt`` has in the release (read from the release's own files):

=====================  ========  =====================  ======  ===========================================
subtask                task      answer key             kind    ``gt`` in the release
=====================  ========  =====================  ======  ===========================================
fg_count, ring_count   mol_und   ``count``              int     an integer (fg_count: ``meta.fg_smarts``)
Murcko_scaffold        mol_und   ``Output Scaffold``    smiles  the scaffold SMILES
ring_system_scaffold   mol_und   ``output``             yesno   ``"Yes"`` / ``"No"``
equivalence            mol_und   ``output``             yesno   ``"Yes"`` / ``"No"``
add, delete, sub       mol_edit  ``output``             smiles  ``""``; ``meta`` has reference + group names,
                                                                the source is in the prompt
qed, logp, solubility, mol_opt   ``Final Target         smiles  ``""``; the source is in the prompt
drd, jnk, gsk                    Molecule``
fs                     reaction  ``Major Product``      smiles  a JSON **string**
                                                                ``{"Major Product": ..., "Byproduct(s)": ...}``
retro                  reaction  ``Reactants``          smiles  reactant SMILES (``meta`` may list them)
nepp                   reaction  ``pred_smi``           smiles  the next elementary step's products
rcr                    reaction  ``SMILES``             smiles  the catalyst / solvent / reagent SMILES
mechsel                reaction  ``choice``             choice  a letter ``"A"`` .. ``"J"``
=====================  ========  =====================  ======  ===========================================

:func:`item_from_record` turns a record into an :class:`Item` whose ``reference`` is what the metric
compares with (the fs ``gt`` JSON parsed to its major product, the by-products kept in ``meta``), and raises
naming the record when the release shape is not met (a mol_edit / mol_opt prompt without a readable source,
an fs ``gt`` that is neither JSON nor SMILES). Generated items (:mod:`.data`) use the same prompts'
structure in our own words, so one parser (:func:`parse_prompt`) reads both ours and the official ones.
"""

from __future__ import annotations

import dataclasses
import json
import math
import numbers
import os
import re
from pathlib import Path
from typing import Any

FAMILIES = {"mol_und": "understanding", "mol_edit": "editing", "mol_opt": "optimization", "reaction": "reactions",
            "rxn": "reactions"}


@dataclasses.dataclass(frozen=True)
class ReleaseFormat:
    """How one subtask appears in the release: its ``task``, the JSON answer key and kind, and ``gt``'s shape."""

    task: str
    key: str
    kind: str
    gt: str


_OPT = ReleaseFormat("mol_opt", "Final Target Molecule", "smiles", '"" (the source is in the prompt)')
_EDIT = ReleaseFormat("mol_edit", "output", "smiles", '"" (meta: reference, added_group / removed_group)')
#: subtask -> its release format (see the module docstring)
RELEASE_FORMAT: dict[str, ReleaseFormat] = {
    "fg_count": ReleaseFormat("mol_und", "count", "int", "int"),
    "ring_count": ReleaseFormat("mol_und", "count", "int", "int"),
    "Murcko_scaffold": ReleaseFormat("mol_und", "Output Scaffold", "smiles", "scaffold SMILES"),
    "ring_system_scaffold": ReleaseFormat("mol_und", "output", "yesno", '"Yes" / "No"'),
    "equivalence": ReleaseFormat("mol_und", "output", "yesno", '"Yes" / "No"'),
    "add": _EDIT, "delete": _EDIT, "sub": _EDIT,
    "qed": _OPT, "logp": _OPT, "solubility": _OPT, "drd": _OPT, "jnk": _OPT, "gsk": _OPT,
    "fs": ReleaseFormat("reaction", "Major Product", "smiles",
                        'JSON string {"Major Product": SMILES, "Byproduct(s)": SMILES or list}'),
    "retro": ReleaseFormat("reaction", "Reactants", "smiles", "reactant SMILES (meta.reactants when listed)"),
    "nepp": ReleaseFormat("reaction", "pred_smi", "smiles", "product SMILES of the next elementary step"),
    "rcr": ReleaseFormat("reaction", "SMILES", "smiles", "condition SMILES (catalyst / solvent / reagent)"),
    "mechsel": ReleaseFormat("reaction", "choice", "choice", 'a capital letter "A".."J"'),
}
#: subtask -> (task, answer key, answer kind), derived from :data:`RELEASE_FORMAT`
SUBTASKS: dict[str, tuple[str, str, str]] = {k: (f.task, f.key, f.kind) for k, f in RELEASE_FORMAT.items()}
#: mol_opt subtask -> oracle name (see :func:`neurips25.chemcot.oracles.get_oracle`)
OPT_ORACLE = {"qed": "qed", "logp": "logp", "solubility": "solubility", "drd": "drd2", "jnk": "jnk3", "gsk": "gsk3b"}
OPT_LABEL = {"qed": "QED (drug-likeness)", "logp": "penalized LogP", "solubility": "solubility (ESOL logS)",
             "drd": "DRD2 activity", "jnk": "JNK3 activity", "gsk": "GSK3-beta activity"}


@dataclasses.dataclass
class Item:
    """One benchmark question.

    Parameters
    ----------
    id : str
    task : str
        ``mol_und`` / ``mol_edit`` / ``mol_opt`` / ``reaction``.
    subtask : str
        A key of :data:`RELEASE_FORMAT` (other subtasks load but are not scored).
    prompt : str
        The user message sent to the model.
    reference : Any
        What the metric compares with (count, SMILES, ``"yes"``/``"no"``, a letter); ``None`` where the metric
        needs none (editing, optimisation: the check is computed from the source).
    meta : dict
        ``source`` SMILES, group names, SMARTS, by-products, ... (what the metric needs).
    """

    id: str
    task: str
    subtask: str
    prompt: str
    reference: Any = None
    meta: dict = dataclasses.field(default_factory=dict)

    @property
    def family(self) -> str:
        return FAMILIES.get(self.task, self.task)

    @property
    def answer_key(self) -> tuple[str, str]:
        """(JSON key, kind) the answer is parsed with."""
        spec = SUBTASKS.get(self.subtask)
        return (spec[1], spec[2]) if spec else ("output", "text")

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


_JSON_TAIL = "Reply with JSON only, in exactly this form:\n{{\n    \"{key}\": {shape}\n}}\n"


def _ask(key: str, shape: str) -> str:
    return _JSON_TAIL.format(key=key, shape=shape)


def prompt_for(subtask: str, **f) -> str:
    """The prompt of a generated item (fields: smiles, group, new_group, smiles_b, ring, reactants, ...)."""
    if subtask == "fg_count":
        return ("You are an expert chemist. Count how many times the named fragment occurs in the molecule.\n"
                + _ask("count", "<integer>") + f"Input Molecule: {f['smiles']}, Fragment Name: {f['group']}.")
    if subtask == "ring_count":
        return ("You are an expert chemist. Count the rings (smallest set of smallest rings) of the molecule.\n"
                + _ask("count", "<integer>") + f"Input Molecule: {f['smiles']}.")
    if subtask == "Murcko_scaffold":
        return ("You are an expert chemist. Give the Bemis-Murcko scaffold of the molecule as SMILES.\n"
                + _ask("Output Scaffold", "\"<SMILES>\"") + f"Input Molecule: {f['smiles']}.")
    if subtask == "ring_system_scaffold":
        return ("You are an expert chemist. Does the molecule contain the given ring system? Answer Yes or No.\n"
                + _ask("output", "\"Yes\" or \"No\"") + f"Input Molecule: {f['smiles']}, Ring System: {f['ring']}.")
    if subtask == "equivalence":
        return ("You are an expert chemist. Do the two SMILES strings describe the same molecule? Answer Yes or "
                "No.\n" + _ask("output", "\"Yes\" or \"No\"")
                + f"Molecule A: {f['smiles']}, Molecule B: {f['smiles_b']}.")
    if subtask == "add":
        return ("You are an expert chemist. Add one copy of the named functional group to the molecule and give "
                "the edited molecule as SMILES.\n" + _ask("output", "\"<SMILES>\"")
                + f"Input Molecule: {f['smiles']}, Functional Group to add: {f['group']}.")
    if subtask == "delete":
        return ("You are an expert chemist. Remove one copy of the named functional group from the molecule and "
                "give the edited molecule as SMILES.\n" + _ask("output", "\"<SMILES>\"")
                + f"Input Molecule: {f['smiles']}, Functional Group to delete: {f['group']}.")
    if subtask == "sub":
        return ("You are an expert chemist. Replace one copy of the first functional group by the second and "
                "give the edited molecule as SMILES.\n" + _ask("output", "\"<SMILES>\"")
                + f"Input Molecule: {f['smiles']}, Functional Group to delete: {f['group']}, "
                  f"Functional Group to add: {f['new_group']}.")
    if subtask in OPT_LABEL:
        return (f"You are an expert chemist. Modify the Source Molecule to improve its {OPT_LABEL[subtask]} "
                "with a small, chemically sensible edit.\n" + _ask("Final Target Molecule", "\"<SMILES>\"")
                + f"Source Molecule: {f['smiles']}.")
    if subtask == "fs":
        return ("You are an expert chemist. Predict the major product of the reaction.\n"
                + _ask("Major Product", "\"<SMILES>\"")
                + f"Reactants: {f['reactants']}, Reagents: {f.get('reagents') or 'none'}.")
    raise ValueError(f"`subtask` must be one of {', '.join(SUBTASKS)}; got {subtask!r}")


_FIELDS = {
    "smiles": r"(?:Input Molecule|Source Molecule|Molecule A)\s*:\s*([^\s,]+?)(?:[,.]?\s|[,.]?$)",
    "smiles_b": r"Molecule B\s*:\s*([^\s,]+?)(?:[,.]?\s|[,.]?$)",
    "group": r"(?:Fragment Name|Functional Group to (?:add|delete))\s*:\s*([A-Za-z_\- ]+?)\s*(?:[,.]|$)",
    "delete_group": r"Functional Group to delete\s*:\s*([A-Za-z_\-]+)",
    "add_group": r"Functional Group to add\s*:\s*([A-Za-z_\-]+)",
    "ring": r"Ring System\s*:\s*([^\s,]+?)(?:[,.]?\s|[,.]?$)",
    "reactants": r"Reactants\s*:\s*([^\s,]+)",
    "reagents": r"Reagents\s*:\s*(.+?)\.?\s*$",
}


def parse_prompt(prompt: str) -> dict:
    """Fields of a ChemCoTBench-style prompt (ours or the release's): smiles, groups, ring, reactants, ...

    Never raises; absent fields are missing from the dict. ``subtask`` is guessed from the wording.
    """
    out: dict[str, str] = {}
    if not isinstance(prompt, str):
        return out
    for name, pat in _FIELDS.items():
        m = re.search(pat, prompt, re.M)
        if m:
            out[name] = m.group(1).strip()
    low = prompt.lower()
    if "reactants:" in low:
        out["subtask"] = "fs"
    elif "source molecule" in low:
        for sub, label in OPT_LABEL.items():
            if label.split(" (")[0].lower() in low or sub in low:
                out["subtask"] = sub
                break
        if "penalized logp" in low or re.search(r"\blogp\b", low):
            out["subtask"] = "logp"
        elif "solubility" in low:
            out["subtask"] = "solubility"
        elif "qed" in low:
            out["subtask"] = "qed"
    elif "molecule b" in low:
        out["subtask"] = "equivalence"
    elif "ring system" in low:
        out["subtask"] = "ring_system_scaffold"
    elif "scaffold" in low:
        out["subtask"] = "Murcko_scaffold"
    elif "fragment name" in low:
        out["subtask"] = "fg_count"
    elif "count" in low and "ring" in low:
        out["subtask"] = "ring_count"
    elif "delete_group" in out and "add_group" in out:
        out["subtask"] = "sub"
    elif "add_group" in out:
        out["subtask"] = "add"
    elif "delete_group" in out:
        out["subtask"] = "delete"
    if out.get("subtask") == "sub":
        out["group"], out["new_group"] = out["delete_group"], out["add_group"]
    return out


def _meta(raw) -> dict:
    if raw is None or raw == "":
        return {}
    if isinstance(raw, dict):
        return dict(raw)
    if isinstance(raw, str):
        try:
            val = json.loads(raw)
        except ValueError:
            return {"raw": raw}
        return val if isinstance(val, dict) else {"raw": val}
    return {"raw": raw}


def _reaction_reference(rec: dict, subtask: str, meta: dict, index: int):
    """The reference SMILES of a reaction record, from its release ``gt`` (see :data:`RELEASE_FORMAT`)."""
    gt = rec.get("gt", rec.get("reference"))
    where = f"record {index} ({subtask}, id {rec.get('id')!r})"
    if subtask == "fs":
        val = gt
        if isinstance(gt, str) and gt.lstrip().startswith("{"):
            try:
                val = json.loads(gt)
            except ValueError as err:
                raise ValueError(f"{where}: gt looks like JSON but does not parse: {err}") from err
        if isinstance(val, dict):
            if "Major Product" not in val:
                raise ValueError(f"{where}: gt JSON has no 'Major Product' key; got keys {sorted(val)}")
            by = val.get("Byproduct(s)")
            meta.setdefault("byproducts", ".".join(by) if isinstance(by, list) else by)
            val = val["Major Product"]
        if isinstance(val, list):
            val = ".".join(str(v) for v in val)
        if not isinstance(val, str) or not val.strip():
            raise ValueError(f"{where}: gt must be the release's JSON string or a SMILES; got {gt!r}")
        return val
    if subtask == "retro" and isinstance(meta.get("reactants"), list) and meta["reactants"]:
        return ".".join(str(v) for v in meta["reactants"])  # the official scorer joins the listed reactants
    if subtask in ("retro", "nepp", "rcr"):
        if isinstance(gt, list):
            gt = ".".join(str(v) for v in gt)
        if not isinstance(gt, str) or not gt.strip():
            raise ValueError(f"{where}: gt must be a SMILES string; got {gt!r}")
        return gt
    if subtask == "mechsel":
        if not isinstance(gt, str) or not re.fullmatch(r"\s*[A-Za-z]\s*", gt):
            raise ValueError(f"{where}: gt must be one letter; got {gt!r}")
        return gt.strip()
    return gt


def integer_count(v) -> int:
    """A count reference as an int: an integer, or a number / string with an integer value (``2.0``, ``"2"``).

    Raises ``ValueError`` ("must be an integer count; got ...") for anything else: a fractional count is never
    truncated.
    """
    val = v
    if isinstance(v, str):
        try:
            val = float(v.strip())
        except ValueError:
            val = None
    if isinstance(val, bool) or not isinstance(val, numbers.Real) or not math.isfinite(val) or val != int(val):
        raise ValueError(f"must be an integer count; got {v!r} (a count is not truncated)")
    return int(val)


def _is_molecule(smiles: str) -> bool:
    from rdkit import Chem, RDLogger

    RDLogger.DisableLog("rdApp.*")
    try:
        return Chem.MolFromSmiles(smiles.strip()) is not None
    finally:
        RDLogger.EnableLog("rdApp.*")


def item_from_record(rec: dict, index: int = 0) -> Item:
    """An :class:`Item` from one record of the released JSON (or of :func:`save_items`).

    Raises
    ------
    ValueError
        Naming the record: not an object; no string query / task / subtask; a mol_edit / mol_opt prompt whose
        source molecule is missing or not a valid SMILES; a count ``gt`` that is not an integer; a reaction ``gt``
        of the wrong shape (see :data:`RELEASE_FORMAT`).
    """
    if not isinstance(rec, dict):
        raise ValueError(f"record {index} must be an object; got {type(rec).__name__}")
    prompt = rec.get("query", rec.get("prompt"))
    task, subtask = rec.get("task"), rec.get("subtask")
    if not isinstance(prompt, str) or not isinstance(task, str) or not isinstance(subtask, str):
        raise ValueError(f"record {index} must have string fields query (or prompt), task and subtask; got keys "
                         f"{sorted(rec)}")
    meta = _meta(rec.get("meta"))
    fields = parse_prompt(prompt)
    if task in ("mol_edit", "mol_opt"):
        meta.setdefault("source", fields.get("smiles"))
        if not isinstance(meta.get("source"), str) or not meta["source"]:
            raise ValueError(f"record {index} ({subtask}, id {rec.get('id')!r}): no source molecule in meta or in "
                             "the prompt ('Input Molecule: ...' / 'Source Molecule: ...'); it cannot be scored")
        if not _is_molecule(meta["source"]):
            raise ValueError(f"record {index} ({subtask}, id {rec.get('id')!r}): the source molecule "
                             f"{meta['source']!r} is not a valid SMILES (RDKit cannot parse it); the item is invalid "
                             "and cannot be scored")
    if task == "mol_edit":
        if subtask == "add":
            meta.setdefault("added_group", fields.get("add_group"))
        elif subtask == "delete":
            meta.setdefault("removed_group", fields.get("delete_group"))
        elif subtask == "sub":
            meta.setdefault("removed_group", fields.get("delete_group"))
            meta.setdefault("added_group", fields.get("add_group"))
    ref = rec.get("gt", rec.get("reference"))
    if ref == "" and task in ("mol_edit", "mol_opt"):
        ref = None
    if subtask in ("fs", "retro", "nepp", "rcr", "mechsel"):
        ref = _reaction_reference(rec, subtask, meta, index)
    elif subtask in ("fg_count", "ring_count") and ref is not None:
        try:
            ref = integer_count(ref)
        except ValueError as err:
            raise ValueError(f"record {index} ({subtask}, id {rec.get('id')!r}): gt {err}") from err
    return Item(str(rec.get("id", index)), task, subtask, prompt, ref, meta)


def load_official_json(path: str | os.PathLike) -> list[Item]:
    """Items of a ChemCoTBench JSON file (a list of records, or ``{"data": [...]}``), e.g. ``add.json``.

    Raises
    ------
    FileNotFoundError, ValueError
        When the file is missing, not JSON, or a record lacks ``query`` / ``task`` / ``subtask``.
    """
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"`path` must be an existing JSON file; got {str(path)!r}")
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except ValueError as err:
        raise ValueError(f"`path` {str(path)!r} is not valid JSON: {err}") from err
    if isinstance(data, dict) and isinstance(data.get("data"), list):
        data = data["data"]
    if not isinstance(data, list):
        raise ValueError(f"`path` {str(path)!r} must hold a list of records; got {type(data).__name__}")
    return [item_from_record(r, i) for i, r in enumerate(data)]


def save_items(items: list[Item], path: str | os.PathLike) -> Path:
    """Write items in the release's record format (``query``/``gt``/``task``/``subtask``/``meta``)."""
    recs = [{"id": it.id, "query": it.prompt, "gt": it.reference, "task": it.task, "subtask": it.subtask,
             "meta": json.dumps(it.meta)} for it in items]
    p = Path(path)
    tmp = p.with_suffix(p.suffix + ".tmp")
    tmp.write_text(json.dumps(recs, indent=1), encoding="utf-8")
    os.replace(tmp, p)
    return p
