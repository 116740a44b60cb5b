"""Executors: where the units of a run execute. A unit is one (method, seed).

Every executor calls the same top-level :func:`neurips25.repro.runner.execute_unit` and yields
``(unit, payload)`` pairs as units finish; only the driver (``run_methods``) writes to the run directory.

- :class:`SerialExecutor`: one unit after the other in this process.
- :class:`ProcessExecutor`: ``jobs`` local worker processes.
- :class:`RayExecutor`: one Ray task per unit, with resource hints (CPUs, memory, GPUs) per method; on a
  local Ray instance (default) or a cluster (``address``). A worker that dies is retried (``max_retries``);
  a unit that still fails comes back as an error payload, and the run goes on.
"""

from __future__ import annotations

import concurrent.futures as cf
import dataclasses
from collections.abc import Callable, Iterable, Iterator
from typing import Protocol

Unit = tuple[str, str, int]  # slug, scale, seed
Payload = dict  # {"result": dict, "files": {relative path: bytes}}


class Executor(Protocol):
    kind: str

    def run(self, fn: Callable[..., Payload], units: Iterable[Unit]) -> Iterator[tuple[Unit, Payload]]: ...


class SerialExecutor:
    """Runs units one after the other in this process."""

    kind = "local"

    def __init__(self, before: Callable[[Unit], None] | None = None):
        self.before = before

    def run(self, fn, units):
        for unit in units:
            if self.before is not None:
                self.before(unit)
            yield unit, fn(*unit, context="local")


class ProcessExecutor:
    """Runs units in ``jobs`` local worker processes."""

    kind = "local"

    def __init__(self, jobs: int):
        if jobs < 1:
            raise ValueError(f"jobs must be >= 1; got {jobs}")
        self.jobs = jobs

    def run(self, fn, units):
        with cf.ProcessPoolExecutor(max_workers=self.jobs) as pool:
            futures = {pool.submit(fn, *unit, context="local"): unit for unit in units}
            for fut in cf.as_completed(futures):
                yield futures[fut], fut.result()


@dataclasses.dataclass(frozen=True)
class Resources:
    """What one unit of a method asks the scheduler for."""

    cpus: float = 1.0
    memory_gb: float = 2.0
    gpus: float = 0.0


#: resource hints per method (default: Resources()); methods that load a pretrained LM need more memory
RESOURCES: dict[str, Resources] = {
    "eva": Resources(memory_gb=6.0), "chemcot": Resources(memory_gb=4.0), "scm": Resources(memory_gb=6.0),
    "narrow_gate": Resources(memory_gb=3.0), "shoefit": Resources(memory_gb=4.0, gpus=0.0),
    "behavior_injection": Resources(memory_gb=3.0), "inverse3d": Resources(memory_gb=3.0),
}


def error_payload(unit: Unit, error: str) -> Payload:
    slug, scale, seed = unit
    return {"result": {"slug": slug, "status": "error", "error": error, "scale": scale, "seed": seed,
                       "wall_s": 0.0, "cpu_s": None, "threads": {}, "claims": [], "metrics": {}, "notes": "",
                       "figures": []}, "files": {}}


class RayExecutor:
    """One Ray task per unit; results gathered by the driver as they finish.

    Parameters
    ----------
    address : str, optional
        A running cluster (``"auto"``, ``"ray://host:10001"``, ``"host:6379"``); default: start a local
        Ray instance with ``num_cpus`` CPUs.
    num_cpus : int, optional
        CPUs of the local instance (ignored with ``address``).
    max_retries : int
        Times a unit is retried when its worker process dies (a method's own exception is not retried: it
        is recorded in the result like any local crash).
    runtime_env : dict, optional
        Passed to ``ray.init`` (e.g. ``{"env_vars": {...}}``).
    modules : dict, optional
        For methods outside the built-in ones (plugins), the module a worker imports to register them;
        default: the module the method registered from (it must be importable on the workers).
    """

    kind = "ray"

    def __init__(self, address: str | None = None, num_cpus: int | None = None, max_retries: int = 1,
                 runtime_env: dict | None = None, modules: dict[str, str] | None = None):
        from neurips25.extras import require

        self.ray = require("ray", "cluster")
        self.address, self.num_cpus, self.max_retries = address, num_cpus, max_retries
        self.runtime_env = runtime_env
        self.modules = modules or {}
        self._started_here = False

    def _init(self) -> None:
        ray = self.ray
        if ray.is_initialized():
            return
        kwargs = {"ignore_reinit_error": True, "include_dashboard": False, "log_to_driver": False,
                  "configure_logging": False}
        if self.runtime_env:
            kwargs["runtime_env"] = self.runtime_env
        if self.address:
            ray.init(address=self.address, **kwargs)
        else:
            # Ray waits a fixed 30 s for a new local node's raylet; on a loaded 2-core machine that can run out,
            # so a local instance gets up to three tries
            for attempt in range(3):
                try:
                    ray.init(num_cpus=self.num_cpus, **kwargs)
                    break
                except Exception as err:  # noqa: BLE001  (Ray raises a bare Exception for this timeout)
                    if "timed out during startup" not in str(err) or attempt == 2:
                        raise
                    ray.shutdown()
        self._started_here = True

    def shutdown(self) -> None:
        if self._started_here and self.ray.is_initialized():
            self.ray.shutdown()
            self._started_here = False

    def _module(self, slug: str) -> str | None:
        """The module a worker imports to find a plugin method: given in ``modules``, else where it registered."""
        if slug in self.modules:
            return self.modules[slug]
        from neurips25.repro.registry import METHODS

        info = METHODS.get(slug)
        module = getattr(info, "module", None)
        return module if module not in (None, "__main__") else None

    def run(self, fn, units):
        ray = self.ray
        self._init()
        remote = ray.remote(fn)
        pending = {}
        for unit in units:
            res = RESOURCES.get(unit[0], Resources())
            ref = remote.options(num_cpus=res.cpus, memory=int(res.memory_gb * 2**30), num_gpus=res.gpus,
                                 max_retries=self.max_retries, retry_exceptions=False).remote(
                *unit, context="ray", module=self._module(unit[0]))
            pending[ref] = unit
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                unit = pending.pop(ref)
                try:
                    payload = ray.get(ref)
                except Exception as err:  # the worker died (after retries) or the task could not run
                    payload = error_payload(unit, f"{type(err).__name__}: {str(err).splitlines()[0][:300]}")
                yield unit, payload
