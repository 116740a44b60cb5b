"""MkDocs hook: the nav lists only the optional pages that exist.

``mkdocs.yml`` names every page in its nav. Most entries must exist: a missing method page is a warning, and
``mkdocs build --strict`` fails on it. The pages under ``OPTIONAL`` (``performance.md`` and the per-method
``history/<slug>.md``) are written one by one; until one exists its nav entry is dropped here (logged), so the nav
stays explicit and ordered in ``mkdocs.yml`` and strict everywhere else, instead of turning off the nav check.
"""

from __future__ import annotations

import logging
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
