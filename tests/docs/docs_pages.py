"""What the docs tests share: the repository root, the docs folder and the 19 method slugs (from the registry,
which imports no method)."""

from __future__ import annotations

from pathlib import Path

from neurips25.repro.registry import METHODS

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
SLUGS = [s for s in METHODS if not s.startswith(("fake", "ray_"))]
