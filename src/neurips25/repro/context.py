"""The context a reproduction runs in: ``ctx.map(fn, items)`` fans work out inside one reproduction.

Locally (serial or process executors) ``map`` is a plain loop in the method's own process, under the
runner's thread cap. On Ray it submits one task per item, each under the same thread cap, and returns the
results in input order, so a reproduction written once runs unchanged on a laptop and on a cluster.

``fn`` must be a module-level function (it is pickled to the workers) and each item a picklable value;
per-item seeds belong in the items, so the result never depends on where or in which order items ran.

A reproduction opts in by accepting a ``ctx`` keyword::

    @register("rspool")
    def run(scale, seed, out, ctx):
        accs = ctx.map(train_one_dataset, [(name, seed) for name in datasets], desc="datasets")

Examples in the methods: ``eareranker`` (its model variants and controls) and ``behavior_injection`` (its
SFT + GRPO arms).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any


class LocalContext:
    """``map`` runs in this process, in order."""

    kind = "local"
    #: CPU seconds of mapped items that ran outside this process (none here: it is in the process's own time)
    task_cpu_s = 0.0

    def map(self, fn: Callable[[Any], Any], items: Iterable[Any], desc: str = "") -> list:
        """``[fn(item) for item in items]``, with a progress bar on a terminal (``desc`` labels it)."""
        if not callable(fn):
            raise TypeError(f"fn must be callable; got {type(fn).__name__}")
        from neurips25.repro.progress import progress

        items = list(items)
        return [fn(item) for item in progress(items, desc=desc, total=len(items))]


def _capped_call(fn, item, threads: int):
    from neurips25.repro.threads import thread_cap

    with thread_cap(threads):
        t0 = time.process_time()
        out = fn(item)
        return out, time.process_time() - t0


class RayContext:
    """``map`` submits one Ray task per item (1 CPU each, thread-capped) and gathers them in input order."""

    kind = "ray"

    def __init__(self, threads: int = 1, num_cpus: float = 1):
        self.threads, self.num_cpus = threads, num_cpus
        self.task_cpu_s = 0.0  # the tasks' CPU seconds, added to the unit's own by the runner

    def map(self, fn: Callable[[Any], Any], items: Iterable[Any], desc: str = "") -> list:
        """One task per item; results in input order (``desc`` labels the local fallback's bar)."""
        if not callable(fn):
            raise TypeError(f"fn must be callable; got {type(fn).__name__}")
        import ray

        items = list(items)
        if not ray.is_initialized():  # called outside a Ray worker: behave like the local context
            return LocalContext().map(fn, items, desc=desc)
        task = ray.remote(_capped_call).options(num_cpus=self.num_cpus, max_retries=1)
        done = ray.get([task.remote(fn, item, self.threads) for item in items])
        self.task_cpu_s += sum(cpu for _, cpu in done)
        return [out for out, _ in done]


def make_context(kind: str, threads: int = 1):
    if kind == "local":
        return LocalContext()
    if kind == "ray":
        return RayContext(threads=threads)
    raise ValueError(f"context kind must be 'local' or 'ray'; got {kind!r}")
