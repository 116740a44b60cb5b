"""PyTorch glue: a ``Sampler`` driven by any permutation policy, and the gradient feeder.

A standard loop needs two extra lines for GraB, none for RR / FlipFlop / shuffle once::

    policy = GraB(len(dataset), seed=0)
    loader = DataLoader(dataset, batch_size=1, sampler=PermutationSampler(policy))
    balancer = GradientBalancer(policy, model)
    for epoch in range(epochs):
        for x, y in loader:
            opt.zero_grad()
            loss_fn(model(x), y).backward()
            balancer.step()                      # feeds the gradient the step uses (O(d) memory)
            opt.step()

With minibatches, either permute examples and feed per-example gradients
(``loss = balancer.backward(loss_fn, x, y)`` computes them with ``torch.func``), or permute whole
minibatches (``PermutationSampler(policy, blocks=make_blocks(N, 32))`` as ``batch_sampler`` and
``balancer.step()`` after ``loss.backward()``): the unit being ordered is then the block.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import torch
from torch.utils.data import Sampler

from neurips25.perm_sgd.orderings import PermutationPolicy, _check_seed

__all__ = ["PermutationSampler", "GradientBalancer", "make_blocks"]


def make_blocks(n_examples: int, batch_size: int, seed: int | None = None,
                shuffle: bool = True) -> list[np.ndarray]:
    """Partition ``range(n_examples)`` into fixed minibatch blocks (the units of batch-level ordering).

    Parameters
    ----------
    n_examples : int
        Dataset size N.
    batch_size : int
        Block size b; the last block holds the remainder.
    seed : int or None
        Seed of the one-off random partition (when ``shuffle``).
    shuffle : bool, default True
        Draw the partition at random once; otherwise consecutive blocks.

    Returns
    -------
    list of np.ndarray
        ceil(N / b) arrays of example indices.

    Examples
    --------
    >>> [b.tolist() for b in make_blocks(5, 2, shuffle=False)]
    [[0, 1], [2, 3], [4]]
    """
    for name, v in (("n_examples", n_examples), ("batch_size", batch_size)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"make_blocks: {name} must be an int >= 1, got {v!r}")
    _check_seed(seed, "make_blocks")
    idx = np.random.default_rng(seed).permutation(n_examples) if shuffle else np.arange(n_examples)
    return [idx[i:i + batch_size] for i in range(0, n_examples, batch_size)]


class PermutationSampler(Sampler):
    """A ``torch.utils.data.Sampler`` whose epoch order comes from a permutation policy.

    Each ``iter(sampler)`` (one per epoch, as ``DataLoader`` does) calls ``policy.next_epoch()``.
    The order is computed in the main process, so it works with any ``num_workers``.

    Parameters
    ----------
    policy : PermutationPolicy
        Any policy of :mod:`neurips25.perm_sgd.orderings`; ``policy.n`` is the dataset size, or the
        number of blocks when ``blocks`` is given.
    blocks : sequence of index arrays, optional
        Minibatch blocks (see :func:`make_blocks`). The sampler then yields one list of example
        indices per block and is used as ``DataLoader(..., batch_sampler=sampler)``.

    Examples
    --------
    >>> import torch
    >>> from torch.utils.data import DataLoader, TensorDataset
    >>> from neurips25.perm_sgd import FlipFlop
    >>> ds = TensorDataset(torch.arange(6.0))
    >>> loader = DataLoader(ds, batch_size=2, sampler=PermutationSampler(FlipFlop(6, seed=0)))
    >>> a = torch.cat([b[0] for b in loader]); b = torch.cat([b[0] for b in loader])
    >>> bool((b == a.flip(0)).all())
    True
    """

    def __init__(self, policy: PermutationPolicy, blocks: Sequence[Any] | None = None):
        if not isinstance(policy, PermutationPolicy):
            raise TypeError("PermutationSampler: policy must be a PermutationPolicy, "
                            f"got {type(policy).__name__}")
        self.policy = policy
        self.blocks = None
        if blocks is not None:
            blocks = [np.asarray(b, dtype=np.int64).reshape(-1) for b in blocks]
            if len(blocks) != policy.n:
                raise ValueError(f"PermutationSampler: policy.n={policy.n} must equal the number of blocks "
                                 f"({len(blocks)}) when blocks are given")
            if any(len(b) == 0 for b in blocks):
                raise ValueError("PermutationSampler: every block must hold at least one index")
            self.blocks = [b.tolist() for b in blocks]

    def __len__(self) -> int:
        return self.policy.n

    def __iter__(self) -> Iterator[Any]:
        order = self.policy.next_epoch()
        if self.blocks is None:
            return iter(order.tolist())
        return iter([self.blocks[b] for b in order])


class GradientBalancer:
    """Feeds a model's gradients to a permutation policy, with O(d) extra memory.

    Two modes, one per unit being ordered:

    - :meth:`step` after ``loss.backward()``: the model's flattened ``.grad`` (one example with
      batch size 1, or one block with ``make_blocks``) is the next unit's gradient;
    - :meth:`backward` replaces ``loss.backward()`` for minibatches of individually ordered
      examples: per-example gradients come from ``torch.func.vmap(grad(...))``, each is fed in order,
      and their mean is accumulated into ``.grad``, so the SGD step uses exactly the balanced
      gradients (no extra pass).

    Both assume the batches arrive in the policy's order (``PermutationSampler``, no shuffling on
    top); ``observe`` raises if they do not.

    Parameters
    ----------
    policy : PermutationPolicy
    model : torch.nn.Module
        Its parameters with ``requires_grad`` define the gradient vector (d entries).

    Notes
    -----
    Extra memory: one flat d-vector buffer here plus the policy's O(d) state. ``backward``
    transiently holds the minibatch's per-example gradients (B x d), never an n x d buffer.
    ``backward`` needs a model that ``torch.func`` can vmap: no batch-norm in training mode.
    """

    def __init__(self, policy: PermutationPolicy, model: torch.nn.Module):
        if not isinstance(policy, PermutationPolicy):
            raise TypeError("GradientBalancer: policy must be a PermutationPolicy, "
                            f"got {type(policy).__name__}")
        if not isinstance(model, torch.nn.Module):
            raise TypeError(f"GradientBalancer: model must be a torch.nn.Module, got {type(model).__name__}")
        self.policy = policy
        self.model = model
        self._named = [(k, p) for k, p in model.named_parameters() if p.requires_grad]
        if not self._named:
            raise ValueError("GradientBalancer: model has no parameter with requires_grad=True")
        self.dim = sum(p.numel() for _, p in self._named)
        self._buf: torch.Tensor | None = None
        self._view: Any = None
        # per-example gradients by the Linear-layer trick when every trained parameter is a Linear's
        linear = [m for m in model.modules() if isinstance(m, torch.nn.Linear)]
        owned = {id(p) for m in linear for p in (m.weight, m.bias) if p is not None}
        self._linear = linear if all(id(p) in owned for _, p in self._named) else None

    def __repr__(self) -> str:
        return f"GradientBalancer(policy={self.policy!r}, dim={self.dim})"

    def _flat_grad(self) -> Any:
        p0 = self._named[0][1]
        if self._buf is None:
            self._buf = torch.empty(self.dim, dtype=p0.dtype, device=p0.device)
            # a zero-copy numpy view on the host: the policy's small vector ops dispatch faster there
            self._view = self._buf.numpy() if self._buf.device.type == "cpu" else self._buf
        grads = []
        for name, p in self._named:
            if p.grad is None:
                raise RuntimeError(f"GradientBalancer.step: parameter {name!r} has no .grad; "
                                   "call loss.backward() before step()")
            g = p.grad.detach() if p.grad.requires_grad else p.grad  # detach() costs, skip it when idle
            grads.append(g.reshape(-1))
        torch.cat(grads, out=self._buf)
        return self._view

    def step(self, index: int | None = None) -> int:
        """Feed the current ``.grad`` of the model as the gradient of the next unit.

        Parameters
        ----------
        index : int, optional
            The unit (example or block id); default ``policy.expected_index()``.

        Returns
        -------
        int
            The unit that was observed.
        """
        if not self.policy.uses_gradients:
            # RR, FlipFlop, ...: nothing to balance, only keep the bookkeeping in step
            idx = self.policy.expected_index() if index is None else index
            self.policy.observe(idx, _Sized(self.dim))
            return int(idx)
        idx = self.policy.expected_index() if index is None else index
        self.policy.observe(idx, self._flat_grad())
        return int(idx)

    def backward(self, loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor], inputs: torch.Tensor,
                 targets: torch.Tensor, indices: Sequence[int] | None = None) -> torch.Tensor:
        """Per-example gradients of a minibatch, fed to the policy in order; their mean goes to ``.grad``.

        Parameters
        ----------
        loss_fn : callable ``(outputs, targets) -> scalar``
            Loss averaged over the batch (the default ``reduction="mean"`` of torch losses, e.g.
            ``torch.nn.functional.cross_entropy``).
        inputs : torch.Tensor, shape (B, ...)
        targets : torch.Tensor, shape (B, ...)
        indices : sequence of int, optional
            The examples' indices; default the next B entries of the policy's order.

        Returns
        -------
        torch.Tensor
            The minibatch's mean loss (detached), shape ().

        Notes
        -----
        When every trained parameter belongs to a ``torch.nn.Linear`` (MLPs), the per-example
        gradients come from one ordinary backward pass: g_b = B * dL/dz_b (x) a_b from the layer
        inputs a and output gradients dL/dz (the Goodfellow 2015 trick). Otherwise
        ``torch.func.vmap(grad(...))`` computes them.
        """
        if not torch.is_tensor(inputs) or not torch.is_tensor(targets):
            raise TypeError("GradientBalancer.backward: inputs and targets must be tensors")
        B = inputs.shape[0] if inputs.ndim else 0
        if B < 1 or targets.ndim == 0 or targets.shape[0] != B:
            raise ValueError(f"GradientBalancer.backward: inputs and targets need the same leading batch "
                             f"dimension >= 1, got {tuple(inputs.shape)} and {tuple(targets.shape)}")
        if indices is None:
            pos = self.policy.position
            indices = self.policy.order[pos:pos + B]
        elif len(indices) != B:
            raise ValueError(f"GradientBalancer.backward: {len(indices)} indices for a batch of {B}")
        flat, loss = None, None
        if self._linear is not None:
            flat, loss = self._per_example_linear(loss_fn, inputs, targets, B)
        if flat is None:
            flat, loss = self._per_example_vmap(loss_fn, inputs, targets, B)
        with torch.no_grad():
            self.policy.observe_many(np.asarray(indices, dtype=np.int64), flat)
            mean = flat.mean(dim=0)
            offset = 0
            for _, p in self._named:
                k = p.numel()
                g = mean[offset:offset + k].view_as(p)
                if p.grad is None:
                    p.grad = g.clone()
                else:
                    p.grad.add_(g)  # accumulate, as loss.backward() would
                offset += k
        return loss.detach()

    def _per_example_vmap(self, loss_fn, inputs, targets, B):
        from torch.func import functional_call, grad_and_value, vmap

        params = {k: p.detach() for k, p in self._named}
        buffers = dict(self.model.named_buffers())

        def loss_one(p: dict, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
            out = functional_call(self.model, (p, buffers), (x.unsqueeze(0),))
            return loss_fn(out, t.unsqueeze(0))

        grads, losses = vmap(grad_and_value(loss_one), in_dims=(None, 0, 0))(params, inputs, targets)
        flat = torch.cat([grads[k].reshape(B, -1) for k, _ in self._named], dim=1)  # (B, d)
        return flat, losses.mean()

    def _per_example_linear(self, loss_fn, inputs, targets, B):
        acts: dict = {}
        calls: dict = {}

        def hook(mod, inp, out):
            calls[mod] = calls.get(mod, 0) + 1
            acts[mod] = (inp[0].detach(), out)

        handles = [m.register_forward_hook(hook) for m in self._linear]
        try:
            loss = loss_fn(self.model(inputs), targets)
        finally:
            for h in handles:
                h.remove()
        mods = list(self._linear)
        if any(calls.get(m, 0) != 1 for m in mods) or any(acts[m][0].shape[0] != B for m in mods):
            return None, None  # a layer unused, shared or batch-mixing: fall back to vmap
        gouts = torch.autograd.grad(loss, [acts[m][1] for m in mods], allow_unused=True)
        per: dict = {}
        for m, gz in zip(mods, gouts):
            a = acts[m][0].reshape(B, -1, m.in_features)  # (B, T, in), T = 1 for plain MLPs
            gz = (torch.zeros_like(acts[m][1]) if gz is None else gz).reshape(B, -1, m.out_features) * B
            per[id(m.weight)] = torch.einsum("bto,bti->boi", gz, a)
            if m.bias is not None:
                per[id(m.bias)] = gz.sum(dim=1)
        flat = torch.cat([per[id(p)].reshape(B, -1) for _, p in self._named], dim=1)  # (B, d)
        return flat, loss


class _Sized:
    """Stands in for a gradient where the policy only checks its size (no copy, no flatten)."""

    __slots__ = ("_n",)

    def __init__(self, n: int):
        self._n = n

    def __array__(self, dtype=None, copy=None):  # pragma: no cover - never materialised by policies
        raise TypeError("placeholder gradient")

    def numel(self) -> int:
        return self._n

    def detach(self) -> _Sized:
        return self
