"""The docstring examples of the pure parts run and print what they claim."""

import doctest

import pytest

import neurips25.eva.incremental_pca
import neurips25.eva.rank


@pytest.mark.parametrize("module", [neurips25.eva.rank, neurips25.eva.incremental_pca])
def test_docstring_examples(module):
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0
