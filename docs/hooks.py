"""MkDocs hook: Sphinx roles in docstrings read as code on the site.

The nav in ``mkdocs.yml`` names every page (guides, API, history, performance) and is checked whole: a missing page
fails ``mkdocs build --strict``.
"""

from __future__ import annotations

import re

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
