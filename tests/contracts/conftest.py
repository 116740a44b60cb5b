"""Contract suite set-up: rows modules import from this folder (torch's one thread comes from tests/conftest.py)."""

import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))
