"""Per-example gradients of Linear layers kept as factors, so GraB balances them without materialising.

For a ``torch.nn.Linear`` layer z = W a + bias, the gradient of example b is rank one,

    grad_W f_b = s * dz_b (x) a_b,      grad_bias f_b = s * dz_b

(Goodfellow 2015; dz_b = dL/dz_b from the ordinary backward, s = B for a mean loss). Everything the
balancing walk needs is then a small product of the factors (Gram-matrix trick of per-example
gradient norms, e.g. Rochette et al. 2019):

    <g_b, g_j> = sum_layers (dz_b . dz_j) (a_b . a_j + 1[bias])            (a B x B matrix)
    <v, g_b>   = sum_layers dz_b^T V a_b + dz_b . v_bias                     (v any d-vector)
    v += sum_b e_b g_b  =  v_W += (e * dz)^T a,  v_bias += dz^T e            (one matmul per layer)

so a block of B examples costs a few matmuls of the factors and a walk on a B x B matrix instead
of B row operations on a (B, d) buffer. :class:`FactoredGrads` holds the factors; the policies'
``observe_factored`` (:mod:`.orderings`) uses it. The walk's signs are those of the row-by-row walk
in exact arithmetic; in floating point they can differ only where <s_b, c_b> is zero to rounding
(float32 rounding of the window's products with ``GraB(window_dtype="float32")``, the default).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch

from neurips25.perm_sgd.orderings import _host

__all__ = ["FactoredGrads"]


class FactoredGrads:
    """B per-example gradients of Linear layers as their factors (activations, output gradients).

    Parameters
    ----------
    layers : sequence of (a, dz, w_offset, bias_offset)
        Per layer: inputs ``a`` (B, in), output gradients ``dz`` (B, out), the offset of the
        weight's out x in block (row-major, as ``W.reshape(-1)``) in the flat d-vector, and the
        offset of the bias block or ``None`` for a layer without bias.
    dim : int
        d, the length of the flat gradient (every trained parameter must be covered by a layer).
    scale : float, default 1.0
        Multiplies every gradient (B for a mean-reduced loss, whose dz carries 1/B).

    Examples
    --------
    >>> a, dz = torch.ones(2, 3), torch.tensor([[1.0], [2.0]])
    >>> F = FactoredGrads([(a, dz, 0, 3)], dim=4)
    >>> F.materialize().tolist()
    [[1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0]]
    >>> F.gram().tolist()
    [[4.0, 8.0], [8.0, 16.0]]
    """

    def __init__(self, layers: Sequence[tuple], dim: int, scale: float = 1.0):
        if not layers:
            raise ValueError("FactoredGrads: layers must hold at least one (a, dz, w_offset, bias_offset)")
        B = layers[0][0].shape[0]
        for a, dz, _, _ in layers:
            if a.ndim != 2 or dz.ndim != 2 or a.shape[0] != B or dz.shape[0] != B:
                raise ValueError(f"FactoredGrads: every layer needs a (B, in) and dz (B, out) with B = {B}, "
                                 f"got {tuple(a.shape)} and {tuple(dz.shape)}")
        self.layers = [(a, dz, int(w), None if b is None else int(b)) for a, dz, w, b in layers]
        self.dim, self.batch, self.scale = int(dim), int(B), float(scale)
        self._numpy = isinstance(layers[0][0], np.ndarray)
        #: per layer, a with a column of ones appended (biased layers of a FactorWindow), or None
        self._aug: list | None = None
        self.dtype = layers[0][0].dtype
        self.device = None if self._numpy else layers[0][0].device
        #: (dim, (in, out, weight offset, bias offset) per layer): blocks with one layout can be stacked
        self.layout = (self.dim,) + tuple((a.shape[1], dz.shape[1], w, b) for a, dz, w, b in self.layers)

    @classmethod
    def _trusted(cls, layers: list, layout: tuple, scale: float) -> FactoredGrads:
        """Build without the checks, for callers whose factors match ``layout`` by construction."""
        F = cls.__new__(cls)
        a0 = layers[0][0]
        F.layers, F.dim, F.batch, F.scale, F.layout = layers, layout[0], int(a0.shape[0]), scale, layout
        F._numpy = isinstance(a0, np.ndarray)
        F._aug = None
        F.dtype = a0.dtype
        F.device = None if F._numpy else a0.device
        return F

    def __repr__(self) -> str:
        return f"FactoredGrads(batch={self.batch}, dim={self.dim}, layers={len(self.layers)})"

    @property
    def shape(self) -> tuple[int, int]:
        return (self.batch, self.dim)

    def to(self, dtype: torch.dtype, device: torch.device | str | None = None) -> FactoredGrads:
        """The same gradients as torch factors in ``dtype`` (the scale folded into dz)."""
        layers = [(torch.as_tensor(a).to(dtype=dtype, device=device),
                   torch.as_tensor(dz).to(dtype=dtype, device=device) * self.scale, w, b)
                  for a, dz, w, b in self.layers]
        return FactoredGrads(layers, self.dim, 1.0)

    def host64(self) -> FactoredGrads:
        """The same gradients as numpy float64 factors (views of one converted buffer), for a host
        state: numpy's small float64 matmuls dispatch several times faster than torch's here."""
        if self._numpy:
            layers = [(a.astype(np.float64), dz.astype(np.float64), w, b) for a, dz, w, b in self.layers]
            return FactoredGrads(layers, self.dim, self.scale)
        parts = [t for a, dz, _, _ in self.layers for t in (a, dz)]
        buf = torch.cat(parts, dim=1).detach().to(device="cpu", dtype=torch.float64).numpy()  # one conversion
        layers, col = [], 0
        for a, dz, w, b in self.layers:
            n_in, n_out = a.shape[1], dz.shape[1]
            layers.append((buf[:, col:col + n_in], buf[:, col + n_in:col + n_in + n_out], w, b))
            col += n_in + n_out
        return FactoredGrads(layers, self.dim, self.scale)

    def slice(self, start: int, stop: int) -> FactoredGrads:
        """Examples ``start:stop`` (views of the factors)."""
        return FactoredGrads([(a[start:stop], dz[start:stop], w, b) for a, dz, w, b in self.layers],
                             self.dim, self.scale)

    def template(self) -> torch.Tensor:
        """An uninitialised d-vector of the factors' dtype and device (fixes a state's library)."""
        if self._numpy:
            return np.empty(self.dim, dtype=self.dtype)
        return torch.empty(self.dim, dtype=self.dtype, device=self.device)

    # the products below use only operations numpy arrays and torch tensors share
    def gram(self):
        """<g_b, g_j> for all pairs, shape (B, B)."""
        K = None
        for a, dz, _, b in self.layers:
            ka = a @ a.T
            if b is not None:
                ka += 1.0
            ka *= dz @ dz.T
            K = ka if K is None else K.__iadd__(ka)
        return K * (self.scale * self.scale) if self.scale != 1.0 else K

    def dots(self, V):
        """<v_k, g_b> for the rows v_k of V (k, d), shape (k, B)."""
        out = None
        k = V.shape[0]
        for a, dz, w, b in self.layers:
            n_out, n_in = dz.shape[1], a.shape[1]
            t = ((dz @ V[:, w:w + n_out * n_in].reshape(k, n_out, n_in)) * a).sum(2)  # dz_b^T V_k a_b
            if b is not None:
                t += V[:, b:b + n_out] @ dz.T
            out = t if out is None else out.__iadd__(t)
        return out * self.scale if self.scale != 1.0 else out

    def add_to(self, vs, coef) -> None:
        """vs[k] += sum_b coef[k, b] g_b in place, for d-vectors vs[k] and coef of shape (k, B)."""
        C = coef * self.scale if self.scale != 1.0 else coef
        for a, dz, w, b in self.layers:
            n_out, n_in = dz.shape[1], a.shape[1]
            E = C[:, :, None] * dz  # (k, B, out)
            upd = E.swapaxes(1, 2) @ a  # (k, out, in): sum_b coef_kb dz_b (x) a_b
            if b is not None:
                bias = E.sum(1)
            for i, v in enumerate(vs):
                vw = v[w:w + n_out * n_in].reshape(n_out, n_in)  # a view of the contiguous state
                vw += upd[i]
                if b is not None:
                    v[b:b + n_out] += bias[i]

    def materialize(self):
        """The (B, d) matrix of the gradients (the row walk's input)."""
        if self._numpy:
            out = np.zeros((self.batch, self.dim), dtype=self.dtype)
        else:
            out = torch.zeros(self.batch, self.dim, dtype=self.dtype, device=self.device)
        for a, dz, w, b in self.layers:
            n_out, n_in = dz.shape[1], a.shape[1]
            dzs = dz * self.scale if self.scale != 1.0 else dz
            block = out[:, w:w + n_out * n_in].reshape(self.batch, n_out, n_in)  # a view of out
            if self._numpy:
                np.multiply(dzs[:, :, None], a[:, None, :], out=block)
            else:
                torch.mul(dzs[:, :, None], a[:, None, :], out=block)
            if b is not None:
                out[:, b:b + n_out] = dzs
        return out

    def row(self, b: int):
        """The d-vector g_b."""
        return self.slice(b, b + 1).materialize()[0]


class FactorWindow:
    """Consecutive host blocks of :class:`FactoredGrads` collected in one buffer.

    GraB's walk over the examples of a window is the same sequence of signs whichever way the
    window is cut into blocks (the state carries everything between blocks), so balancing ``rows``
    examples at once replaces ``rows / B`` rounds of small products by one round of larger ones.
    A block is copied as it arrives (CPU float tensors: one ``torch.cat`` into the window's rows
    in their own dtype, a column of ones after each biased layer's inputs) and checked for NaN /
    inf; :meth:`take` converts float32 rows to float64 in one pass (exact) and applies the scales
    (one pass per layer), or hands out the float32 rows as they arrived (``take(float32=True)``,
    for ``GraB(window_dtype="float32")``) when every block has the same scale. Memory: ``rows *
    sum_layers (in + 1 + out)`` float64, and as many float32 for float32 blocks (the factors only,
    never a (rows, d) matrix).
    """

    def __init__(self, rows: int):
        self.rows = int(rows)
        self.count = 0
        self._key: tuple | None = None
        self._kind: tuple | None = None  # (torch dtype or None) of the raw buffer
        self._raw: torch.Tensor | np.ndarray | None = None  # the buffer, as a torch view for torch.cat
        self._raw_np: np.ndarray | None = None  # the buffer as numpy
        self._rows_at: dict = {}  # (first row, B) -> the torch view torch.cat writes into
        self._buf: np.ndarray | None = None  # (rows, cols) float64: what take() hands out
        self._cols: list[tuple[int, int, int]] = []  # per layer: first column of a, of dz, end
        self._blocks: list[tuple[int, int, float]] = []  # (first row, B, scale) per pending block
        self._ones: dict = {}  # B -> a (B, 1) column of ones in the buffer's dtype
        self._zeros: dict = {}  # (size, dtype) -> a zero vector (the NaN / inf check)
        self._indices: list[np.ndarray] = []

    def fits(self, F: FactoredGrads) -> bool:
        """Whether ``F`` can join the pending blocks (same layers, room left)."""
        return (self.count == 0 or (F.layout == self._key and _kind(F) == self._kind)) \
            and self.count + F.batch <= self.rows

    def _layout(self, key: tuple, kind: tuple) -> None:
        # per layer: a, then a column of ones when the layer has a bias, then dz
        cols, col = [], 0
        for n_in, n_out, _, b in key[1:]:
            one = b is not None
            cols.append((col, col + n_in + one, col + n_in + one + n_out))
            col += n_in + one + n_out
        if self._buf is None or self._buf.shape[1] != col or kind != self._kind:
            self._buf = np.empty((self.rows, col))
            # CPU float32 tensors: torch.cat writes them (same dtype: a plain copy, ~6x faster than
            # a converting cat) into a float32 staging buffer through a torch view of it, and take()
            # converts the window to float64 in one pass (exact); float64 tensors go straight into
            # the float64 buffer; other factors are converted on arrival
            self._raw_np = np.empty((self.rows, col), dtype=np.float32) \
                if kind[0] == torch.float32 else self._buf
            self._raw = self._buf if kind[0] is None else torch.from_numpy(self._raw_np)
            self._rows_at, self._ones = {}, {}
        self._key, self._kind, self._cols = key, kind, cols

    def _parts(self, F: FactoredGrads, torch_kind: bool) -> list:
        """The blocks of one window row block, in column order (ones columns included)."""
        ones = self._ones.get(F.batch)
        if ones is None:
            ones = self._ones[F.batch] = (torch.ones(F.batch, 1, dtype=self._kind[0]) if torch_kind
                                          else np.ones((F.batch, 1)))
        parts = []
        for a, dz, _, b in F.layers:
            parts += (a, ones, dz) if b is not None else (a, dz)
        return parts

    def append(self, indices: np.ndarray, F: FactoredGrads) -> None:
        """Copy ``F``'s factors into the window; ValueError on NaN / inf (the block is then not kept)."""
        kind = _kind(F)
        if self.count == 0 and (F.layout != self._key or kind != self._kind):
            self._layout(F.layout, kind)
        B, r = F.batch, self.count
        src = self._raw_np[r:r + B]
        if kind[0] is not None:  # CPU float tensors: one concatenation straight into the window
            dst = self._rows_at.get((r, B))
            if dst is None:
                dst = self._rows_at[(r, B)] = self._raw[r:r + B]
            parts = self._parts(F, True)
            try:
                torch.cat(parts, dim=1, out=dst)
            except RuntimeError:  # factors that require grad
                torch.cat([t.detach() for t in parts], dim=1, out=dst)
        elif F._numpy:
            np.concatenate(self._parts(F, False), axis=1, out=src)
        else:
            parts = [_host(t) if torch.is_tensor(t) else t for t in self._parts(F, False)]  # bf16 via float32
            np.concatenate(parts, axis=1, out=src)
        flat = src.reshape(-1)  # rows of the C-contiguous buffer: a view
        zeros = self._zeros.get((flat.size, flat.dtype))
        if zeros is None:
            zeros = self._zeros[(flat.size, flat.dtype)] = np.zeros(flat.size, dtype=flat.dtype)
        # 0 * x is NaN exactly when x is NaN or +-inf, and a sum of zeros cannot overflow: one BLAS dot
        if not math.isfinite(float(flat @ zeros)):
            raise ValueError("grads contain NaN or inf")
        self._blocks.append((r, B, F.scale))
        self._indices.append(indices)
        self.count += B

    def take(self, float32: bool = False) -> tuple[np.ndarray, FactoredGrads]:
        """The pending examples' indices and gradients (float64 views of the buffer, scales
        applied); the window is empty afterwards. With ``float32`` and float32 rows that share one
        scale: the float32 rows as they arrived instead (views, dz unscaled, the scale in F.scale),
        nothing converted."""
        n, buf = self.count, self._buf
        scales = {sc for _, _, sc in self._blocks}
        if float32 and self._raw_np is not buf and len(scales) == 1:
            raw = self._raw_np
            layers, aug = [], []
            for (a0, z0, z1), (n_in, _, w, b) in zip(self._cols, self._key[1:]):
                layers.append((raw[:n, a0:a0 + n_in], raw[:n, z0:z1], w, b))
                aug.append(None if b is None else raw[:n, a0:z0])
            indices = np.concatenate(self._indices) if len(self._indices) > 1 else self._indices[0]
            self.count, self._indices, self._blocks = 0, [], []
            F = FactoredGrads._trusted(layers, self._key, next(iter(scales)))
            F._aug = aug
            return indices, F
        if self._raw_np is not buf:
            np.copyto(buf[:n], self._raw_np[:n])  # float32 -> float64 (exact)
        for _, z0, z1 in self._cols:  # dz *= scale (one pass per layer when the blocks share it)
            if len(scales) == 1:
                sc = next(iter(scales))
                if sc != 1.0:
                    buf[:n, z0:z1] *= sc
            else:
                for r, B, sc in self._blocks:
                    if sc != 1.0:
                        buf[r:r + B, z0:z1] *= sc
        layers, aug = [], []
        for (a0, z0, z1), (n_in, _, w, b) in zip(self._cols, self._key[1:]):
            layers.append((buf[:n, a0:a0 + n_in], buf[:n, z0:z1], w, b))
            aug.append(None if b is None else buf[:n, a0:z0])  # a with its ones column
        indices = np.concatenate(self._indices) if len(self._indices) > 1 else self._indices[0]
        self.count, self._indices, self._blocks = 0, [], []
        F = FactoredGrads._trusted(layers, self._key, 1.0)
        F._aug = aug
        return indices, F


def _kind(F: FactoredGrads) -> tuple:
    """How a block is copied into a window: (dtype,) for CPU float32 / float64 tensors, else (None,)."""
    if not F._numpy and F.device.type == "cpu" and F.dtype in (torch.float32, torch.float64):
        return (F.dtype,)
    return (None,)
