"""``RSPoolAggregation``: RS-Pool as a PyTorch Geometric aggregation operator.

Importing this module registers the class with ``torch_geometric.nn.aggr`` so that PyG's
``aggregation_resolver`` finds it: ``SAGEConv(16, 32, aggr="rspool")`` works like ``aggr="sum"``.
"""

from __future__ import annotations

import torch
import torch_geometric.nn.aggr as _pyg_aggr
from torch import Tensor
from torch_geometric.nn.aggr import Aggregation

from neurips25.rspool.functional import (
    _check_features,
    _check_index,
    _check_values,
    _rs_pool_flat,
    check_pool_args,
)

__all__ = ["RSPoolAggregation"]


class RSPoolAggregation(Aggregation):
    r"""Robust singular pooling from "Enhancing Graph Classification Robustness with Singular Pooling"
    (Ennadir et al., NeurIPS 2025).

    Each group (a graph, or a node's incoming messages) with rows :math:`\mathbf{H}` is read out as

    .. math::
        g(\mathbf{H}) = \frac{\sigma_1}{\alpha}\,\mathbf{v}_1, \qquad
        \mathbf{v}^{(0)} = \frac{\mathbf{1}^\top\mathbf{H}}{\lVert\mathbf{1}^\top\mathbf{H}\rVert},\quad
        \mathbf{v}^{(k)} = \frac{\mathbf{H}^\top\mathbf{H}\,\mathbf{v}^{(k-1)}}
                                {\lVert\mathbf{H}^\top\mathbf{H}\,\mathbf{v}^{(k-1)}\rVert},\quad
        \sigma_1 = \lVert\mathbf{H}\mathbf{v}^{(K)}\rVert,

    the dominant right singular pair of :math:`\mathbf{H}` by :math:`K` power steps started from the
    sum-pool direction (the paper's RS-Pool; its implementation uses this power iteration rather than
    an SVD). The start fixes the sign of :math:`\mathbf{v}_1` and keeps gradients finite where
    :math:`\sigma_1 = \sigma_2`, where SVD backward is undefined. :math:`K = 0` is the sum direction.

    Parameters
    ----------
    num_iterations : int, default=2
        Power steps :math:`K` (2 in the paper's GCN code, 5 in its GIN code).
    alpha : float, default=20.0
        Output scale :math:`\alpha`: 20 in the paper's PGD experiment script (the default here); the
        official model class defaults to 1.0. It lowers the readout's Lipschitz constant (the paper
        links it to its robustness bound; reconstructed, see ``docs/rspool.md``).
    eps : float, default=1e-8
        Added to each norm before dividing, so an empty group gives a zero vector, not NaN.

    Shapes
    ------
    - input: ``x`` ``[n, d]``, ``index`` ``[n]`` (any order) or ``ptr`` ``[B + 1]``
    - output: ``[B, d]`` with ``B = dim_size`` (default ``index.max() + 1``)

    Notes
    -----
    Permutation invariant within each group and across groups; no Python loop over groups.
    Backpropagates through the power iteration (what an attack must differentiate through), and
    works under ``torch.func`` (``vmap``, ``jacrev``: per-sample gradients).

    Memory: groups are zero-padded to ``[B, N_max, d]`` (exact for RS-Pool) when that costs at most
    ``PAD_LIMIT`` (4) times the input; with skewed group sizes, e.g. a hub node's incoming messages
    in ``MessagePassing(aggr=...)`` (``N_max`` = its in-degree), the same power iteration runs on
    scatter sums instead, in ``O(n d)`` memory, so a hub never makes memory quadratic.

    The name resolves in PyG: ``aggregation_resolver("rspool")`` (and ``aggr="rspool"`` in any
    ``MessagePassing`` layer) builds this class with its defaults.

    Examples
    --------
    >>> from torch_geometric.nn import global_add_pool
    >>> x = torch.rand(6, 4)
    >>> index = torch.tensor([0, 0, 1, 1, 1, 2])
    >>> out = RSPoolAggregation()(x, index)          # drop-in where SumAggregation() was used
    >>> out.shape
    torch.Size([3, 4])
    >>> bool(torch.allclose(RSPoolAggregation()(x, ptr=torch.tensor([0, 2, 5, 6])), out))
    True
    """

    def __init__(self, num_iterations: int = 2, alpha: float = 20.0, eps: float = 1e-8) -> None:
        check_pool_args(num_iterations, alpha, eps, "RSPoolAggregation")
        super().__init__()
        self.num_iterations = num_iterations
        self.alpha = float(alpha)
        self.eps = float(eps)

    def __call__(self, x: Tensor, index: Tensor | None = None, ptr: Tensor | None = None,
                 dim_size: int | None = None, dim: int = -2, **kwargs) -> Tensor:
        # validate before PyG's own __call__, which would fail on a numpy `x` with an AttributeError
        owner = "RSPoolAggregation"
        _check_features(x, "x", 2, owner, nan=False)
        for name, val in (("index", index), ("ptr", ptr)):
            if val is not None and not isinstance(val, Tensor):
                raise TypeError(f"{owner}: `{name}` must be a torch.Tensor, got {type(val).__name__}")
            if val is not None and (torch.is_floating_point(val) or val.is_complex() or val.dtype == torch.bool):
                raise TypeError(f"{owner}: `{name}` must be an integer tensor, got dtype {val.dtype}")
        return super().__call__(x, index, ptr, dim_size, dim, **kwargs)

    def forward(
        self,
        x: Tensor,
        index: Tensor | None = None,
        ptr: Tensor | None = None,
        dim_size: int | None = None,
        dim: int = -2,
        max_num_elements: int | None = None,
    ) -> Tensor:
        owner = "RSPoolAggregation"
        _check_features(x, "x", 2, owner, nan=False)  # NaN is caught cheaply inside the kernel
        if dim not in (0, -2):
            raise ValueError(f"{owner}: aggregates over the node dimension only (`dim` -2 or 0), got {dim}")
        n = x.size(0)
        if index is None:
            if ptr is None:
                raise ValueError(f"{owner}: one of `index` or `ptr` is required")
            why = f"{owner}: `ptr` must be a non-decreasing 1-D tensor ending at x.size(0) = {n}"
            if ptr.dim() != 1 or ptr.numel() < 1:
                raise ValueError(why)
            # value checks: ValueError eagerly, in-graph asserts under torch.compile (no data-dependent branch)
            _check_values(lambda: (ptr[-1] == n) & (ptr[1:] >= ptr[:-1]).all(), lambda compiled: why)
            counts = ptr[1:] - ptr[:-1]
            index = torch.repeat_interleave(torch.arange(counts.numel(), device=x.device), counts, output_size=n)
        if index.dim() != 1 or index.numel() != n:
            raise ValueError(f"{owner}: `index` must be 1-D with one entry per row of `x` ({n}), "
                             f"got shape {tuple(index.shape)}")
        index = index.long()
        dim_size = _check_index(index, dim_size, owner, "index", "dim_size")
        return _rs_pool_flat(x, index, dim_size, self.num_iterations, self.alpha, self.eps, owner)

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(num_iterations={self.num_iterations}, alpha={self.alpha})"


# PyG's aggregation_resolver looks the name up among the Aggregation classes of torch_geometric.nn.aggr
_pyg_aggr.RSPoolAggregation = RSPoolAggregation
