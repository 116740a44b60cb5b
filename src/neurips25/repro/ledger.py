"""The criteria ledger: every claim's criterion, registered once, every later change kept in the open.

A verdict is only as honest as the criterion it was decided by, and a criterion changed after the numbers
were seen can decide anything. The ledger (``criteria_ledger.json`` beside this file, committed) holds, per
``slug/claim``, the criterion as it stands (:func:`fingerprint`: kind, statement, criterion text, key figure,
threshold, the numeric constants of the rule, controls, preconditions, instance word) and its history: the
commit that first registered it and every later change with the old and new text, the commit, and whether runs
had been made before the change.

- ``neurips25 claims --check`` compares what the code declares (``declare_claims`` of each reproduction, read
  without running it) with the ledger and names every claim that differs; ``make test`` runs it, so a criterion
  cannot change silently.
- ``neurips25 claims --register --why "..." [--after-runs "..."]`` writes the change into the ledger: a new
  history entry (old -> new) whose commit is the one that commits the ledger (found with ``git log -S`` on the
  entry's id when it is read back).
- The report shows, beside a verdict, when its criterion last changed and whether runs came before the change.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import numbers
import subprocess
import types
from functools import lru_cache
from pathlib import Path
from typing import Any

LEDGER_PATH = Path(__file__).with_name("criteria_ledger.json")
FIELDS = ("kind", "statement", "criterion", "key", "threshold", "rule_constants", "controls", "preconditions",
          "no_positive_control", "instance")


def _constants(obj: Any, depth: int = 0, seen: set | None = None) -> list:
    """Numeric constants a rule depends on: literals in its code (nested code too) and numbers in its closure."""
    seen = set() if seen is None else seen
    out: list = []
    if depth > 4 or id(obj) in seen:
        return out
    seen.add(id(obj))
    if isinstance(obj, bool):
        return out
    if isinstance(obj, numbers.Real):
        return [float(obj)]
    if isinstance(obj, types.CodeType):
        for c in obj.co_consts:
            out += _constants(c, depth + 1, seen)
        return out
    if isinstance(obj, (tuple, list, frozenset)) and len(obj) <= 32:
        for c in obj:
            out += _constants(c, depth + 1, seen)
        return out
    if isinstance(obj, types.FunctionType):
        out += _constants(obj.__code__, depth + 1, seen)
        for cell in obj.__closure__ or ():
            try:
                out += _constants(cell.cell_contents, depth + 1, seen)
            except ValueError:  # an empty cell
                pass
        return out
    rule = getattr(obj, "rule", None)  # a Criterion / Precondition held in a closure
    if callable(rule):
        out += _constants(rule, depth + 1, seen)
    return out


def fingerprint(claim) -> dict:
    """What the ledger registers of a claim: everything that decides its verdict, nothing that is measured."""
    rule = claim.rule
    consts = sorted({round(c, 12) for c in _constants(rule.rule)}) if rule is not None else []
    for p in claim.preconditions:
        if not isinstance(p, str):
            consts = sorted(set(consts) | {round(c, 12) for c in _constants(p.rule)})
    return {
        "kind": claim.kind.value,
        "statement": claim.statement,
        "criterion": claim.criterion,
        "key": claim.key,
        "threshold": claim.threshold,
        "rule_constants": [c if c != int(c) or abs(c) > 2 ** 53 else int(c) for c in consts],
        "controls": [f"{c.role} {c.name}: {c.description}" for c in claim.controls],
        "preconditions": [p if isinstance(p, str) else p.text for p in claim.preconditions],
        "no_positive_control": claim.no_positive_control,
        "instance": claim.instance,
    }


def load(path: Path | None = None) -> dict:
    path = LEDGER_PATH if path is None else Path(path)
    if not path.is_file():
        return {"version": 1, "claims": {}}
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or "claims" not in data:
        raise ValueError(f"{path} is not a criteria ledger (no 'claims')")
    return data


def save(data: dict, path: Path | None = None) -> None:
    from neurips25.repro.store import atomic_write_text

    path = LEDGER_PATH if path is None else Path(path)
    atomic_write_text(path, json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n")


def code_claims(slugs: list[str] | None = None, scale: str = "quick") -> dict[str, dict]:
    """``{"slug/claim": fingerprint}`` of what the code declares now (imports each reproduction, runs nothing)."""
    from neurips25.repro.registry import METHODS, declared_claims

    out = {}
    for slug in slugs or [s for s, m in METHODS.items() if m.implemented() and m.module is None]:
        for c in declared_claims(slug, scale):
            out[f"{slug}/{c.id}"] = fingerprint(c)
    return out


def differences(code: dict[str, dict], ledger: dict) -> dict[str, list[str]]:
    """Per claim, the fields where the code differs from the ledger (``["unregistered"]`` for a new claim)."""
    out: dict[str, list[str]] = {}
    entries = ledger.get("claims", {})
    for cid, fp in code.items():
        cur = entries.get(cid, {}).get("current")
        if cur is None:
            out[cid] = ["unregistered"]
            continue
        diff = [f for f in FIELDS if cur.get(f) != fp.get(f)]
        if diff:
            out[cid] = diff
    return out


def _entry_id(cid: str, fp: dict, when: str) -> str:
    return "L" + hashlib.sha256(json.dumps([cid, fp, when], sort_keys=True).encode()).hexdigest()[:12]


def _head(root: Path | None = None) -> str | None:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True,
                              cwd=root or LEDGER_PATH.parent).stdout.strip() or None
    except (OSError, subprocess.CalledProcessError):
        return None


def register(code: dict[str, dict], ledger: dict, *, why: str, after_runs: str = "", commit: str | None = None,
             slugs: list[str] | None = None) -> list[str]:
    """Write every difference between ``code`` and ``ledger`` into the ledger (in place); returns the claim ids.

    ``commit`` is the commit the change belongs to when it is already known (a back-fill from history); by
    default the entry is committed with the ledger and its commit is found by its id when read back.
    """
    if not isinstance(why, str) or not why.strip():
        raise ValueError("why must say why the criterion changed (or that it is a first registration)")
    when = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    changed = []
    entries = ledger.setdefault("claims", {})
    for cid, fields in differences(code, ledger).items():
        if slugs and cid.split("/")[0] not in slugs:
            continue
        fp = code[cid]
        entry = entries.setdefault(cid, {"history": []})
        old = entry.get("current")
        item = {"id": _entry_id(cid, fp, when), "event": "registered" if old is None else "changed",
                "commit": commit, "parent": _head(), "at": when, "why": why.strip(),
                "after_runs": after_runs.strip()}
        if old is not None:
            item["fields"] = fields
            item["old"] = {f: old.get(f) for f in fields}
            item["new"] = {f: fp.get(f) for f in fields}
        entry["history"].append(item)
        entry["current"] = fp
        changed.append(cid)
    for cid in [c for c in entries if c not in code and (not slugs or c.split("/")[0] in slugs)]:
        if entries[cid].get("current") is not None and not entries[cid].get("retired"):
            entries[cid]["history"].append({"id": _entry_id(cid, {}, when), "event": "retired", "commit": commit,
                                            "parent": _head(), "at": when, "why": why.strip()})
            entries[cid]["retired"] = True
            changed.append(cid)
    return changed


@lru_cache(maxsize=256)
def resolve_commit(entry_id: str) -> str | None:
    """The commit that added a ledger entry (``git log -S<id>``), or None outside a git checkout."""
    try:
        out = subprocess.run(["git", "log", "--format=%h", "--reverse", f"-S{entry_id}", "--", LEDGER_PATH.name],
                             capture_output=True, text=True, check=True, cwd=LEDGER_PATH.parent).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        return None
    return out[0] if out else None


def entry_commit(item: dict) -> str:
    """How a history entry names its commit: its own, the one that committed it, or 'after <parent>'."""
    if item.get("commit"):
        return str(item["commit"])
    found = resolve_commit(item["id"]) if item.get("id") else None
    if found:
        return found
    return f"uncommitted (after {item.get('parent') or '?'})"


def change_text(ledger: dict, cid: str) -> str:
    """One line for the report: when the criterion was registered and last changed, and whether runs came first."""
    entry = ledger.get("claims", {}).get(cid)
    if not entry:
        return "criterion not in the ledger"
    hist = entry.get("history", [])
    first = next((h for h in hist if h.get("event") == "registered"), None)
    changes = [h for h in hist if h.get("event") == "changed"]
    parts = [f"registered at {entry_commit(first)}" if first else "registration not recorded"]
    if changes:
        last = changes[-1]
        runs = f", after runs at {last['after_runs']}" if last.get("after_runs") else ", before any run"
        parts.append(f"criterion changed at {entry_commit(last)}{runs} ({len(changes)} change"
                     f"{'s' if len(changes) > 1 else ''})")
    return "; ".join(parts)
