"""RS-Pool as plain torch functions: no PyTorch Geometric needed.

RS-Pool (Ennadir et al., NeurIPS 2025) reads a graph out as its dominant singular direction,

    g(H) = (sigma_1 / alpha) * v_1,      H = sum_k sigma_k u_k v_k^T,   H in R^{n x d},

computed by ``K`` power-iteration steps on ``H^T H`` started from the normalised sum-pool vector
``1^T H / ||1^T H||``. Starting from the sum direction fixes the sign of ``v_1`` (it is
nonnegative when ``H >= 0``, by Perron-Frobenius) and makes a small ``K`` enough.

Two entry points share one kernel:

- :func:`rs_pool_dense` on a padded batch ``[B, N, d]`` (zero padding rows change neither
  ``H^T H`` nor ``1^T H``, so padding is exact);
- :func:`rs_pool`, the functional twin of ``torch_geometric.nn.global_add_pool``, on a flat node
  matrix ``[n, d]`` with a ``batch`` vector. It never pads: every power step is a row-wise dot and
  an ``index_add_``, so the cost is linear in the number of nodes.
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["rs_pool", "rs_pool_dense", "check_pool_args"]


def check_pool_args(num_iterations: int, alpha: float, eps: float, owner: str) -> None:
    """Validate RS-Pool's hyper-parameters, naming ``owner`` in the message."""
    if isinstance(num_iterations, bool) or not isinstance(num_iterations, int) or num_iterations < 0:
        raise ValueError(f"{owner}: `num_iterations` must be an int >= 0, got {num_iterations!r}")
    if not isinstance(alpha, (int, float)) or isinstance(alpha, bool) or not alpha > 0 or alpha != alpha:
        raise ValueError(f"{owner}: `alpha` must be a float > 0, got {alpha!r}")
    if not isinstance(eps, (int, float)) or isinstance(eps, bool) or not eps > 0:
        raise ValueError(f"{owner}: `eps` must be a float > 0, got {eps!r}")


def _check_features(x: Tensor, name: str, ndim: int, owner: str) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{owner}: `{name}` must be a torch.Tensor, got {type(x).__name__}")
    if x.dim() != ndim:
        raise ValueError(f"{owner}: `{name}` must be {ndim}-D, got shape {tuple(x.shape)}")
    if not torch.is_floating_point(x):
        raise TypeError(f"{owner}: `{name}` must be a floating-point tensor, got dtype {x.dtype}")
    if bool(torch.isnan(x).any()):
        raise ValueError(f"{owner}: `{name}` contains NaN; RS-Pool of a NaN embedding is undefined")


def _normalize(v: Tensor, eps: float) -> Tensor:
    # ||v|| + eps as in the official code: a zero vector (empty graph) stays zero, never NaN.
    return v / (torch.linalg.vector_norm(v, dim=-1, keepdim=True) + eps)


def rs_pool_dense(
    h: Tensor,
    mask: Tensor | None = None,
    num_iterations: int = 2,
    alpha: float = 20.0,
    eps: float = 1e-8,
) -> Tensor:
    r"""RS-Pool on a padded batch of node-embedding matrices.

    Parameters
    ----------
    h : Tensor, shape ``[B, N, d]`` (or ``[N, d]`` for one graph)
        Node embeddings; rows beyond a graph's node count must be zero or masked out.
    mask : Tensor of bool, shape ``[B, N]``, optional
        ``True`` for real nodes. Padding rows are zeroed, which is exact for RS-Pool.
    num_iterations : int, default=2
        Power steps ``K`` on ``H^T H`` (2 in the paper's GCN, 5 in its GIN).
    alpha : float, default=20.0
        Output scale ``alpha`` (``value_alpha`` = 20 in the paper's PGD script).
    eps : float, default=1e-8
        Added to every norm before dividing.

    Returns
    -------
    Tensor, shape ``[B, d]`` (``[d]`` for one graph)
        ``sigma_1 v_1 / alpha`` per graph; exactly zero for an all-zero (empty) graph.

    Examples
    --------
    >>> h = torch.tensor([[[1.0, 0.0], [1.0, 0.0]]])   # one graph, rank 1, sigma_1 = sqrt(2)
    >>> rs_pool_dense(h, alpha=1.0)
    tensor([[1.4142, 0.0000]])
    """
    owner = "rs_pool_dense"
    check_pool_args(num_iterations, alpha, eps, owner)
    single = isinstance(h, Tensor) and h.dim() == 2
    if single:
        h = h.unsqueeze(0)
    _check_features(h, "h", 3, owner)
    if mask is not None:
        if mask.shape != h.shape[:2]:
            raise ValueError(f"{owner}: `mask` must have shape {tuple(h.shape[:2])}, got {tuple(mask.shape)}")
        h = h * mask.unsqueeze(-1).to(h.dtype)
    # Sec. 4 / official code: v0 = 1^T H / ||1^T H||, the sum-pool direction.
    v = _normalize(h.sum(dim=1), eps)  # [B, d]
    for _ in range(num_iterations):
        # v <- H^T (H v), normalised: one power step on H^T H.
        hv = torch.matmul(h, v.unsqueeze(-1))  # [B, N, 1]
        v = _normalize(torch.matmul(hv.transpose(1, 2), h).squeeze(1), eps)  # [B, d]
    sigma = torch.linalg.vector_norm(torch.matmul(h, v.unsqueeze(-1)).squeeze(-1), dim=-1, keepdim=True)
    out = v * (sigma / alpha)
    return out[0] if single else out


def rs_pool(
    x: Tensor,
    batch: Tensor | None = None,
    num_iterations: int = 2,
    alpha: float = 20.0,
    size: int | None = None,
    eps: float = 1e-8,
) -> Tensor:
    r"""Graph-level RS-Pool readout, the functional twin of ``global_add_pool(x, batch, size)``.

    For graph ``g`` with node embeddings ``H_g`` (the rows of ``x`` with ``batch == g``) it returns
    ``sigma_1(H_g) v_1(H_g) / alpha`` by ``num_iterations`` power steps from ``1^T H_g``.
    No padding and no Python loop over graphs: each step is a row-wise dot product ``H_g v_g`` and a
    scatter-add of ``H_g^T (H_g v_g)``. ``batch`` need not be sorted (RS-Pool is permutation
    invariant).

    Parameters
    ----------
    x : Tensor, shape ``[n, d]``
        Node embeddings of all graphs in the batch.
    batch : LongTensor, shape ``[n]``, optional
        Graph id of each node, in ``[0, size)``. ``None`` means one graph.
    num_iterations : int, default=2
        Power steps ``K``.
    alpha : float, default=20.0
        Output scale ``alpha``.
    size : int, optional
        Number of graphs ``B``; defaults to ``batch.max() + 1``. Graphs with no node get zeros.
    eps : float, default=1e-8
        Added to every norm before dividing.

    Returns
    -------
    Tensor, shape ``[B, d]``

    Examples
    --------
    >>> x = torch.tensor([[3.0, 0.0], [0.0, 1.0], [2.0, 2.0]])
    >>> rs_pool(x, torch.tensor([0, 0, 1]), num_iterations=50, alpha=1.0)
    tensor([[3.0000, 0.0000],
            [2.0000, 2.0000]])
    """
    owner = "rs_pool"
    check_pool_args(num_iterations, alpha, eps, owner)
    _check_features(x, "x", 2, owner)
    n = x.size(0)
    if batch is None:
        batch = torch.zeros(n, dtype=torch.long, device=x.device)
    if not isinstance(batch, Tensor) or batch.dim() != 1 or batch.dtype not in (torch.long, torch.int32):
        raise ValueError(f"{owner}: `batch` must be a 1-D integer tensor, got "
                         f"{getattr(batch, 'dtype', type(batch).__name__)} of shape "
                         f"{tuple(getattr(batch, 'shape', ()))}")
    if batch.numel() != n:
        raise ValueError(f"{owner}: `batch` must have one entry per row of `x` ({n}), got {batch.numel()}")
    batch = batch.long()
    if n > 0 and int(batch.min()) < 0:
        raise ValueError(f"{owner}: `batch` must be >= 0, got min {int(batch.min())}")
    needed = int(batch.max()) + 1 if n > 0 else 0
    if size is None:
        size = needed
    elif not isinstance(size, int) or size < needed:
        raise ValueError(f"{owner}: `size` must be an int >= batch.max() + 1 = {needed}, got {size!r}")
    return _rs_pool_flat(x, batch, size, num_iterations, alpha, eps)


def _rs_pool_flat(x: Tensor, batch: Tensor, size: int, num_iterations: int, alpha: float,
                  eps: float) -> Tensor:
    """The unchecked kernel of :func:`rs_pool` (inputs already validated)."""
    d = x.size(1)

    def scatter_sum(src: Tensor) -> Tensor:
        return src.new_zeros(size, *src.shape[1:]).index_add_(0, batch, src)

    v = _normalize(scatter_sum(x), eps)  # [B, d]: v0 = 1^T H_g / ||1^T H_g||
    for _ in range(num_iterations):
        hv = (x * v.index_select(0, batch)).sum(dim=-1, keepdim=True)  # [n, 1]: (H_g v_g) row by row
        v = _normalize(scatter_sum(x * hv), eps)  # [B, d]: H_g^T (H_g v_g)
    hv = (x * v.index_select(0, batch)).sum(dim=-1)  # [n]
    sq = scatter_sum(hv * hv).unsqueeze(-1)  # [B, 1]: ||H_g v_g||^2
    # sqrt'(0) is infinite; the double `where` keeps an empty graph's gradient at 0, not NaN.
    positive = sq > 0
    sigma = torch.where(positive, torch.sqrt(torch.where(positive, sq, torch.ones_like(sq))), torch.zeros_like(sq))
    if d == 0:
        return x.new_zeros(size, 0)
    return v * (sigma / alpha)
