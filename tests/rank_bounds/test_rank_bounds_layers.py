"""extract_layers: chains of Linear / Conv with biases, BatchNorm folding, and loud refusal of the rest."""

import numpy as np
import pytest
import torch

from neurips25.rank_bounds import UnsupportedModelError, extract_layers, layer_spectra


@pytest.fixture
def mlp():
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(5, 7), torch.nn.ReLU(), torch.nn.Linear(7, 6), torch.nn.Tanh(), torch.nn.Linear(6, 3)
    )


def replay_layers(layers, x):
    """Forward through the extracted operators (ReLU between), the oracle for folding."""
    h = x.double().numpy()
    for i, l in enumerate(layers):
        h = h @ l.W.T + (0 if l.bias is None else l.bias)
        if i < len(layers) - 1:
            h = np.maximum(h, 0)
    return h


def test_mlp_layers_weights_and_init(mlp):
    init = torch.nn.Sequential(
        *[type(m)(m.in_features, m.out_features) if isinstance(m, torch.nn.Linear) else m for m in mlp]
    )
    layers = extract_layers(mlp, torch.zeros(2, 5), init_model=init)
    assert [l.name for l in layers] == ["0", "2", "4"]
    np.testing.assert_array_equal(layers[1].W, mlp[2].weight.detach().double().numpy())
    np.testing.assert_array_equal(layers[2].init_W, init[4].weight.detach().double().numpy())
    assert [l.in_dim for l in layers] == [5, 7, 6] and layers[0].n_params == 5 * 7 + 7


def test_batchnorm_is_folded_into_previous_layer():
    torch.manual_seed(1)
    net = torch.nn.Sequential(
        torch.nn.Linear(4, 6), torch.nn.BatchNorm1d(6), torch.nn.ReLU(), torch.nn.Linear(6, 2)
    )
    net.train()
    for _ in range(5):  # give BN non-trivial running statistics
        net(torch.randn(32, 4) * 3 + 1)
    with torch.no_grad():
        net[1].weight.uniform_(0.5, 2.0)
    x = torch.randn(10, 4)
    layers = extract_layers(net, x)
    assert net.training  # the probe restores the caller's mode
    assert len(layers) == 2 and layers[0].folded == ["1"]
    net.eval()
    np.testing.assert_allclose(
        replay_layers(layers, x), net(x).detach().double().numpy(), rtol=1e-5, atol=1e-6
    )


def test_conv_net_with_padding_pool_and_flatten():
    torch.manual_seed(2)
    net = torch.nn.Sequential(
        torch.nn.Conv2d(2, 4, 3, padding=1),
        torch.nn.ReLU(),
        torch.nn.MaxPool2d(2),
        torch.nn.Flatten(),
        torch.nn.Linear(4 * 3 * 3, 5),
    )
    layers = extract_layers(net, torch.zeros(3, 2, 6, 6))
    conv, lin = layers
    assert conv.kind == "conv" and conv.grid == (8, 8) and not conv.exact_spectrum
    assert conv.in_dim == 2 * 36 and conv.out_dim == 4 * 36 and lin.in_dim == 36
    sv = conv.operator_singular_values()
    assert sv.size <= min(conv.in_dim, conv.out_dim)


def test_conv_bias_folding_matches_dense_augmented_operator():
    # circular 'same' conv: the FFT spectrum with the bias folded equals the dense [[T, b 1], [0, 1]] spectrum
    torch.manual_seed(3)
    conv = torch.nn.Conv2d(2, 3, 3, padding=1, padding_mode="circular")
    net = torch.nn.Sequential(conv, torch.nn.ReLU(), torch.nn.Flatten(), torch.nn.Linear(3 * 16, 2))
    (layer, _) = extract_layers(net, torch.zeros(1, 2, 4, 4))
    assert layer.exact_spectrum
    n_in = 2 * 16
    T = conv(torch.eye(n_in).reshape(n_in, 2, 4, 4)).detach().double().reshape(n_in, -1).T.numpy()
    b = conv.bias.detach().double().numpy()
    T = T - np.repeat(b, 16)[:, None]  # remove the bias the module added to every column
    aug = np.block([[T, np.repeat(b, 16)[:, None]], [np.zeros((1, n_in)), np.ones((1, 1))]])
    np.testing.assert_allclose(
        layer.operator_singular_values(augment=True),
        np.linalg.svd(aug, compute_uv=False),
        rtol=1e-6,
        atol=1e-6,
    )


def test_unsupported_module_is_named_not_skipped():
    net = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.GELU(), torch.nn.Linear(4, 2))
    with pytest.raises(UnsupportedModelError, match=r"1 \(GELU: unsupported\)"):
        extract_layers(net, torch.zeros(2, 4))
    with pytest.warns(UserWarning, match="GELU"):
        layers = extract_layers(net, torch.zeros(2, 4), strict=False)
    assert len(layers) == 2


class Residual(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = torch.nn.Linear(4, 4), torch.nn.Linear(4, 2)

    def forward(self, x):
        return self.b(x + torch.relu(self.a(x)))


def test_residual_connection_fails_the_chain_check():
    with pytest.raises(UnsupportedModelError, match="<chain>"):
        extract_layers(Residual(), torch.randn(3, 4))


def test_empty_model_and_bad_arguments():
    with pytest.raises(ValueError, match="no Linear or Conv layer"):
        extract_layers(torch.nn.Sequential(torch.nn.ReLU()), torch.zeros(2, 3))
    with pytest.raises(TypeError, match="`model` must be a torch.nn.Module"):
        extract_layers(lambda x: x, torch.zeros(2, 3))
    with pytest.raises(TypeError, match="`example_input`"):
        extract_layers(torch.nn.Linear(3, 2), np.zeros((2, 3)))


def test_layer_spectra_augments_biases(mlp):
    layers = extract_layers(mlp, torch.zeros(2, 5))
    spec = layer_spectra(layers)
    assert [(s.in_dim, s.out_dim) for s in spec] == [(6, 8), (8, 7), (7, 3)]
    W, b = layers[0].W, layers[0].bias
    aug = np.vstack([np.hstack([W, b[:, None]]), np.eye(1, 6, 5)])
    np.testing.assert_allclose(spec[0].sv, np.linalg.svd(aug, compute_uv=False), rtol=1e-12)
