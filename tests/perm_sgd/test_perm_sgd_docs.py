"""The docstring Examples of every public module run and print what they claim."""

import doctest

import pytest

from neurips25.perm_sgd import distributed, federated, orderings, problems, sgd, theory


@pytest.mark.parametrize("module", [orderings, sgd, theory, federated, problems, distributed])
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_sampler_docstring_examples():
    pytest.importorskip("torch")
    from neurips25.perm_sgd import sampler

    result = doctest.testmod(sampler, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_missing_torch_names_the_extra(monkeypatch):
    # the torch-only names fail with an ImportError that says which extra to install
    import sys

    import neurips25.perm_sgd as ps

    monkeypatch.setitem(sys.modules, "torch", None)
    monkeypatch.delitem(sys.modules, "neurips25.perm_sgd.sampler", raising=False)
    with pytest.raises(ImportError, match=r"neurips25\[torch\]"):
        ps.PermutationSampler  # noqa: B018
