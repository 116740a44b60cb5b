"""One seed drives python's random, numpy and (when installed and imported) torch."""

from __future__ import annotations

import random
import sys

import numpy as np


def seed_everything(seed: int) -> np.random.Generator:
    """Seed python, numpy's legacy global state and torch if it is already imported.

    Returns a fresh ``numpy.random.Generator`` seeded with ``seed``, the preferred source of
    randomness inside methods. Torch is seeded only when some module has imported it, so that
    numpy-only methods never pay torch's import time.
    """
    if not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative int; got {seed!r}")
    seed = int(seed)
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.manual_seed(seed)
    return np.random.default_rng(seed)
