"""Re-scoring the model replies released with ChemCoTBench, and their agreement with the release's own scores.

The official repository (``IDEA-XL/ChemCoTBench``, commit ``080a8eb`` of 2025-07-19) ships, beside its score
files, every model's raw replies: ``baselines/api_results/<family>/<task>/cot_results_<model>.json`` (the three
Llama files are named ``llama3.1-70b.json``, ``llama3.3-nemotron-49B.json``, ``...-non-reason.json``). Each file
is a JSON list of records: the item's fields (``src_smiles`` or ``src`` for optimisation; ``molecule``,
``added_group`` / ``removed_group`` for editing; ``smiles`` and ``fg_num`` / ``count`` / ``largest_scaffold``
for understanding) and ``json_results``, the reply: a dict (already parsed by the authors) or the raw string
(``<think>`` blocks, code fences). The scores are ``<family>/eval_score_<model>.json`` (``mol_understanding``:
one number per task; ``mol_edit``: pass rate per task; ``deep_mol_opt``: per property ``improvement``
(``mean``, ``success_rate``, ...), ``scaffold``, ``invalid_rate``); Gemini's optimisation scores are only per
property, ``deep_mol_opt/<prop>/eval_score_gemini.json``. No licence file ships with the release: this module
reads it from a checkout the user makes and copies nothing.

:func:`rescore_release` parses every reply with the official-style parser and scores it with this package's
official metrics (:mod:`.metrics`, :mod:`.oracles`); :func:`agreement` compares the results with the
release's score files within :data:`TOLERANCE` (the positive control for our metric path);
:func:`reasoning_gap` is the paper's comparison of reasoning and non-reasoning models on optimisation.

Two conventions of the release's scoring code (``baselines/api_baselines/eval_*.py`` at 080a8eb) differ from
the metric definitions of the later official code this package follows, and the comparison uses the release's
(per-item values still come from our functions): understanding scores average over the *answered* items only
(an unparsable reply leaves the denominator), and the optimisation mean is a plain mean (the later code
winsorises). Its solubility is a different linear model (0.16 - 0.63 logP - 0.0062 MW + 0.066 HBD - 0.074 HBA)
from the refit ESOL used here, and an unparsable-but-present invalid SMILES gets the oracle's value for an
invalid molecule there (0 here): both are why solubility's tolerance is wider.
"""

from __future__ import annotations

import dataclasses
import json
import numbers
import subprocess
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from neurips25.chemcot.metrics import edit_passes, scaffold_similarity
from neurips25.chemcot.oracles import get_oracle
from neurips25.chemcot.parsing import parse_official
from neurips25.chemcot.tasks import OPT_ORACLE, Item

RELEASE_COMMIT = "080a8eb97970fb9c176af4a99f2999580bfb3d21"
RELEASE_URL = "https://github.com/IDEA-XL/ChemCoTBench"
#: how to get the release (said by every claim that needs it when it is missing)
HOW_TO_GET = (f"git clone {RELEASE_URL} chemcot-release && git -C chemcot-release checkout {RELEASE_COMMIT[:7]}; "
              "then neurips25 reproduce chemcot --release chemcot-release (or set NEURIPS25_CHEMCOT_RELEASE)")
ENV_KEY = "NEURIPS25_CHEMCOT_RELEASE"
RESULTS = Path("baselines") / "api_results"


@dataclasses.dataclass(frozen=True)
class Model:
    """One released model: its score-file name, display name, group and the evidence for the group."""

    score_name: str
    display: str
    group: str  # "reasoning" | "non-reasoning" | "domain"
    evidence: str


#: file stem (after ``cot_results_``) -> model. Groups from the release's own calling scripts
#: (``baselines/api_baselines/**``: the model string and ``enable_thinking``); the two 7B biomedical models are
#: kept apart (neither group: domain models, not general LLMs with or without thinking)
MODELS: dict[str, Model] = {
    "gpt4o": Model("gpt4o", "GPT-4o", "non-reasoning", "gpt-4o"),
    "dsv3": Model("dsv3", "DeepSeek-V3", "non-reasoning", "deepseek-v3"),
    "claude3": Model("claude3", "Claude-3.7-Sonnet", "non-reasoning",
                     "claude-3-7-sonnet-20250219 called without extended thinking"),
    "qwen25": Model("qwen25", "Qwen2.5-32B-Instruct", "non-reasoning", "qwen2.5-32b-instruct"),
    "qwen3": Model("qwen3", "Qwen3-30B-A3B (no think)", "non-reasoning", "qwen3-30b-a3b, enable_thinking False"),
    "qwen3large": Model("qwen3large", "Qwen3-235B-A22B (no think)", "non-reasoning",
                        "qwen3-235b-a22b, enable_thinking False"),
    "llama3.1-70b": Model("llama31-70b", "Llama-3.1-70B", "non-reasoning", "llama3.1-70b"),
    "llama3.3-nemotron-49B-non-reason": Model("llama33-nemo", "Llama-3.3-Nemotron-49B (no think)",
                                              "non-reasoning", "the release's 'non-reason' file"),
    "dsr1": Model("dsr1", "DeepSeek-R1", "reasoning", "deepseek-reasoner; raw_cot in the files"),
    "o1mini": Model("o1mini", "o1-mini", "reasoning", "o1-mini"),
    "o3mini": Model("o3mini", "o3-mini", "reasoning", "o3-mini"),
    "gemini": Model("gemini", "Gemini-2.5-Pro", "reasoning", "gemini-2.5-pro-preview-03-25 (always thinks)"),
    "qwen3think": Model("qwen3think", "Qwen3-30B-A3B (think)", "reasoning", "qwen3-30b-a3b, enable_thinking True"),
    "qwen3largethink": Model("qwen3largethink", "Qwen3-235B-A22B (think)", "reasoning",
                             "qwen3-235b-a22b, enable_thinking True"),
    "llama3.3-nemotron-49B": Model("llama33-nemo-think", "Llama-3.3-Nemotron-49B (think)", "reasoning",
                                   "<think> blocks in the replies"),
    "biomedgpt": Model("biomedgpt", "BioMedGPT-7B", "domain", "7B biomedical model"),
    "biomistral": Model("biomistral", "BioMistral-7B", "domain", "7B biomedical model"),
}


@dataclasses.dataclass(frozen=True)
class Task:
    """One released task: where its replies live, our subtask, the answer key and kind, the release's score."""

    family: str        # folder under api_results
    folder: str        # task folder
    subtask: str       # our subtask (metrics.METRICS)
    key: str           # the JSON key the prompt asks for
    kind: str          # parsing kind
    score_key: str     # key in the family's eval_score file
    figure: str        # "mae" | "score" | "accuracy" | "pass" | "success"


TASKS: tuple[Task, ...] = (
    Task("mol_understanding", "fg_samples", "fg_count", "count", "int", "fg_samples", "mae"),
    Task("mol_understanding", "frag_detect_murcko", "Murcko_scaffold", "Output Scaffold", "smiles", "murcko",
         "score"),
    Task("mol_understanding", "frag_detect_ring_count", "ring_count", "count", "int", "ring_count", "mae"),
    Task("mol_understanding", "frag_detect_ring_system", "ring_system_scaffold", "output", "yesno", "ring_system",
         "accuracy"),
    Task("mol_understanding", "mutated", "equivalence", "output", "yesno", "mutated", "accuracy"),
    Task("mol_understanding", "permutated", "equivalence", "output", "yesno", "permutated", "accuracy"),
    Task("mol_edit", "add", "add", "output", "smiles", "add", "pass"),
    Task("mol_edit", "delete", "delete", "output", "smiles", "delete", "pass"),
    Task("mol_edit", "sub", "sub", "output", "smiles", "sub", "pass"),
    *(Task("deep_mol_opt", p, p, "Final Target Molecule", "smiles", p, "success") for p in ("qed", "logp",
                                                                                          "solubility")),
)
#: optimisation properties whose oracles are not offline (TDC downloads them): their replies are not re-scored
NOT_OFFLINE = ("drd", "jnk", "gsk")

#: agreement tolerance per release score key, |ours - release| (fixed before the first re-scoring run, in the
#: criteria ledger): rates 0.03 (about one item in 40), editing 0.05 (one of 20), MAE 0.05, scaffold score
#: 0.02; solubility 0.05 (a different linear model in the release's scoring code)
TOLERANCE: dict[str, float] = {
    "fg_samples": 0.05, "murcko": 0.02, "ring_count": 0.05, "ring_system": 0.03, "mutated": 0.03,
    "permutated": 0.03, "add": 0.05, "delete": 0.05, "sub": 0.05, "qed": 0.03, "logp": 0.03, "solubility": 0.05,
}


def release_dir(path: str | Path | None) -> Path:
    """The checkout root, checked: it must hold ``baselines/api_results`` (raises naming ``path``)."""
    if path is None or (isinstance(path, str) and not path.strip()):
        raise ValueError(f"`path` must name a checkout of the ChemCoTBench release; {HOW_TO_GET}")
    root = Path(path).expanduser()
    if not (root / RESULTS).is_dir():
        raise ValueError(f"`path` {str(path)!r} is not a checkout of the ChemCoTBench release (no {RESULTS}/ in "
                         f"it); {HOW_TO_GET}")
    return root


def release_commit(root: str | Path) -> str | None:
    """The git commit of the checkout, or None when it is not a git checkout."""
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    s = out.stdout.strip()
    return s if out.returncode == 0 and len(s) == 40 else None


def _reply_file(root: Path, task: Task, stem: str) -> Path:
    folder = root / RESULTS / task.family / task.folder
    return folder / (f"{stem}.json" if stem.startswith("llama") else f"cot_results_{stem}.json")


def _parse(reply: Any, key: str, kind: str):
    """The official-style parse of one reply: a dict is read as already parsed, a string as the model wrote it."""
    if isinstance(reply, dict):
        try:
            reply = json.dumps(reply)
        except (TypeError, ValueError):
            return None
    return parse_official(reply, key, kind)


def _reference(task: Task, rec: dict):
    if task.folder == "fg_samples":
        return rec["fg_num"]
    if task.folder == "frag_detect_ring_count":
        return rec["count"]
    if task.folder == "frag_detect_murcko":
        return rec["largest_scaffold"]
    # the release's yes/no tasks have one right answer each: ring systems present, permutations equal,
    # mutations not (its eval_mol_und.py counts "yes" / "no" the same way)
    return {"frag_detect_ring_system": "yes", "permutated": "yes", "mutated": "no"}.get(task.folder)


def _item_key(task: Task, rec: dict) -> str:
    if task.family == "deep_mol_opt":
        return str(rec.get("src_smiles", rec.get("src")))
    if task.family == "mol_edit":
        return f"{rec.get('molecule')}|{rec.get('added_group')}|{rec.get('removed_group')}"
    return f"{rec.get('smiles')}|{rec.get('fg_name', '')}"


def score_records(task: Task, records: list[dict], oracle=None) -> list[dict]:
    """Per-record results of one task: ``{"item", "answered", "value"}`` (``value``: the per-item metric).

    ``value`` is the absolute count error (a missing answer counts as 0), the scaffold score, a yes/no or
    edit hit (1.0 / 0.0), or the optimisation delta (invalid answer = 0) -- our official definitions.
    """
    out = []
    if task.family == "deep_mol_opt":
        oracle = oracle or get_oracle(OPT_ORACLE[task.subtask])
    for i, rec in enumerate(records):
        if not isinstance(rec, dict) or "json_results" not in rec:
            raise ValueError(f"record {i} of {task.family}/{task.folder}: not a release record (no json_results)")
        ans = _parse(rec["json_results"], task.key, task.kind)
        if task.figure == "mae":
            value = float(abs((0 if ans is None else ans) - int(_reference(task, rec))))
        elif task.figure == "score":
            value = float(scaffold_similarity(ans, _reference(task, rec)))
        elif task.figure == "accuracy":
            value = float(ans is not None and ans == _reference(task, rec))
        elif task.figure == "pass":
            item = Item(f"{task.folder}-{i}", "mol_edit", task.subtask, "", None,
                        {"source": rec["molecule"], "added_group": rec.get("added_group"),
                         "removed_group": rec.get("removed_group")})
            value = float(edit_passes(ans, item))
        else:
            src = rec.get("src_smiles", rec.get("src"))
            f_src = oracle(src)
            f_out = oracle(ans) if isinstance(ans, str) else None
            value = float(f_out - f_src) if f_out is not None and f_src is not None else 0.0
        out.append({"item": _item_key(task, rec), "answered": ans is not None, "value": value})
    return out


def _aggregate(task: Task, rows: list[dict], convention: str) -> float:
    """One task's figure from per-record rows: ``"ours"`` (every record in the denominator) or ``"release"``
    (understanding over the answered records only, as the release's eval_mol_und.py)."""
    if convention == "release" and task.family == "mol_understanding":
        rows = [r for r in rows if r["answered"]]
    if not rows:
        return float("nan")
    vals = np.array([r["value"] for r in rows], dtype=float)
    return float(np.mean(vals > 0)) if task.figure == "success" else float(np.mean(vals))


def _release_score(root: Path, task: Task, model: Model) -> float | None:
    fam = root / RESULTS / task.family
    f = fam / f"eval_score_{model.score_name}.json"
    if task.family == "deep_mol_opt":
        per_prop = fam / task.folder / f"eval_score_{model.score_name}.json"
        if f.is_file():
            block = json.loads(f.read_text()).get(task.score_key)
        elif per_prop.is_file():
            block = json.loads(per_prop.read_text())
        else:
            return None
        try:
            return float(block["improvement"]["success_rate"])
        except (KeyError, TypeError, ValueError):
            return None
    if not f.is_file():
        return None
    v = json.loads(f.read_text()).get(task.score_key)
    return float(v) if isinstance(v, numbers.Real) and not isinstance(v, bool) else None


@dataclasses.dataclass
class Rescore:
    """The re-scored release: per (model stem, task folder) the per-record rows and both aggregates."""

    root: str
    commit: str | None
    rows: dict            # (stem, folder) -> list of rows
    ours: dict            # (stem, folder) -> our official figure
    release_convention: dict  # (stem, folder) -> our per-item values under the release's denominators
    release_scores: dict  # (stem, folder) -> the release's own figure (None where it has none)
    missing: list         # (stem, folder) whose reply file is absent

    def table(self) -> list[dict]:
        """One row per (model, task): ours, ours under the release's convention, the release's, agreement."""
        out = []
        for (stem, folder), ours in sorted(self.ours.items()):
            task = _TASK_BY_FOLDER[folder]
            rel = self.release_scores.get((stem, folder))
            conv = self.release_convention[(stem, folder)]
            diff = None if rel is None else conv - rel
            out.append({"model": stem, "group": MODELS[stem].group, "task": task.score_key, "figure": task.figure,
                        "ours": ours, "ours_release_convention": conv, "release": rel,
                        "diff": diff, "tolerance": TOLERANCE[task.score_key],
                        "agrees": None if diff is None else bool(abs(diff) <= TOLERANCE[task.score_key] + 1e-12)})
        return out


_TASK_BY_FOLDER = {t.folder: t for t in TASKS}


def rescore_release(path: str | Path, models: list[str] | None = None, tasks: list[str] | None = None,
                    oracles: dict | None = None) -> Rescore:
    """Parse and score every released reply of ``models`` (file stems, default all of :data:`MODELS`) on
    ``tasks`` (task folders, default :data:`TASKS`) with our official metrics.

    ``oracles`` (property -> callable ``smiles -> float | None``) replaces an optimisation oracle: a diagnostic
    of which definition a release score was computed with (scripts/chemcot/release_diagnostics.py).

    Raises ``ValueError`` naming ``path`` when it is not a checkout of the release, or the record that is not a
    release record. A model / task whose reply file is absent is listed in ``missing``.
    """
    root = release_dir(path)
    models = list(MODELS) if models is None else list(models)
    bad = [m for m in models if m not in MODELS]
    if bad:
        raise ValueError(f"`models`: unknown model file stem(s) {bad}; known: {', '.join(MODELS)}")
    sel = TASKS if tasks is None else tuple(_TASK_BY_FOLDER[t] for t in tasks if t in _TASK_BY_FOLDER)
    if tasks is not None and len(sel) != len(tasks):
        raise ValueError(f"`tasks`: unknown task folder(s) {sorted(set(tasks) - set(_TASK_BY_FOLDER))}")
    oracles = {**{t.subtask: get_oracle(OPT_ORACLE[t.subtask]) for t in sel if t.family == "deep_mol_opt"},
               **(oracles or {})}
    rows, ours, conv, rel, missing = {}, {}, {}, {}, []
    for stem in models:
        for task in sel:
            f = _reply_file(root, task, stem)
            if not f.is_file():
                missing.append((stem, task.folder))
                continue
            try:
                records = json.loads(f.read_text())
            except json.JSONDecodeError as err:
                raise ValueError(f"{f}: not JSON ({err})") from err
            if not isinstance(records, list):
                raise ValueError(f"{f}: a release reply file is a JSON list of records; got {type(records).__name__}")
            r = score_records(task, records, oracles.get(task.subtask))
            rows[(stem, task.folder)] = r
            ours[(stem, task.folder)] = _aggregate(task, r, "ours")
            conv[(stem, task.folder)] = _aggregate(task, r, "release")
            rel[(stem, task.folder)] = _release_score(root, task, MODELS[stem])
    return Rescore(str(root), release_commit(root), rows, ours, conv, rel, missing)


def agreement(rescore: Rescore, families: tuple[str, ...] | None = None, shift: int = 0) -> dict:
    """Share of (model, task) cells where our re-score (release denominators) is within :data:`TOLERANCE` of the
    release's own score; ``shift`` compares each model with the release's score of the model ``shift`` places
    further in the sorted list (the negative control: a wrong pairing must disagree)."""
    stems = sorted({s for s, _ in rescore.ours})
    cells, per_task = [], defaultdict(list)
    for (stem, folder), conv in sorted(rescore.release_convention.items()):
        task = _TASK_BY_FOLDER[folder]
        if families is not None and task.family not in families:
            continue
        other = stems[(stems.index(stem) + shift) % len(stems)]
        rel = rescore.release_scores.get((other, folder))
        if rel is None or not np.isfinite(conv):
            continue
        ok = abs(conv - rel) <= TOLERANCE[task.score_key] + 1e-12
        cells.append(ok)
        per_task[task.score_key].append(ok)
    return {"agree_fraction": float(np.mean(cells)) if cells else float("nan"), "cells": len(cells),
            "cells_agreeing": int(sum(cells)),
            "per_task": {k: f"{sum(v)}/{len(v)}" for k, v in sorted(per_task.items())}}


def success_matrix(rescore: Rescore, props: tuple[str, ...] = ("qed", "logp", "solubility")) -> tuple[list, dict]:
    """Per model, the success (delta > 0) of every optimisation item shared by all models that answered it.

    Returns ``(items, {stem: np.ndarray})`` with items ``(prop, source)`` in a fixed order; a model's duplicate
    records of one item are averaged (the Nemotron-think files hold up to 4 replies per item).
    """
    per_model: dict[str, dict] = {}
    for (stem, folder), rows in rescore.rows.items():
        if folder not in props:
            continue
        acc = per_model.setdefault(stem, defaultdict(list))
        for r in rows:
            acc[(folder, r["item"])].append(float(r["value"] > 0))
    if not per_model:
        return [], {}
    shared = set.intersection(*(set(d) for d in per_model.values()))
    items = sorted(shared)
    return items, {s: np.array([np.mean(d[i]) for i in items]) for s, d in per_model.items()}


def reasoning_gap(rescore: Rescore, seed: int = 0, n_boot: int = 2000, groups: dict | None = None) -> dict:
    """The paper's comparison on optimisation: mean success of the reasoning models minus the non-reasoning ones,
    with a paired bootstrap interval over the shared items (:func:`neurips25.repro.intervals.bootstrap_interval`).

    ``groups`` (stem -> group) overrides :data:`MODELS`' grouping (a sensitivity analysis).
    """
    from neurips25.repro.intervals import bootstrap_interval

    items, mat = success_matrix(rescore)
    grp = {s: (groups or {}).get(s, MODELS[s].group) for s in mat}
    r = [s for s in sorted(mat) if grp[s] == "reasoning"]
    n = [s for s in sorted(mat) if grp[s] == "non-reasoning"]
    if not items or not r or not n:
        return {"reasoning_minus_plain_success": None, "n_items": len(items), "n_reasoning": len(r),
                "n_non_reasoning": len(n)}
    a, b = np.mean([mat[s] for s in r], axis=0), np.mean([mat[s] for s in n], axis=0)
    ci = bootstrap_interval(a, b, n_boot=n_boot, seed=seed)
    return {"reasoning_minus_plain_success": ci["estimate"], "rmp_lo": ci["lo"], "rmp_hi": ci["hi"],
            "reasoning_success": float(a.mean()), "non_reasoning_success": float(b.mean()),
            "n_items": len(items), "n_reasoning": len(r), "n_non_reasoning": len(n),
            "reasoning_models": r, "non_reasoning_models": n,
            "per_model_success": {s: round(float(mat[s].mean()), 4) for s in sorted(mat)}}


def same_group_halves(rescore: Rescore, seed: int = 0, n_boot: int = 2000) -> dict:
    """c4's negative control: the reasoning models against themselves, on two random halves of the items (the
    i-th item of one half paired with the i-th of the other); there is no true difference to find."""
    from neurips25.repro.intervals import bootstrap_interval

    items, mat = success_matrix(rescore)
    r = [s for s in sorted(mat) if MODELS[s].group == "reasoning"]
    if len(items) < 4 or not r:
        return {"reasoning_minus_plain_success": None}
    a = np.mean([mat[s] for s in r], axis=0)
    perm = np.random.default_rng(seed).permutation(len(items))
    h = len(items) // 2
    x, y = a[perm[:h]], a[perm[h:2 * h]]
    ci = bootstrap_interval(x, y, n_boot=n_boot, seed=seed)
    return {"reasoning_minus_plain_success": ci["estimate"], "rmp_lo": ci["lo"], "rmp_hi": ci["hi"],
            "reasoning_success": float(x.mean()), "non_reasoning_success": float(y.mean()), "n_items": h,
            "n_reasoning": len(r), "n_non_reasoning": len(r)}
