"""Walk a torch model and collect its layers as operators: ``extract_layers``.

The bounds of this package are stated for a chain ``f(x) = A_L s(A_{L-1} ... s(A_1 x))`` of linear maps and
1-Lipschitz activations with ``s(0) = 0``. :func:`extract_layers` traces the model with ``torch.fx`` (so
functional code such as ``fc2(F.relu(fc1(x)))`` is seen: ``F.relu``, ``torch.tanh``, ``x.view(...)`` and the
like become their module equivalents) and checks that the traced graph is a chain: every operation takes the
previous one's output and nothing else, so a residual add or a branch is named. Models ``torch.fx`` cannot
trace (data-dependent control flow) fall back to forward hooks on every leaf module. Either way it keeps the
Linear / Conv layers (with their biases, and eval-mode BatchNorm folded into the layer before it), checks
every other step against a list of 1-Lipschitz pass-through operations, and verifies the chain by replaying
the recorded steps in order and comparing with the model's own output. Anything else (attention, residual
adds, an unknown module with parameters, a functional op on a parameter) is reported by name: an error by
default, a warning with ``strict=False``. Nothing is skipped silently.
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np

from neurips25.extras import require
from neurips25.rank_bounds.spectra import conv_operator_singular_values

torch = require("torch", "torch")
nn = torch.nn

__all__ = ["LayerInfo", "UnsupportedModelError", "extract_layers"]

# 1-Lipschitz maps with s(0) = 0 that the chain may hold between layers
_ELEMENTWISE = (nn.ReLU, nn.ReLU6, nn.LeakyReLU, nn.Tanh, nn.ELU, nn.Hardtanh, nn.Softsign)
_SHAPE_ONLY = (nn.Identity, nn.Flatten, nn.Unflatten, nn.Dropout, nn.Dropout1d, nn.Dropout2d, nn.AlphaDropout)
_POOLS = (nn.MaxPool1d, nn.MaxPool2d, nn.AvgPool1d, nn.AvgPool2d)
_BATCHNORM = (nn.BatchNorm1d, nn.BatchNorm2d)


class UnsupportedModelError(ValueError):
    """The model holds modules, or a topology, that the chain bounds cannot account for."""


@dataclasses.dataclass
class LayerInfo:
    """One linear layer of the chain, as an operator on flattened feature vectors.

    Attributes
    ----------
    name : str
        Qualified module name in the model (``"net.2"``).
    kind : {"linear", "conv"}
    W : ndarray, float64
        ``(d_out, d_in)`` for ``linear``; the kernel ``(c_out, c_in, kh, kw)`` for ``conv`` (Conv1d is stored
        with ``kh = 1``).
    bias : ndarray or None
        ``(d_out,)`` or ``(c_out,)``; BatchNorm folding creates one.
    in_shape, out_shape : tuple of int
        Per-sample shapes of the layer's input and output (``(C, H, W)`` for conv).
    init_W, init_bias : ndarray or None
        The same layer in ``init_model`` (for distance-to-initialisation norms).
    grid : tuple of int or None
        Conv only: the grid ``(N1, N2)`` of the circular operator whose spectrum is used.
    exact_spectrum : bool
        False when the conv spectrum is an upper bound (zero padding, stride > 1): the true operator is a
        restriction of the circular one, so each of its singular values is at most the circular one's.
    folded : list of str
        Names of BatchNorm modules folded into this layer.
    post : list of torch.nn.Module
        Pass-through modules that follow the layer in the chain (activations, pooling, flatten).
    """

    name: str
    kind: str
    W: np.ndarray
    bias: np.ndarray | None
    in_shape: tuple
    out_shape: tuple
    init_W: np.ndarray | None = None
    init_bias: np.ndarray | None = None
    grid: tuple | None = None
    exact_spectrum: bool = True
    stride: tuple = (1, 1)
    folded: list = dataclasses.field(default_factory=list)
    post: list = dataclasses.field(default_factory=list, repr=False)

    @property
    def in_dim(self) -> int:
        return int(np.prod(self.in_shape))

    @property
    def out_dim(self) -> int:
        return int(np.prod(self.out_shape))

    @property
    def n_params(self) -> int:
        return int(self.W.size + (0 if self.bias is None else self.bias.size))

    def operator_singular_values(self, augment: bool = False, last: bool = False) -> np.ndarray:
        """Decreasing singular values of the layer's operator, optionally with the bias folded in.

        With ``augment`` the operator acts on ``(h, 1)``: ``[[A, b], [0, 1]]`` for a hidden layer (the
        constant coordinate is carried forward) and ``[A, b]`` for the last layer. For conv layers the bias
        column is constant over positions, so in the Fourier basis it only touches the zero-frequency block:
        that block becomes ``[[P(0,0), sqrt(N) b], [0, 1]]`` and the rest is unchanged.

        Returns
        -------
        ndarray, shape (r,), with ``r <= min(out_dim, in_dim) (+1 when augmented)``
        """
        b = np.zeros(self.W.shape[0]) if self.bias is None else self.bias
        if self.kind == "linear":
            M = self.W
            if augment:  # [[W, b], [0, 1]] (hidden) or [W, b] (last), filled in one buffer
                r, c = self.W.shape
                M = np.zeros((r + int(not last), c + 1))
                M[:r, :c] = self.W
                M[:r, c] = b
                if not last:
                    M[r, c] = 1.0
            return np.linalg.svd(M, compute_uv=False)
        n1, n2 = self.grid
        if not augment:
            s = conv_operator_singular_values(self.W, self.grid)
        else:
            P = np.fft.fft2(self.W, s=(n1, n2), axes=(2, 3)).transpose(2, 3, 0, 1)
            rest = np.linalg.svd(P.reshape(n1 * n2, *P.shape[2:])[1:], compute_uv=False).ravel()
            P0 = np.hstack([P[0, 0].real, np.sqrt(n1 * n2) * b[:, None]])
            if not last:
                P0 = np.vstack([P0, np.eye(1, P0.shape[1], P0.shape[1] - 1)])
            s = np.sort(np.concatenate([rest, np.linalg.svd(P0, compute_uv=False)]))[::-1]
        # the circular operator can have more singular values than the true one has room for
        cap = min(self.out_dim, self.in_dim) + int(augment)
        return s[:cap]


def _pair(v) -> tuple:
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def _conv_geometry(mod, in_shape) -> tuple[tuple, bool, str | None]:
    """Grid of the circular operator that dominates this conv, whether it is exact, or why unsupported."""
    if mod.groups != 1 or any(d != 1 for d in mod.dilation):
        return (), False, "groups != 1 or dilation != 1"
    ks = (1, mod.kernel_size[0]) if isinstance(mod, nn.Conv1d) else tuple(mod.kernel_size)
    size = (1, in_shape[-1]) if isinstance(mod, nn.Conv1d) else tuple(in_shape[-2:])
    stride = (1, mod.stride[0]) if isinstance(mod, nn.Conv1d) else tuple(mod.stride)
    if isinstance(mod.padding, str):
        total = [0, 0] if mod.padding == "valid" else [k - 1 for k in ks]
    else:
        pad = (0, mod.padding[0]) if isinstance(mod, nn.Conv1d) else _pair(mod.padding)
        total = [2 * p for p in pad]
    if mod.padding_mode == "circular":
        if (
            all(t == k - 1 for t, k in zip(total, ks))
            and all(s == 1 for s in stride)
            and all(k % 2 == 1 for k in ks)
        ):
            return size, True, None
        return (), False, "circular padding other than an odd 'same' stride-1 convolution"
    if mod.padding_mode != "zeros":
        return (), False, f"padding_mode={mod.padding_mode!r}"
    # zero padding: the operator is a restriction of the circular one on the padded grid
    grid = tuple(n + t for n, t in zip(size, total))
    exact = False
    return grid, exact, None


def _lipschitz_ok(mod) -> bool:
    if isinstance(mod, nn.LeakyReLU):
        return abs(mod.negative_slope) <= 1
    if isinstance(mod, nn.ELU):
        return 0 <= mod.alpha <= 1
    if isinstance(mod, _POOLS):
        # non-overlapping windows keep max and average pooling 1-Lipschitz in l2
        ks, st = _pair(mod.kernel_size), _pair(mod.stride if mod.stride is not None else mod.kernel_size)
        return all(s >= k for s, k in zip(st, ks)) and getattr(mod, "dilation", 1) in (1, (1, 1))
    return True


def _np(t) -> np.ndarray:
    # one float64 copy, detached from the tensor's memory (via torch: numpy has no bfloat16 / float8)
    return t.detach().to(device="cpu", dtype=torch.float64, copy=True).numpy()


def _functional_step(target, args, kwargs):
    """The module equivalent of a functional activation / pass-through, ``"shape"`` for a pure reshape, or
    None when the operation is not one the chain bounds can account for."""
    F = torch.nn.functional

    # ``args`` are the positional arguments AFTER the input tensor: position 0 is the op's second argument
    def kw(name, pos, default):
        return kwargs.get(name, args[pos] if len(args) > pos else default)

    if target in (F.relu, torch.relu, "relu", F.relu_, torch.relu_, "relu_"):
        return nn.ReLU()
    if target in (F.relu6,):
        return nn.ReLU6()
    if target in (torch.tanh, F.tanh, "tanh"):
        return nn.Tanh()
    if target in (F.leaky_relu,):
        return nn.LeakyReLU(float(kw("negative_slope", 0, 0.01)))
    if target in (F.elu,):
        return nn.ELU(float(kw("alpha", 0, 1.0)))
    if target in (F.hardtanh,):
        return nn.Hardtanh(float(kw("min_val", 0, -1.0)), float(kw("max_val", 1, 1.0)))
    if target in (F.dropout, F.dropout1d, F.dropout2d, F.alpha_dropout):
        return nn.Identity()  # the probe runs in eval mode
    if target in (F.max_pool2d, F.avg_pool2d, F.max_pool1d, F.avg_pool1d):
        cls = {
            F.max_pool2d: nn.MaxPool2d,
            F.avg_pool2d: nn.AvgPool2d,
            F.max_pool1d: nn.MaxPool1d,
            F.avg_pool1d: nn.AvgPool1d,
        }[target]
        ks = kw("kernel_size", 0, None)
        stride = kw("stride", 1, None) or ks
        padding = kw("padding", 2, 0)
        if ks is None or padding not in (0, (0, 0)):
            return None
        return cls(ks, stride)
    if target in (torch.flatten, torch.reshape, "view", "reshape", "flatten", "contiguous", "view_as"):
        return "shape"
    return None


def _record_fx(model, example_input):
    """Trace with torch.fx, run the graph once recording each node, and check that it is a chain.

    Returns ``(calls, problems)``: the recorded steps as ``(name, module, inputs, output)`` (functional
    activations mapped to modules, pure reshapes dropped: the replay reshapes between steps) and the
    operations that break the chain.
    """
    gm = torch.fx.symbolic_trace(model)
    env_log = []

    class _Recorder(torch.fx.Interpreter):
        def run_node(self, n):
            out = super().run_node(n)
            env_log.append((n, out))
            return out

    rec = _Recorder(gm, garbage_collect_values=False)
    with torch.no_grad():
        rec.run(example_input)
    values = {n: v for n, v in env_log}
    calls, problems = [], []
    prev = None  # the node whose output the chain carries
    chain = set()  # the model input and every node the chain has carried: shape queries on them are harmless
    for n, out in env_log:
        if n.op == "placeholder":
            if prev is None:
                prev = n
                chain.add(n)
            else:
                problems.append(f"{n.name} (a second model input)")
            continue
        if n.op == "output":
            if n.args[0] is not prev:
                problems.append("<output> (the model returns something other than the end of the chain)")
            continue
        if n.op == "get_attr":
            problems.append(f"{n.target} (parameter or buffer used by a functional operation)")
            continue
        tensor_in = [a for a in n.all_input_nodes if isinstance(values.get(a), torch.Tensor)]
        if not isinstance(out, torch.Tensor):
            shape_query = (n.op == "call_method" and n.target in ("size", "dim")) or (
                n.op == "call_function" and n.target is getattr and n.args[1:] == ("shape",)
            )
            if shape_query and tensor_in and all(a in chain for a in tensor_in):
                continue  # shape queries (of the chain or of the model input, x.size(0)) feed a reshape
            if tensor_in:
                problems.append(f"{n.name} ({n.target}: produces a non-tensor from the chain)")
            continue
        if tensor_in != [prev]:
            names = ", ".join(a.name for a in tensor_in) or "no tensor"
            problems.append(
                f"{n.name} (takes {names} instead of the previous step {prev.name}: a residual connection or "
                "a branch)"
            )
            prev = n
            continue
        if n.op == "call_module":
            calls.append((n.target, gm.get_submodule(n.target), (values[prev],), out))
        else:
            step = _functional_step(n.target, n.args[1:], n.kwargs)
            fname = n.target if isinstance(n.target, str) else getattr(n.target, "__name__", str(n.target))
            if step is None:
                problems.append(f"{n.name} ({fname}: unsupported functional operation)")
            elif step != "shape":
                calls.append((f"{n.name} ({fname})", step, (values[prev],), out))
        prev = n
        chain.add(n)
    return calls, problems


def _record(model, example_input):
    """Forward once in eval mode with hooks on every leaf; replay the chain in eval mode too."""
    calls = []
    hooks = []
    for name, mod in model.named_modules():
        if len(list(mod.children())) == 0:
            hooks.append(
                mod.register_forward_hook(lambda m, inp, out, name=name: calls.append((name, m, inp, out)))
            )
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            y = model(example_input)
        for h in hooks:
            h.remove()
        replayed = _replay(calls, example_input)
    finally:
        for h in hooks:
            h.remove()
        model.train(was_training)
    return calls, y, replayed


def _trace(model, example_input):
    """torch.fx first (sees functional code); forward hooks when the model cannot be traced."""
    was_training = model.training
    model.eval()
    try:
        try:
            calls, problems = _record_fx(model, example_input)
        except Exception as err:  # noqa: BLE001 - any tracing failure means: use hooks instead
            traced = f"torch.fx could not trace the model ({type(err).__name__}); hooks used"
        else:
            with torch.no_grad():
                y = model(example_input)
                replayed = _replay(calls, example_input)
            return calls, y, replayed, problems
    finally:
        model.train(was_training)
    calls, y, replayed = _record(model, example_input)
    return calls, y, replayed, [f"<trace> ({traced})"] if _needs_note(calls, y, replayed) else []


def _needs_note(calls, y, replayed) -> bool:
    return replayed is None or replayed.shape != y.shape or not torch.allclose(replayed, y, rtol=1e-4, atol=1e-5)


def _replay(calls, x):
    """Apply the recorded leaf modules in order; flatten/reshape between them when sizes agree."""
    with torch.no_grad():
        for _, mod, inp, _ in calls:
            target = inp[0].shape[1:]
            if x.shape[1:] != target:
                if x[0].numel() != int(np.prod(target)):
                    return None
                x = x.reshape(x.shape[0], *target)
            x = mod(x)
    return x


def extract_layers(model, example_input, init_model=None, strict: bool = True) -> list[LayerInfo]:
    """Collect the Linear / Conv layers of ``model`` as a verified chain of operators.

    Parameters
    ----------
    model : torch.nn.Module
        The trained network. Run in eval mode for the probe (BatchNorm uses its running statistics); its
        training flag is restored afterwards.
    example_input : torch.Tensor, shape (batch, ...)
        A batch the model accepts (a few rows of the data); fixes the per-sample shapes conv layers act on.
    init_model : torch.nn.Module, optional
        The same architecture at initialisation; its layers fill ``init_W`` / ``init_bias``.
    strict : bool, default True
        Unsupported modules or a failed chain check raise :class:`UnsupportedModelError`; with ``False``
        they are reported by ``warnings.warn`` (naming the modules) and the supported layers are returned.

    Returns
    -------
    list of LayerInfo
        In forward order, float64 weights.

    Raises
    ------
    TypeError
        ``model`` is not an ``nn.Module`` or ``example_input`` not a tensor.
    ValueError
        The model has no Linear / Conv layer.
    UnsupportedModelError
        A module is not a supported layer or 1-Lipschitz pass-through, a BatchNorm does not follow a layer,
        or the recorded chain does not reproduce the model's output (residual connections, functional ops).

    Examples
    --------
    >>> import torch
    >>> net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    >>> [(l.name, l.W.shape) for l in extract_layers(net, torch.zeros(2, 4))]
    [('0', (8, 4)), ('2', (3, 8))]
    """
    if not isinstance(model, nn.Module):
        raise TypeError(f"`model` must be a torch.nn.Module, got {type(model).__name__}")
    if not isinstance(example_input, torch.Tensor) or example_input.ndim < 2:
        raise TypeError("`example_input` must be a torch.Tensor with a leading batch dimension")
    if not any(True for _ in model.parameters()):
        raise ValueError("`model` has no parameters: it has no Linear or Conv layer to bound (empty model?)")
    calls, y, replayed, problems = _trace(model, example_input)
    layers: list[LayerInfo] = []
    for name, mod, inp, out in calls:
        in_shape, out_shape = tuple(inp[0].shape[1:]), tuple(out.shape[1:])
        if isinstance(mod, nn.Linear):
            layers.append(
                LayerInfo(
                    name,
                    "linear",
                    _np(mod.weight),
                    None if mod.bias is None else _np(mod.bias),
                    (int(np.prod(in_shape[-1:])),) if len(in_shape) == 1 else in_shape,
                    out_shape,
                )
            )
            if len(in_shape) != 1:
                problems.append(f"{name} (Linear applied to a non-flat input of shape {in_shape})")
        elif isinstance(mod, (nn.Conv1d, nn.Conv2d)):
            grid, exact, why = _conv_geometry(mod, in_shape)
            if why is not None:
                problems.append(f"{name} ({type(mod).__name__}: {why})")
                continue
            W = _np(mod.weight)
            if isinstance(mod, nn.Conv1d):
                W = W[:, :, None, :]
            stride = (1, mod.stride[0]) if isinstance(mod, nn.Conv1d) else tuple(mod.stride)
            layers.append(
                LayerInfo(
                    name,
                    "conv",
                    W,
                    None if mod.bias is None else _np(mod.bias),
                    in_shape,
                    out_shape,
                    grid=grid,
                    exact_spectrum=exact,
                    stride=stride,
                )
            )
        elif isinstance(mod, _BATCHNORM):
            prev = layers[-1] if layers else None
            if prev is None or prev.post or not mod.track_running_stats or mod.running_var is None:
                problems.append(f"{name} (BatchNorm not directly after a Linear/Conv layer)")
                continue
            # eval-mode BN is the affine map x -> scale * (x - mean) + shift, folded into the layer
            scale = 1.0 / np.sqrt(_np(mod.running_var) + mod.eps)
            shift = -_np(mod.running_mean) * scale
            if mod.affine:
                scale, shift = scale * _np(mod.weight), shift * _np(mod.weight) + _np(mod.bias)
            b = np.zeros(prev.W.shape[0]) if prev.bias is None else prev.bias
            prev.W = prev.W * scale.reshape((-1,) + (1,) * (prev.W.ndim - 1))
            prev.bias = scale * b + shift
            prev.folded.append(name)
        elif isinstance(mod, _ELEMENTWISE + _SHAPE_ONLY + _POOLS) and _lipschitz_ok(mod):
            if layers:
                layers[-1].post.append(mod)
        else:
            kind = type(mod).__name__
            reason = (
                "not 1-Lipschitz as configured" if isinstance(mod, _ELEMENTWISE + _POOLS) else "unsupported"
            )
            problems.append(f"{name or '<root>'} ({kind}: {reason})")
    if replayed is None or replayed.shape != y.shape or not torch.allclose(replayed, y, rtol=1e-4, atol=1e-5):
        problems.append(
            "<chain> (replaying the modules in call order does not reproduce the output: "
            "residual connections or functional operations between modules)"
        )
    if not layers:
        raise ValueError("`model` has no Linear or Conv layer to bound (empty model?)")
    if problems:
        msg = "extract_layers: cannot account for " + "; ".join(problems)
        if strict:
            raise UnsupportedModelError(msg)
        warnings.warn(msg, stacklevel=2)
    if init_model is not None:
        init_layers = extract_layers(init_model, example_input, strict=strict)
        if [(a.name, a.W.shape) for a in init_layers] != [(a.name, a.W.shape) for a in layers]:
            raise ValueError("`init_model` must have the same layers (names and shapes) as `model`")
        for a, a0 in zip(layers, init_layers):
            a.init_W, a.init_bias = a0.W, a0.bias
    return layers
