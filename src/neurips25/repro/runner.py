"""Run reproductions into a run directory: seeds, scales, thread caps, resume, crash isolation, executors.

``run_methods`` is the engine behind ``neurips25 reproduce``. The unit of work is one (method, seed); each
runs through :func:`execute_unit`, a top-level function of plain arguments, in a fresh temporary folder,
and returns its result and every file it wrote. Executors (this process, local worker processes, Ray
tasks; see :mod:`repro.executors`) only call it; the driver alone writes the run directory, so a worker
on another machine needs no shared disk.

Per unit, :func:`execute_unit` puts the whole run under :func:`~neurips25.repro.threads.thread_cap` (torch,
BLAS/OpenMP and worker env vars, restored after) and records wall time and CPU time (this process plus the
child processes it waited for). The driver writes a unit's files first and its ``result.json`` last,
atomically: a run killed at any point leaves finished units complete and unfinished ones without a result,
so a re-run into the same directory runs only what is missing and never touches what finished.

Layout: with one seed a method's files are in ``<run>/<slug>/``; with several, each seed's in
``<run>/<slug>/seed-<k>/`` and ``<run>/<slug>/result.json`` combines them (see :mod:`repro.aggregate`).
``<run>/<slug>/cache/`` is the method's cache, owned by the runner: a reproduction that accepts a
``cache_dir`` keyword gets it, shared by the seeds of the run and kept when a run is killed (``--force``
empties it). On a cluster without a shared disk each node keeps its own copy under the same path.

Provenance: every unit's ``result.json`` says where and with what code it ran (host, Python, package
versions, git commit or installed version, CPU model, BLAS kernel, executor; :func:`store.provenance`).
The driver refuses a unit whose neurips25 version or commit differs from its own (a node with another
install), and a multi-seed result combines only seeds of the driver's code: a finished seed from other
code is re-run rather than mixed in.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import inspect
import logging
import resource
import shutil
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path

from neurips25.repro.aggregate import combine_results
from neurips25.repro.claims import Outcome, describe_claims, jsonable, validate_outcome
from neurips25.repro.context import make_context
from neurips25.repro.doctor import data_pieces
from neurips25.repro.executors import Executor, ProcessExecutor, SerialExecutor, Unit
from neurips25.repro.progress import interactive
from neurips25.repro.registry import EXTRA_MODULES, METHODS, get_runner, hand_verdicts_allowed, threads_for
from neurips25.repro.scale import Scale
from neurips25.repro.seeding import seed_everything
from neurips25.repro.store import (
    CACHE,
    RESULT,
    RunDir,
    atomic_write_bytes,
    atomic_write_json,
    code_identity,
    describe_code,
    provenance,
    read_json,
    same_code,
)
from neurips25.repro.threads import current_threads, thread_cap


def check_declared(slug: str, scale, outcome: Outcome) -> None:
    """A built-in reproduction records exactly the claims its ``declare_claims(scale)`` declares, unchanged."""
    from neurips25.repro.ledger import fingerprint
    from neurips25.repro.registry import declared_claims

    declared = {c.id: c for c in declared_claims(slug, str(scale))}
    got = {c.id: c for c in outcome.claims}
    if set(declared) != set(got):
        raise RuntimeError(f"{slug}: run() recorded claims {sorted(got)} but declare_claims declares "
                           f"{sorted(declared)}")
    for cid, c in got.items():
        a, b = fingerprint(c), fingerprint(declared[cid])
        diff = [k for k in a if a[k] != b[k]]
        if diff:
            raise RuntimeError(f"{slug}/{cid}: the recorded claim differs from its declaration in {diff}")


def with_ledger(slug: str, claim: dict) -> dict:
    """A claim's dict with the ledger's word on its criterion (registered / changed at which commit)."""
    from neurips25.repro import ledger

    if slug not in METHODS or METHODS[slug].module is not None:
        return claim
    data = ledger.load()
    cid = f"{slug}/{claim['id']}"
    entry = data.get("claims", {}).get(cid)
    out = dict(claim)
    out["ledger"] = ledger.change_text(data, cid)
    out["ledger_matches"] = None
    if entry is not None:
        cur = entry.get("current") or {}
        out["ledger_matches"] = all(cur.get(k) == claim.get(k) for k in ("statement", "criterion", "key",
                                                                          "threshold", "instance"))
    return out


def execute_unit(slug: str, scale: str, seed: int, context: str = "local", module: str | None = None,
                 cache_dir: str | None = None) -> dict:
    """Run one method at one seed in a temporary folder; return ``{"result": ..., "files": {path: bytes}}``.

    Never raises for a method's failure: the traceback goes to ``log.txt`` and the result says ``error``.
    ``module`` is imported first when the slug is not one of the built-in methods (a plugin on a worker).
    ``cache_dir`` is the method's cache folder (the runner's ``<run>/<slug>/cache``), handed to a
    reproduction that takes a ``cache_dir`` keyword; where it cannot be created (a node without the driver's
    disk) the unit's own temporary folder stands in. A ``KeyboardInterrupt`` propagates.
    """
    if module is not None and slug not in METHODS:
        import importlib

        importlib.import_module(module)
    scale_ = Scale.parse(scale)
    started_at = dt.datetime.now().isoformat(timespec="seconds")
    with tempfile.TemporaryDirectory(prefix=f"neurips25-{slug}-") as tmp:
        mdir = Path(tmp)
        (mdir / "figures").mkdir()
        status, error, outcome = "ok", None, Outcome([])
        threads_in_force: dict = {}
        torch = sys.modules.get("torch")
        torch_threads = torch.get_num_threads() if torch is not None else None
        t0, cpu0, children0 = time.perf_counter(), time.process_time(), _children_cpu()
        ctx = None  # the reproduction's context, if it takes one: its Ray tasks' CPU belongs to the unit
        with open(mdir / "log.txt", "w", encoding="utf-8") as log:
            handler = logging.StreamHandler(log)
            handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s: %(message)s"))
            root = logging.getLogger()
            root.addHandler(handler)
            old_level = root.level
            root.setLevel(logging.INFO)
            try:
                with contextlib.redirect_stdout(log):
                    print(f"# {slug} scale={scale_} seed={seed} started {dt.datetime.now().isoformat()}")
                    runner = get_runner(slug)
                    with thread_cap(threads_for(slug), import_torch=_uses_torch(slug)):
                        threads_in_force = current_threads()
                        seed_everything(seed)
                        kwargs = {}
                        params = inspect.signature(runner).parameters
                        if "ctx" in params:
                            kwargs["ctx"] = ctx = make_context(context, threads_for(slug))
                        if "cache_dir" in params:
                            kwargs["cache_dir"] = _usable_cache(cache_dir, Path(tmp) / "unit-cache")
                        returned = runner(scale=scale_, seed=seed, out=mdir, **kwargs)
                    outcome = returned if isinstance(returned, Outcome) else Outcome(list(returned))
                    validate_outcome(outcome, hand_verdicts_allowed=hand_verdicts_allowed(slug))
                    if not hand_verdicts_allowed(slug):
                        check_declared(slug, scale_, outcome)
            except Exception as err:  # a method's crash is recorded, the others still run
                status = "error"
                error = f"{type(err).__name__}: {err}"
                log.write("\n" + traceback.format_exc())
            finally:
                root.removeHandler(handler)
                root.setLevel(old_level)
                torch = sys.modules.get("torch")
                if torch is not None and torch_threads is not None:  # never leak a setting to the next unit
                    torch.set_num_threads(torch_threads)
        wall = time.perf_counter() - t0
        cpu = (time.process_time() - cpu0) + (_children_cpu() - children0) + getattr(ctx, "task_cpu_s", 0.0)
        files = {str(p.relative_to(mdir)): p.read_bytes() for p in sorted(mdir.rglob("*")) if p.is_file()}
        info = METHODS.get(slug)
        where = provenance(info.extra if info else "core", context, also=data_pieces(slug))
        if context == "ray":
            where["ray_node"] = _ray_node()
    figures = sorted(f for f in files if f.startswith("figures/") and f.endswith(".png"))
    result = {
        "slug": slug, "status": status, "error": error, "scale": str(scale_), "seed": seed,
        "wall_s": round(wall, 3), "cpu_s": round(cpu, 3), "threads": threads_in_force,
        "executor": context, "started_at": started_at,
        "finished_at": dt.datetime.now().isoformat(timespec="seconds"),
        "claims": [with_ledger(slug, c.to_dict()) for c in outcome.claims], "metrics": jsonable(outcome.metrics),
        "notes": outcome.notes, "figures": figures, "provenance": where,
    }
    return {"result": result, "files": files}


def _ray_node() -> dict | None:
    """The Ray node a task runs on (several nodes may share one host name), or None outside Ray."""
    try:
        import ray

        if not ray.is_initialized():
            return None
        return {"id": ray.get_runtime_context().get_node_id(), "ip": ray.util.get_node_ip_address()}
    except Exception:  # noqa: BLE001  (provenance must never fail a unit)
        return None


def _usable_cache(cache_dir: str | None, fallback: Path) -> Path:
    """The runner's cache folder when it can be created here, else ``fallback`` (it lives as long as the unit)."""
    for candidate in ([Path(cache_dir)] if cache_dir else []) + [fallback]:
        try:
            candidate.mkdir(parents=True, exist_ok=True)
            return candidate
        except OSError:
            continue
    raise OSError(f"cannot create a cache folder at {cache_dir!r} nor at {str(fallback)!r}")


def run_one(slug: str, scale: str, seed: int, run_dir: str) -> dict:
    """Run one method in this process and store it in ``run_dir`` (single-seed layout); return its result."""
    payload = execute_unit(slug, scale, seed, cache_dir=str(RunDir(run_dir).cache_dir(slug)))
    store_unit(RunDir(run_dir).method_dir(slug), payload)
    return payload["result"]


def store_unit(unit_dir: Path, payload: dict) -> None:
    """Write a unit's files, then its ``result.json`` last (atomically); stale files of a killed run go first.

    The method's cache folder and the other seeds' folders are kept."""
    unit_dir = Path(unit_dir)
    if unit_dir.is_dir():
        for child in unit_dir.iterdir():
            if (child.name.startswith("seed-") or child.name == CACHE) and child.is_dir():
                continue  # another seed's unit, or the cache the seeds share
            shutil.rmtree(child) if child.is_dir() else child.unlink()
    for rel, data in payload["files"].items():
        atomic_write_bytes(unit_dir / rel, data)
    atomic_write_json(unit_dir / RESULT, payload["result"])


def _uses_torch(slug: str) -> bool:
    """Whether the method's extra brings torch: numpy-only methods do not pay torch's import (seconds).

    Their cap still holds if they import torch anyway: ``OMP_NUM_THREADS`` is set before, and torch reads it
    when it starts."""
    info = METHODS.get(slug)
    return info is None or "torch" in EXTRA_MODULES.get(info.extra, ("torch",))


def _children_cpu() -> float:
    """CPU seconds of the child processes this process has waited for (user + system)."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def summarize(result: dict) -> str:
    """One line for a finished unit: status, times, headline verdict and the kinds counted apart."""
    if result["status"] != "ok":
        return f"error after {result.get('wall_s', 0):.0f}s ({result['error']})"
    cpu = result.get("cpu_s")
    cpu_text = f", {cpu:.0f}s CPU" if cpu is not None else ""
    return f"ok in {result['wall_s']:.0f}s wall{cpu_text} ({describe_claims(result['claims'])})"


class _Heartbeat:
    """Prints ``<what>: still running, 120s elapsed`` about every ``every`` seconds while a unit runs.

    A user watching CI or ``make demo | tee`` sees the run move even where no progress bar is drawn.
    """

    def __init__(self, echo: Callable[[str], None], every: float):
        self.echo, self.every = echo, every
        self._stop = threading.Event()
        self._what: str | None = None
        self._t0 = self._last = 0.0
        self._thread: threading.Thread | None = None

    def start(self, what: str) -> None:
        self._what, self._t0 = what, time.perf_counter()
        self._last = self._t0
        if self._thread is None and self.every > 0:
            self._thread = threading.Thread(target=self._loop, daemon=True)
            self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(min(self.every, 1.0)):
            now, what = time.perf_counter(), self._what
            if what is not None and now - self._last >= self.every:
                self._last = now
                self.echo(f"  {what}: still running, {now - self._t0:.0f}s elapsed")

    def stop(self) -> None:
        self._what = None
        self._stop.set()


def _unit_name(unit: Unit, multi: bool) -> str:
    return f"{unit[0]} seed {unit[2]}" if multi else unit[0]


def run_methods(
    slugs: list[str],
    scale: str | Scale = Scale.QUICK,
    seed: int = 0,
    out: str | Path = "runs/latest",
    jobs: int = 1,
    force: bool = False,
    executor: Executor | None = None,
    echo: Callable[[str], None] | None = None,
    heartbeat_s: float = 60.0,
    seeds: list[int] | None = None,
) -> dict[str, dict]:
    """Run the reproductions of ``slugs`` into ``out`` and return every method's result by slug.

    ``seeds`` (default ``[seed]``) runs every method at each seed; with more than one, each claim is judged
    per seed and combined (:mod:`repro.aggregate`). Units already finished in ``out`` are skipped unless
    ``force`` (their files are not touched); a directory made at another scale or seed list is refused
    rather than mixed. ``echo`` receives one line when a unit starts, one when it ends (times, verdicts)
    and a still-running line every ``heartbeat_s`` seconds; default: this terminal's stdout, even while a
    method's own output goes to its log.
    """
    scale = Scale.parse(scale)
    seeds = list(dict.fromkeys(seeds if seeds is not None else [seed]))
    if not seeds or any(isinstance(s, bool) or not isinstance(s, int) or s < 0 for s in seeds):
        raise ValueError(f"seeds must be non-negative integers; got {seeds!r}")
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1; got {jobs}")
    multi = len(seeds) > 1
    if echo is None:
        stream = sys.stdout

        def echo(line: str) -> None:
            stream.write(line + "\n")
            stream.flush()

    if executor is not None and hasattr(executor, "connect"):
        executor.connect()  # a wrong cluster address fails here, before any file or progress line
    driver_code = code_identity()
    rd = RunDir(out)
    rd.path.mkdir(parents=True, exist_ok=True)
    old = rd.config()
    old_seeds = old.get("seeds", [old["seed"]] if "seed" in old else None)
    if old and (old.get("scale") != str(scale) or old_seeds != seeds):
        raise ValueError(
            f"{rd.path} holds a run at scale={old.get('scale')} seeds={old_seeds}; "
            f"use another --out for scale={scale} seeds={seeds}"
        )
    methods = sorted(set(old.get("methods", [])) | set(slugs))
    rd.write_config({"scale": str(scale), "seed": seeds[0], "seeds": seeds, "methods": methods, "jobs": jobs,
                     "executor": getattr(executor, "kind", "local"),
                     "created": old.get("created") or dt.datetime.now().isoformat(timespec="seconds")})
    rd.write_environment()

    def unit_dir(unit: Unit) -> Path:
        return rd.method_dir(unit[0]) / f"seed-{unit[2]}" if multi else rd.method_dir(unit[0])

    per_unit: dict[Unit, dict] = {}
    todo: list[Unit] = []
    for slug in slugs:
        if force and rd.cache_dir(slug).is_dir():
            shutil.rmtree(rd.cache_dir(slug))  # a forced run recomputes what it had cached too
        for s in seeds:
            unit = (slug, str(scale), s)
            p = unit_dir(unit) / RESULT
            done = _finished(p)
            done_code = (done or {}).get("provenance", {}).get("code")
            if done is not None and not force and multi and not same_code(done_code, driver_code):
                echo(f"  {_unit_name(unit, multi)}: finished under {describe_code(done_code)}, but this run is "
                     f"{describe_code(driver_code)}: re-run (seeds combine only results of the same code)")
                todo.append(unit)
            elif done is not None and not force:
                per_unit[unit] = done
                other = "" if same_code(done_code, driver_code) else f" under {describe_code(done_code)}"
                echo(f"  {_unit_name(unit, multi)}: already finished{other}, skipped (use --force to re-run)")
            else:
                todo.append(unit)

    beat = _Heartbeat(echo, heartbeat_s)
    t_run = time.perf_counter()

    def starting(unit: Unit) -> None:
        echo(f"  {_unit_name(unit, multi)}: started at scale {scale} ({time.perf_counter() - t_run:.0f}s into "
             "the run)")
        beat.start(_unit_name(unit, multi))

    if executor is None:
        executor = ProcessExecutor(jobs) if jobs > 1 and len(todo) > 1 else SerialExecutor(before=starting)
    if not isinstance(executor, SerialExecutor) and todo:
        echo(f"  {len(todo)} unit(s) on the {executor.kind} executor: "
             f"{', '.join(_unit_name(u, multi) for u in todo)}")
        beat.start(f"{len(todo)} unit(s)")
    bar = None
    if interactive() and todo:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(todo), desc="units", unit="unit", position=0, leave=True)
    try:
        caches = {u: str(rd.cache_dir(u[0]).resolve()) for u in todo}
        for k, (unit, payload) in enumerate(_run_executor(executor, todo, caches), start=1):
            payload = _refuse_other_code(unit, payload, driver_code)
            store_unit(unit_dir(unit), payload)
            per_unit[unit] = payload["result"]
            line = (f"[{k}/{len(todo)}] {_unit_name(unit, multi)}: {summarize(payload['result'])}; "
                    f"{time.perf_counter() - t_run:.0f}s into the run")
            if bar is not None:
                bar.update(1)
                bar.write(line)
            else:
                echo(line)
    finally:
        beat.stop()
        if bar is not None:
            bar.close()

    results: dict[str, dict] = {}
    for slug in slugs:
        mine = {u[2]: r for u, r in per_unit.items() if u[0] == slug}
        if len(mine) < len(seeds):
            continue
        if multi:
            results[slug] = _with_provenance(combine_results(slug, mine), mine, driver_code)
            atomic_write_json(rd.result_path(slug), results[slug])
        else:
            results[slug] = mine[seeds[0]]
    return results


def _run_executor(executor, todo: list[Unit], caches: dict[Unit, str]):
    """``executor.run`` over ``todo``, handing each unit its method's cache folder.

    An executor whose ``run`` takes ``caches`` (Ray: a task needs a plain function) gets them as such; any
    other gets :func:`execute_unit` bound to them (a picklable partial, for worker processes)."""
    if "caches" in inspect.signature(executor.run).parameters:
        return executor.run(execute_unit, todo, caches=caches)
    return executor.run(functools.partial(_execute_with_caches, caches), todo)


def _execute_with_caches(caches: dict, slug, scale, seed, context="local", module=None):
    return execute_unit(slug, scale, seed, context=context, module=module, cache_dir=caches.get((slug, scale, seed)))


def _refuse_other_code(unit: Unit, payload: dict, driver_code: dict) -> dict:
    """The unit's payload, or an error in its place when it ran under another neurips25 version or commit."""
    res = payload["result"]
    prov = res.get("provenance") or {}
    if res.get("status") == "error" and not prov:
        return payload  # the executor's own error (a dead worker, an impossible request): nothing ran
    if same_code(prov.get("code"), driver_code):
        return payload
    error = (f"refused: {unit[0]} seed {unit[2]} ran under {describe_code(prov.get('code'))} on host "
             f"{prov.get('host', '?')}, but the driver runs {describe_code(driver_code)}; install the same "
             "neurips25 (version and commit) on every node (docs/cluster.md)")
    refused = {k: res.get(k) for k in ("slug", "scale", "seed", "wall_s", "cpu_s", "threads", "executor",
                                        "started_at", "finished_at")}
    refused.update(status="error", error=error, claims=[], metrics={}, notes="", figures=[], provenance=prov)
    return {"result": refused, "files": {}}


def _with_provenance(result: dict, per_seed: dict[int, dict], driver_code: dict) -> dict:
    """A combined result with where each seed ran, its executor, and the wall time labelled as a sum."""
    provs = {s: r.get("provenance") or {} for s, r in per_seed.items()}
    result["provenance"] = {"code": driver_code, "per_seed": {str(s): p for s, p in sorted(provs.items())}}
    executors = sorted({p.get("executor") or r.get("executor") or "?" for (s, p), r in
                        zip(sorted(provs.items()), [per_seed[s] for s in sorted(provs)])})
    result["executor"] = executors[0] if len(executors) == 1 else ",".join(executors)
    result["wall_s_is"] = f"sum of the {len(per_seed)} seeds' walls"
    starts = [r.get("started_at") for r in per_seed.values()]
    ends = [r.get("finished_at") for r in per_seed.values()]
    if all(starts) and all(ends):
        t0, t1 = min(dt.datetime.fromisoformat(t) for t in starts), max(dt.datetime.fromisoformat(t) for t in ends)
        result["elapsed_s"] = round((t1 - t0).total_seconds(), 1)  # first start to last finish
    return result


def _finished(path: Path) -> dict | None:
    """The result at ``path`` when it exists and says ok (an error or unreadable result is re-run)."""
    if not path.is_file():
        return None
    try:
        res = read_json(path)
    except (OSError, ValueError):
        return None
    return res if res.get("status") == "ok" else None
