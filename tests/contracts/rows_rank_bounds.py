"""rank_bounds: the bound tools on any torch ``nn.Module`` written the usual ways, in the dtypes users train in."""

import numpy as np
import torch
import torch.nn.functional as F
from contract_table import row

C = "rank_bounds"


class _ConvNet(torch.nn.Module):
    """A conv net written the usual way (pooling and flattening in forward)."""

    def __init__(self, style):
        super().__init__()
        torch.manual_seed(0)
        self.style = style
        self.conv = torch.nn.Conv2d(1, 3, 3, padding=1)
        self.pool = torch.nn.MaxPool2d(2)
        self.fc = torch.nn.Linear(3 * 4 * 4, 4)

    def forward(self, x):
        h = F.relu(self.conv(x))
        if self.style == "F.max_pool2d":
            h = torch.flatten(F.max_pool2d(h, 2), 1)
        else:  # nn.MaxPool2d, then h.view(x.size(0), -1)
            h = self.pool(h)
            h = h.view(x.size(0), -1)
        return self.fc(h)


def _x(dtype=torch.float32):
    return torch.randn(5, 1, 8, 8, generator=torch.Generator().manual_seed(1)).to(dtype)


def _mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(64, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))


def _extracts(style):
    def check(tmp_path):
        from neurips25.rank_bounds import extract_layers

        model = _ConvNet(style)
        layers = extract_layers(model, _x())  # strict: the chain is replayed and checked against model(x)
        assert len(layers) == 2
        np.testing.assert_allclose(layers[1].W, model.fc.weight.detach().double().numpy())

    return check


row(C, "torch", "conv -> F.max_pool2d(h, 2) -> torch.flatten -> Linear: extracted, chain verified")(
    _extracts("F.max_pool2d"))
row(C, "torch", "conv -> nn.MaxPool2d -> h.view(x.size(0), -1) -> Linear: extracted, chain verified")(
    _extracts("view"))


def _dtype(dtype, atol):
    def check(tmp_path):
        from neurips25.rank_bounds import extract_layers

        ref = extract_layers(_mlp(), _x())
        layers = extract_layers(_mlp().to(dtype), _x(dtype))
        for a, b in zip(layers, ref, strict=True):
            assert a.W.dtype == np.float64  # the documented output dtype, whatever the model's
            np.testing.assert_allclose(a.W, b.W, atol=atol)

    return check


row(C, "torch", "extract_layers on a float64 model and input: same layers")(_dtype(torch.float64, 1e-7))
row(C, "torch", "extract_layers on a bfloat16 model and input: same layers (to bfloat16 rounding)")(
    _dtype(torch.bfloat16, 1e-2))


@row(C, "torch", "extract_layers on a cuda model and input", device="cuda")
def _cuda(tmp_path):
    from neurips25.rank_bounds import extract_layers

    assert len(extract_layers(_mlp().cuda(), _x().cuda())) == 2


@row(C, "torch", "torch.compile'd model (OptimizedModule): same layers as the eager model")
def _compiled(tmp_path):
    from neurips25.rank_bounds import extract_layers

    model = _mlp()
    ref = extract_layers(model, _x())
    layers = extract_layers(torch.compile(model, backend="aot_eager"), _x())
    assert [lay.W.shape for lay in layers] == [lay.W.shape for lay in ref]
    for a, b in zip(layers, ref, strict=True):
        np.testing.assert_array_equal(a.W, b.W)


@row(C, "torch-data", "GeneralizationReport reads (x, y) batches from a DataLoader like arrays")
def _loader(tmp_path):
    from torch.utils.data import DataLoader, TensorDataset

    from neurips25.rank_bounds import GeneralizationReport

    model = _mlp()
    X = _x(torch.float32).repeat(4, 1, 1, 1)
    with torch.no_grad():
        y = model(X).argmax(1)
    a = GeneralizationReport(model, X, y, margin=0.1).compute()
    b = GeneralizationReport(model, DataLoader(TensorDataset(X, y), batch_size=7), None, margin=0.1).compute()
    assert a.keys() == b.keys()
    for name in a:
        assert a[name] == b[name], name
