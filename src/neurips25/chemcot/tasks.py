"""Benchmark items, the four task families, prompts, and the loader for the released benchmark JSON.

ChemCoTBench items (official release: a list of ``{id, query, gt, task, subtask, meta}`` objects, ``meta``
a JSON string) fall in four families, named as in the release:

============  =========================================================  =========================
task          subtasks (this module)                                      answer key / kind
============  =========================================================  =========================
mol_und       fg_count, ring_count                                        ``count`` / int
              Murcko_scaffold                                             ``Output Scaffold`` / SMILES
              ring_system_scaffold, equivalence                           ``output`` / yes-no
mol_edit      add, delete, sub                                            ``output`` / SMILES
mol_opt       qed, logp, solubility (drd, jnk, gsk with your own oracle)  ``Final Target Molecule``
rxn           fs (forward synthesis, major product)                       ``Major Product`` / SMILES
============  =========================================================  =========================

Prompts follow the release's structure ("Input Molecule: ..., Functional Group to add: ...", "Source
Molecule: ...") in our own words, so one parser (:func:`parse_prompt`) reads both ours and the official ones.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from pathlib import Path
from typing import Any

FAMILIES = {"mol_und": "understanding", "mol_edit": "editing", "mol_opt": "optimization", "rxn": "reactions"}

#: subtask -> (task, answer key, answer kind)
SUBTASKS: dict[str, tuple[str, str, str]] = {
    "fg_count": ("mol_und", "count", "int"),
    "ring_count": ("mol_und", "count", "int"),
    "Murcko_scaffold": ("mol_und", "Output Scaffold", "smiles"),
    "ring_system_scaffold": ("mol_und", "output", "yesno"),
    "equivalence": ("mol_und", "output", "yesno"),
    "add": ("mol_edit", "output", "smiles"),
    "delete": ("mol_edit", "output", "smiles"),
    "sub": ("mol_edit", "output", "smiles"),
    "qed": ("mol_opt", "Final Target Molecule", "smiles"),
    "logp": ("mol_opt", "Final Target Molecule", "smiles"),
    "solubility": ("mol_opt", "Final Target Molecule", "smiles"),
    "drd": ("mol_opt", "Final Target Molecule", "smiles"),
    "jnk": ("mol_opt", "Final Target Molecule", "smiles"),
    "gsk": ("mol_opt", "Final Target Molecule", "smiles"),
    "fs": ("rxn", "Major Product", "smiles"),
}
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
        ``mol_und`` / ``mol_edit`` / ``mol_opt`` / ``rxn``.
    subtask : str
        A key of :data:`SUBTASKS` (other official subtasks load but are not scored here).
    prompt : str
        The user message sent to the model.
    reference : Any
        Ground truth (count, SMILES, ``"yes"``/``"no"``); ``None`` where the metric needs none (editing,
        optimisation: the check is computed from the source).
    meta : dict
        ``source`` SMILES, group names, SMARTS, ... (what the metric needs).
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


def item_from_record(rec: dict, index: int = 0) -> Item:
    """An :class:`Item` from one record of the released JSON (or of :func:`save_items`)."""
    if not isinstance(rec, dict):
        raise ValueError(f"record {index} must be an object; got {type(rec).__name__}")
    prompt = rec.get("query", rec.get("prompt"))
    task, subtask = rec.get("task"), rec.get("subtask")
    if not isinstance(prompt, str) or not isinstance(task, str) or not isinstance(subtask, str):
        raise ValueError(f"record {index} must have string fields query (or prompt), task and subtask; got keys "
                         f"{sorted(rec)}")
    meta = _meta(rec.get("meta"))
    fields = parse_prompt(prompt)
    if task == "mol_edit":
        meta.setdefault("source", fields.get("smiles"))
        if subtask == "add":
            meta.setdefault("added_group", fields.get("add_group"))
        elif subtask == "delete":
            meta.setdefault("removed_group", fields.get("delete_group"))
        elif subtask == "sub":
            meta.setdefault("removed_group", fields.get("delete_group"))
            meta.setdefault("added_group", fields.get("add_group"))
    elif task == "mol_opt":
        meta.setdefault("source", fields.get("smiles"))
    ref = rec.get("gt", rec.get("reference"))
    if ref == "" and task in ("mol_edit", "mol_opt"):
        ref = None
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
