"""The contract table: one row per (component, contract), gathered from one rows module per component.

A row is a check function registered with :func:`row` (it runs as one parametrised test of
``test_contracts.py``), or a :func:`not_applicable` entry with the reason (no test: the reason is the row).
A row that is known to fail carries ``xfail=N``, the issue that fixes it; the test is then
``xfail(strict=True)``, so the fix flips it to a failure until the mark is removed. ``device="cuda"`` rows run
only where a CUDA device exists and are listed as such.

``docs/contracts.md`` is rendered from this table; ``test_contracts_doc.py`` checks the committed page equals
the rendering. Regenerate it with::

    .venv/bin/python tests/contracts/contract_table.py --write
"""

from __future__ import annotations

import dataclasses
import importlib
import pathlib
import sys
from collections.abc import Callable

HERE = pathlib.Path(__file__).resolve().parent
DOC = HERE.parents[1] / "docs" / "contracts.md"

#: one rows module per component, in the doc's order: older twelve first, then the seven newer methods, then the
#: shared pretrained/ helpers
COMPONENTS = ("dbcare", "fair_matroid", "fml", "vfs", "ctsketch", "pref_diffusion", "prsformer", "sliced_wasserstein",
              "perm_sgd", "rank_bounds", "rspool", "eva",
              "chemcot", "scm", "behavior_injection", "eareranker", "narrow_gate", "shoefit", "inverse3d",
              "pretrained")

#: issue that carries each newer method's v2 (the xfail reason of its rows)
V2_ISSUES = {"chemcot": 46, "scm": 47, "behavior_injection": 48, "eareranker": 49, "narrow_gate": 50,
             "shoefit": 51, "inverse3d": 52}


@dataclasses.dataclass(frozen=True)
class Row:
    component: str
    ecosystem: str
    contract: str
    check: Callable | None = None
    why: str = ""  # n/a: why the contract cannot apply
    xfail: int | None = None  # the issue that fixes a known failure
    reason: str = ""  # what fails, for an xfail row
    device: str = "cpu"

    @property
    def id(self) -> str:
        return f"{self.component}|{self.ecosystem}|{self.contract}"

    @property
    def result(self) -> str:
        if self.check is None:
            return f"n/a ({self.why})"
        if self.xfail is not None:
            text = f"xfail (#{self.xfail}: {self.reason})" if self.reason else f"xfail (#{self.xfail})"
        else:
            text = "pass"
        return f"{text}, CUDA only" if self.device == "cuda" else text


_ROWS: list[Row] = []


def row(component: str, ecosystem: str, contract: str, *, xfail: int | None = None, reason: str = "",
        device: str = "cpu"):
    """Register the decorated ``check(tmp_path)`` as the row (component, ecosystem, contract)."""

    def deco(fn):
        _add(Row(component, ecosystem, contract, check=fn, xfail=xfail, reason=reason, device=device))
        return fn

    return deco


def not_applicable(component: str, ecosystem: str, contract: str, why: str) -> None:
    """A row that cannot apply, with the reason the table shows."""
    if not why:
        raise ValueError("a not-applicable row needs its reason")
    _add(Row(component, ecosystem, contract, why=why))


def _add(r: Row) -> None:
    if r.component not in COMPONENTS:
        raise ValueError(f"unknown component {r.component!r}")
    if any(o.id == r.id for o in _ROWS):
        raise ValueError(f"duplicate contract row {r.id}")
    _ROWS.append(r)


def rows() -> list[Row]:
    """Every row, importing each component's rows module once (``rows_<component>.py`` beside this file)."""
    if str(HERE) not in sys.path:
        sys.path.insert(0, str(HERE))
    for c in COMPONENTS:
        importlib.import_module(f"rows_{c}")
    return sorted(_ROWS, key=lambda r: COMPONENTS.index(r.component))


def counts(table: list[Row]) -> dict[str, int]:
    out = {"pass": 0, "xfail": 0, "n/a": 0, "cuda only": 0}
    for r in table:
        if r.check is None:
            out["n/a"] += 1
        elif r.device == "cuda":
            out["cuda only"] += 1
        elif r.xfail is not None:
            out["xfail"] += 1
        else:
            out["pass"] += 1
    return out


BUDGET = pathlib.Path(__file__).with_name("test_budget.json")


def budget_lines() -> list[str]:
    """The suite's CPU budget per test folder, from benchmarks/test_budget.py's last measurement."""
    import json

    if not BUDGET.is_file():
        return []
    data = json.loads(BUDGET.read_text())
    rows = data.get("folders", {})
    total = sum(r["cpu_s"] for r in rows.values())
    out = ["", "## Suite CPU budget", "",
           f"Every test folder runs torch at one thread (one autouse fixture, `tests/conftest.py`); the budget is "
           f"{data.get('budget_cpu_s', 60):g} s of CPU a folder (a folder over it is marked below). Measured by "
           f"`python benchmarks/test_budget.py` (one pytest "
           f"process per folder, CPU = user + system of the child) at {data.get('measured_at', '?')} on "
           f"{data.get('cpus', '?')} CPUs; the load average around each folder is beside it (above 1 on a 2-core "
           f"machine, the wall is an upper bound). Total: {total:.0f} s CPU.", "",
           "| folder | CPU (s) | wall (s) | load start -> end | exit |", "|---|---|---|---|---|"]
    for name, r in sorted(rows.items(), key=lambda kv: -kv[1]["cpu_s"]):
        status = "passed" if r["exit_code"] == 0 else f"FAILED (exit {r['exit_code']})"
        if r["cpu_s"] > data.get("budget_cpu_s", 60):
            status += ", OVER the CPU budget"
        out.append(f"| {name} | {r['cpu_s']:.1f} | {r['wall_s']:.1f} | {r['load_start']:.1f} -> "
                   f"{r['load_end']:.1f} | {status} |")
    return out


def render(table: list[Row] | None = None) -> str:
    table = rows() if table is None else table
    c = counts(table)
    lines = [
        "# Contracts: every component, run the way its ecosystem runs it",
        "",
        "<!-- generated by tests/contracts/contract_table.py --write; test_contracts_doc.py checks it -->",
        "",
        "`tests/contracts/` runs each component through the contracts of the ecosystem it plugs into (issue #45),",
        "PEFT- and diffusers-style: stock model classes from tiny configs with random weights, built offline",
        "(transformers Llama, Mistral, Qwen2, Gemma2 with softcapping, Phi3, GPT-2, Llava, Chameleon, Qwen2-VL;",
        "diffusers `FluxTransformer2DModel`), float32 / float64 / bfloat16, and the round trips users make",
        "(save/load by value, pickle / clone, DataLoader workers). Run it with",
        "`.venv/bin/python -m pytest tests/contracts -q`.",
        "",
        "Results: **pass** (the row runs and passes in `make test`); **xfail (#N)** (a known failure, marked",
        "`xfail(strict=True)` until issue N fixes it, so the fix flips the row); **n/a (why)** (the contract cannot",
        "apply; the reason is the row); **CUDA only** (device `cuda` rows, run only where a CUDA device exists).",
        "`torch.compile` rows compile with `backend=\"aot_eager\"` (Dynamo graph capture and AOTAutograd, without",
        "Inductor's C++ code generation, to keep the suite within its CPU budget).",
        "",
        f"Rows: {len(table)} — pass {c['pass']}, xfail {c['xfail']}, n/a {c['n/a']}, CUDA only {c['cuda only']}.",
        "",
        "## Components x ecosystems",
        "",
        "| component | ecosystem | pass | xfail | n/a | CUDA only |",
        "|---|---|---|---|---|---|",
    ]
    seen = []
    for r in table:
        if (r.component, r.ecosystem) not in seen:
            seen.append((r.component, r.ecosystem))
    for comp, eco in seen:
        cc = counts([r for r in table if r.component == comp and r.ecosystem == eco])
        lines.append(f"| {comp} | {eco} | {cc['pass']} | {cc['xfail']} | {cc['n/a']} | {cc['cuda only']} |")
    for comp in COMPONENTS:
        sub = [r for r in table if r.component == comp]
        if not sub:
            continue
        lines += ["", f"## {comp}", "", "| ecosystem | contract | result |", "|---|---|---|"]
        for r in sub:
            lines.append(f"| {r.ecosystem} | {_cell(r.contract)} | {_cell(r.result)} |")
    lines += budget_lines()
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


if __name__ == "__main__":
    # the rows modules register into the importable module `contract_table`, not into this `__main__`
    sys.path.insert(0, str(HERE))
    import contract_table

    if sys.argv[1:] == ["--write"]:
        DOC.write_text(contract_table.render())
        print(f"wrote {DOC}")
    elif sys.argv[1:] == ["--counts"]:
        print(contract_table.counts(contract_table.rows()))
    else:
        sys.stdout.write(contract_table.render())
