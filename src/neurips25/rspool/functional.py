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
  matrix ``[n, d]`` with a ``batch`` vector. When the groups have similar sizes (graph readouts) it
  pads them into ``[B, N_max, d]`` (a view when they are sorted and equal-sized) and calls the dense
  kernel; when padding would cost more than ``PAD_LIMIT`` times the input (a hub node's messages in
  ``MessagePassing(aggr=...)``, where ``N_max`` is the largest in-degree), it runs the same power
  iteration with scatter sums instead, in ``O(n d)`` memory (:func:`_rs_pool_scatter`).

The dense kernel has a hand-written backward (:class:`_RSPoolDense`) that writes ``dL/dH`` once; it
defines ``setup_context`` and a generated vmap rule, so ``torch.func`` transforms (``vmap``,
``jacrev``, per-sample gradients) work through it.

Under ``torch.compile`` (``fullgraph=True`` included) nothing branches on tensor values: the checks on
``index`` / ``batch`` / ``ptr`` values and on non-finite input become in-graph asserts
(``torch._assert_async``, same message, raised when the compiled code runs), and the flat entry points
take the scatter path, whose shapes do not depend on the group sizes (the eager dense/scatter choice
does). Eager calls raise ``ValueError`` as before.
"""

from __future__ import annotations

import numbers

import torch
from torch import Tensor
from torch.autograd.function import once_differentiable

__all__ = ["rs_pool", "rs_pool_dense", "check_pool_args", "PAD_LIMIT"]

#: the flat entry points pad when ``B * N_max <= PAD_LIMIT * n + 64`` rows, else use scatter sums
PAD_LIMIT = 4


def check_pool_args(num_iterations: int, alpha: float, eps: float, owner: str) -> None:
    """Validate RS-Pool's hyper-parameters, naming ``owner`` in the message."""
    if (isinstance(num_iterations, bool) or not isinstance(num_iterations, numbers.Integral)
            or num_iterations < 0):
        raise ValueError(f"{owner}: `num_iterations` must be an int >= 0, got {num_iterations!r}")
    if not isinstance(alpha, numbers.Real) or isinstance(alpha, bool) or not alpha > 0 or alpha != alpha:
        raise ValueError(f"{owner}: `alpha` must be a float > 0, got {alpha!r}")
    if not isinstance(eps, numbers.Real) or isinstance(eps, bool) or not eps > 0:
        raise ValueError(f"{owner}: `eps` must be a float > 0, got {eps!r}")


def _check_features(x: Tensor, name: str, ndim: int, owner: str, nan: bool = True) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{owner}: `{name}` must be a torch.Tensor, got {type(x).__name__}")
    if x.dim() != ndim:
        raise ValueError(f"{owner}: `{name}` must be {ndim}-D, got shape {tuple(x.shape)}")
    if not torch.is_floating_point(x):
        raise TypeError(f"{owner}: `{name}` must be a floating-point tensor, got dtype {x.dtype}")
    if nan and bool(torch.isnan(x).any()):
        raise ValueError(_nan_message(owner, name))


def _check_values(cond, message) -> None:
    """Refuse input whose VALUES break a rule: ``cond()`` a 0-d bool tensor that must be True.

    Eager: ``ValueError(message())`` when it is False. Under ``torch.compile`` the check is an in-graph
    assert with the same message (``torch._assert_async``), so tracing never branches on data
    (``fullgraph=True`` works) and the compiled code still refuses the input when it runs.
    """
    if torch.compiler.is_compiling():
        torch._assert_async(cond(), message(compiled=True))
    elif not bool(cond()):
        raise ValueError(message(compiled=False))


def _nan_message(owner: str, name: str) -> str:
    return f"{owner}: `{name}` contains NaN; RS-Pool of a NaN embedding is undefined"


def _check_finite_sums(s: Tensor, h: Tensor, owner: str, name: str) -> None:
    """Raise if the column sums ``s`` (of ``h``) are not finite: NaN or infinity somewhere in ``h``.

    A ``[B, d]`` check instead of a pass over ``h``. Skipped inside ``torch.func.vmap``, where a
    tensor has no single truth value; an in-graph assert under ``torch.compile``.
    """
    if torch.compiler.is_compiling():
        torch._assert_async(torch.isfinite(s).all(), f"{owner}: `{name}` contains NaN or infinite values "
                            "(or its column sums overflow); RS-Pool needs finite embeddings")
        return
    try:
        bad = not bool(torch.isfinite(s).all())
    except RuntimeError:  # a vmap-batched tensor: data-dependent control flow is not allowed
        return
    if not bad:
        return
    if bool(torch.isnan(h).any()):
        raise ValueError(_nan_message(owner, name))
    if bool(torch.isinf(h).any()):
        raise ValueError(f"{owner}: `{name}` contains infinite values; RS-Pool needs finite embeddings")
    raise ValueError(f"{owner}: the column sums of `{name}` overflow {h.dtype}; rescale the embeddings")


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
    _check_features(h, "h", 3, owner, nan=False)  # NaN is caught cheaply inside the kernel
    if mask is not None:
        if not isinstance(mask, Tensor) or mask.shape != h.shape[:2]:
            raise ValueError(f"{owner}: `mask` must be a bool tensor of shape {tuple(h.shape[:2])}, got "
                             f"{tuple(getattr(mask, 'shape', ())) or type(mask).__name__}")
        h = torch.where(mask.unsqueeze(-1), h, torch.zeros((), dtype=h.dtype))  # drops NaN padding too
    out = _dense_kernel(h, int(num_iterations), float(alpha), float(eps), owner, "h")
    return out[0] if single else out


def _unit(w: Tensor, eps: float) -> tuple[Tensor, Tensor]:
    """``w / (||w|| + eps)`` and ``||w||`` over the last dimension.

    ``+ eps`` as in the official code: a zero vector (empty graph) stays zero, never NaN.
    """
    n = torch.linalg.vector_norm(w, dim=-1, keepdim=True)
    return w / (n + eps), n


def _unit_backward(w: Tensor, n: Tensor, g: Tensor, eps: float) -> Tensor:
    """Vector-Jacobian product of ``w / (||w|| + eps)``: ``g/(n+eps) - w (w.g) / (n (n+eps)^2)``."""
    wg = (w * g).sum(-1, keepdim=True)
    safe = torch.where(n > 0, n, torch.ones_like(n))
    return g / (n + eps) - torch.where(n > 0, w * wg / (safe * (n + eps) ** 2), torch.zeros_like(w))


def _rows_dot(h: Tensor, v: Tensor) -> Tensor:
    """``H v`` per graph, ``[B, N, d] x [B, d] -> [B, N]``.

    A multiply-and-sum: on CPU it is ~4x faster than ``bmm`` for this batched matrix-vector shape
    (while ``u^T H`` is fastest as ``bmm``); measured in benchmarks/rspool.py's setting.
    """
    return (h * v.unsqueeze(1)).sum(-1)


class _RSPoolDense(torch.autograd.Function):
    """RS-Pool on ``h [B, N, d]`` with a hand-written backward.

    Autograd through the power loop writes one ``[B, N, d]`` gradient per matrix-vector product.
    Every term of ``dL/dH`` is an outer product ``a b^T`` per graph, so the backward stacks the
    ``2K + 2`` pairs and writes ``dL/dH`` with a single batched matmul (the same numbers, fewer
    passes over ``H``; checked against autograd by ``gradcheck`` in the tests).

    ``forward`` returns the readout followed by the iterates the backward needs (marked
    non-differentiable), so that ``setup_context`` can save them: the form ``torch.func`` requires.
    First-order only: a double backward raises instead of returning a wrong second derivative.
    """

    generate_vmap_rule = True

    @staticmethod
    def forward(h: Tensor, num_iterations: int, alpha: float, eps: float):
        # Sec. 4 / official code: v0 = 1^T H / ||1^T H||, the sum-pool direction.
        s = h.sum(dim=1)  # [B, d]
        v, n = _unit(s, eps)
        vs, us, ws, ns = [v], [], [], [n]
        for _ in range(num_iterations):
            # v <- H^T (H v) / ||.||: one power step on H^T H
            u = _rows_dot(h, v)  # [B, N]
            w = torch.matmul(u.unsqueeze(1), h).squeeze(1)  # [B, d]
            v, n = _unit(w, eps)
            us.append(u), ws.append(w), vs.append(v), ns.append(n)
        z = _rows_dot(h, v)  # [B, N]: H v_K
        sigma = torch.linalg.vector_norm(z, dim=-1, keepdim=True)  # [B, 1]
        return (v * (sigma / alpha), s, z, sigma, *vs, *us, *ws, *ns)

    @staticmethod
    def setup_context(ctx, inputs, output) -> None:
        h, num_iterations, alpha, eps = inputs
        ctx.mark_non_differentiable(*output[1:])
        ctx.save_for_backward(h, *output[1:])
        ctx.set_materialize_grads(False)  # the iterates get no gradient: do not allocate zeros for them
        ctx.k, ctx.alpha, ctx.eps = num_iterations, alpha, eps

    @staticmethod
    @once_differentiable  # second derivatives would treat the saved iterates as constants: refuse them
    def backward(ctx, g_out: Tensor | None, *_unused):
        if g_out is None:  # only the non-differentiable iterates were used downstream
            return None, None, None, None
        k, alpha, eps = ctx.k, ctx.alpha, ctx.eps
        h, s, z, sigma, *rest = ctx.saved_tensors
        vs, us, ws, ns = rest[:k + 1], rest[k + 1:2 * k + 1], rest[2 * k + 1:3 * k + 1], rest[3 * k + 1:]
        left, right = [], []  # dL/dH = sum_t left_t right_t^T per graph
        g_v = g_out * (sigma / alpha)
        g_sigma = (g_out * vs[-1]).sum(-1, keepdim=True) / alpha
        safe = torch.where(sigma > 0, sigma, torch.ones_like(sigma))
        g_z = torch.where(sigma > 0, g_sigma * z / safe, torch.zeros_like(z))  # sigma = ||z||
        left.append(g_z), right.append(vs[-1])  # z = H v_K
        g_v = g_v + torch.matmul(g_z.unsqueeze(1), h).squeeze(1)
        for i in range(k, 0, -1):
            g_w = _unit_backward(ws[i - 1], ns[i], g_v, eps)  # v_i = unit(w_i)
            left.append(us[i - 1]), right.append(g_w)  # w_i = H^T u_i
            g_u = _rows_dot(h, g_w)
            left.append(g_u), right.append(vs[i - 1])  # u_i = H v_{i-1}
            g_v = torch.matmul(g_u.unsqueeze(1), h).squeeze(1)
        g_s = _unit_backward(s, ns[0], g_v, eps)  # v_0 = unit(s)
        left.append(torch.ones_like(z)), right.append(g_s)  # s = H^T 1
        g_h = torch.matmul(torch.stack(left, -1), torch.stack(right, 1))  # [B, N, T] @ [B, T, d]
        return g_h, None, None, None


def _dense_kernel(h: Tensor, num_iterations: int, alpha: float, eps: float, owner: str, name: str) -> Tensor:
    """Apply :class:`_RSPoolDense` to validated ``h [B, N, d]`` and refuse non-finite input."""
    out, s, *_ = _RSPoolDense.apply(h, num_iterations, alpha, eps)
    _check_finite_sums(s, h, owner, name)
    return out


def _rs_pool_scatter(x: Tensor, batch: Tensor, size: int, num_iterations: int, alpha: float,
                     eps: float) -> Tensor:
    """The same power iteration on flat rows with scatter sums: ``O(n d)`` memory, no padding.

    ``u = H v`` is a row-wise dot with each row's group vector and ``H^T u`` a scatter sum of
    ``u_i x_i`` per group; autograd differentiates it. Used when padding would be large (hub nodes).
    """
    def group_sum(t: Tensor) -> Tensor:
        return t.new_zeros(size, *t.shape[1:]).index_add(0, batch, t)

    s = group_sum(x)  # [B, d]: 1^T H per group
    v, _ = _unit(s, eps)
    for _ in range(num_iterations):
        u = (x * v[batch]).sum(-1, keepdim=True)  # [n, 1]: H v
        v, _ = _unit(group_sum(u * x), eps)  # H^T (H v), normalised
    z = (x * v[batch]).sum(-1, keepdim=True)
    # sigma = ||H v||; the clamp keeps the gradient of sqrt finite for an all-zero group (whose v is 0)
    sigma = group_sum(z * z).clamp_min(torch.finfo(x.dtype).tiny).sqrt()  # [B, 1]
    return v * (sigma / alpha), s


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
    No Python loop over graphs: the groups are zero-padded into one ``[B, N_max, d]`` tensor, which
    is exact for RS-Pool, unless that would exceed ``PAD_LIMIT`` times the input (very unequal group
    sizes), where scatter sums compute the same iteration in ``O(n d)`` memory. ``batch`` need not
    be sorted (RS-Pool is permutation invariant).

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
    _check_features(x, "x", 2, owner, nan=False)  # NaN is caught cheaply inside the kernel
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
    size = _check_index(batch, size, owner, "batch", "size")
    return _rs_pool_flat(x, batch, size, num_iterations, alpha, eps)


def _check_index(index: Tensor, size, owner: str, name: str, size_name: str):
    """Check the group ids ``index`` (>= 0, below ``size``) and return ``size`` (default max + 1)."""
    n = index.numel()
    # under torch.compile ``size`` may be a traced SymInt (PyG passes index.max() + 1): no branch on its value
    symbolic = torch.compiler.is_compiling()
    if size is not None:
        if isinstance(size, bool) or not isinstance(size, (numbers.Integral, torch.SymInt)):
            raise ValueError(f"{owner}: `{size_name}` must be an int >= 0, got {size!r}")
        if symbolic:
            torch._check(size >= 0, lambda: f"{owner}: `{size_name}` must be an int >= 0")
        elif size < 0:
            raise ValueError(f"{owner}: `{size_name}` must be an int >= 0, got {size!r}")
    if n == 0:
        return 0 if size is None else size if symbolic else int(size)
    _check_values(lambda: index.min() >= 0, lambda compiled: f"{owner}: `{name}` must be >= 0, got min "
                  + ("< 0" if compiled else str(int(index.min()))))
    if size is None:
        return int(index.max()) + 1
    _check_values(lambda: index.max() < size, lambda compiled: f"{owner}: `{size_name}` must be an int >= "
                  f"{name}.max() + 1" + ("" if compiled else f" = {int(index.max()) + 1}, got {size!r}"))
    return size if symbolic else int(size)


def to_dense(x: Tensor, batch: Tensor, size: int) -> Tensor:
    """Zero-padded ``[size, N_max, d]`` from rows ``x [n, d]`` grouped by ``batch`` (any order).

    Sorted, equal-sized groups (a common PyG batch) are a free ``view``; otherwise one copy.
    Differentiable in ``x``.
    """
    n, d = x.shape
    counts = torch.bincount(batch, minlength=size)
    n_max = int(counts.max()) if size > 0 and n > 0 else 0
    in_order = n > 0 and bool((batch[1:] >= batch[:-1]).all())  # a PyG batch is sorted by graph
    if in_order and n == size * n_max:
        return x.reshape(size, n_max, d)
    if in_order:  # no sort and no row gather needed
        sorted_batch, rows = batch, x
    else:
        order = torch.argsort(batch, stable=True)
        sorted_batch, rows = batch[order], x[order]
    start = torch.cumsum(counts, 0) - counts  # first row of each group in sorted order
    pos = torch.arange(n, device=x.device) - start[sorted_batch]
    h = x.new_zeros(size, n_max, d)
    return h.index_put((sorted_batch, pos), rows)


def _rs_pool_flat(x: Tensor, batch: Tensor, size: int, num_iterations: int, alpha: float,
                  eps: float, owner: str = "rs_pool", name: str = "x") -> Tensor:
    """The unchecked kernel of :func:`rs_pool` (inputs already validated).

    Pads into ``[size, N_max, d]`` and runs the dense kernel when that costs at most ``PAD_LIMIT``
    times the input's rows; otherwise (skewed group sizes: a hub node's messages) scatter sums.
    """
    if torch.compiler.is_compiling():  # no branch on the group sizes: scatter sums, O(n d), static shapes
        out, s = _rs_pool_scatter(x, batch, size, int(num_iterations), float(alpha), float(eps))
        _check_finite_sums(s, x, owner, name)
        return out
    if size == 0 or x.size(1) == 0:
        return x.new_zeros(size, x.size(1))
    n = x.size(0)
    n_max = int(torch.bincount(batch, minlength=size).max()) if n > 0 else 0
    if size * n_max <= PAD_LIMIT * n + 64:
        return _dense_kernel(to_dense(x, batch, size), int(num_iterations), float(alpha), float(eps),
                             owner, name)
    out, s = _rs_pool_scatter(x, batch, size, int(num_iterations), float(alpha), float(eps))
    _check_finite_sums(s, x, owner, name)
    return out
