"""GeneralizationReport: one spectrum per layer shared by all bounds, margins, errors, and the smoke run."""

import numpy as np
import pytest
import torch

from neurips25.rank_bounds import BOUND_NAMES, GeneralizationReport, margins
from neurips25.rank_bounds.layers import LayerInfo
from neurips25.repro.runner import run_one


@pytest.fixture
def fitted():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
    X = torch.randn(80, 6)
    y = net(X).argmax(1)  # labels the net fits exactly: every margin > 0
    return net, X, y


def test_margins_hand_values():
    m = margins(np.array([[2.0, 1.0, 0.5], [0.0, 3.0, 1.0]]), np.array([0, 2]))
    np.testing.assert_allclose(m, [1.0, -2.0])


def test_report_computes_every_bound_once_per_layer_spectrum(fitted, monkeypatch):
    net, X, y = fitted
    calls = []
    real = LayerInfo.operator_singular_values
    monkeypatch.setattr(
        LayerInfo,
        "operator_singular_values",
        lambda self, *a, **k: calls.append(self.name) or real(self, *a, **k),
    )
    res = GeneralizationReport(net, X, y).compute()
    assert set(res) == set(BOUND_NAMES)
    assert calls == ["0", "2"]  # one spectrum per layer, shared by all eight bounds
    assert all(np.isfinite(r.log10_value) for r in res.values())


def test_min_margin_has_zero_empirical_risk_and_quantile_pays(fitted):
    net, X, y = fitted
    rep = GeneralizationReport(net, X, y, margin="min")
    rep.compute(["bartlett_spectral"])
    assert rep.summary["empirical_risk"] == 0.0
    rep_q = GeneralizationReport(net, X, y, margin=0.5)
    rep_q.compute(["bartlett_spectral"])
    assert rep_q.summary["gamma"] > rep.summary["gamma"] and rep_q.summary["empirical_risk"] > 0


def test_markdown_lists_the_bounds(fitted):
    net, X, y = fitted
    rep = GeneralizationReport(net, X, y)
    md = rep.to_markdown()
    assert "| schatten (p = " in md and "reconstructions" in md and md.count("\n|") == 2 + len(BOUND_NAMES)


def test_bad_inputs(fitted):
    net, X, y = fitted
    with pytest.raises(ValueError, match=r"`y` must have shape \(80,\)"):
        GeneralizationReport(net, X, y[:-1])
    with pytest.raises(TypeError, match="`y` must hold integer class labels"):
        GeneralizationReport(net, X, y.float())
    with pytest.raises(ValueError, match="`margin` must be 'min' or a quantile"):
        GeneralizationReport(net, X, y, margin=1.5)
    with pytest.raises(ValueError, match="every training point classified correctly"):
        GeneralizationReport(net, X, (y + 1) % 3).compute()
    with pytest.raises(ValueError, match="`bounds` must be 'all' or a subset"):
        GeneralizationReport(net, X, y).compute(["vc_dimension"])
    with torch.no_grad():
        net[0].weight[0, 0] = float("nan")
    with pytest.raises(ValueError, match="'0.weight' has NaN or infinite"):
        GeneralizationReport(net, X, y)


def test_dataloader_input_equals_tensors(fitted):
    # issue 34: a DataLoader of (x, y) batches is read in full and gives the same bounds
    net, X, y = fitted
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X, y), batch_size=32)
    a = GeneralizationReport(net, X, y, margin=0.05).compute()
    b = GeneralizationReport(net, loader, margin=0.05).compute()
    assert {k: v.value for k, v in a.items()} == {k: v.value for k, v in b.items()}
    with pytest.raises(ValueError, match="`y` must be None when `X` is a DataLoader"):
        GeneralizationReport(net, loader, y)
    with pytest.raises(TypeError, match=r"must yield \(x, y\) batches"):
        GeneralizationReport(net, [X[:4], X[4:8]])
    with pytest.raises(ValueError, match="`y` is required"):
        GeneralizationReport(net, X)


def test_empty_model_and_wrong_input_width_are_clear_errors(fitted):
    # issue 34: these raised a bare StopIteration and a raw matmul RuntimeError
    net, X, y = fitted
    with pytest.raises(ValueError, match="`model` has no parameters"):
        GeneralizationReport(torch.nn.Sequential(), X, y)
    with pytest.raises(ValueError, match=r"`X` with per-sample shape \(5,\) does not fit `model` \(its first "
                       r"layer expects 6 input features\)"):
        GeneralizationReport(net, torch.randn(80, 5), y)
    with pytest.raises(TypeError, match="`model` must be a torch.nn.Module"):
        GeneralizationReport(lambda x: x, X, y)


def test_smoke_reproduction(tmp_path):
    res = run_one("rank_bounds", "smoke", 0, str(tmp_path))
    assert res["status"] == "ok", res["error"]
    assert len(res["claims"]) == 5 and all(c["verdict"] != "pending" for c in res["claims"])
    assert {"bounds_vs_width.png", "effective_rank_vs_weight_decay.png"} <= {
        f.split("/")[-1] for f in res["figures"]
    }


def test_path_norm_of_linear_chain_matches_hand_sum():
    # phi_2^2 = sum over input->output paths of the product of squared weights (biases as paths from a 1)
    from neurips25.rank_bounds import extract_layers, path_norm

    net = torch.nn.Sequential(
        torch.nn.Linear(2, 2, bias=False), torch.nn.ReLU(), torch.nn.Linear(2, 1, bias=False)
    )
    with torch.no_grad():
        net[0].weight.copy_(torch.tensor([[1.0, 2.0], [3.0, 0.5]]))
        net[2].weight.copy_(torch.tensor([[2.0, -1.0]]))
    W1, W2 = net[0].weight.detach().numpy() ** 2, net[2].weight.detach().numpy() ** 2
    assert path_norm(extract_layers(net, torch.zeros(1, 2))) == pytest.approx(np.sqrt((W2 @ W1).sum()))


def test_path_norm_runs_on_conv_chains():
    from neurips25.rank_bounds import extract_layers, path_norm

    for mode in ("zeros", "circular"):
        net = torch.nn.Sequential(
            torch.nn.Conv2d(2, 3, 3, padding=1, padding_mode=mode),
            torch.nn.ReLU(),
            torch.nn.Flatten(),
            torch.nn.Linear(3 * 16, 2),
        )
        assert np.isfinite(path_norm(extract_layers(net, torch.zeros(1, 2, 4, 4))))
