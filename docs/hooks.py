"""MkDocs hooks: the nav lists only the optional pages that exist; Sphinx roles in docstrings read as code.

``mkdocs.yml`` names every page in its nav. Most entries must exist: a missing method page is a warning, and
``mkdocs build --strict`` fails on it. The pages under ``OPTIONAL`` (``performance.md`` and the per-method
``history/<slug>.md``) are written one by one; until one exists its nav entry is dropped here (logged), so the nav
stays explicit and ordered in ``mkdocs.yml`` and strict everywhere else, instead of turning off the nav check.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

log = logging.getLogger("mkdocs.hooks.optional_nav")

OPTIONAL_PREFIXES = ("history/",)
OPTIONAL_FILES = ("performance.md",)


def _optional(path: str) -> bool:
    return path.startswith(OPTIONAL_PREFIXES) or path in OPTIONAL_FILES


def _prune(items, docs_dir: Path):
    kept = []
    for item in items:
        if isinstance(item, dict):
            (title, value), = item.items()
            if isinstance(value, list):
                value = _prune(value, docs_dir)
                if not value:
                    log.info("nav: section %r has no page yet; left out", title)
                    continue
                kept.append({title: value})
                continue
            if isinstance(value, str) and _optional(value) and not (docs_dir / value).is_file():
                log.info("nav: optional page %s does not exist yet; left out", value)
                continue
        kept.append(item)
    return kept


def on_config(config, **kwargs):
    if config.nav:
        config.nav = _prune(config.nav, Path(config.docs_dir))
    return config


# The docstrings are numpydoc with Sphinx roles (:class:`X`, :func:`~mod.f`); mkdocstrings renders them as Markdown,
# where a role is left as text before its code span. Rendered pages show the code span alone (a leading "~" of
# Sphinx's short form dropped: the last dotted part is shown).
_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|attr|data|exc|obj|const|math|ref|term):<code>~?([^<]*)</code>")


def _role(match: re.Match) -> str:
    target = match.group(1)
    if match.group(0).split("<code>", 1)[1].startswith("~"):
        target = target.rsplit(".", 1)[-1]
    return f"<code>{target}</code>"


def on_page_content(html, **kwargs):
    return _ROLE.sub(_role, html)
