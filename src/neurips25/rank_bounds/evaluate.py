"""``GeneralizationReport``: every bound of a trained torch model on its data, spectra computed once."""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from neurips25.extras import require
from neurips25.rank_bounds.bounds import (
    DEFAULT_P_GRID,
    BoundResult,
    DataStats,
    LayerSpectrum,
    bartlett_spectral_bound,
    exact_rank_dudley_bound,
    full_rank_dudley_bound,
    golowich_frobenius_bound,
    neyshabur_pacbayes_bound,
    param_count_bound,
    path_norm_bound,
    schatten_rank_bound,
)
from neurips25.rank_bounds.layers import LayerInfo, UnsupportedModelError, extract_layers

torch = require("torch", "torch")

__all__ = ["GeneralizationReport", "layer_spectra", "margins", "path_norm", "BOUND_NAMES"]

#: bound names accepted by ``GeneralizationReport.compute(bounds=...)``
BOUND_NAMES = (
    "schatten",
    "exact_rank",
    "full_rank",
    "param_covering",
    "param_vc",
    "bartlett_spectral",
    "neyshabur_pacbayes",
    "golowich_frobenius",
    "path_norm",
    "path_norm_l1",
)


def _l21_rows(layer: LayerInfo, augment: bool) -> float:
    """``||(A - M)^T||_{2,1}``: sum of row norms of the operator minus its reference (init or 0)."""
    W = layer.W if layer.init_W is None else layer.W - layer.init_W
    b = None
    if augment:
        b = np.zeros(W.shape[0]) if layer.bias is None else layer.bias
        if layer.init_bias is not None:
            b = b - layer.init_bias
    if layer.kind == "linear":
        sq = np.einsum("ij,ij->i", W, W)  # row norms of [W, b] without building it
        return float(np.sum(np.sqrt(sq if b is None else sq + b**2)))
    # conv: each output position's row holds (at most) the out-channel's kernel; bias adds one entry
    per_channel = np.sum(W.reshape(W.shape[0], -1) ** 2, axis=1)
    if b is not None:
        per_channel = per_channel + b**2
    positions = int(np.prod(layer.out_shape[1:]))
    return float(positions * np.sum(np.sqrt(per_channel)))


def layer_spectra(layers: list[LayerInfo], augment: bool | None = None) -> list[LayerSpectrum]:
    """One SVD (or FFT spectrum) per layer: the :class:`LayerSpectrum` list every bound consumes.

    Parameters
    ----------
    layers : list of LayerInfo
        From :func:`extract_layers`.
    augment : bool, optional
        Fold biases in with a constant coordinate; default: when any layer has a bias.
    """
    if augment is None:
        augment = any(l.bias is not None for l in layers)
    out = []
    for i, layer in enumerate(layers):
        last = i == len(layers) - 1
        extra_in, extra_out = int(augment), int(augment and not last)
        out.append(
            LayerSpectrum(
                sv=layer.operator_singular_values(augment=augment, last=last),
                in_dim=layer.in_dim + extra_in,
                out_dim=layer.out_dim + extra_out,
                n_params=layer.n_params,
                l21_dist=_l21_rows(layer, augment),
            )
        )
    return out


def margins(logits, y) -> np.ndarray:
    """Multiclass margins ``M(v, y) = v_y - max_{j != y} v_j``, shape (n,), float64."""
    v = np.asarray(logits, dtype=np.float64)
    y = np.asarray(y)
    correct = v[np.arange(len(y)), y]
    other = v.copy()
    other[np.arange(len(y)), y] = -np.inf
    return correct - other.max(axis=1)


def path_norm(layers: list[LayerInfo], p: int = 2) -> float:
    """l_p path norm ``phi_p = (sum over input-output paths of prod |w|^p)^(1/p)``, p in {1, 2}.

    One forward pass of ``|W|^p`` and ``|b|^p`` on an all-ones input, summed over the outputs, then the
    p-th root (Jiang et al. 2020 for p = 2). Pass-through modules recorded after each layer (pooling, flatten)
    are applied too; elementwise activations are the identity on the non-negative values that flow here.

    Raises :class:`UnsupportedModelError` (a ``ValueError``) naming the first layer whose input is not what the
    layers before it produce: layers that do not compose as a chain (what ``extract_layers(..., strict=False)``
    returns for attention, a mean over tokens, or a Linear applied per token) have no path norm here.
    """
    if p not in (1, 2):
        raise ValueError(f"`p` must be 1 or 2, got {p!r}")
    x = torch.ones((1,) + tuple(layers[0].in_shape), dtype=torch.float64)
    F = torch.nn.functional
    with torch.no_grad():
        for i, layer in enumerate(layers):
            need = layer.W.shape[1] if layer.kind == "linear" else int(np.prod(layer.in_shape))
            if x.numel() != need or (layer.kind == "linear" and len(layer.in_shape) != 1):
                came = "the input" if i == 0 else f"layer {layers[i - 1].name!r} and what follows it"
                raise UnsupportedModelError(
                    f"`layers` do not compose as a chain: layer {layer.name!r} takes {need} inputs per sample "
                    f"(per-sample input shape {tuple(layer.in_shape)}), {came} give {x.numel()}: "
                    "operations between the layers (attention, a reduction over tokens, a per-token Linear) "
                    "are not layers of the chain, so its path norm is not computable"
                )
            W = torch.from_numpy(np.abs(layer.W) ** p)
            b = None if layer.bias is None else torch.from_numpy(np.abs(layer.bias) ** p)
            if layer.kind == "linear":
                x = F.linear(x.reshape(1, -1), W, b)
            else:
                h = x.reshape((1,) + tuple(layer.in_shape))
                if h.ndim == 3:  # Conv1d, stored with kh = 1
                    h = h[:, :, None, :]
                if layer.exact_spectrum:  # circular 'same' convolution: wrap around, then no padding
                    kh, kw = W.shape[2:]
                    h = F.pad(
                        h, ((kw - 1) // 2, (kw - 1) // 2, (kh - 1) // 2, (kh - 1) // 2), mode="circular"
                    )
                    pad = (0, 0)
                else:  # zero padding: the grid is the padded input
                    pad = tuple((g - n) // 2 for g, n in zip(layer.grid, h.shape[-2:]))
                x = F.conv2d(h, W, b, stride=layer.stride, padding=pad)
            for m in layer.post:
                if isinstance(
                    m,
                    (
                        torch.nn.MaxPool1d,
                        torch.nn.MaxPool2d,
                        torch.nn.AvgPool1d,
                        torch.nn.AvgPool2d,
                        torch.nn.Flatten,
                        torch.nn.Unflatten,
                    ),
                ):
                    x = m.double()(x) if hasattr(m, "double") else m(x)
    return float(x.sum().item() ** (1.0 / p))


def _from_loader(loader):
    """Concatenate the ``(x, y)`` batches of a DataLoader (or any iterable of pairs)."""
    xs, ys = [], []
    for i, batch in enumerate(loader):
        if not (isinstance(batch, (tuple, list)) and len(batch) >= 2):
            raise TypeError(f"`X` as a DataLoader must yield (x, y) batches; batch {i} is {type(batch).__name__}")
        xs.append(_as_tensor(batch[0], "X (loader batch)"))
        ys.append(_as_tensor(batch[1], "y (loader batch)"))
    if not xs:
        raise ValueError("`X` as a DataLoader yielded no batches")
    return torch.cat(xs), torch.cat(ys)


def _as_tensor(X, name):
    if isinstance(X, np.ndarray):
        X = torch.from_numpy(X)
    if not isinstance(X, torch.Tensor):
        raise TypeError(f"`{name}` must be a numpy array or torch tensor, got {type(X).__name__}")
    return X


def _check_fits(model, X):
    """Run the model on two rows; a shape mismatch becomes a ValueError naming `X` and what was expected."""
    was = model.training
    model.eval()
    try:
        with torch.no_grad():
            model(X)
    except RuntimeError as err:
        kinds = (torch.nn.Linear, torch.nn.Conv1d, torch.nn.Conv2d)
        first = next((m for m in model.modules() if isinstance(m, kinds)), None)
        if isinstance(first, torch.nn.Linear):
            hint = f" (its first layer expects {first.in_features} input features)"
        elif first is not None:
            hint = f" (its first layer expects {first.in_channels} input channels)"
        else:
            hint = ""
        raise ValueError(
            f"`X` with per-sample shape {tuple(X.shape[1:])} does not fit `model`{hint}: {err}"
        ) from err
    finally:
        model.train(was)


class GeneralizationReport:
    """All generalization bounds of a trained classifier, from one pass over its layers and data.

    Extracts the layer chain (:func:`extract_layers`), computes each layer's operator spectrum ONCE
    (:func:`layer_spectra`), the margins on ``(X, y)``, and evaluates the reconstructed Schatten-p bound
    beside the classic ones, all as margin bounds ``P(error) <= R_gamma + gap`` at the same ``gamma``.

    Parameters
    ----------
    model : torch.nn.Module
        A classifier: ``model(X)`` gives logits of shape (n, K). Sequential or functional style
        (``fc2(F.relu(fc1(x)))``); see :func:`extract_layers`.
    X : array or tensor, shape (n, ...), or a torch DataLoader
        Training inputs (the bounds hold for the sample the model was trained on). A DataLoader (or any
        iterable of ``(x, y)`` batches) is read once, in full; then ``y`` must be None.
    y : array or tensor of int, shape (n,), or None with a DataLoader
        Training labels in ``[0, K)``.
    margin : "min" or float in (0, 1)
        ``"min"``: gamma is the smallest training margin (must be > 0, so the model must fit the data);
        a float q: gamma is the q-quantile of the margins, and the empirical ramp loss pays for the points
        below it, so one outlier does not drive the bound.
    init_model : torch.nn.Module, optional
        The network at initialisation (distance-to-init norms in Bartlett et al.'s bound).
    delta : float in (0, 1), default 0.05
    p_grid : sequence of float in (0, 2)
        Grid for the best-over-p Schatten bound.
    strict : bool, default True
        Passed to :func:`extract_layers`. With ``False`` a model that is not a chain of layers (a residual
        connection, attention, a mean over tokens) is bounded through the layers that were extracted, as that
        function warns; a bound those layers cannot give (the path norms, when the layers do not compose as a
        chain) is returned with value NaN and the reason in ``terms["not_computable"]`` and
        ``summary["not_computable"]``, with a warning naming it.

    Examples
    --------
    >>> import torch
    >>> torch.manual_seed(0)  # doctest: +ELLIPSIS
    <torch._C.Generator object at ...>
    >>> net = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.ReLU(), torch.nn.Linear(16, 3))
    >>> X = torch.randn(64, 4); y = net(X).argmax(1)
    >>> res = GeneralizationReport(net, X, y).compute()
    >>> sorted(res)[:3]
    ['bartlett_spectral', 'exact_rank', 'full_rank']
    """

    def __init__(
        self,
        model,
        X,
        y=None,
        margin="min",
        init_model=None,
        delta: float = 0.05,
        p_grid=DEFAULT_P_GRID,
        strict: bool = True,
    ):
        if not isinstance(model, torch.nn.Module):
            raise TypeError(f"`model` must be a torch.nn.Module, got {type(model).__name__}")
        params = list(model.parameters())
        if not params:
            raise ValueError("`model` has no parameters: there is no Linear or Conv layer to bound (empty model?)")
        if not isinstance(X, (np.ndarray, torch.Tensor)) and hasattr(X, "__iter__"):
            if y is not None:
                raise ValueError("`y` must be None when `X` is a DataLoader (labels come from its batches)")
            X, y = _from_loader(X)
        if y is None:
            raise ValueError("`y` is required when `X` is an array or tensor")
        X = _as_tensor(X, "X")
        y = _as_tensor(y, "y")
        if X.ndim < 2:
            raise ValueError(f"`X` must have shape (n, ...), got {tuple(X.shape)}")
        if y.ndim != 1 or y.shape[0] != X.shape[0]:
            raise ValueError(f"`y` must have shape ({X.shape[0]},) to match `X`, got {tuple(y.shape)}")
        if y.dtype.is_floating_point or y.dtype == torch.bool:
            raise TypeError(f"`y` must hold integer class labels, got dtype {y.dtype}")
        if not torch.isfinite(X.double()).all():
            raise ValueError("`X` contains NaN or infinite values")
        if isinstance(margin, str):
            if margin != "min":
                raise ValueError(f"`margin` must be 'min' or a quantile in (0, 1), got {margin!r}")
        elif not (isinstance(margin, numbers.Real) and 0 < margin < 1):
            raise ValueError(f"`margin` must be 'min' or a quantile in (0, 1), got {margin!r}")
        if not (isinstance(delta, numbers.Real) and 0 < delta < 1):
            raise ValueError(f"`delta` must lie in (0, 1), got {delta!r}")
        for name, p in model.named_parameters():
            if not torch.isfinite(p).all():
                raise ValueError(f"`model` parameter {name!r} has NaN or infinite entries")
        _check_fits(model, X[:2].to(params[0].dtype))
        self.model, self.init_model = model, init_model
        self.X, self.y = X, y
        self.margin, self.delta, self.p_grid, self.strict = margin, float(delta), tuple(p_grid), strict
        self.results: dict[str, BoundResult] | None = None
        self.summary: dict = {}

    def _prepare(self):
        """Layers, spectra (once), margins and data statistics."""
        dtype = next(self.model.parameters()).dtype
        X = self.X.to(dtype)
        layers = extract_layers(
            self.model, X[: min(len(X), 8)], init_model=self.init_model, strict=self.strict
        )
        spectra = layer_spectra(layers)
        augment = any(l.bias is not None for l in layers)
        with torch.no_grad():
            was = self.model.training
            self.model.eval()
            logits = self.model(X).double().numpy()
            self.model.train(was)
        if logits.ndim != 2 or logits.shape[1] < 2:
            raise ValueError(f"`model` must output logits of shape (n, K >= 2), got {logits.shape}")
        K = logits.shape[1]
        if int(self.y.min()) < 0 or int(self.y.max()) >= K:
            raise ValueError(
                f"`y` must hold labels in [0, {K}), got range [{int(self.y.min())}, {int(self.y.max())}]"
            )
        m = margins(logits, self.y.numpy())
        if self.margin == "min":
            gamma = float(m.min())
            if gamma <= 0:
                raise ValueError(
                    "margin='min' needs every training point classified correctly (smallest "
                    f"margin {gamma:.3g}); use a quantile margin such as margin=0.05"
                )
        else:
            gamma = float(np.quantile(m, self.margin))
            if gamma <= 0:
                raise ValueError(
                    f"the {self.margin} quantile of the margins is {gamma:.3g} <= 0; use a larger quantile"
                )
        ramp = np.clip(1.0 - m / gamma, 0.0, 1.0)
        flat = X.double().reshape(len(X), -1).numpy()
        sq = np.sum(flat**2, axis=1) + float(augment)
        data = DataStats(
            n=len(flat),
            B=float(np.sqrt(sq.max())),
            X_frob=float(np.sqrt(sq.sum())),
            gamma=gamma,
            empirical_risk=float(ramp.mean()),
            n_classes=K,
        )
        return layers, spectra, data, m

    def compute(self, bounds="all") -> dict[str, BoundResult]:
        """Evaluate the requested bounds (``"all"`` or a list of :data:`BOUND_NAMES`).

        Returns
        -------
        dict name -> BoundResult
            Also kept in ``self.results``; ``self.summary`` holds gamma, B, per-layer effective ranks, etc.
        """
        names = list(BOUND_NAMES) if bounds == "all" else list(bounds)
        unknown = [b for b in names if b not in BOUND_NAMES]
        if unknown:
            raise ValueError(f"`bounds` must be 'all' or a subset of {BOUND_NAMES}, got unknown {unknown}")
        layers, spectra, data, m = self._prepare()
        d = self.delta
        # H: most units in a hidden layer (the constant unit counted when biases are folded in)
        H = max([s.out_dim for s in spectra[:-1]] or [1])
        x_inf = max(float(self.X.abs().max()), 1.0 if spectra[0].in_dim > layers[0].in_dim else 1e-12)
        def _path(order, **kw):
            try:
                phi = path_norm(layers, order)
            except UnsupportedModelError as err:
                return str(err)
            return path_norm_bound(phi, len(layers), data, d, **kw)

        makers = {
            "schatten": lambda: schatten_rank_bound(spectra, data, "best", self.p_grid, d),
            "exact_rank": lambda: exact_rank_dudley_bound(spectra, data, d),
            "full_rank": lambda: full_rank_dudley_bound(spectra, data, d),
            "param_covering": lambda: param_count_bound(spectra, data, "covering", d),
            "param_vc": lambda: param_count_bound(spectra, data, "vc", d),
            "bartlett_spectral": lambda: bartlett_spectral_bound(spectra, data, d),
            "neyshabur_pacbayes": lambda: neyshabur_pacbayes_bound(spectra, data, d),
            "golowich_frobenius": lambda: golowich_frobenius_bound(spectra, data, d),
            "path_norm": lambda: _path(2, width=H),
            "path_norm_l1": lambda: _path(1, p=1, input_dim=spectra[0].in_dim, x_inf=x_inf),
        }
        self.results, not_computable = {}, {}
        for name in names:
            r = makers[name]()
            if isinstance(r, str):  # strict=False on layers that do not compose: NaN with the reason
                not_computable[name] = r
                r = BoundResult(name, math.nan, math.nan, {"not_computable": r})
            self.results[name] = r
        if not_computable:
            warnings.warn(
                f"GeneralizationReport.compute: {sorted(not_computable)} not computable (value NaN): "
                + next(iter(not_computable.values())),
                stacklevel=2,
            )
        self.summary = {
            "n": data.n,
            "gamma": data.gamma,
            "B": data.B,
            "empirical_risk": data.empirical_risk,
            "train_error": float(np.mean(m <= 0)),
            "n_layers": len(layers),
            "not_computable": not_computable,
            "layers": [
                {
                    "name": l.name,
                    "kind": l.kind,
                    "shape": list(l.W.shape),
                    "spectral": s.spectral,
                    "r_0.5": s.effective_rank(0.5),
                    "exact_spectrum": l.exact_spectrum,
                    "folded": l.folded,
                }
                for l, s in zip(layers, spectra)
            ],
        }
        return self.results

    def to_markdown(self) -> str:
        """A Markdown table of the computed bounds (log10 value, value) and the margin used."""
        if self.results is None:
            self.compute()
        s = self.summary
        lines = [
            f"Margin bounds at gamma = {s['gamma']:.4g} (empirical ramp loss {s['empirical_risk']:.4f}, "
            f"n = {s['n']}, delta = {self.delta}); 'schatten' and 'exact_rank' are reconstructions.",
            "",
            "| bound | log10 value | value |",
            "|---|---|---|",
        ]
        done = {k: r for k, r in self.results.items() if not math.isnan(r.value)}
        for name, r in sorted(done.items(), key=lambda kv: kv[1].log10_value):
            extra = f" (p = {r.terms['p']:g})" if "p" in r.terms else ""
            lines.append(f"| {name}{extra} | {r.log10_value:.3f} | {r.value:.4g} |")
        for name in sorted(set(self.results) - set(done)):
            lines.append(f"| {name} | not computable | {self.results[name].terms['not_computable']} |")
        return "\n".join(lines) + "\n"

    def __repr__(self) -> str:
        return (
            f"GeneralizationReport(model={type(self.model).__name__}, n={len(self.X)}, "
            f"margin={self.margin!r}, delta={self.delta})"
        )
