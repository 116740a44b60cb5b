"""The Examples sections of the public docstrings run and give the documented output."""

import doctest
import importlib

import pytest

MODULES = ["", ".rubric", ".expansion", ".model", ".loss", ".metrics", ".encoders", ".estimator", ".data"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(f"neurips25.eareranker{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0
