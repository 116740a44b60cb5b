"""PyTorch glue: a ``Sampler`` driven by any permutation policy, and the gradient feeder.

A standard loop needs two extra lines for GraB, none for RR / FlipFlop / shuffle once::

    policy = GraB(len(dataset), seed=0)
    loader = DataLoader(dataset, batch_size=1, sampler=PermutationSampler(policy, dataset=dataset))
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

import numbers
import warnings
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from typing import Any

import numpy as np
import torch
from torch.utils.data import Sampler

from neurips25.perm_sgd.factored import FactoredGrads
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


class UncheckedLengthWarning(UserWarning):
    """A :class:`PermutationSampler` built without ``dataset=``: ``policy.n`` was not checked against N.

    A ``DataLoader`` never tells its sampler the dataset's length, so a policy built for fewer
    examples than the dataset holds would silently train on a prefix of it every epoch.
    """


class PermutationSampler(Sampler):
    """A ``torch.utils.data.Sampler`` whose epoch order comes from a permutation policy.

    Each ``iter(sampler)`` (one per epoch, as ``DataLoader`` does) calls ``policy.next_epoch()``.
    The order is computed in the main process, so it works with any ``num_workers``.

    Distributed (``DistributedSampler``-style): with ``num_replicas = R`` and ``rank = r`` the
    sampler owns the fixed shard ``r, r + R, r + 2R, ...`` of the N examples (or blocks); shards of
    different ranks never overlap and together cover every unit once. Each rank's policy orders its
    own shard, so ``policy.n`` is the shard size. Use :class:`~neurips25.perm_sgd.distributed.CDGraB`
    as the policy for coordinated balancing across ranks (CD-GraB, Cooper et al. 2023).

    Parameters
    ----------
    policy : PermutationPolicy
        Any policy of :mod:`neurips25.perm_sgd.orderings`; ``policy.n`` is the number of units this
        sampler yields per epoch (this rank's examples, or blocks when ``blocks`` is given).
    num_replicas, rank : int, optional
        Number of processes and this process's rank (default 1 and 0). When only ``num_replicas``
        is omitted and ``torch.distributed`` is initialised, both come from the default group.
    dataset : Sized, optional
        The dataset (anything with ``len``). When given, its length N is checked against the
        policy (``policy.n`` must equal this rank's shard size of N); without it N is taken as
        ``policy.n * num_replicas`` (or the number of blocks), and an :class:`UncheckedLengthWarning`
        says that a longer dataset would be served only up to that length.
    blocks : sequence of index arrays, optional
        Minibatch blocks (see :func:`make_blocks`). The sampler then yields one list of example
        indices per block and is used as ``DataLoader(..., batch_sampler=sampler)``.

    Examples
    --------
    >>> import torch
    >>> from torch.utils.data import DataLoader, TensorDataset
    >>> from neurips25.perm_sgd import FlipFlop
    >>> ds = TensorDataset(torch.arange(6.0))
    >>> loader = DataLoader(ds, batch_size=2, sampler=PermutationSampler(FlipFlop(6, seed=0), dataset=ds))
    >>> a = torch.cat([b[0] for b in loader]); b = torch.cat([b[0] for b in loader])
    >>> bool((b == a.flip(0)).all())
    True
    >>> s0 = PermutationSampler(FlipFlop(3, seed=0), 2, 0, dataset=range(6))
    >>> s1 = PermutationSampler(FlipFlop(3, seed=0), 2, 1, dataset=range(6))
    >>> sorted(list(s0) + list(s1))
    [0, 1, 2, 3, 4, 5]
    """

    def __init__(self, policy: PermutationPolicy, num_replicas: int | None = None, rank: int | None = None, *,
                 dataset: Any = None, blocks: Sequence[Any] | None = None):
        if not isinstance(policy, PermutationPolicy):
            raise TypeError("PermutationSampler: policy must be a PermutationPolicy, "
                            f"got {type(policy).__name__}")
        if num_replicas is None and rank is None and _dist_ready():
            num_replicas, rank = torch.distributed.get_world_size(), torch.distributed.get_rank()
        num_replicas = 1 if num_replicas is None else num_replicas
        rank = 0 if rank is None else rank
        for name, v, lo in (("num_replicas", num_replicas, 1), ("rank", rank, 0)):
            if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < lo:
                raise ValueError(f"PermutationSampler: {name} must be an int >= {lo}, got {v!r}")
        if rank >= num_replicas:
            raise ValueError(f"PermutationSampler: rank={rank} must be < num_replicas={num_replicas}")
        self.policy = policy
        self.num_replicas, self.rank = int(num_replicas), int(rank)
        self.blocks = None
        if blocks is not None:
            blocks = [np.asarray(b, dtype=np.int64).reshape(-1) for b in blocks]
            if any(len(b) == 0 for b in blocks):
                raise ValueError("PermutationSampler: every block must hold at least one index")
            if dataset is not None:
                top = max(int(b.max()) for b in blocks)
                if top >= len(dataset) or min(int(b.min()) for b in blocks) < 0:
                    raise ValueError(f"PermutationSampler: blocks index outside the dataset of {len(dataset)}")
            total = len(blocks)
        elif dataset is not None:
            if not hasattr(dataset, "__len__"):
                raise TypeError(f"PermutationSampler: dataset must have a length, got {type(dataset).__name__}")
            total = len(dataset)
        else:
            total = policy.n * self.num_replicas
            warnings.warn(f"PermutationSampler: no dataset= given, so policy.n={policy.n} cannot be checked "
                          f"against the dataset's length; if it holds more than {total} examples, only the "
                          f"first {total} are ever served. Pass dataset=<your dataset> to check it",
                          UncheckedLengthWarning, stacklevel=2)
        self.shard = np.arange(self.rank, total, self.num_replicas, dtype=np.int64)  # this rank's units
        if len(self.shard) != policy.n:
            what = "blocks" if blocks is not None else "dataset examples"
            raise ValueError(f"PermutationSampler: policy.n={policy.n} but this rank (rank {self.rank} of "
                             f"{self.num_replicas}) owns {len(self.shard)} of the {total} {what}; build the "
                             f"policy with n={len(self.shard)}")
        if blocks is not None:
            self.blocks = [blocks[b].tolist() for b in self.shard]
        self._target: int | None = None  # epoch asked for by set_epoch
        self._epoch = -2  # policy epoch this sampler is serving
        self._it: Any = None  # that epoch's iterator over its unit list
        self._count = 0  # length of that list
        self._units: list = []  # that list
        policy._feeder = self

    def __len__(self) -> int:
        return self.policy.n

    def set_epoch(self, epoch: int) -> None:
        """Make the next ``iter`` serve the policy's epoch ``epoch`` (as ``DistributedSampler.set_epoch``).

        Epochs only move forward: skipped epochs are advanced through (a gradient policy then
        falls back to a random order with a warning); an epoch already served cannot be repeated.
        """
        if isinstance(epoch, bool) or not isinstance(epoch, numbers.Integral) or epoch < 0:
            raise ValueError(f"PermutationSampler.set_epoch: epoch must be an int >= 0, got {epoch!r}")
        if epoch < self.policy.epoch or (epoch == self.policy.epoch and self.policy.position > 0):
            raise ValueError(f"PermutationSampler.set_epoch: the policy is already at epoch {self.policy.epoch}; "
                             f"epoch {int(epoch)} cannot be served again (orders only move forward)")
        self._target = int(epoch)

    def _advance(self) -> np.ndarray:
        p = self.policy
        if self._target is None:
            return p.next_epoch()
        while p.epoch < self._target:
            p.next_epoch()
        return p.order.copy()

    def __iter__(self) -> Iterator[Any]:
        if self._target is None and self._it is not None and self._served == 0 and self._count > 0 \
                and self._epoch == self.policy.epoch:
            # an epoch handed out but never read is not an epoch: a multi-worker DataLoader calls iter() on
            # its batch_sampler twice per epoch and drops the first iterator, which would skip every other
            # epoch (and break FlipFlop's pairs); serve the same epoch again
            self._it = iter(self._units)
            return self._it
        order = self._advance()
        self._target = None
        if self.blocks is not None:
            units = [self.blocks[u] for u in order.tolist()]
        else:
            units = self.shard[order].tolist()
        # a plain list iterator (no per-unit Python code): the units served so far are read off
        # its length hint, so a stale iterator of an earlier epoch never counts
        self._epoch, self._count, self._units, self._it = self.policy.epoch, len(units), units, iter(units)
        return self._it

    @property
    def _served(self) -> int:
        """Units yielded so far in the epoch being served (the balancer checks batches against it)."""
        return 0 if self._it is None else self._count - self._it.__length_hint__()


def _dist_ready() -> bool:
    return torch.distributed.is_available() and torch.distributed.is_initialized()


def _check_served(policy: PermutationPolicy, count: int, where: str) -> None:
    """Refuse to guess a batch's units unless a PermutationSampler has served them in policy order."""
    feeder = getattr(policy, "_feeder", None)
    if (feeder is None or feeder._epoch != policy.epoch
            or feeder._served < policy.position + count):
        raise ValueError(
            f"GradientBalancer.{where}: cannot tell which units this batch holds: its batches do not come "
            f"from a PermutationSampler over this policy in the current epoch ({policy.position} observed, "
            f"{0 if feeder is None or feeder._epoch != policy.epoch else feeder._served} served), e.g. a "
            "shuffle=True loader or a hand-made loop. Pass the batch's policy indices explicitly "
            f"({'index=' if where == 'step' else 'indices='}) or load with sampler=PermutationSampler(policy)")


class GradientBalancer:
    """Feeds a model's gradients to a permutation policy, with O(d) extra memory.

    Two modes, one per unit being ordered:

    - :meth:`step` after ``loss.backward()``: the model's flattened ``.grad`` (one example with
      batch size 1, or one block with ``make_blocks``) is the next unit's gradient;
    - :meth:`backward` replaces ``loss.backward()`` for minibatches of individually ordered
      examples: per-example gradients (one backward with layer hooks for MLPs, else
      ``torch.func.vmap(grad(...))``) are fed in order, and ``.grad`` receives their mean (the
      ordinary batch gradient), so the SGD step uses exactly the balanced gradients (no extra pass).

    Without explicit indices both need the batches to come from a :class:`PermutationSampler` over
    the same policy (they check how many units it has served); otherwise they raise instead of
    attributing gradients to the wrong examples.

    Parameters
    ----------
    policy : PermutationPolicy
    model : torch.nn.Module
        Its parameters with ``requires_grad`` define the gradient vector (d entries).
    randomness : {"error", "different", "same"}, default "error"
        Passed to ``torch.func.vmap`` for models with random layers (Dropout): ``"different"`` draws
        independent masks per example, as an ordinary batched forward does.
    factored : bool, default True
        For MLPs (2-D Linear inputs), hand the policy the per-example gradients as layer factors
        (:class:`~neurips25.perm_sgd.factored.FactoredGrads`): GraB / PairGraB then balance them
        through a B x B Gram matrix without ever building the (B, d) matrix (same signs as the
        row-by-row walk up to float rounding at exact ties). ``False`` materialises the (B, d)
        gradients and runs the row walk, bit-identical to B sequential ``observe`` calls.

    Notes
    -----
    Extra memory: one flat d-vector buffer here plus the policy's O(d) state. ``backward``
    transiently holds the minibatch's per-example gradients (B x d; for MLPs with ``factored=True``
    only their factors, which GraB / PairGraB keep in a window of ``factor_window`` examples with
    its W x W Gram buffers: independent of n), never an n x d buffer. Without the Linear-layer
    path ``backward`` needs a model that ``torch.func`` can vmap: no batch-norm in training mode.
    """

    def __init__(self, policy: PermutationPolicy, model: torch.nn.Module, randomness: str = "error",
                 factored: bool = True):
        if not isinstance(policy, PermutationPolicy):
            raise TypeError("GradientBalancer: policy must be a PermutationPolicy, "
                            f"got {type(policy).__name__}")
        if not isinstance(model, torch.nn.Module):
            raise TypeError(f"GradientBalancer: model must be a torch.nn.Module, got {type(model).__name__}")
        if randomness not in ("error", "different", "same"):
            raise ValueError("GradientBalancer: randomness must be 'error', 'different' or 'same', "
                             f"got {randomness!r}")
        if not isinstance(factored, (bool, np.bool_)):
            raise TypeError(f"GradientBalancer: factored must be a bool, got {type(factored).__name__}")
        self.policy = policy
        self.model = model
        self.randomness = randomness
        self.factored = bool(factored)
        self._named = [(k, p) for k, p in model.named_parameters() if p.requires_grad]
        if not self._named:
            raise ValueError("GradientBalancer: model has no parameter with requires_grad=True")
        self.dim = sum(p.numel() for _, p in self._named)
        self._ids = [id(p) for _, p in self._named]
        self._sizes = [p.numel() for _, p in self._named]
        self._buf: torch.Tensor | None = None
        self._view: Any = None
        # per-example gradients by the Linear-layer trick when every trained parameter is a Linear's
        # (each trained Linear fully trained, no parameter shared between layers; else vmap)
        trained = set(self._ids)
        linear = [m for m in model.modules() if isinstance(m, torch.nn.Linear)
                  and any(id(p) in trained for p in (m.weight, m.bias) if p is not None)]
        owned = [id(p) for m in linear for p in (m.weight, m.bias) if p is not None]
        ok = (sorted(owned) == sorted(trained) and len(set(owned)) == len(owned))
        self._linear = linear if ok else None
        offsets = dict(zip(self._ids, np.cumsum([0] + self._sizes[:-1]).tolist()))
        self._offsets = {id(m): (offsets.get(id(m.weight)), None if m.bias is None else offsets.get(id(m.bias)))
                         for m in (self._linear or [])}
        self._retain: bool | None = None  # dL/dz by z.retain_grad(); None until the first batch
        self._layout = (self.dim,) + tuple((m.in_features, m.out_features, *self._offsets[id(m)])
                                           for m in (self._linear or []))

    def __repr__(self) -> str:
        return f"GradientBalancer(policy={self.policy!r}, dim={self.dim})"

    def _flat_grad(self) -> Any:
        p0 = self._named[0][1]
        if self._buf is None:
            # half-precision models (bfloat16, float16): the flat gradient in float32 (exact), which the
            # host view needs (numpy has no bfloat16) and the balancing walk is run in
            dtype = torch.float32 if p0.dtype.is_floating_point and p0.dtype.itemsize < 4 else p0.dtype
            self._buf = torch.empty(self.dim, dtype=dtype, device=p0.device)
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
        if index is None:
            _check_served(self.policy, 1, "step")
        if not self.policy.uses_gradients:
            # RR, FlipFlop, ...: nothing to balance, only keep the bookkeeping in step
            idx = self.policy.expected_index() if index is None else index
            self.policy.observe(idx, _Sized(self.dim))
            return int(idx)
        idx = self.policy.expected_index() if index is None else index
        self.policy.observe(idx, self._flat_grad())
        return int(idx)

    def backward(self, loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor], inputs: torch.Tensor,
                 targets: torch.Tensor, indices: Sequence[int] | None = None,
                 reduction: str = "mean") -> torch.Tensor:
        """Per-example gradients of a minibatch, fed to the policy in order; their mean goes to ``.grad``.

        Parameters
        ----------
        loss_fn : callable ``(outputs, targets) -> scalar``
            Loss averaged over the batch (the default ``reduction="mean"`` of torch losses, e.g.
            ``torch.nn.functional.cross_entropy``).
        inputs : torch.Tensor, shape (B, ...)
        targets : torch.Tensor, shape (B, ...)
        indices : sequence of int, optional
            The examples' units in the policy (dataset indices, or shard positions under a
            distributed sampler); default the next B entries of the policy's order, allowed only when
            the batch comes from a :class:`PermutationSampler` over this policy.
        reduction : {"mean", "sum"}, default "mean"
            How ``loss_fn`` reduces the batch. ``.grad`` receives the per-example gradients' mean
            or sum accordingly (exactly what ``loss_fn(model(x), y).backward()`` would give), and the
            policy always receives the per-example gradients grad f_i.

        Returns
        -------
        torch.Tensor
            The minibatch's loss (detached, reduced as ``reduction``), shape ().

        Notes
        -----
        When every trained parameter belongs to a ``torch.nn.Linear`` (MLPs), the per-example
        gradients come from the one ordinary ``loss.backward()`` that also fills ``.grad``:
        g_b = B * dL/dz_b (x) a_b from each layer's input a (forward hook) and output gradient dL/dz
        (a tensor hook on the output, registered before any in-place op on it), the Goodfellow 2015
        trick. Otherwise ``torch.func.vmap(grad(...))`` computes them and their mean (or sum) is
        added to ``.grad``. Both paths give the same vectors to 1e-6 (tests).
        """
        if not torch.is_tensor(inputs) or not torch.is_tensor(targets):
            raise TypeError("GradientBalancer.backward: inputs and targets must be tensors")
        B = inputs.shape[0] if inputs.ndim else 0
        if B < 1 or targets.ndim == 0 or targets.shape[0] != B:
            raise ValueError(f"GradientBalancer.backward: inputs and targets need the same leading batch "
                             f"dimension >= 1, got {tuple(inputs.shape)} and {tuple(targets.shape)}")
        if reduction not in ("mean", "sum"):
            raise ValueError(f"GradientBalancer.backward: reduction must be 'mean' or 'sum', got {reduction!r}")
        declared = getattr(loss_fn, "reduction", None)
        if isinstance(declared, str) and declared != reduction:
            raise ValueError(f"GradientBalancer.backward: loss_fn has reduction={declared!r} but "
                             f"reduction={reduction!r} was passed; pass reduction={declared!r}")
        pos = self.policy.position
        if indices is None:
            _check_served(self.policy, B, "backward")
            idx = expected = self.policy.order[pos:pos + B]
        elif len(indices) != B:
            raise ValueError(f"GradientBalancer.backward: {len(indices)} indices for a batch of {B}")
        else:
            idx = np.asarray(indices.detach().cpu() if torch.is_tensor(indices) else indices, dtype=np.int64)
            expected = self.policy.order[pos:pos + B]
        if idx is not expected and not np.array_equal(idx, expected):  # refuse before .grad is touched
            raise ValueError(f"GradientBalancer.backward: indices {idx.tolist()} are not the policy's next "
                             f"units {expected.tolist()} (positions {pos}.. of epoch {self.policy.epoch}); "
                             "observe is called in the policy's order")
        flat, loss = None, None
        if self._linear is not None:  # fills .grad by the ordinary backward pass
            flat, loss = self._per_example_linear(loss_fn, inputs, targets, B, reduction)
        filled = flat is not None
        if flat is None:
            flat, loss = self._per_example_vmap(loss_fn, inputs, targets, B, reduction)
        observe_step = getattr(self.policy, "observe_step", None)
        if filled and observe_step is None and self.factored and isinstance(flat, FactoredGrads):
            self.policy._observe_checked(idx, flat)  # the MLP fast path: detached factors, no graph
            return loss.detach()
        with torch.no_grad():
            if isinstance(flat, FactoredGrads):
                flat = flat.materialize()
            if observe_step is not None:  # CD-GraB: every rank's per-example gradients of this step
                observe_step(idx, flat)
            else:  # observe_many, the indices already checked above
                self.policy._observe_checked(idx, flat)
            if filled:
                return loss.detach()
            mean = flat.mean(dim=0) if reduction == "mean" else flat.sum(dim=0)
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

    def _per_example_vmap(self, loss_fn, inputs, targets, B, reduction):
        from torch.func import functional_call, grad_and_value, vmap

        params = {k: p.detach() for k, p in self._named}
        buffers = dict(self.model.named_buffers())

        def loss_one(p: dict, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
            out = functional_call(self.model, (p, buffers), (x.unsqueeze(0),))
            return loss_fn(out, t.unsqueeze(0))

        try:
            grads, losses = vmap(grad_and_value(loss_one), in_dims=(None, 0, 0),
                                 randomness=self.randomness)(params, inputs, targets)
        except RuntimeError as err:
            if "random" in str(err).lower() and self.randomness == "error":
                raise RuntimeError(
                    "GradientBalancer.backward: the model calls a random operation (e.g. Dropout) inside "
                    "torch.func.vmap. Fix: GradientBalancer(policy, model, randomness='different') "
                    "(independent masks per example), or model.eval() to switch the random layers off"
                ) from err
            raise
        flat = torch.cat([grads[k].reshape(B, -1) for k, _ in self._named], dim=1)  # (B, d)
        return flat, (losses.mean() if reduction == "mean" else losses.sum())

    def _capture(self, loss_fn, inputs, targets, retain):
        """The forward pass with each trained Linear's input and output z recorded.

        ``retain``: z.retain_grad() (cheap; its .grad is dL/dz unless an in-place op later
        modifies z, which the caller detects from z's version); otherwise a tensor hook on z,
        registered before any in-place op, receives dL/dz itself. Plain ``torch.nn.Linear``
        layers get an instance-level ``forward`` (the same ``F.linear``) for the duration of the
        pass, so ``Module.__call__`` keeps its fast path and any user hooks; subclasses with their
        own forward get a forward hook.
        """
        acts: dict = {}
        gouts: dict = {}
        calls: dict = {}
        outs: dict = {}
        keep = gouts.__setitem__

        def hook(mod, inp, out):
            calls[mod] = calls.get(mod, 0) + 1
            acts[mod] = inp[0].detach()
            if out.requires_grad:
                outs[mod] = (out, out._version)
                if retain:
                    out.retain_grad()
                else:
                    out.register_hook(partial(keep, mod))

        def wrap(mod):
            def forward(input):
                out = linear(input, mod.weight, mod.bias)
                hook(mod, (input,), out)
                return out
            return forward

        handles, wrapped = [], []
        try:
            for m in self._linear:
                if type(m).forward is _LINEAR_FORWARD and "forward" not in m.__dict__:
                    m.__dict__["forward"] = wrap(m)  # Module.__call__ looks forward up on the instance
                    wrapped.append(m)
                else:
                    handles.append(m.register_forward_hook(hook))
            loss = loss_fn(self.model(inputs), targets)
        finally:
            for m in wrapped:
                m.__dict__.pop("forward", None)
            for h in handles:
                h.remove()
        return loss, acts, calls, outs, gouts

    def _per_example_linear(self, loss_fn, inputs, targets, B, reduction):
        """Per-example gradients of Linear layers from ONE ordinary ``loss.backward()``.

        The forward pass records each layer's input a_b and output z (:meth:`_capture`); the
        normal backward (which also fills ``.grad``) leaves dL/dz in ``z.grad`` (``retain_grad``)
        or, when the model modifies some z in place (seen from z's version counter on the first
        batch, or later: that batch's forward then runs again), hands it to a tensor hook. Then
        grad_W f_b = s dL/dz_b (x) a_b and grad_bias f_b = s dL/dz_b (summed over extra token
        dimensions), with s = B for a mean loss and 1 for a sum (Goodfellow 2015). With 2-D
        layer inputs (MLPs) the gradients are returned as :class:`FactoredGrads` (the factors a,
        dL/dz and s, nothing materialised); with token dimensions as the (B, d) matrix. Returns
        (None, None) without any backward when a layer is unused, called twice or sees another
        batch size (the caller then uses vmap).
        """
        retain = self._retain is True
        loss, acts, calls, outs, gouts = self._capture(loss_fn, inputs, targets, retain)
        moved = any(o._version != v for o, v in outs.values())  # an in-place op on some z
        if self._retain is None or moved:
            self._retain = not moved  # learnt on the first batch, revised if the model changes
            if retain and moved:  # z.grad would be the gradient of the modified z: redo with hooks
                loss, acts, calls, outs, gouts = self._capture(loss_fn, inputs, targets, False)
                retain = False
        mods = self._linear
        rank_one = True  # every layer input 2-D (MLP)
        for m in mods:
            a = acts.get(m)
            if a is None or calls[m] != 1 or a.shape[0] != B:
                return None, None  # a layer unused, shared or batch-mixing: fall back to vmap
            rank_one = rank_one and a.ndim == 2
        if not (torch.is_tensor(loss) and loss.ndim == 0):
            raise ValueError("GradientBalancer.backward: loss_fn must return a scalar (a reduced loss), "
                             f"got {type(loss).__name__} of shape {tuple(getattr(loss, 'shape', ()))}")
        loss.backward()
        if retain:
            for m, (o, _) in outs.items():
                gouts[m] = o.grad
        scale = float(B) if reduction == "mean" else 1.0  # dL/dz of a mean loss is (1/B) df_b/dz_b
        if rank_one:  # MLP: rank-one factors, nothing materialised here
            layers = []
            for m in mods:
                a, gz = acts[m], gouts.get(m)
                if gz is None:  # output not on the loss's path: zero gradients
                    gz = torch.zeros(B, m.out_features, dtype=a.dtype, device=a.device)
                elif gz.requires_grad:
                    gz = gz.detach()
                layers.append((a, gz, *self._offsets[id(m)]))
            # the layers match the layout by construction (2-D inputs of in_features, outputs of out_features)
            return FactoredGrads._trusted(layers, self._layout, scale), loss
        p0 = self._named[0][1]
        flat = torch.empty(B, self.dim, dtype=p0.dtype, device=p0.device)
        where = dict(zip(self._ids, flat.split(self._sizes, dim=1)))  # column blocks, one per parameter
        with torch.no_grad():
            for m in mods:
                a = acts[m]
                gz = gouts.get(m)
                if gz is None:  # output not on the loss's path: zero gradients
                    gz = torch.zeros(a.shape[:-1] + (m.out_features,), dtype=a.dtype, device=a.device)
                w = where[id(m.weight)].view(B, m.out_features, m.in_features)
                if a.ndim == 2:  # plain MLP: an outer product per example
                    torch.mul(gz.unsqueeze(2), a.unsqueeze(1), out=w)
                else:  # (B, T..., in): sum over the token dimensions
                    a3, g3 = a.reshape(B, -1, m.in_features), gz.reshape(B, -1, m.out_features)
                    w.copy_(torch.bmm(g3.transpose(1, 2), a3))
                if m.bias is not None:
                    bias = where[id(m.bias)]
                    if gz.ndim == 2:
                        bias.copy_(gz)
                    else:
                        bias.copy_(gz.reshape(B, -1, m.out_features).sum(dim=1))
            if reduction == "mean":
                flat.mul_(B)  # dL/dz of a mean loss is (1/B) df_b/dz_b
        return flat, loss


_LINEAR_FORWARD = torch.nn.Linear.forward
linear = torch.nn.functional.linear


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
