"""CD-GraB: coordinated online balancing of the example orders of R data-parallel workers.

Cooper, Guo, De Sa et al., "CD-GraB: Coordinating Distributed Example Orders for Provably
Accelerated Training" (NeurIPS 2023). With R workers, step t applies the sum of the R workers'
gradients, so the quantity to balance is the *joint* prefix sum over steps and workers. Each worker
keeps its own shard and its own order (PairBalance, no stale mean), but the signs come from one
walk shared by all workers:

    for each pair step t, for w = 0..R-1:   d = g^w_{2t} - g^w_{2t+1}
        eps = +1 if <s, d> <= 0 else -1;   s <- s + eps d
        worker w puts its first example at the front (eps = +1) or the back of its next order.

Here every rank all-gathers the step's per-example gradients (``torch.distributed.all_gather``) and
runs the same deterministic walk on the same data, so the ranks agree on s and on every sign without
a server; each rank places only its own examples. Use it with
``PermutationSampler(CDGraB(n_local, R, rank), R, rank, dataset=ds)`` and ``GradientBalancer.backward``.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from neurips25.perm_sgd.orderings import PairGraB, _host, _is_torch

__all__ = ["CDGraB"]


class CDGraB(PairGraB):
    """Coordinated PairBalance over ``num_replicas`` workers (CD-GraB); this object is rank ``rank``'s.

    Parameters
    ----------
    n : int
        Size of this rank's shard (every rank must hold the same n).
    num_replicas, rank : int
        R and this rank (0 <= rank < R).
    seed : int or None
        Seeds the first (random) epoch, together with the rank (ranks draw different first orders).
    group : torch.distributed ProcessGroup, optional
        The group to all-gather over (default the global group).

    Notes
    -----
    :meth:`observe_step` takes the local (B, d) per-example gradients of one step, gathers all ranks'
    (collective: every rank must call it with the same B) and balances. :meth:`observe_all` is the
    same walk on already gathered gradients (R, B, d), without communication. The state is numpy
    float64 on the host: s and R cached first-of-pair gradients, O(R d).

    Examples
    --------
    >>> import numpy as np
    >>> G = np.random.default_rng(0).normal(size=(2, 6, 3))  # 2 workers, 6 examples each, d = 3
    >>> ranks = [CDGraB(6, 2, r, seed=0) for r in range(2)]
    >>> orders = [p.next_epoch() for p in ranks]
    >>> for p, o in zip(ranks, orders):
    ...     p.observe_all(o, np.stack([G[w][orders[w]] for w in range(2)]))
    >>> all(sorted(p.next_epoch().tolist()) == list(range(6)) for p in ranks)
    True
    """

    def __init__(self, n: int, num_replicas: int, rank: int, seed: int | None = None, group: Any = None):
        super().__init__(n, seed)
        for name, v, lo in (("num_replicas", num_replicas, 1), ("rank", rank, 0)):
            if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < lo:
                raise ValueError(f"CDGraB: {name} must be an int >= {lo}, got {v!r}")
        if rank >= num_replicas:
            raise ValueError(f"CDGraB: rank={rank} must be < num_replicas={num_replicas}")
        self.num_replicas, self.rank, self.group = int(num_replicas), int(rank), group
        self._rng = np.random.default_rng(None if seed is None else [int(seed), int(rank)])
        self._caches: np.ndarray | None = None  # (R, d) first-of-pair gradients of every worker

    def __repr__(self) -> str:
        return f"CDGraB(n={self.n}, num_replicas={self.num_replicas}, rank={self.rank}, seed={self.seed})"

    def _observe(self, position: int, index: int, vec: Any) -> None:
        if self.num_replicas > 1:
            raise RuntimeError("CDGraB: observe/observe_many balance one worker alone; with num_replicas > 1 "
                               "feed steps with observe_step (GradientBalancer.backward does) or observe_all")
        super()._observe(position, index, vec)

    def _observe_many(self, position: int, indices: np.ndarray, G: Any) -> None:
        if self.num_replicas > 1:
            self._observe(position, int(indices[0]), G[0])
        super()._observe_many(position, indices, G)

    def _observe_factored(self, position: int, indices: np.ndarray, F: Any) -> None:
        self._observe_many(position, indices, F.materialize())  # the coordinated walk needs the vectors

    def observe_step(self, indices: Any, grads: Any) -> None:
        """All-gather this step's per-example gradients ``grads`` (B, d) and balance (a collective)."""
        if self.num_replicas == 1:
            self.observe_all(indices, np.asarray(_host(grads) if _is_torch(grads) else grads)[None])
            return
        import torch
        import torch.distributed as dist

        if not (dist.is_available() and dist.is_initialized()):
            raise RuntimeError("CDGraB.observe_step: torch.distributed is not initialised "
                               f"(num_replicas={self.num_replicas})")
        local = (grads.detach() if _is_torch(grads) else torch.as_tensor(np.asarray(grads))).reshape(
            len(indices), -1).to(torch.float64).cpu().contiguous()
        sizes = [torch.zeros(2, dtype=torch.int64) for _ in range(self.num_replicas)]
        dist.all_gather(sizes, torch.tensor(local.shape, dtype=torch.int64), group=self.group)
        if any(tuple(s.tolist()) != tuple(local.shape) for s in sizes):
            raise ValueError("CDGraB.observe_step: every rank must observe a step of the same shape; got "
                             f"{[tuple(s.tolist()) for s in sizes]} (unequal shards or a ragged last batch?)")
        out = [torch.empty_like(local) for _ in range(self.num_replicas)]
        dist.all_gather(out, local, group=self.group)
        self.observe_all(indices, torch.stack(out).numpy())

    def observe_all(self, indices: Any, all_grads: Any) -> None:
        """The coordinated walk on gathered gradients ``all_grads`` of shape (R, B, d); ``indices``
        are this rank's B units (must follow its order)."""
        name = "CDGraB.observe_all"
        G = np.asarray(_host(all_grads) if _is_torch(all_grads) else all_grads, dtype=np.float64)
        idx = np.asarray(indices, dtype=np.int64).reshape(-1)
        B = idx.shape[0]
        if G.ndim < 2 or G.shape[0] != self.num_replicas or G.shape[1] != B:
            raise ValueError(f"{name}: all_grads must have shape ({self.num_replicas}, {B}, d), got {G.shape}")
        G = G.reshape(self.num_replicas, B, -1)
        if not np.isfinite(G).all():
            raise ValueError(f"{name}: grads contain NaN or inf (epoch {self.epoch})")
        expected = self.order[self._pos:self._pos + B]
        if B > self.n - self._pos or not np.array_equal(idx, expected):
            raise ValueError(f"{name}: called out of order; expected indices {expected.tolist()} "
                             f"(positions {self._pos}.. of epoch {self.epoch}), got {idx.tolist()}")
        d = G.shape[2]
        if self._dim is None:
            self._dim = d
        elif d != self._dim:
            raise ValueError(f"{name}: grads have {d} elements per unit, earlier {self._dim}")
        if self._s is None:
            self._s = np.zeros(d)
            self._caches = np.zeros((self.num_replicas, d))
        for b in range(B):
            pos = self._pos + b
            if pos % 2 == 0:
                if pos == self.n - 1:  # odd n: the unpaired last unit takes the middle slot
                    self._place(int(idx[b]), front=True)
                else:
                    self._caches[:] = G[:, b]
                    self._cache_index = int(idx[b])
                continue
            for w in range(self.num_replicas):  # one shared walk over the workers' pair differences
                diff = self._caches[w] - G[w, b]
                front = float(self._s @ diff) <= 0.0
                self._s += diff if front else -diff
                if w == self.rank:
                    self._place(self._cache_index, front=front)
                    self._place(int(idx[b]), front=not front)
            self._cache_index = -1
        self._pos += B
