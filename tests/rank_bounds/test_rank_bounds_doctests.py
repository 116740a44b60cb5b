"""The Examples blocks of the public docstrings run and print what they claim."""

import doctest
import importlib

import pytest


@pytest.mark.parametrize("module", ["spectra", "bounds", "linear_nets", "layers", "evaluate"])
def test_docstring_examples(module):
    mod = importlib.import_module(f"neurips25.rank_bounds.{module}")
    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0, result
