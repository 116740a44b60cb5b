"""Executors: where the units of a run execute. A unit is one (method, seed).

Every executor calls the same top-level :func:`neurips25.repro.runner.execute_unit` and yields
``(unit, payload)`` pairs as units finish; only the driver (``run_methods``) writes to the run directory.

- :class:`SerialExecutor`: one unit after the other in this process.
- :class:`ProcessExecutor`: ``jobs`` local worker processes.
- :class:`RayExecutor`: one Ray task per unit, with resource hints (CPUs, memory, GPUs) per method; on a
  local Ray instance (default, with every CPU of the machine) or a cluster (``address``). It fails fast:
  :meth:`RayExecutor.connect` gives up on an address it cannot reach within ``connect_timeout_s`` (30 s),
  and a unit whose request no node can meet comes back at once as an error naming the request and the
  largest node. A worker that dies is retried (``max_retries``); a unit that still fails comes back as an
  error payload, and the run goes on.
"""

from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import logging
import os
import socket
import threading
import time
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
        from neurips25.repro.store import code_identity

        # the workers run this process's files: they share its code identity, also when spawned, not forked
        with cf.ProcessPoolExecutor(max_workers=self.jobs, initializer=_adopt_code_identity,
                                    initargs=(code_identity(),)) as pool:
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
        CPUs of the local instance (ignored with ``address``); default: every CPU of the machine.
    connect_timeout_s : float
        How long :meth:`connect` waits for the cluster at ``address`` before it raises ``ConnectionError``.
    check_resources : bool
        Refuse, before submitting, a unit whose request no node of the cluster can meet (turn it off for an
        autoscaling cluster that adds larger nodes on demand).
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
                 runtime_env: dict | None = None, modules: dict[str, str] | None = None,
                 connect_timeout_s: float = 30.0, check_resources: bool = True):
        from neurips25.extras import require

        if address is not None and (not isinstance(address, str) or not address.strip()):
            raise ValueError(f"address must be a non-empty string such as 'auto' or 'host:6379'; got {address!r}")
        if isinstance(connect_timeout_s, bool) or not isinstance(connect_timeout_s, int | float) \
                or not connect_timeout_s > 0:
            raise ValueError(f"connect_timeout_s must be a positive number of seconds; got {connect_timeout_s!r}")
        self.ray = require("ray", "cluster")
        self.address, self.num_cpus, self.max_retries = address, num_cpus, max_retries
        self.runtime_env = runtime_env
        self.modules = modules or {}
        self.connect_timeout_s = float(connect_timeout_s)
        self.check_resources = check_resources
        self._started_here = False

    def connect(self) -> None:
        """Connect to the cluster (or start the local instance) now; fail within ``connect_timeout_s``.

        Raises ``ConnectionError`` naming the address when nothing answers there in time: the run then stops
        before it writes a file or prints a progress line."""
        if self.ray.is_initialized():
            return
        if not self.address:
            self._init()
            return
        deadline = time.monotonic() + self.connect_timeout_s
        host_port = _host_port(self.address)
        if host_port is not None:
            try:
                socket.create_connection(host_port, timeout=self.connect_timeout_s).close()
            except OSError as err:
                raise ConnectionError(f"no Ray cluster at --address {self.address}: cannot open "
                                      f"{host_port[0]}:{host_port[1]} ({err})") from None
        # ray.init itself retries for minutes against a port that answers but is not (or not yet) Ray's:
        # run it in a thread and stop waiting at the deadline
        failure: list[BaseException] = []

        def init() -> None:
            try:
                self._init()
            except BaseException as err:  # noqa: BLE001  (handed to the caller's thread)
                failure.append(err)

        ray_log = logging.getLogger("ray._private.worker")  # "SIGTERM handler is not set ... not the main thread"
        level = ray_log.level
        ray_log.setLevel(logging.ERROR)
        worker = threading.Thread(target=init, name="neurips25-ray-connect", daemon=True)
        worker.start()
        worker.join(max(deadline - time.monotonic(), 0.1))
        ray_log.setLevel(level)
        token = "" if os.environ.get("RAY_AUTH_MODE") else (
            "; if the cluster uses token authentication (Ray's default for `ray start --head`), set "
            "RAY_AUTH_MODE=token and copy ~/.ray/auth_token from the head node")
        if worker.is_alive():
            raise ConnectionError(f"could not connect to the Ray cluster at --address {self.address} within "
                                  f"{self.connect_timeout_s:.0f} s{token}")
        if failure:
            raise ConnectionError(f"could not connect to the Ray cluster at --address {self.address}: "
                                  f"{type(failure[0]).__name__}: {str(failure[0]).splitlines()[0][:300]}{token}")

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
            # this instance's workers import this driver's files: they share its code identity (store.code_identity)
            import json

            from neurips25.repro.store import CODE_IDENTITY_ENV, code_identity

            env = dict(kwargs.get("runtime_env") or {})
            env["env_vars"] = {**env.get("env_vars", {}), CODE_IDENTITY_ENV: json.dumps(code_identity())}
            kwargs["runtime_env"] = env
            # Ray waits a fixed 30 s for a new local node's raylet; on a loaded 2-core machine that can run out,
            # so a local instance gets up to three tries
            for attempt in range(3):
                try:
                    # "local": a new instance even where a cluster already runs on this machine (ray.init()
                    # alone would join it, and refuse num_cpus)
                    ray.init(address="local", num_cpus=self.num_cpus, **kwargs)
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

    def nodes(self) -> list[dict]:
        """The cluster's live nodes: ``{"host", "address", "cpus", "memory_gb", "gpus"}`` each."""
        out = []
        for node in self.ray.nodes():
            if not node.get("Alive", True):
                continue
            r = node.get("Resources", {})
            out.append({"host": node.get("NodeManagerHostname", "?"), "address": node.get("NodeManagerAddress", "?"),
                        "cpus": float(r.get("CPU", 0.0)), "memory_gb": float(r.get("memory", 0.0)) / 2**30,
                        "gpus": float(r.get("GPU", 0.0))})
        return out

    def node_codes(self, timeout_s: float | None = None) -> list[dict]:
        """Ask every live node which neurips25 it runs: ``{"node", "host", "address", "code"}`` per node.

        One zero-CPU task pinned to each node (so a busy node answers too) imports neurips25 there, as a unit
        would. A node that does not answer within ``timeout_s`` (default ``connect_timeout_s``) has code None."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        ray = self.ray
        probe = ray.remote(_node_code)
        refs = {}
        for node in ray.nodes():
            if node.get("Alive", True):
                strategy = NodeAffinitySchedulingStrategy(node_id=node["NodeID"], soft=False)
                refs[probe.options(num_cpus=0, scheduling_strategy=strategy, max_retries=0).remote()] = node
        ready, _ = ray.wait(list(refs), num_returns=len(refs), timeout=timeout_s or self.connect_timeout_s)
        out = []
        for ref, node in refs.items():
            code = ray.get(ref) if ref in ready else None
            out.append({"node": node["NodeID"], "host": node.get("NodeManagerHostname", "?"),
                        "address": node.get("NodeManagerAddress", "?"), "code": code})
        return out

    def infeasible(self, slug: str, nodes: list[dict] | None = None) -> str | None:
        """Why no node can run a unit of ``slug`` (naming its request and the largest node), or None."""
        res = RESOURCES.get(slug, Resources())
        nodes = self.nodes() if nodes is None else nodes
        if any(n["cpus"] >= res.cpus and n["memory_gb"] >= res.memory_gb and n["gpus"] >= res.gpus for n in nodes):
            return None
        if not nodes:
            return f"{slug} asks for {_describe(res)}, but the Ray cluster has no live node"
        big = max(nodes, key=lambda n: (n["memory_gb"], n["cpus"], n["gpus"]))
        return (f"no node of the Ray cluster can meet {slug}'s request of {_describe(res)}; the largest node, "
                f"{big['host']} ({big['address']}), has {big['cpus']:g} CPU, {big['memory_gb']:.1f} GB memory and "
                f"{big['gpus']:g} GPU (executors.RESOURCES sets the request; start a larger node)")

    def run(self, fn, units, caches: dict | None = None):
        ray = self.ray
        self.connect()
        remote = ray.remote(fn)
        pending = {}
        nodes = self.nodes() if self.check_resources else None
        for unit in units:
            why = self.infeasible(unit[0], nodes) if self.check_resources else None
            if why is not None:  # Ray would queue it forever (its warning is not forwarded to the driver)
                yield unit, error_payload(unit, why)
                continue
            res = RESOURCES.get(unit[0], Resources())
            ref = remote.options(num_cpus=res.cpus, memory=int(res.memory_gb * 2**30), num_gpus=res.gpus,
                                 max_retries=self.max_retries, retry_exceptions=False).remote(
                *unit, context="ray", module=self._module(unit[0]), cache_dir=(caches or {}).get(unit))
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


def _adopt_code_identity(code: dict) -> None:
    """In a local worker process: take the driver's code identity (see ``store.code_identity``)."""
    import json

    from neurips25.repro.store import CODE_IDENTITY_ENV, code_identity

    os.environ[CODE_IDENTITY_ENV] = json.dumps(code)
    code_identity.cache_clear()


def _node_code() -> dict:
    """Runs on a node: the neurips25 version and commit installed there (see ``store.code_identity``)."""
    from neurips25.repro.store import code_identity

    return code_identity()


def _describe(res: Resources) -> str:
    return f"{res.cpus:g} CPU, {res.memory_gb:g} GB memory and {res.gpus:g} GPU"


def _host_port(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of a GCS (``host:port``) or Ray client (``ray://host:port``) address; None for ``auto``."""
    addr = address.strip()
    if addr == "auto" or addr.startswith("local"):
        return None
    default = 6379
    if addr.startswith("ray://"):
        addr, default = addr[len("ray://"):], 10001
    host, _, port = addr.rpartition(":") if ":" in addr else (addr, "", "")
    try:
        return host.strip("[]") or "127.0.0.1", int(port) if port else default
    except ValueError:
        raise ValueError(f"address must look like host:port, ray://host:port or auto; got {address!r}") from None
