"""Permutation policies: the order in which an epoch visits the n examples (or clients, or blocks).

Every policy speaks one protocol, the one permutation-based SGD needs (Li, Lyu & Liu, NeurIPS 2025):

- ``next_epoch() -> np.ndarray`` starts epoch q and returns its order pi_q, shape ``(n,)``;
- ``observe(index, grad)`` is called once per visited unit, in the order of pi_q, with the gradient
  vector that the SGD step used. Policies whose order does not depend on gradients only validate it.

The three categories of the unified analysis map to the classes below:

========================  ==========================================================  =============
category                  policies                                                    order error
========================  ==========================================================  =============
arbitrary                 :class:`Incremental` (any fixed order), :class:`ShuffleOnce`  O(n)
independent               :class:`RandomReshuffling`, :class:`FlipFlop`                O(sqrt(n))
dependent (stale grads)   :class:`GraB`, :class:`PairGraB`                             O~(1)
========================  ==========================================================  =============

:class:`WithReplacement` is the i.i.d. sampling baseline; its ``next_epoch`` is not a permutation.

Gradients may be numpy arrays or torch tensors (any shape; they are flattened). The balancing state of
:class:`GraB` / :class:`PairGraB` is numpy float64 for host gradients (numpy arrays, CPU tensors viewed
without a copy) and a torch tensor on the gradient's device for accelerator tensors, so a CUDA
training loop never copies gradients to the host. Half-precision gradients (bfloat16, float16) are
balanced in float32 or wider: on the host they are converted to float32 (exact) on arrival, on an
accelerator the state is float32.
"""

from __future__ import annotations

import math
import numbers
import sys
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = [
    "PermutationPolicy",
    "Incremental",
    "ShuffleOnce",
    "RandomReshuffling",
    "FlipFlop",
    "WithReplacement",
    "GraB",
    "PairGraB",
]


# ---------------------------------------------------------------- small array helpers (numpy | torch)

def _is_torch(x: Any) -> bool:
    return hasattr(x, "detach") and hasattr(x, "numel")


def _flatten(grad: Any, name: str) -> Any:
    """A 1-D view of ``grad`` (numpy float array or detached torch tensor)."""
    if _is_torch(grad):
        return grad.detach().reshape(-1)
    try:
        arr = np.asarray(grad, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name}: grad must be a numpy array or torch tensor of numbers, "
                        f"got {type(grad).__name__}") from err
    return arr.reshape(-1)


def _host(t: Any) -> np.ndarray:
    """A CPU torch tensor as a numpy array (a view where numpy holds its dtype). Half-precision
    tensors (bfloat16, which numpy cannot hold, and float16) come back as float32, an exact copy,
    so the balancing walk never runs in half precision."""
    t = t.detach()
    if t.is_floating_point() and t.element_size() < 4:
        t = t.float()
    return t.cpu().numpy()


def _state_dtype(dtype: Any) -> Any:
    """The float dtype of an accelerator state for gradients of ``dtype``: float32 or wider."""
    torch = sys.modules["torch"]
    if not dtype.is_floating_point:
        return torch.float32
    return torch.float32 if dtype.itemsize < 4 else dtype


def _size(grad: Any) -> int:
    return int(grad.numel()) if _is_torch(grad) else int(np.size(grad))


def _zeros_like(v: Any) -> Any:
    """A float zero vector for the balancing state: numpy float64 for host data (numpy arrays and CPU
    tensors, whose ``.numpy()`` views cost nothing and whose small ops dispatch faster), torch on
    the tensor's device for accelerator tensors, in its float dtype (float32 for half precision)."""
    if _is_torch(v) and v.device.type != "cpu":
        torch = sys.modules["torch"]
        return torch.zeros(v.shape, dtype=_state_dtype(v.dtype), device=v.device)
    return np.zeros(v.shape, dtype=np.float64)


def _like(v: Any, ref: Any) -> Any:
    """Convert ``v`` to the library / device / dtype of the state vector ``ref``."""
    if _is_torch(ref):
        torch = sys.modules["torch"]
        return torch.as_tensor(v, dtype=ref.dtype, device=ref.device)
    if _is_torch(v):
        return _host(v)
    return v


def _zero(v: Any) -> None:
    """Set a numpy array or torch tensor to zero in place."""
    if _is_torch(v):
        v.zero_()
    else:
        v.fill(0.0)


_CONTROLLER = None


def _blas_one_thread():
    """Context capping BLAS at one thread (threadpoolctl): the balancers' small products would otherwise
    let a multithreaded BLAS spin its threads, 20-100x slower on a busy machine."""
    global _CONTROLLER
    if _CONTROLLER is None:
        from threadpoolctl import ThreadpoolController

        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER.limit(limits=1, user_api="blas")


def _walk_block(C: Any, s: Any, sign: Callable[[float, float], bool] | None = None) -> np.ndarray:
    """Signs of the balancing walk over the rows of C (B, d), starting from the sum s (updated).

    Returns a boolean array, True for eps_b = +1. ``sign(dot, sq)`` gets <s_b, c_b> and ||c_b||^2
    and returns True for +1; ``None`` is the deterministic rule <s_b, c_b> <= 0, run as a tight
    loop. Host (numpy) states run the walk row by row with the same two float64 BLAS-1 calls
    (``s @ c``, ``s += c``) as a sequence of :meth:`PermutationPolicy.observe` calls, so the signs and
    s are bit-identical to them: O(B d) work, cheaper than a Gram matrix (O(B^2 d)) once d is more
    than a few times B. On a NaN / inf the walk raises ValueError and leaves s as it was.
    Accelerator tensors use <s_b, c_b> = <s, c_b> + sum_{j<b} eps_j <c_j, c_b> from one Gram matrix
    (two kernels, then a scalar loop).
    """
    B = C.shape[0]
    plus = np.zeros(B, dtype=bool)
    if not _is_torch(C):
        s0 = s.copy()
        dot = s.dot
        if sign is None:
            for b, c in enumerate(C):  # the sequential walk; signs cannot be batched exactly
                v = dot(c)
                if v <= 0.0:
                    s += c
                    plus[b] = True
                elif v > 0.0:
                    s -= c
                else:  # NaN: restore s before raising
                    s[:] = s0
                    raise ValueError("grads contain NaN or inf")
        else:
            sq = np.einsum("ij,ij->i", C, C)
            for b, c in enumerate(C):
                v = float(dot(c))
                if not (np.isfinite(v) and np.isfinite(sq[b])):
                    s[:] = s0
                    raise ValueError("grads contain NaN or inf")
                if sign(v, float(sq[b])):
                    s += c
                    plus[b] = True
                else:
                    s -= c
        if not np.isfinite(s).all():  # an inf entry passes the sign test but leaves s non-finite
            s[:] = s0
            raise ValueError("grads contain NaN or inf")
        return plus
    dots0, gram = C @ s, C @ C.T
    plus = _walk_gram(dots0.double().cpu().numpy(), gram.double().cpu().numpy(), sign)
    s += _like(np.where(plus, 1.0, -1.0), s) @ C
    return plus


def _walk_gram(dots0: np.ndarray, gram: np.ndarray, sign: Callable[[float, float], bool] | None = None) -> np.ndarray:
    """Signs of the balancing walk from inner products only: <s_b, c_b> = <s_0, c_b> + sum_{j<b} eps_j <c_j, c_b>.

    ``dots0`` (B,) holds <s_0, c_b>, ``gram`` (B, B) the <c_j, c_b>; O(B^2) scalar work, no d.
    Raises ValueError on a non-finite entry before any sign is drawn.
    """
    if not (np.isfinite(dots0).all() and np.isfinite(gram).all()):
        raise ValueError("grads contain NaN or inf")
    B = dots0.shape[0]
    v = dots0.astype(np.float64)  # a copy: v[b] becomes <s_b, c_b> once the signs before b are known
    if sign is None:
        return _walk_deterministic(v, gram)
    plus = np.zeros(B, dtype=bool)
    rows = list(gram)  # the row views, made once
    for b in range(B):
        plus[b] = sign(v.item(b), gram.item(b, b))
        if plus[b]:
            v += rows[b]
        else:
            v -= rows[b]
    return plus


def _walk_deterministic(v: np.ndarray, gram: np.ndarray) -> np.ndarray:
    """The deterministic walk eps_b = +1 iff v_b <= 0, then v <- v + eps_b gram[b] (v updated in place).

    One scalar read and one vector operation per step on precomputed row views: the sequential
    part of the walk, O(B^2) flops in B numpy calls.
    """
    B = v.shape[0]
    plus = np.zeros(B, dtype=bool)
    item = v.item
    for b, row in enumerate(list(gram)):
        if item(b) <= 0.0:
            plus[b] = True
            v += row
        else:
            v -= row
    return plus


def _walk_centred(dots0: np.ndarray, gram: np.ndarray, gm: np.ndarray, mm: float,
                  sign: Callable[[float, float], bool] | None = None) -> np.ndarray:
    """The walk of :func:`_walk_gram` on the centred vectors c_b = g_b - m, from the raw Gram matrix.

    ``gram`` holds <g_j, g_b> (only entries j < b are read, row by row), ``gm`` the <m, g_b>,
    ``mm`` = <m, m> and ``dots0`` the <s_0, c_b>. With <c_j, c_b> = <g_j, g_b> - gm_j - gm_b + mm,
    v_b = dots0_b + sum_{j<b} eps_j <g_j, g_b> - sum_{j<b} eps_j gm_j - (sum_{j<b} eps_j)(gm_b - mm):
    the vector part takes one row operation per step and the two sums are scalars, so the
    (B, B) matrix is never centred (two passes over it saved). Raises ValueError on a non-finite
    ``dots0`` / ``gm`` (the factors themselves are checked when they arrive).
    """
    if not (np.isfinite(dots0).all() and np.isfinite(gm).all() and math.isfinite(mm)):
        raise ValueError("grads contain NaN or inf")
    B = dots0.shape[0]
    v = dots0.astype(np.float64)
    plus = np.zeros(B, dtype=bool)
    item = v.item
    g, h = gm.tolist(), (gm - mm).tolist()
    acc_g = acc_e = 0.0  # sum_{j<b} eps_j gm_j, sum_{j<b} eps_j
    for b, row in enumerate(list(gram)):
        x = item(b) - acc_g - acc_e * h[b]
        if sign is None:
            up = x <= 0.0
        else:
            up = sign(x, gram.item(b, b) - g[b] - h[b])  # <c_b, c_b> = <g_b, g_b> - 2 gm_b + mm
        if up:
            plus[b] = True
            v += row
            acc_g += g[b]
            acc_e += 1.0
        else:
            v -= row
            acc_g -= g[b]
            acc_e -= 1.0
    return plus


def _check_n(n: Any, owner: str) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"{owner}: n must be an int >= 1, got {type(n).__name__}")
    if n < 1:
        raise ValueError(f"{owner}: n must be >= 1, got {n}")
    return int(n)


def _check_seed(seed: Any, owner: str) -> None:
    if seed is None:
        return
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"{owner}: seed must be None or an int >= 0, got {seed!r}")


# ---------------------------------------------------------------- the protocol

class PermutationPolicy:
    """Base class of all orderings: validated ``next_epoch`` / ``observe`` bookkeeping.

    Subclasses implement ``_make_order(epoch)`` and, when the order depends on gradients,
    ``_observe(position, index, vec)`` and ``_end_epoch(observed)``.

    Parameters
    ----------
    n : int
        Number of units permuted each epoch (examples, minibatch blocks or clients), ``n >= 1``.
    seed : int or None, default None
        Seeds the policy's own ``numpy.random.Generator``; the same seed gives the same orders.

    Attributes
    ----------
    epoch : int
        Index q of the current epoch (-1 before the first ``next_epoch``).
    order : np.ndarray of shape (n,)
        The current epoch's order (read-only).
    position : int
        How many units of the current epoch have been observed.
    """

    #: True when the next order depends on observed gradients (the "dependent" category)
    uses_gradients: bool = False
    #: False only for the with-replacement baseline
    is_permutation: bool = True

    def __init__(self, n: int, seed: int | None = None):
        name = type(self).__name__
        self.n = _check_n(n, name)
        _check_seed(seed, name)
        self.seed = seed
        self._rng = np.random.default_rng(seed)
        self.epoch = -1
        self._order: np.ndarray | None = None
        self._pos = 0
        self._dim: int | None = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}(n={self.n}, seed={self.seed})"

    @property
    def order(self) -> np.ndarray:
        if self._order is None:
            raise RuntimeError(f"{type(self).__name__}: no epoch started; call next_epoch() first")
        return self._order

    @property
    def position(self) -> int:
        return self._pos

    def next_epoch(self) -> np.ndarray:
        """Close the current epoch (if any) and return the next epoch's order, shape ``(n,)``."""
        if self._order is not None:
            self._end_epoch(self._pos)
        self.epoch += 1
        order = np.asarray(self._make_order(self.epoch), dtype=np.int64)
        order.setflags(write=False)
        self._order = order
        self._pos = 0
        return order.copy()

    def expected_index(self) -> int:
        """The unit the next ``observe`` call must report (``order[position]``)."""
        order = self.order
        if self._pos >= len(order):
            raise ValueError(f"{type(self).__name__}: all n={self.n} units of epoch {self.epoch} were "
                             "already observed; call next_epoch()")
        return int(order[self._pos])

    def observe(self, index: int, grad: Any) -> None:
        """Report the gradient used for the step on unit ``index`` (called in epoch order).

        Parameters
        ----------
        index : int
            Must equal ``order[position]``: units are reported once each, in the visiting order.
        grad : np.ndarray or torch.Tensor, any shape with d elements
            The gradient of that unit; d must be the same on every call.

        Raises
        ------
        ValueError
            When called out of order, more than n times in an epoch, or with a gradient whose size
            differs from earlier calls.
        """
        name = type(self).__name__
        expected = self.expected_index()
        if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
            if _is_torch(index) and index.numel() == 1:
                index = int(index)
            else:
                raise TypeError(f"{name}.observe: index must be an int, got {type(index).__name__}")
        if int(index) != expected:
            raise ValueError(f"{name}.observe: called out of order; expected index {expected} "
                             f"(position {self._pos} of epoch {self.epoch}), got {int(index)}")
        size = _size(grad)
        if self._dim is None:
            if size < 1:
                raise ValueError(f"{name}.observe: grad must have at least one element")
            self._dim = size
        elif size != self._dim:
            raise ValueError(f"{name}.observe: grad has {size} elements but earlier gradients had "
                             f"{self._dim}; every unit must report a gradient of the same size")
        if self.uses_gradients:
            self._observe(self._pos, expected, _flatten(grad, f"{name}.observe"))
        self._pos += 1

    def observe_many(self, indices: Any, grads: Any) -> None:
        """Report B consecutive units at once; equivalent to B calls of :meth:`observe`.

        Parameters
        ----------
        indices : array-like of int, shape (B,)
            Must equal ``order[position:position + B]``.
        grads : np.ndarray or torch.Tensor, shape (B, ...)
            One gradient per unit (flattened to (B, d)).

        Notes
        -----
        :class:`GraB` and :class:`PairGraB` balance a host (numpy / CPU) block with one tight loop of
        the same float64 operations as B separate calls, so orders and state are bit-identical to
        them; accelerator blocks use a Gram matrix and a scalar loop (the signs are sequential,
        their inner products are not), whose rounding may differ in exact ties of the sign test.
        """
        idx, B = self._check_block(indices, grads, "observe_many")
        if B == 0:
            return
        if self.uses_gradients:
            if _is_torch(grads):
                G = grads.detach().reshape(B, -1)
            else:
                G = np.asarray(grads, dtype=np.float64).reshape(B, -1)
            self._observe_many(self._pos, idx, G)
        self._pos += B

    def _check_block(self, indices: Any, grads: Any, where: str) -> tuple[np.ndarray, int]:
        """Validate a block of B consecutive units and its (B, ...) gradients; returns (indices, B)."""
        name = type(self).__name__
        order = self.order
        idx = np.asarray(indices.detach().cpu() if _is_torch(indices) else indices)
        if idx.ndim != 1 or not np.issubdtype(idx.dtype, np.integer):
            raise TypeError(f"{name}.{where}: indices must be a 1-D array of ints, got shape {idx.shape}")
        B = idx.shape[0]
        if B > self.n - self._pos:
            raise ValueError(f"{name}.{where}: {B} units but only {self.n - self._pos} of epoch "
                             f"{self.epoch} remain; observe is called at most n={self.n} times per epoch")
        expected = order[self._pos:self._pos + B]
        if not np.array_equal(idx, expected):
            b = int(np.flatnonzero(idx != expected)[0])
            raise ValueError(f"{name}.{where}: called out of order; expected index {int(expected[b])} "
                             f"(position {self._pos + b} of epoch {self.epoch}), got {int(idx[b])}")
        shape = tuple(grads.shape) if hasattr(grads, "shape") else np.shape(grads)
        if len(shape) < 1 or shape[0] != B:
            raise ValueError(f"{name}.{where}: grads must have leading dimension {B}, got shape {shape}")
        size = math.prod(shape[1:])
        if self._dim is None:
            self._dim = size
        elif size != self._dim:
            raise ValueError(f"{name}.{where}: grads have {size} elements per unit but earlier "
                             f"gradients had {self._dim}; every unit must report a gradient of the same size")
        return idx, B

    def _observe_checked(self, idx: np.ndarray, grads: Any) -> None:
        """``observe_factored`` / ``observe_many`` for a caller that has checked ``idx`` against the order."""
        B = len(idx)
        size = grads.dim if hasattr(grads, "gram") else math.prod(tuple(grads.shape)[1:])
        if self._dim is None:
            self._dim = size
        elif size != self._dim:
            raise ValueError(f"{type(self).__name__}.observe: grads have {size} elements per unit but earlier "
                             f"gradients had {self._dim}; every unit must report a gradient of the same size")
        if B > self.n - self._pos:  # pragma: no cover - the caller's order check excludes it
            raise ValueError(f"{type(self).__name__}: {B} units but only {self.n - self._pos} remain")
        if B and self.uses_gradients:
            fast = getattr(self, "_observe_factored", None) if hasattr(grads, "gram") else None
            if fast is not None:
                fast(self._pos, idx, grads)
            elif hasattr(grads, "gram"):
                self._observe_many(self._pos, idx, grads.materialize())
            else:
                G = grads.detach().reshape(B, -1) if _is_torch(grads) else np.asarray(grads, np.float64).reshape(B, -1)
                self._observe_many(self._pos, idx, G)
        self._pos += B

    def observe_factored(self, indices: Any, grads: Any) -> None:
        """Report B consecutive units whose gradients are Linear-layer factors (never materialised).

        Parameters
        ----------
        indices : array-like of int, shape (B,)
            Must equal ``order[position:position + B]``.
        grads : FactoredGrads
            The per-example gradients as factors (:class:`~neurips25.perm_sgd.factored.FactoredGrads`,
            what ``GradientBalancer.backward`` builds for MLPs).

        Notes
        -----
        :class:`GraB` and :class:`PairGraB` run their walk on the B x B Gram matrix of the block
        and update their O(d) state with one matmul per layer: the same algorithm as B calls of
        :meth:`observe`, with other float rounding (signs can differ only where the walk's inner
        product <s, c> is zero to rounding; tested against the sequential walk). Other policies
        only check the block; a balancing policy without a factored walk gets the materialised
        (B, d) gradients.
        """
        if not hasattr(grads, "gram") or not hasattr(grads, "materialize"):
            raise TypeError(f"{type(self).__name__}.observe_factored: grads must be a FactoredGrads, "
                            f"got {type(grads).__name__}")
        idx, B = self._check_block(indices, grads, "observe_factored")
        if B == 0:
            return
        if self.uses_gradients:
            fast = getattr(self, "_observe_factored", None)
            if fast is not None:
                fast(self._pos, idx, grads)
            else:
                self._observe_many(self._pos, idx, grads.materialize())
        self._pos += B

    # hooks ------------------------------------------------------------------------------------
    def _make_order(self, epoch: int) -> np.ndarray:
        raise NotImplementedError

    def _observe(self, position: int, index: int, vec: Any) -> None:
        pass

    def _observe_many(self, position: int, indices: np.ndarray, G: Any) -> None:
        for b in range(len(indices)):
            self._observe(position + b, int(indices[b]), G[b])

    def _end_epoch(self, observed: int) -> None:
        pass


class Incremental(PermutationPolicy):
    """Incremental gradient (IG): the same fixed order every epoch (an "arbitrary" permutation).

    Parameters
    ----------
    n : int
        Number of units.
    seed : int or None
        Accepted for a uniform constructor; unused.
    order : array-like of int, shape (n,), optional
        The fixed order (default ``0, 1, ..., n-1``). A sorted order of the gradients is the
        adversarial case whose order error grows linearly in n.

    Examples
    --------
    >>> Incremental(4, order=[2, 0, 3, 1]).next_epoch()
    array([2, 0, 3, 1])
    """

    def __init__(self, n: int, seed: int | None = None, order: Any = None):
        super().__init__(n, seed)
        if order is None:
            self._fixed = np.arange(self.n, dtype=np.int64)
        else:
            fixed = np.asarray(order)
            if fixed.shape != (self.n,) or not np.issubdtype(fixed.dtype, np.integer) \
                    or not np.array_equal(np.sort(fixed), np.arange(self.n)):
                raise ValueError(f"Incremental: order must be a permutation of range({self.n}), "
                                 f"got shape {fixed.shape} dtype {fixed.dtype}")
            self._fixed = fixed.astype(np.int64)

    def _make_order(self, epoch: int) -> np.ndarray:
        return self._fixed


class ShuffleOnce(PermutationPolicy):
    """Shuffle once (SO): one random permutation drawn from ``seed``, reused every epoch.

    Examples
    --------
    >>> p = ShuffleOnce(5, seed=0)
    >>> bool((p.next_epoch() == p.next_epoch()).all())
    True
    """

    def __init__(self, n: int, seed: int | None = None):
        super().__init__(n, seed)
        self._fixed = self._rng.permutation(self.n)

    def _make_order(self, epoch: int) -> np.ndarray:
        return self._fixed


class RandomReshuffling(PermutationPolicy):
    """Random reshuffling (RR): a fresh uniformly random permutation every epoch (independent).

    Examples
    --------
    >>> sorted(RandomReshuffling(4, seed=1).next_epoch().tolist())
    [0, 1, 2, 3]
    """

    def _make_order(self, epoch: int) -> np.ndarray:
        return self._rng.permutation(self.n)


class FlipFlop(PermutationPolicy):
    """FlipFlop (Rajput, Lee & Papailiopoulos, ICLR 2022): RR on epochs 0, 2, 4, ... and the
    reverse of the previous epoch's order on epochs 1, 3, 5, ...

    Examples
    --------
    >>> p = FlipFlop(4, seed=0)
    >>> a, b = p.next_epoch(), p.next_epoch()
    >>> bool((b == a[::-1]).all())
    True
    """

    def _make_order(self, epoch: int) -> np.ndarray:
        if epoch % 2 == 1:
            return self._order[::-1].copy()
        return self._rng.permutation(self.n)


class WithReplacement(PermutationPolicy):
    """With-replacement sampling: each "epoch" is n i.i.d. uniform draws (not a permutation).

    The baseline every permutation-based method is compared with; ``observe`` follows the drawn
    sequence, repeats included.
    """

    is_permutation = False

    def _make_order(self, epoch: int) -> np.ndarray:
        return self._rng.integers(0, self.n, size=self.n)


class _Balancer(PermutationPolicy):
    """Shared state of the online balancing reorders (GraB, PairGraB): the next order, filled
    from both ends ("+" units forward from the left, "-" units backward from the right)."""

    uses_gradients = True
    #: examples whose factored gradients are balanced together (the walk is deferred by < this many)
    factor_window: int = 192
    #: whether the window walk takes float32 rows as they arrived (GraB's window_dtype="float32")
    _float32_window: bool = False

    def __init__(self, n: int, seed: int | None = None, proj_dim: int | None = None):
        super().__init__(n, seed)
        if proj_dim is not None and (isinstance(proj_dim, bool) or not isinstance(proj_dim, (int, np.integer))
                                     or proj_dim < 1):
            raise ValueError(f"{type(self).__name__}: proj_dim must be None or an int >= 1, got {proj_dim!r}")
        self.proj_dim = None if proj_dim is None else int(proj_dim)
        self._proj = None
        self._ref = None  # a 1-element vector fixing the state's library, device and dtype
        self._s = None  # running signed sum of the balanced vectors
        self._next = np.empty(self.n, dtype=np.int64)
        self._placed = np.zeros(self.n, dtype=bool)
        self._left, self._right = 0, self.n - 1
        self._ready = False  # True when _next holds a complete reorder from the last epoch
        self._window = None  # factored blocks not yet balanced (observe_factored)
        self._window_pos = 0  # epoch position of the window's first unit

    def __repr__(self) -> str:
        return f"{type(self).__name__}(n={self.n}, seed={self.seed}, proj_dim={self.proj_dim})"

    def _prepare(self, vec: Any) -> Any:
        """Bring ``vec`` to the state's library / dtype, then project it when asked."""
        if self._ref is None:
            self._ref = _zeros_like(vec.reshape(-1)[:1])
        vec = _like(vec, self._ref)
        if self.proj_dim is None:
            return vec
        if self._proj is None:
            # a fixed Gaussian sketch (Johnson-Lindenstrauss): O(d * proj_dim) memory, drawn once
            p = self._rng.standard_normal((vec.shape[-1], self.proj_dim)) / np.sqrt(self.proj_dim)
            self._proj = _like(p, _zeros_like(vec))
        return vec @ self._proj

    def _defer_factored(self, position: int, indices: np.ndarray, F: Any) -> None:
        """Queue a factored block in the window (host state) or walk it now (accelerator state)."""
        if not isinstance(self._s, np.ndarray):  # accelerator state: one block at a time, in torch
            self._walk_factored(position, indices, F.to(self._s.dtype, self._s.device))
            return
        win = self._window
        if win is None or win.rows != self.factor_window:
            from neurips25.perm_sgd.factored import FactorWindow

            self._flush()
            win = self._window = FactorWindow(self.factor_window)
        if not win.fits(F):
            self._flush()
        if F.batch > win.rows:
            self._walk_factored(position, indices, F.host64())
            return
        if win.count == 0:
            self._window_pos = position
        try:
            win.append(indices, F)
        except ValueError as err:
            raise ValueError(f"{type(self).__name__}.observe_factored: {err} (epoch {self.epoch})") from None
        if win.count >= win.rows:
            self._flush()

    def _flush(self) -> None:
        """Balance the examples pending in the factor window (before any other use of the state)."""
        win = self._window
        if win is not None and win.count:
            indices, F = win.take(float32=self._float32_window)
            self._walk_factored(self._window_pos, indices, F)

    def _walk_factored(self, position: int, indices: np.ndarray, F: Any) -> None:
        raise NotImplementedError

    def _check_dot(self, dot: float) -> float:
        if not np.isfinite(dot):
            raise ValueError(f"{type(self).__name__}.observe: grad contains NaN or inf "
                             f"(position {self._pos} of epoch {self.epoch})")
        return dot

    def _place(self, index: int, front: bool) -> None:
        if front:
            self._next[self._left] = index
            self._left += 1
        else:
            self._next[self._right] = index
            self._right -= 1
        self._placed[index] = True

    def _place_many(self, indices: np.ndarray, front: np.ndarray) -> None:
        """``_place(indices[b], front[b])`` for b = 0, 1, ... in one go (same slots)."""
        idx = np.asarray(indices, dtype=np.int64)
        fwd, back = idx[front], idx[~front]
        self._next[self._left:self._left + len(fwd)] = fwd
        self._left += len(fwd)
        if len(back):  # the b-th "-" unit goes to slot right - b
            self._next[self._right - len(back) + 1:self._right + 1] = back[::-1]
            self._right -= len(back)
        self._placed[idx] = True

    def _finish_reorder(self, observed: int) -> None:
        """Complete ``_next`` at the end of an epoch; units never observed go to the middle."""
        if observed == 0:
            if self.epoch >= 0:
                warnings.warn(f"{type(self).__name__}: no gradients were observed in epoch {self.epoch}; "
                              "the next epoch falls back to a random reshuffle", RuntimeWarning, stacklevel=3)
            self._ready = False
        else:
            if observed < self.n:
                warnings.warn(f"{type(self).__name__}: only {observed} of {self.n} gradients were "
                              f"observed in epoch {self.epoch} (drop_last=True or an early break?); the "
                              "rest keep their visiting order in the middle of the next epoch",
                              RuntimeWarning, stacklevel=3)
                missing = [i for i in self._order if not self._placed[i]]
                self._next[self._left:self._left + len(missing)] = missing
            self._ready = True
        self._placed[:] = False
        self._left, self._right = 0, self.n - 1

    def _make_order(self, epoch: int) -> np.ndarray:
        if not self._ready:  # first epoch (or nothing observed): a random permutation
            return self._rng.permutation(self.n)
        return self._next.copy()


class GraB(_Balancer):
    r"""GraB: online Gradient Balancing (Lu, Guo & De Sa, NeurIPS 2022), a *dependent* permutation.

    While epoch q runs, each example's gradient g_i (the one its SGD step used) is centred by the
    **stale** mean m_{q-1} of epoch q-1, c_i = g_i - m_{q-1}, and given a sign by a balancing walk on
    the running sum s:

    - deterministic: eps = +1 if ||s + c|| <= ||s - c|| (i.e. <s, c> <= 0), else -1;
    - probabilistic (self-balancing walk, Alweiss, Liu & Sawhney 2021):
      P(eps = +1) = 1/2 - <s, c> / (2 c R^2), with R the largest ||c|| seen this epoch.

    s <- s + eps c. The order of epoch q+1 is the "+" examples in visiting order followed by the
    "-" examples in reverse visiting order (the Harvey & Samadi reordering), whose prefix sums are
    bounded by the walk's: order error phi_{q+1} <= (phi_q + max_k ||s_k||) / 2, the dependent
    recursion of the unified analysis.

    Parameters
    ----------
    n : int
        Number of units.
    seed : int or None
        Seeds the first (random) epoch, the probabilistic signs and the projection.
    balance : {"deterministic", "probabilistic"}, default "deterministic"
    c : float, default 0.5
        Threshold of the probabilistic walk, relative to R^2. The theory's c = O(log(n / delta))
        (Alweiss et al.) makes the walk close to random for n below a few thousand; the reference
        code's fixed divisor of 60 applies to unnormalised gradients.
    proj_dim : int or None
        Balance a random Gaussian projection of dimension ``proj_dim`` instead of the full gradient
        (O(d * proj_dim) memory for the projection matrix).
    window_dtype : {"float32", "float64"}, default "float32"
        Arithmetic of the factored window walk (below) when the factors arrive as CPU float32
        tensors (``GradientBalancer.backward`` on a float32 MLP). "float32": the Gram matrix
        <g_j, g_b>, the <m, g_b>, <s, g_b> and the increments of s and acc are float32 products of
        the rows as they arrived (nothing converted: half the bytes, faster products), while m, s,
        acc accumulate in float64 and the sign loop runs in float64; a sign can then differ from
        the float64 walk's only where <s_b, c_b> is within float32 rounding of zero (the reference
        implementation runs the whole walk in float32). "float64": the same walk on the exact
        float64 conversion of the rows, equal to the float64 walk up to float64 rounding. Other
        inputs (float64 factors, accelerator state, blocks larger than the window) use float64.

    Notes
    -----
    Extra memory is O(d): the stale mean, the mean being accumulated and s (three d-vectors), plus
    the order arrays; no n x d buffer. The first epoch is a random permutation; as in the reference
    implementation, its balance uses m = 0 because no stale mean exists yet.

    :meth:`observe_factored` (Linear-layer factors, what ``GradientBalancer.backward`` feeds for
    MLPs) collects host blocks in a window of W = ``factor_window`` examples (192) and walks each
    window from its Gram matrix: the walk's state lags by less than one window and is complete at
    the end of every epoch and before any other ``observe`` call. The window adds, independent of
    d and n: the factors (W * sum_l (in_l + 1 + out_l) floats, in the gradients' dtype and in
    float64), three W x W Gram buffers (float32, and one float64 for the sign loop, with
    ``window_dtype="float32"``; three float64 otherwise) and per layer W * out_l and
    out_l * (in_l + 1) products (under 2 MB for the benchmark MLP at W = 192).

    Examples
    --------
    >>> import numpy as np
    >>> G = np.random.default_rng(0).normal(size=(64, 8))
    >>> p = GraB(64, seed=0)
    >>> for _ in range(2):
    ...     order = p.next_epoch()
    ...     for i in order:
    ...         p.observe(int(i), G[i])
    >>> sorted(p.next_epoch().tolist()) == list(range(64))
    True
    """

    def __init__(self, n: int, seed: int | None = None, balance: str = "deterministic", c: float = 0.5,
                 proj_dim: int | None = None, window_dtype: str = "float32"):
        super().__init__(n, seed, proj_dim)
        if balance not in ("deterministic", "probabilistic"):
            raise ValueError(f"GraB: balance must be 'deterministic' or 'probabilistic', got {balance!r}")
        if window_dtype not in ("float32", "float64"):
            raise ValueError(f"GraB: window_dtype must be 'float32' or 'float64', got {window_dtype!r}")
        self.window_dtype = window_dtype
        self._float32_window = window_dtype == "float32"
        if not isinstance(c, numbers.Real) or isinstance(c, bool) or not c > 0:
            raise ValueError(f"GraB: c must be a float > 0, got {c!r}")
        self.balance = balance
        self.c = float(c)
        self._m = None  # stale mean of the previous epoch
        self._acc = None  # sum of this epoch's gradients (next epoch's stale mean)
        self._state = None  # host: the (3, d) buffer whose rows are m, s, acc
        self._views = None  # (layout, per-layer views of that buffer) for the factored walk
        self._work: dict = {}  # reused buffers of the factored window walk
        self._aug_work: dict = {}
        self._work32: dict = {}  # reused buffers of the float32 window walk
        self._r2 = 0.0

    def __repr__(self) -> str:
        return (f"GraB(n={self.n}, seed={self.seed}, balance={self.balance!r}, c={self.c}, "
                f"proj_dim={self.proj_dim}, window_dtype={self.window_dtype!r})")

    def _init_state(self, t: Any) -> None:
        """Zero stale mean m, sum s and accumulator (d-vectors like ``t``). On the host they are the
        rows of one (3, d) float64 buffer [m, s, acc], so the factored walk reads <m, g>, <s, g>
        and updates s and acc with one product per layer."""
        z = _zeros_like(t)
        if isinstance(z, np.ndarray):
            self._state = np.zeros((3,) + z.shape)
            self._m, self._s, self._acc = self._state
        else:
            self._state = None
            self._m, self._s, self._acc = z, _zeros_like(t), _zeros_like(t)
        self._views = None

    def _observe(self, position: int, index: int, vec: Any) -> None:
        self._flush()
        g = self._prepare(vec)
        if self._s is None:
            self._init_state(g)
        self._acc += g
        # c_i = g_i - m_{q-1}: the stale mean, never the running mean of the current epoch
        c = g - self._m
        dot = self._check_dot(float(self._s @ c))
        if self.balance == "deterministic":
            plus = dot <= 0.0  # ||s + c||^2 - ||s - c||^2 = 4 <s, c>
        else:
            self._r2 = max(self._r2, float(c @ c))
            p_plus = 0.5 - dot / (2.0 * self.c * self._r2) if self._r2 > 0 else 0.5
            plus = bool(self._rng.random() < min(1.0, max(0.0, p_plus)))
        if plus:
            self._s += c
        else:
            self._s -= c
        self._place(index, front=plus)

    def _observe_many(self, position: int, indices: np.ndarray, G: Any) -> None:
        self._flush()
        if not _is_torch(G) and self.proj_dim is not None:
            with _blas_one_thread():
                G = self._prepare(G)
        else:
            G = self._prepare(G)  # (B, d) in the state's library
        if self._s is None:
            self._init_state(G[0])
        C = G - self._m  # c_b = g_b - m_{q-1}, (B, d)
        if self.balance == "deterministic":
            sign = None  # <s, c> <= 0, the walk's tight loop
        else:
            def sign(dot: float, sq: float) -> bool:
                self._r2 = max(self._r2, sq)
                p_plus = 0.5 - dot / (2.0 * self.c * self._r2) if self._r2 > 0 else 0.5
                return bool(self._rng.random() < min(1.0, max(0.0, p_plus)))

        try:
            plus = _walk_block(C, self._s, sign)
        except ValueError as err:
            raise ValueError(f"GraB.observe_many: {err} (epoch {self.epoch})") from None
        if _is_torch(self._acc):
            self._acc += G.sum(0)
        else:
            acc = self._acc
            for g in G:  # row by row, as sequential observe adds them (bit-identical stale mean)
                acc += g
        self._place_many(indices, plus)

    def _observe_factored(self, position: int, indices: np.ndarray, F: Any) -> None:
        if self.proj_dim is not None:  # the sketch needs the vectors themselves
            self._observe_many(position, indices, F.materialize())
            return
        if self._ref is None:
            self._ref = _zeros_like(F.template()[:1])
        if self._s is None:
            self._init_state(F.template())
        self._defer_factored(position, indices, F)

    def _sign_rule(self) -> Callable[[float, float], bool] | None:
        if self.balance == "deterministic":
            return None

        def sign(dot: float, sq: float) -> bool:
            self._r2 = max(self._r2, sq)
            p_plus = 0.5 - dot / (2.0 * self.c * self._r2) if self._r2 > 0 else 0.5
            return bool(self._rng.random() < min(1.0, max(0.0, p_plus)))
        return sign

    def _layer_views(self, layout: tuple) -> list:
        """Per layer of ``layout``: the weight and bias blocks of rows [m, s] (read) and [s, acc]
        (updated) of the state buffer, as (2, out, in) and (2, out) views; cached per layout."""
        if self._views is None or self._views[0] != layout:
            st, views = self._state, []
            for n_in, n_out, w, b in layout[1:]:
                blk = slice(w, w + n_out * n_in)
                views.append((st[0:2, blk].reshape(2, n_out, n_in).transpose(0, 2, 1),
                              None if b is None else st[0:2, None, b:b + n_out],
                              st[1:3, blk].reshape(2, n_out, n_in),
                              None if b is None else st[1:3, b:b + n_out]))
            if not all(np.shares_memory(Uw, st) for _, _, Uw, _ in views):  # pragma: no cover - reshape copied
                raise RuntimeError("GraB: internal error, the state views are not views")
            self._views = (layout, views)
        return self._views[1]

    def _workspace(self, n: int, layout: tuple) -> tuple:
        """Buffers of the window walk for n examples (reused: fresh ~100 KB temporaries per window
        cost page faults and cache misses that dwarf the arithmetic); the last two sizes are kept."""
        key = (n, layout)
        ws = self._work.get(key)
        if ws is None:
            if len(self._work) >= 2:
                self._work.pop(next(iter(self._work)))
            per_layer = [(np.empty((2, n, n_out)), np.empty((2, n, n_out)), np.empty((2, n_out, n_in)),
                          np.empty((2, n)), np.empty((2, n_out)))
                         for n_in, n_out, _, _ in layout[1:]]
            ws = self._work[key] = (np.empty((n, n)), np.empty((n, n)), np.empty((n, n)),
                                    np.zeros((2, n)), np.empty((2, n, 1)), per_layer)
        return ws

    def _workspace32(self, n: int, layout: tuple) -> tuple:
        """Buffers of the float32 window walk for n examples (the last two sizes kept)."""
        key = (n, layout)
        ws = self._work32.get(key)
        if ws is None:
            if len(self._work32) >= 2:
                self._work32.pop(next(iter(self._work32)))
            per_layer = []
            for n_in, n_out, _, b in layout[1:]:
                k = n_in + (b is not None)
                per_layer.append((np.empty((2, k, n_out), np.float32), np.empty((2, n, n_out), np.float32),
                                  np.empty((2, n), np.float32), np.empty((2, n, n_out), np.float32),
                                  np.empty((2, n_out, k), np.float32)))
            ws = self._work32[key] = (np.empty((n, n), np.float32), np.empty((n, n), np.float32),
                                      np.empty((n, n), np.float32), np.empty((n, n)), np.empty((2, n), np.float32),
                                      np.empty((2, n, 1), np.float32), per_layer)
        return ws

    def _walk_window32(self, indices: np.ndarray, F: Any) -> None:
        """The window walk of :meth:`_walk_window` with its products in float32 (``window_dtype``).

        ``F`` holds the window's float32 rows as they arrived: per layer a (with its ones column
        for a biased layer, ``F._aug``) and the unscaled dz, F.scale = s. The Gram matrix, the
        <m, g_b>, <s, g_b> (against a float32 copy of [m, s], the bias as the last row of each
        layer's (in + 1, out) block) and the increments [eps; 1] . g are float32 products; the
        sign loop runs on the float64 conversion of s^2 K, and m, s, acc accumulate in float64.
        """
        st = self._state
        views = self._layer_views(F.layout)
        n, sc = F.batch, F.scale
        K32, S1, S2, K, gd, coef, per_layer = self._workspace32(n, F.layout)
        rows = [(a if a1 is None else a1, dz) for (a, dz, _, _), a1 in zip(F.layers, F._aug)]
        for i, ((a1, dz), (n_in, _, _, b), (Vt, vb, _, _), (Va, U, t, _, _)) in enumerate(
                zip(rows, F.layout[1:], views, per_layer)):
            ka = K32 if i == 0 else S1
            np.matmul(a1, a1.T, out=ka)  # a' a'^T (the ones column gives the bias's + 1)
            np.matmul(dz, dz.T, out=S2)
            ka *= S2
            if i:
                K32 += ka
            Va[:, :n_in] = Vt  # [m, s] of this layer in float32: weight block transposed, then the bias
            if b is not None:
                Va[:, n_in] = vb[:, 0]
            np.matmul(a1, Va, out=U)  # (2, W, out): V_l a'_b
            U *= dz
            np.add.reduce(U, axis=2, out=gd if i == 0 else t)
            if i:
                gd += t
        np.multiply(K32, sc * sc, out=K, dtype=np.float64)  # <g_j, g_b>: the scale of dz, squared
        gm, gs = gd.astype(np.float64) * sc  # <m, g_b>, <s, g_b>
        mm, sm = st[0:2] @ st[0]
        try:
            plus = _walk_centred(gs - sm, K, gm, float(mm), self._sign_rule())
        except ValueError as err:
            raise ValueError(f"GraB.observe_factored: {err} (epoch {self.epoch})") from None
        coef.fill(sc)
        coef[0, ~plus] = -sc  # row 0: eps_b s (for s), row 1: s (for acc)
        for (a1, dz), (_, _, _, b), (_, _, Uw, ub), (_, _, _, E, upd) in zip(rows, F.layout[1:], views, per_layer):
            np.multiply(coef, dz, out=E)  # (2, W, out)
            np.matmul(E.transpose(0, 2, 1), a1, out=upd)  # (2, out, in [+ 1]): weight [and bias] sums
            if b is not None:
                Uw += upd[:, :, :-1]
                ub += upd[:, :, -1]
            else:
                Uw += upd
        st[1] -= float(2 * int(np.count_nonzero(plus)) - len(plus)) * st[0]
        self._place_many(indices, plus)

    def _aug_buffer(self, upd: np.ndarray) -> np.ndarray:
        """A (2, out, in + 1) buffer kept beside the (2, out, in) one."""
        key = id(upd)
        buf = self._aug_work.get(key)
        if buf is None or buf[0] is not upd:
            buf = self._aug_work[key] = (upd, np.empty(upd.shape[:2] + (upd.shape[2] + 1,)))
        return buf[1]

    def _walk_window(self, indices: np.ndarray, F: Any) -> None:
        """The host walk over numpy float64 factors: one pass of small products per layer.

        With rows [m, s] of the state as V: <g_j, g_b> = sum_l (dz_j . dz_b)(a_j . a_b + 1),
        <V, g_b> = sum_l dz_b . (V_l a_b + v_l) (a (W, in) @ V_l^T, one broadcast matmul),
        then c_b = g_b - m: <c_j, c_b> = K_jb - <m, g_j> - <m, g_b> + <m, m>, <s, c_b> = <s, g_b> - <s, m>;
        after the signs, [s, acc] += [eps; 1] . g (one (2, out, in) product per layer) and
        s -= (sum eps) m. Every product writes into a reused buffer (:meth:`_workspace`).
        """
        st = self._state
        views = self._layer_views(F.layout)
        n = F.batch
        K, T1, T2, gd, coef, per_layer = self._workspace(n, F.layout)
        layers = F.layers if F.scale == 1.0 else [(a, dz * F.scale, w, b) for a, dz, w, b in F.layers]
        # a_l with a column of ones appended for a layer with bias (the window stores it that way):
        # then a'_j . a'_b = a_j . a_b + 1 and dz^T a' holds the weight and the bias sums
        aug = F._aug if F._aug is not None and F.scale == 1.0 else [None] * len(layers)
        first = True
        for (a, dz, _, b), a1, (Vt, vb, _, _), (U, _, _, t, _) in zip(layers, aug, views, per_layer):
            ka = K if first else T1
            if a1 is not None:
                np.matmul(a1, a1.T, out=ka)
            else:
                np.matmul(a, a.T, out=ka)
                if b is not None:
                    ka += 1.0
            np.matmul(dz, dz.T, out=T2)
            ka *= T2
            if not first:
                K += ka
            np.matmul(a, Vt, out=U)  # (2, W, out): V_l a_b for V = m, s
            if vb is not None:
                U += vb
            U *= dz
            if first:
                np.add.reduce(U, axis=2, out=gd)  # (2, W): <m, g_b>, <s, g_b>
            else:
                np.add.reduce(U, axis=2, out=t)
                gd += t
            first = False
        mm, sm = st[0:2] @ st[0]  # <m, m>, <s, m>
        gm, gs = gd
        try:
            plus = _walk_centred(gs - sm, K, gm, float(mm), self._sign_rule())
        except ValueError as err:
            raise ValueError(f"GraB.observe_factored: {err} (epoch {self.epoch})") from None
        coef.fill(1.0)
        coef[0, ~plus] = -1.0  # row 0: eps_b (for s), row 1: 1 (for acc)
        for (a, dz, _, _), a1, (_, _, Uw, ub), (_, E, upd, _, tb) in zip(layers, aug, views, per_layer):
            np.multiply(coef, dz, out=E)  # (2, W, out)
            Et = E.transpose(0, 2, 1)
            if a1 is not None:  # (2, out, in + 1): weight sums, then the bias sums in the last column
                up1 = self._aug_buffer(upd)
                np.matmul(Et, a1, out=up1)
                Uw += up1[:, :, :-1]
                ub += up1[:, :, -1]
            else:
                np.matmul(Et, a, out=upd)  # sum_b e_b dz_b (x) a_b
                Uw += upd
                if ub is not None:
                    np.add.reduce(E, axis=1, out=tb)
                    ub += tb
        st[1] -= float(2 * int(np.count_nonzero(plus)) - len(plus)) * st[0]
        self._place_many(indices, plus)

    def _walk_factored(self, position: int, indices: np.ndarray, F: Any) -> None:
        """The walk over a block from inner products only (F in the state's library and dtype)."""
        S, M, acc = self._s, self._m, self._acc
        host = isinstance(S, np.ndarray)
        if host and self._state is not None and F._numpy and F.dtype == np.float64:
            self._walk_window(indices, F)
            return
        if host and self._state is not None and F._numpy and F.dtype == np.float32 and F._aug is not None:
            self._walk_window32(indices, F)  # a float32 window (window_dtype="float32")
            return
        V = np.stack([S, M]) if host else sys.modules["torch"].stack([S, M])
        K, (gs, gm), VV = F.gram(), F.dots(V), V @ V.T  # <g_j, g_b>; <s, g_b>, <m, g_b>; <s, m>, <m, m>
        if not host:
            K, gs, gm, VV = (x.double().cpu().numpy() for x in (K, gs, gm, VV))
        sm, mm = VV[0, 1], VV[1, 1]
        # c_b = g_b - m: <c_j, c_b> = <g_j, g_b> - <m, g_j> - <m, g_b> + <m, m>, <s, c_b> = <s, g_b> - <s, m>
        Kc = K - gm[:, None] - (gm - mm)[None, :]
        if self.balance == "deterministic":
            sign = None
        else:
            def sign(dot: float, sq: float) -> bool:
                self._r2 = max(self._r2, sq)
                p_plus = 0.5 - dot / (2.0 * self.c * self._r2) if self._r2 > 0 else 0.5
                return bool(self._rng.random() < min(1.0, max(0.0, p_plus)))
        try:
            plus = _walk_gram(gs - sm, Kc, sign)
        except ValueError as err:
            raise ValueError(f"GraB.observe_factored: {err} (epoch {self.epoch})") from None
        coef = np.ones((2, len(plus)))
        coef[0, ~plus] = -1.0  # s += sum_b eps_b c_b = sum_b eps_b g_b - (sum_b eps_b) m;  acc += sum_b g_b
        F.add_to([S, acc], coef if host else _like(coef, S))
        S -= float(2 * int(plus.sum()) - len(plus)) * M
        self._place_many(indices, plus)

    def _end_epoch(self, observed: int) -> None:
        self._flush()
        if observed > 0:
            self._m[...] = self._acc / observed  # in place: _m stays a row of the state buffer
            _zero(self._acc)
            _zero(self._s)
        self._r2 = 0.0
        self._finish_reorder(observed)


class PairGraB(_Balancer):
    r"""PairGraB / PairBalance (Cooper et al., CD-GraB, NeurIPS 2023): balance differences of
    consecutive pairs, so no stale mean is needed.

    For each consecutive pair (a, b) of the epoch's order, d = g_a - g_b gets a sign from the
    deterministic walk (eps = +1 iff <s, d> <= 0); with eps = +1, a goes to the front and b to the
    back of the next order, otherwise the reverse. With n odd the last unit takes the middle slot.

    Parameters
    ----------
    n, seed, proj_dim
        As in :class:`GraB`.

    Notes
    -----
    Extra memory is O(d): s and the cached first gradient of the pending pair. The first epoch is a
    random permutation.

    Examples
    --------
    >>> import numpy as np
    >>> G = np.random.default_rng(0).normal(size=(10, 3))
    >>> p = PairGraB(10, seed=0)
    >>> for i in p.next_epoch():
    ...     p.observe(int(i), G[i])
    >>> sorted(p.next_epoch().tolist()) == list(range(10))
    True
    """

    def __init__(self, n: int, seed: int | None = None, proj_dim: int | None = None):
        super().__init__(n, seed, proj_dim)
        self._cache = None
        self._cache_index = -1

    def _observe(self, position: int, index: int, vec: Any) -> None:
        self._flush()
        g = self._prepare(vec)
        if self._s is None:
            self._s, self._cache = _zeros_like(g), _zeros_like(g)
        if position % 2 == 0:
            if position == self.n - 1:  # odd n: the unpaired last unit takes the middle slot
                self._place(index, front=True)
                return
            self._cache[:] = g  # copy: callers may reuse their gradient buffer
            self._cache_index = index
            return
        d = self._cache - g
        dot = self._check_dot(float(self._s @ d))
        first_front = dot <= 0.0
        if first_front:
            self._s += d
        else:
            self._s -= d
        self._place(self._cache_index, front=first_front)
        self._place(index, front=not first_front)
        self._cache_index = -1

    def _observe_many(self, position: int, indices: np.ndarray, G: Any) -> None:
        self._flush()
        B = len(indices)
        start = 0
        if position % 2 == 1:  # complete the pair left pending by the previous call
            self._observe(position, int(indices[0]), G[0])
            start = 1
        n_pairs = (B - start) // 2
        if n_pairs > 0:
            P = self._prepare(G[start:start + 2 * n_pairs])
            if self._s is None:
                self._s, self._cache = _zeros_like(P[0]), _zeros_like(P[0])
            # d_t = g_first - g_second, (n_pairs, d); float64 on the host, as the sequential path
            D = np.subtract(P[0::2], P[1::2], dtype=np.float64) if isinstance(P, np.ndarray) else P[0::2] - P[1::2]
            try:
                first_front = _walk_block(D, self._s)
            except ValueError as err:
                raise ValueError(f"PairGraB.observe_many: {err} (epoch {self.epoch})") from None
            pairs = np.asarray(indices[start:start + 2 * n_pairs]).reshape(n_pairs, 2)
            # pair t places a then b in visiting order; a goes front iff eps_t = +1, b the other way
            self._place_many(pairs.reshape(-1), np.stack([first_front, ~first_front], axis=1).reshape(-1))
            self._cache_index = -1
        for k in range(start + 2 * n_pairs, B):  # a trailing unit opens the next pair (or is the odd last)
            self._observe(position + k, int(indices[k]), G[k])

    def _observe_factored(self, position: int, indices: np.ndarray, F: Any) -> None:
        if self.proj_dim is not None:
            self._observe_many(position, indices, F.materialize())
            return
        if self._ref is None:
            self._ref = _zeros_like(F.template()[:1])
        if self._s is None:
            t = F.template()
            self._s, self._cache = _zeros_like(t), _zeros_like(t)
        self._defer_factored(position, indices, F)

    def _walk_factored(self, position: int, indices: np.ndarray, F: Any) -> None:
        B = len(indices)
        start = 0
        if position % 2 == 1:  # complete the pair left pending by the previous call
            self._observe(position, int(indices[0]), F.row(0))
            start = 1
        n_pairs = (B - start) // 2
        if n_pairs > 0:
            if self._ref is None:
                self._ref = _zeros_like(F.template()[:1])
            if self._s is None:
                t = F.template()
                self._s, self._cache = _zeros_like(t), _zeros_like(t)
            S = self._s
            host = isinstance(S, np.ndarray)
            P = F.slice(start, start + 2 * n_pairs)
            if not P._numpy:
                P = P.host64() if host else P.to(S.dtype, S.device)
            K, gs = P.gram(), P.dots(S[None])[0]
            if not host:
                K, gs = (x.double().cpu().numpy() for x in (K, gs))
            a, b = slice(0, None, 2), slice(1, None, 2)  # d_t = g_a - g_b of pair t
            Kd = K[a, a] - K[a, b] - K[b, a] + K[b, b]
            try:
                first_front = _walk_gram(gs[a] - gs[b], Kd)
            except ValueError as err:
                raise ValueError(f"PairGraB.observe_factored: {err} (epoch {self.epoch})") from None
            eps = np.where(first_front, 1.0, -1.0)
            coef = np.stack([eps, -eps], axis=1).reshape(-1)  # s += sum_t eps_t (g_a - g_b)
            P.add_to([S], (coef if host else _like(coef, S))[None])
            pairs = np.asarray(indices[start:start + 2 * n_pairs]).reshape(n_pairs, 2)
            self._place_many(pairs.reshape(-1), np.stack([first_front, ~first_front], axis=1).reshape(-1))
            self._cache_index = -1
        for k in range(start + 2 * n_pairs, B):  # a trailing unit opens the next pair (or is the odd last)
            self._observe(position + k, int(indices[k]), F.row(k))

    def _end_epoch(self, observed: int) -> None:
        self._flush()
        if self._s is not None:
            _zero(self._s)
        self._cache_index = -1  # a pending unpaired unit is placed in the middle by _finish_reorder
        self._finish_reorder(observed)
