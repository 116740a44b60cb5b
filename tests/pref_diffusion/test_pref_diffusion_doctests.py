"""The Examples sections of the public docstrings run and give the documented output."""

import doctest
import importlib

import pytest

MODULES = ["algorithm", "baselines", "data", "diffusion", "guidance", "metrics", "nets", "preferences", "problems"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(f"neurips25.pref_diffusion.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0
