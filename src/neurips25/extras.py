"""Friendly errors for optional dependencies: name the extra to install."""

from __future__ import annotations

import importlib
from types import ModuleType


def require(module: str, extra: str) -> ModuleType:
    """Import ``module`` or raise an ImportError that names the extra providing it.

    Examples
    --------
    >>> np = require("numpy", "core")
    """
    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise ImportError(
            f"{module!r} is needed here but not installed; install it with: "
            f"pip install \"neurips25[{extra}]\""
        ) from err
