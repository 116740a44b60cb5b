"""No machine path, no "not committed", no narration of who ran what when in docs/ or README.md (issue #63).

A user can open none of a machine's folders, cannot regenerate a figure from a driver that was never committed, and
does not need to know which session or engineer ran what: the history pages say what was tried, what it showed and
the commit. The test lists every offending file:line.
"""

from __future__ import annotations

import re

import pytest
from docs_pages import DOCS, ROOT

FORBIDDEN = {
    "absolute machine path": re.compile(r"(?<![\w.~])/(work|tmp|home|root)/"),
    '"not committed"': re.compile(r"not committed", re.IGNORECASE),
    "narration (Addendum)": re.compile(r"Addendum \("),
    "narration (lead)": re.compile(r"\(lead\b"),
    "narration (helper)": re.compile(r"\bhelper "),
    "narration (session N)": re.compile(r"\bsession \d+\b", re.IGNORECASE),
}


def pages():
    return sorted(DOCS.rglob("*.md")) + [ROOT / "README.md"]


def offending_lines(path) -> list[str]:
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        for what, pattern in FORBIDDEN.items():
            if pattern.search(line):
                out.append(f"{path.relative_to(ROOT)}:{n}: {what}: {line.strip()[:140]}")
    return out


@pytest.mark.parametrize("page", pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_machine_path_or_narration(page):
    bad = offending_lines(page)
    if bad:
        pytest.fail(f"{len(bad)} line(s) to rewrite:\n" + "\n".join(bad), pytrace=False)


def test_the_patterns_catch_what_they_name():
    lines = ["runs in /work/runs/v4 and /tmp/q-x", "long_rl.py, not committed", "Addendum (lead, 2026-12-02 02:45 UTC)",
             "run by the helper in session 9", "see `runs/<timestamp>/config.json` and docs/img/x.png"]
    hits = [[what for what, p in FORBIDDEN.items() if p.search(line)] for line in lines]
    assert hits[0] == ["absolute machine path"] and hits[1] == ['"not committed"']
    assert set(hits[2]) == {"narration (Addendum)", "narration (lead)"}
    assert set(hits[3]) == {"narration (helper)", "narration (session N)"}
    assert hits[4] == []  # a path relative to a run directory or the repository is fine
