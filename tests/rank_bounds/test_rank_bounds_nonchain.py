"""Models that are not a chain of layers with ``strict=False`` (issue #59): what is computable is computed,
the path norms of layers that do not compose are NaN with the reason, never a crash."""

import math

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from neurips25.rank_bounds import BOUND_NAMES, GeneralizationReport, UnsupportedModelError, path_norm
from neurips25.rank_bounds.layers import extract_layers

PATH_NORMS = ("path_norm", "path_norm_l1")


class _Skip(nn.Module):  # a residual connection: the layers still compose (same widths)
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = nn.Linear(6, 8), nn.Linear(8, 8), nn.Linear(8, 3)

    def forward(self, x):
        h = F.relu(self.fc1(x))
        return self.fc3(h + F.relu(self.fc2(h)))


class _Attention(nn.Module):  # tokens -> self-attention -> mean over tokens -> classifier
    def __init__(self):
        super().__init__()
        self.emb, self.out = nn.Linear(6, 8), nn.Linear(8, 3)
        self.att = nn.MultiheadAttention(8, 2, batch_first=True)

    def forward(self, x):
        h = self.emb(x)
        a, _ = self.att(h, h, h)
        return self.out(a.mean(1))


class _TokenMean(nn.Module):  # a per-token layer, then a mean over tokens
    def __init__(self):
        super().__init__()
        self.emb, self.out = nn.Linear(6, 8), nn.Linear(8, 3)

    def forward(self, x):
        return self.out(F.relu(self.emb(x)).mean(1))


CASES = {"skip": (_Skip, (6,), True), "attention": (_Attention, (4, 6), False),
         "token_mean": (_TokenMean, (4, 6), False)}


@pytest.mark.parametrize("case", list(CASES))
def test_strict_false_computes_what_is_computable(case):
    make, shape, composes = CASES[case]
    torch.manual_seed(0)
    net = make()
    X = torch.randn(24, *shape)
    y = net(X).argmax(1)
    report = GeneralizationReport(net, X, y, margin=0.1, strict=False)
    with pytest.warns(UserWarning, match="cannot account for"):
        res = report.compute()
    assert set(res) == set(BOUND_NAMES)
    for name in set(BOUND_NAMES) - set(PATH_NORMS):
        assert math.isfinite(res[name].value), name
    for name in PATH_NORMS:
        if composes:
            assert math.isfinite(res[name].value), name
        else:
            assert math.isnan(res[name].value) and math.isnan(res[name].log10_value), name
            assert "do not compose as a chain" in res[name].terms["not_computable"]
            assert name in report.summary["not_computable"]
    md = report.to_markdown()
    assert ("not computable" in md) != composes


@pytest.mark.parametrize("case", ["attention", "token_mean"])
def test_path_norm_of_layers_that_do_not_compose_names_the_layer(case):
    make, shape, _ = CASES[case]
    torch.manual_seed(0)
    net = make()
    with pytest.warns(UserWarning):
        layers = extract_layers(net, torch.randn(2, *shape), strict=False)
    with pytest.raises(UnsupportedModelError, match="`layers` do not compose as a chain: layer 'emb'"):
        path_norm(layers)


@pytest.mark.parametrize("case", list(CASES))
def test_strict_default_refuses_by_name(case):
    make, shape, _ = CASES[case]
    torch.manual_seed(0)
    net = make()
    X = torch.randn(8, *shape)
    with pytest.raises(UnsupportedModelError, match="cannot account for"):
        GeneralizationReport(net, X, net(X).argmax(1), margin=0.1).compute()
