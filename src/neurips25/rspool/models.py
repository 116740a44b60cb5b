"""GCN graph classifiers with a swappable readout: a sparse one for users and a dense twin for attacks.

Both follow the paper's backbone (official code, ``src/models/gcn.py``): two GCN layers
``X' = ReLU(D^-1/2 (A + I) D^-1/2 X W)`` without bias, dropout 0.5, the readout, one linear layer to
the classes. :class:`GCN` takes PyG's ``edge_index``; :class:`DenseGCN` takes padded dense adjacency
``[B, N, N]`` so an attack can differentiate through every entry of ``A``. The two share parameter
names, so ``GCN(...).load_state_dict(dense.state_dict())`` gives the same function.
"""

from __future__ import annotations

import numbers

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch_geometric.nn import GCNConv
from torch_geometric.nn.aggr import Aggregation, MaxAggregation, MeanAggregation, SumAggregation

from neurips25.rspool.aggr import RSPoolAggregation
from neurips25.rspool.functional import check_pool_args, rs_pool_dense

__all__ = ["GCN", "DenseGCN", "POOLINGS", "gcn_norm_dense"]

#: readouts the dense model knows; the sparse model also takes any Aggregation instance
POOLINGS = ("rs", "sum", "mean", "max")


def _check_common(owner: str, in_dim: int, num_classes: int, hidden: int, dropout: float,
                  readout_scale: float) -> None:
    for name, val, low in (("in_dim", in_dim, 1), ("num_classes", num_classes, 2), ("hidden", hidden, 1)):
        if isinstance(val, bool) or not isinstance(val, numbers.Integral) or val < low:
            raise ValueError(f"{owner}: `{name}` must be an int >= {low}, got {val!r}")
    if not isinstance(dropout, numbers.Real) or not 0.0 <= dropout < 1.0:
        raise ValueError(f"{owner}: `dropout` must be in [0, 1), got {dropout!r}")
    if not isinstance(readout_scale, numbers.Real) or not readout_scale > 0:
        raise ValueError(f"{owner}: `readout_scale` must be > 0, got {readout_scale!r}")


def gcn_norm_dense(adj: Tensor) -> Tensor:
    """``D^-1/2 (A + I) D^-1/2`` of a batch of adjacency matrices ``[B, N, N]`` (differentiable in A).

    Padding nodes get a self loop of their own, which is harmless: their features are zero.
    """
    n = adj.size(-1)
    a = adj + torch.eye(n, dtype=adj.dtype, device=adj.device)
    d = a.sum(-1).clamp_min(1.0).rsqrt()
    return d.unsqueeze(-1) * a * d.unsqueeze(-2)


class _DenseGCNLayer(nn.Module):
    """``A_hat X W (+ b)`` with the parameter names of ``GCNConv`` (``lin.weight``, ``bias``)."""

    def __init__(self, in_dim: int, out_dim: int, bias: bool) -> None:
        super().__init__()
        self.lin = nn.Linear(in_dim, out_dim, bias=False)
        nn.init.xavier_uniform_(self.lin.weight)  # GCNConv's glorot init
        self.bias = nn.Parameter(torch.zeros(out_dim)) if bias else None

    def forward(self, x: Tensor, adj_hat: Tensor) -> Tensor:
        out = adj_hat @ self.lin(x)
        return out if self.bias is None else out + self.bias


class DenseGCN(nn.Module):
    """Two-layer GCN graph classifier on padded dense batches (the attack target).

    Parameters
    ----------
    in_dim, num_classes : int
        Node-feature width ``F`` and number of classes ``C``.
    hidden : int, default=32
        Width of both GCN layers (32 in the paper's code).
    pooling : {"rs", "sum", "mean", "max"}, default="rs"
        Readout; ``"rs"`` is RS-Pool.
    dropout : float, default=0.5
        Dropout on node embeddings before the readout (train mode only).
    num_iterations, alpha : int, float
        RS-Pool's ``K`` and ``alpha`` (see :class:`~neurips25.rspool.RSPoolAggregation`).
    readout_scale : float, default=1.0
        Multiplies the sum / mean / max readout; ``1 / alpha`` gives every pooling RS-Pool's output
        scale (a control for "is the gain only the 1/alpha scaling?"). Ignored for ``"rs"``.
    bias : bool, default=False
        Bias in the GCN layers (the paper's layers have none).

    Shapes
    ------
    ``forward(x [B, N, F], adj [B, N, N], mask [B, N] bool) -> logits [B, C]``; ``adj`` is the raw
    0/1 (or relaxed, in [0, 1]) symmetric adjacency without self loops; the layers add ``I`` and
    normalise it (a self loop in ``adj`` would be counted twice; the attacks refuse such input).

    Examples
    --------
    >>> from neurips25.rspool.data import ba_2motifs
    >>> x, adj, mask, y = ba_2motifs(4).dense()
    >>> DenseGCN(11, 2)(x, adj, mask).shape
    torch.Size([4, 2])
    """

    def __init__(self, in_dim: int, num_classes: int, hidden: int = 32, pooling: str = "rs",
                 dropout: float = 0.5, num_iterations: int = 2, alpha: float = 20.0,
                 readout_scale: float = 1.0, bias: bool = False) -> None:
        super().__init__()
        _check_common("DenseGCN", in_dim, num_classes, hidden, dropout, readout_scale)
        in_dim, num_classes, hidden = int(in_dim), int(num_classes), int(hidden)
        if pooling not in POOLINGS:
            raise ValueError(f"DenseGCN: `pooling` must be one of {POOLINGS}, got {pooling!r}")
        check_pool_args(num_iterations, alpha, 1e-8, "DenseGCN")
        self.pooling, self.num_iterations, self.alpha = pooling, num_iterations, float(alpha)
        self.readout_scale = float(readout_scale)
        self.conv1 = _DenseGCNLayer(in_dim, hidden, bias)
        self.conv2 = _DenseGCNLayer(hidden, hidden, bias)
        self.dropout = nn.Dropout(dropout)
        self.lin = nn.Linear(hidden, num_classes)

    def embed(self, x: Tensor, adj: Tensor, mask: Tensor | None = None) -> Tensor:
        """Node embeddings ``H`` after both GCN layers, ``[B, N, hidden]`` (padding rows zero)."""
        adj_hat = gcn_norm_dense(adj)  # once for both layers
        h = F.relu(self.conv1(x, adj_hat))
        h = F.relu(self.conv2(h, adj_hat))
        # padding rows: zero features and no edges give zero rows without bias; with bias, mask them
        return h if mask is None or self.conv1.bias is None else h * mask.unsqueeze(-1).to(h.dtype)

    def readout(self, h: Tensor, mask: Tensor | None = None) -> Tensor:
        """Graph embeddings ``[B, hidden]`` from node embeddings ``[B, N, hidden]``."""
        if mask is None:
            mask = torch.ones(h.shape[:2], dtype=torch.bool, device=h.device)
        if self.pooling == "rs":
            return rs_pool_dense(h, mask, self.num_iterations, self.alpha)
        m = mask.unsqueeze(-1).to(h.dtype)
        if self.pooling == "sum":
            g = (h * m).sum(1)
        elif self.pooling == "mean":
            g = (h * m).sum(1) / m.sum(1).clamp_min(1.0)
        else:
            g = h.masked_fill(~mask.unsqueeze(-1), float("-inf")).amax(1)
            g = torch.where(torch.isfinite(g), g, torch.zeros_like(g))  # empty graph -> 0
        return g * self.readout_scale

    def forward(self, x: Tensor, adj: Tensor, mask: Tensor | None = None) -> Tensor:
        if not isinstance(x, Tensor) or not isinstance(adj, Tensor):
            raise TypeError(f"DenseGCN: `x` and `adj` must be torch.Tensors, got {type(x).__name__} and "
                            f"{type(adj).__name__}")
        if x.dim() == 2:
            x, adj = x.unsqueeze(0), adj.unsqueeze(0)
            mask = None if mask is None else mask.unsqueeze(0)
        if x.dim() != 3 or adj.shape != (x.size(0), x.size(1), x.size(1)):
            raise ValueError(f"DenseGCN: expected `x` [B, N, F] and `adj` [B, N, N], got {tuple(x.shape)} "
                             f"and {tuple(adj.shape)}")
        if x.size(-1) != self.conv1.lin.in_features:
            raise ValueError(f"DenseGCN: `x` has {x.size(-1)} features per node, the model was built with "
                             f"in_dim={self.conv1.lin.in_features}")
        h = self.dropout(self.embed(x, adj, mask))
        return self.lin(self.readout(h, mask))


_READOUTS = {"sum": SumAggregation, "mean": MeanAggregation, "max": MaxAggregation}


class GCN(nn.Module):
    """Two-layer GCN graph classifier on PyG batches with any readout (``GCNConv`` + ``Aggregation``).

    Parameters
    ----------
    in_dim, num_classes, hidden, dropout, bias, readout_scale
        As in :class:`DenseGCN`.
    readout : Aggregation or {"rs", "sum", "mean", "max"}, default="rs"
        The graph readout; ``"rs"`` is ``RSPoolAggregation(num_iterations, alpha)``. Any PyG
        aggregation works (``SortAggregation`` would need a wider ``lin``; not handled here).

    Shapes
    ------
    ``forward(x [n, F], edge_index [2, E], batch [n] or None, edge_weight [E] or None) -> [B, C]``

    Examples
    --------
    >>> from torch_geometric.loader import DataLoader
    >>> from neurips25.rspool.data import ba_2motifs
    >>> batch = next(iter(DataLoader(ba_2motifs(4).to_pyg(), batch_size=4)))
    >>> GCN(11, 2)(batch.x, batch.edge_index, batch.batch).shape
    torch.Size([4, 2])
    """

    def __init__(self, in_dim: int, num_classes: int, hidden: int = 32, readout: Aggregation | str = "rs",
                 dropout: float = 0.5, num_iterations: int = 2, alpha: float = 20.0,
                 readout_scale: float = 1.0, bias: bool = False) -> None:
        super().__init__()
        _check_common("GCN", in_dim, num_classes, hidden, dropout, readout_scale)
        in_dim, num_classes, hidden = int(in_dim), int(num_classes), int(hidden)
        if isinstance(readout, str):
            if readout == "rs":
                readout = RSPoolAggregation(num_iterations, alpha)
            elif readout in _READOUTS:
                readout = _READOUTS[readout]()
            else:
                raise ValueError(f"GCN: `readout` must be an Aggregation or one of {POOLINGS}, got "
                                 f"{readout!r}")
        elif not isinstance(readout, Aggregation):
            raise TypeError(f"GCN: `readout` must be a torch_geometric Aggregation, got "
                            f"{type(readout).__name__}")
        self.readout = readout
        self.readout_scale = 1.0 if isinstance(readout, RSPoolAggregation) else float(readout_scale)
        self.conv1 = GCNConv(in_dim, hidden, bias=bias)
        self.conv2 = GCNConv(hidden, hidden, bias=bias)
        self.dropout = nn.Dropout(dropout)
        self.lin = nn.Linear(hidden, num_classes)

    def forward(self, x: Tensor, edge_index: Tensor, batch: Tensor | None = None,
                edge_weight: Tensor | None = None) -> Tensor:
        if not isinstance(x, Tensor) or x.dim() != 2:
            raise ValueError(f"GCN: `x` must be a tensor [n, F], got "
                             f"{tuple(getattr(x, 'shape', ())) or type(x).__name__}")
        if x.size(-1) != self.conv1.in_channels:
            raise ValueError(f"GCN: `x` has {x.size(-1)} features per node, the model was built with "
                             f"in_dim={self.conv1.in_channels}")
        if not isinstance(edge_index, Tensor) or edge_index.dim() != 2 or edge_index.size(0) != 2:
            raise ValueError(f"GCN: `edge_index` must be a tensor [2, E], got "
                             f"{tuple(getattr(edge_index, 'shape', ())) or type(edge_index).__name__}")
        h = F.relu(self.conv1(x, edge_index, edge_weight))
        h = self.dropout(F.relu(self.conv2(h, edge_index, edge_weight)))
        if batch is None:
            batch = torch.zeros(x.size(0), dtype=torch.long, device=x.device)
        g = self.readout(h, batch, dim_size=int(batch.max()) + 1 if batch.numel() else 0)
        return self.lin(g * self.readout_scale)
