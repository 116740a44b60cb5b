"""Every method page has a runnable example, and every ```python block of it runs (issue #63).

The ```python blocks of ``docs/<slug>.md`` run in order in one namespace per page, as a reader would paste them,
offline, at one torch thread (the suite's shared fixture), from a temporary working directory. Snippets that must
not run are fenced as ```text or ```bash. A page with no python block fails: each method page must show the
component in use. A block that needs an extra that is not installed skips, naming it (``make test`` installs every
extra and fails on such a skip).
"""

from __future__ import annotations

import re
import time

import pytest
from docs_pages import DOCS, SLUGS

FENCE = re.compile(r"^(?P<indent> *)(?P<fence>```+|~~~+)\s*(?P<info>[^\n]*)$")


def python_blocks(text: str) -> list[tuple[int, str]]:
    """``(first line number, code)`` of each fenced block whose info string starts with ``python`` (or ``py``)."""
    blocks, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, indent = m["fence"], len(m["indent"])
        lang = (m["info"].split() or [""])[0].lstrip("{.").rstrip("}").lower()
        body, j = [], i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            body.append(lines[j][indent:] if lines[j][:indent].strip() == "" else lines[j])
            j += 1
        if lang in ("python", "py"):
            blocks.append((i + 2, "\n".join(body)))
        i = j + 1
    return blocks


def test_python_blocks_reads_fences():
    text = "a\n```python\nx = 1\n```\n```bash\nrm -rf x\n```\n```text\ny\n```\n~~~py\nz = 2\n~~~\n"
    assert python_blocks(text) == [(3, "x = 1"), (12, "z = 2")]


@pytest.mark.parametrize("slug", SLUGS)
def test_method_page_examples_run(slug, tmp_path, monkeypatch):
    page = DOCS / f"{slug}.md"
    assert page.is_file(), f"docs/{slug}.md is missing"
    blocks = python_blocks(page.read_text(encoding="utf-8"))
    if not blocks:
        pytest.fail(f"docs/{slug}.md has no ```python block: each method page needs a runnable example",
                    pytrace=False)
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": f"docs_{slug}"}
    start = time.process_time()
    for first_line, code in blocks:
        # padded with blank lines so a traceback gives the line number in the page
        compiled = compile("\n" * (first_line - 1) + code, str(page.relative_to(DOCS.parent)), "exec")
        try:
            exec(compiled, namespace)
        except ImportError as err:
            # a third-party module or an extra that is not installed skips (naming it); a wrong neurips25 import fails
            missing_dependency = (isinstance(err, ModuleNotFoundError) and not (err.name or "").startswith("neurips25")
                                  or "extra" in str(err))
            if missing_dependency:
                pytest.skip(f"docs/{slug}.md line {first_line}: missing install: {err}")
            raise
    cpu = time.process_time() - start
    assert cpu < 10, f"docs/{slug}.md's examples took {cpu:.0f} s CPU; keep them smoke-sized (a few seconds)"
