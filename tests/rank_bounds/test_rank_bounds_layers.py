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
    with pytest.raises(ValueError, match="no parameters"):
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


class FunctionalMLP(torch.nn.Module):
    """The usual way to write an MLP: modules for the weights, torch.nn.functional for the rest."""

    def __init__(self, seq, act=torch.nn.functional.relu):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = seq[0], seq[2], seq[4]
        self.act = act

    def forward(self, x):
        x = x.view(x.size(0), -1)
        return self.fc3(self.act(self.fc2(torch.relu(self.fc1(x)))))


@pytest.fixture
def relu_mlp():
    torch.manual_seed(1)
    return torch.nn.Sequential(
        torch.nn.Linear(5, 7), torch.nn.ReLU(), torch.nn.Linear(7, 6), torch.nn.ReLU(), torch.nn.Linear(6, 3)
    )


def test_functional_mlp_is_traced_like_its_sequential_twin(relu_mlp):
    # issue 34: fc2(F.relu(fc1(x))) used to be refused; with torch.fx it is the same chain, strict=True
    x = torch.randn(4, 5)
    seq = extract_layers(relu_mlp, x)
    fn = extract_layers(FunctionalMLP(relu_mlp), x)
    assert [l.name for l in fn] == ["fc1", "fc2", "fc3"]
    for a, b in zip(seq, fn):
        np.testing.assert_array_equal(a.W, b.W)
    assert [type(m).__name__ for m in fn[0].post] == ["ReLU"]


def test_functional_activations_are_checked_for_lipschitz(relu_mlp):
    F = torch.nn.functional
    x = torch.randn(4, 5)
    leaky = extract_layers(FunctionalMLP(relu_mlp, act=lambda h: F.leaky_relu(h, 0.1)), x)
    assert isinstance(leaky[1].post[0], torch.nn.LeakyReLU) and leaky[1].post[0].negative_slope == 0.1
    with pytest.raises(UnsupportedModelError, match=r"leaky_relu.*LeakyReLU: not 1-Lipschitz"):
        extract_layers(FunctionalMLP(relu_mlp, act=lambda h: F.leaky_relu(h, 2.0)), x)
    with pytest.raises(UnsupportedModelError, match="gelu: unsupported functional operation"):
        extract_layers(FunctionalMLP(relu_mlp, act=F.gelu), x)


def test_functional_residual_is_named_as_such():
    with pytest.raises(UnsupportedModelError, match="residual connection or a branch"):
        extract_layers(Residual(), torch.randn(3, 4))


class DataDependent(torch.nn.Module):
    """torch.fx cannot trace a branch on a tensor value: extract_layers falls back to hooks."""

    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.ReLU(), torch.nn.Linear(6, 2))

    def forward(self, x):
        if x.sum() > 1e9:  # never taken; only there to defeat symbolic tracing
            x = x * 0
        return self.net(x)


def test_untraceable_model_falls_back_to_hooks():
    layers = extract_layers(DataDependent(), torch.randn(3, 4))
    assert [l.name for l in layers] == ["net.0", "net.2"]


def test_model_without_parameters_is_a_clear_error():
    with pytest.raises(ValueError, match="`model` has no parameters"):
        extract_layers(torch.nn.Sequential(), torch.zeros(2, 3))


class FunctionalConv(torch.nn.Module):
    """A conv net written the usual way: F.max_pool2d with a positional kernel size, then flatten."""

    def __init__(self, pool=lambda h: torch.nn.functional.max_pool2d(h, 2), flat="flatten"):
        super().__init__()
        self.conv = torch.nn.Conv2d(2, 4, 3, padding=1)
        self.fc = torch.nn.Linear(4 * 3 * 3, 5)
        self.pool, self.flat = pool, flat

    def forward(self, x):
        h = self.pool(torch.relu(self.conv(x)))
        h = torch.flatten(h, 1) if self.flat == "flatten" else h.view(x.size(0), -1)
        return self.fc(h)


def _sequential_twin(fn):
    return torch.nn.Sequential(fn.conv, torch.nn.ReLU(), torch.nn.MaxPool2d(2), torch.nn.Flatten(), fn.fc)


def test_functional_max_pool_with_positional_kernel_size():
    # issue 44 (v2 review): n.args[1:] was read with kernel_size at position 1, so F.max_pool2d(h, 2) was refused
    torch.manual_seed(3)
    fn = FunctionalConv()
    x = torch.randn(3, 2, 6, 6)
    layers = extract_layers(fn, x)
    twin = extract_layers(_sequential_twin(fn), x)
    assert [l.kind for l in layers] == ["conv", "linear"]
    assert [type(m).__name__ for m in layers[0].post] == ["ReLU", "MaxPool2d"]  # a functional flatten is dropped
    assert [type(m).__name__ for m in twin[0].post] == ["ReLU", "MaxPool2d", "Flatten"]
    assert layers[0].post[1].kernel_size == 2 and layers[0].post[1].stride == 2
    np.testing.assert_allclose(layers[0].operator_singular_values(), twin[0].operator_singular_values())
    # positional stride (the second argument after the input) is read too
    fn2 = FunctionalConv(pool=lambda h: torch.nn.functional.max_pool2d(h, 2, 2))
    fn2.load_state_dict(fn.state_dict())
    assert [l.kind for l in extract_layers(fn2, x)] == ["conv", "linear"]
    # a positional non-zero padding is still refused, with the op named
    fn3 = FunctionalConv(pool=lambda h: torch.nn.functional.max_pool2d(h, 3, 2, 1))
    with pytest.raises(UnsupportedModelError, match="max_pool2d: unsupported functional operation"):
        extract_layers(fn3, x)


def test_view_with_the_model_inputs_batch_size():
    # issue 44 (v2 review): h.view(x.size(0), -1) queried the size of the model input, not of the chain, and was
    # refused as "size: produces a non-tensor from the chain"
    torch.manual_seed(4)
    fn = FunctionalConv(pool=torch.nn.MaxPool2d(2), flat="view")
    x = torch.randn(3, 2, 6, 6)
    layers = extract_layers(fn, x)
    assert [l.kind for l in layers] == ["conv", "linear"] and layers[1].in_dim == 36


def test_non_contiguous_example_input_is_accepted(relu_mlp):
    # a transposed batch (non-contiguous) gives the same layers as its contiguous copy
    x = torch.randn(5, 4).t()
    assert not x.is_contiguous()
    a, b = extract_layers(FunctionalMLP(relu_mlp), x), extract_layers(FunctionalMLP(relu_mlp), x.contiguous())
    for la, lb in zip(a, b):
        np.testing.assert_array_equal(la.W, lb.W)
