"""The docstring examples run."""

import doctest
import importlib

import pytest


@pytest.mark.parametrize("module", ["neurips25.chemcot", "neurips25.chemcot.ops", "neurips25.chemcot.oracles",
                                    "neurips25.chemcot.parsing"])
def test_docstring_examples(module):
    res = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert res.attempted > 0 and res.failed == 0
