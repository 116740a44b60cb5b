"""Contract suite set-up: rows modules import from this folder; one torch thread per test process."""

import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

try:  # the suite shares a 2-core machine: one intra-op thread keeps its CPU time honest and stable
    import torch

    torch.set_num_threads(1)
except ImportError:  # pragma: no cover - torch is a dependency of the rows that need it
    pass
