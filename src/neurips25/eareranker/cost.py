"""Per-pair scoring cost: wall time and peak tensor memory of one scoring call.

``peak_tensor_bytes`` tracks, at the torch dispatcher, every tensor storage created during the call and frees
it when its tensor dies; the result is the peak of live bytes (activations, not parameters or inputs made
before the call). It is deterministic, unlike process RSS, which the allocator's caching blurs. Views that
outlive their base are not tracked after the base dies (a small under-count; identical inputs give identical
numbers).
"""

from __future__ import annotations

import time
import weakref

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves


class _LiveTensorBytes(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.live: dict[int, int] = {}
        self.current = 0
        self.peak = 0

    def _free(self, key: int) -> None:
        self.current -= self.live.pop(key, 0)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in tree_leaves(out):
            if isinstance(t, torch.Tensor) and t.device.type != "meta":
                key = t.untyped_storage().data_ptr()
                nbytes = t.untyped_storage().nbytes()
                if key and nbytes and key not in self.live:
                    self.live[key] = nbytes
                    self.current += nbytes
                    self.peak = max(self.peak, self.current)
                    weakref.finalize(t, self._free, key)
        return out


def peak_tensor_bytes(fn, *args, **kwargs) -> tuple[int, object]:
    """``(peak live tensor bytes during fn(*args, **kwargs), its result)``."""
    mode = _LiveTensorBytes()
    with mode:
        result = fn(*args, **kwargs)
    return mode.peak, result


def interleaved_min_time(fns: dict, reps: int = 5) -> dict:
    """Minimum wall time of each callable over ``reps`` rounds, the callables interleaved in every round
    (so load on a shared machine hits all of them alike)."""
    best = {k: float("inf") for k in fns}
    for _ in range(max(1, int(reps))):
        for k, f in fns.items():
            t = time.perf_counter()
            f()
            best[k] = min(best[k], time.perf_counter() - t)
    return best
