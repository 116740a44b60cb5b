"""Progress bars: a bar with rate and ETA on a terminal, quiet when piped or in CI."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import TypeVar

T = TypeVar("T")


def interactive() -> bool:
    """True when stderr is a terminal and CI / NEURIPS25_QUIET is not set."""
    if os.environ.get("NEURIPS25_QUIET") or os.environ.get("CI"):
        return False
    return sys.stderr.isatty()


def progress(iterable: Iterable[T], desc: str = "", total: int | None = None, leave: bool = False):
    """Wrap ``iterable`` in a tqdm bar when interactive, else return it unchanged."""
    if not interactive():
        return iterable
    from tqdm.auto import tqdm

    return tqdm(iterable, desc=desc, total=total, leave=leave, dynamic_ncols=True)
