"""Run reproductions into a run directory: seeds, scales, thread caps, resume, crash isolation, executors.

``run_methods`` is the engine behind ``neurips25 reproduce``. Each method runs through
:func:`run_one`, a top-level function of plain arguments, so any executor that can call a function
in another process (the local process pool here, Ray or a batch system later) can run it without
the methods knowing.

Per method, :func:`run_one` puts the whole run under :func:`~neurips25.repro.threads.thread_cap` (torch,
BLAS/OpenMP and worker env vars, restored after), records wall time and CPU time (this process plus the
child processes it waited for), and writes ``result.json`` atomically as the very last step: a method
killed at any point leaves no result and is re-run on resume, while finished methods are never touched.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import datetime as dt
import logging
import resource
import shutil
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Protocol

from neurips25.repro.claims import Outcome, Verdict, describe_claims, jsonable
from neurips25.repro.progress import interactive
from neurips25.repro.registry import get_runner, threads_for
from neurips25.repro.scale import Scale
from neurips25.repro.seeding import seed_everything
from neurips25.repro.store import RunDir, read_json
from neurips25.repro.threads import current_threads, thread_cap

Task = tuple[str, str, int, str]  # slug, scale, seed, run directory


def run_one(slug: str, scale: str, seed: int, run_dir: str) -> dict:
    """Run one method's reproduction and save its result; never raises for a method's failure.

    The method's printed output and any traceback go to ``<slug>/log.txt``. A ``KeyboardInterrupt``
    propagates (nothing is written for the interrupted method, finished ones are kept).
    """
    rd = RunDir(run_dir)
    mdir = rd.method_dir(slug)
    if rd.figures_dir(slug).is_dir():  # leftovers of an interrupted run: start clean
        shutil.rmtree(rd.figures_dir(slug))
    rd.figures_dir(slug).mkdir(parents=True, exist_ok=True)
    scale_ = Scale.parse(scale)
    status, error, outcome = "ok", None, Outcome([])
    threads_in_force: dict = {}
    torch = sys.modules.get("torch")
    torch_threads = torch.get_num_threads() if torch is not None else None
    t0, cpu0, children0 = time.perf_counter(), time.process_time(), _children_cpu()
    with open(rd.log_path(slug), "w", encoding="utf-8") as log:
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
                with thread_cap(threads_for(slug)):
                    threads_in_force = current_threads()
                    seed_everything(seed)
                    returned = runner(scale=scale_, seed=seed, out=mdir)
                outcome = returned if isinstance(returned, Outcome) else Outcome(list(returned))
                pending = [c.id for c in outcome.claims if c.verdict is Verdict.PENDING]
                if pending:
                    raise RuntimeError(f"claims left unjudged: {pending}")
        except Exception as err:  # a method's crash is recorded, the others still run
            status = "error"
            error = f"{type(err).__name__}: {err}"
            log.write("\n" + traceback.format_exc())
        finally:
            root.removeHandler(handler)
            root.setLevel(old_level)
            torch = sys.modules.get("torch")
            if torch is not None:  # a method must not leave its thread setting to the next one
                torch.set_num_threads(torch_threads or torch.get_num_threads())
    wall = time.perf_counter() - t0
    cpu = (time.process_time() - cpu0) + (_children_cpu() - children0)
    figures = sorted(str(p.relative_to(mdir)) for p in rd.figures_dir(slug).glob("*.png"))
    result = {
        "slug": slug,
        "status": status,
        "error": error,
        "scale": str(scale_),
        "seed": seed,
        "wall_s": round(wall, 3),
        "cpu_s": round(cpu, 3),
        "threads": threads_in_force,
        "finished_at": dt.datetime.now().isoformat(timespec="seconds"),
        "claims": [c.to_dict() for c in outcome.claims],
        "metrics": jsonable(outcome.metrics),
        "notes": outcome.notes,
        "figures": figures,
    }
    rd.write_result(slug, result)
    return result


def _children_cpu() -> float:
    """CPU seconds of the child processes this process has waited for (user + system)."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


class Executor(Protocol):
    """Runs tasks and yields their results as they finish."""

    def run(self, fn: Callable[..., dict], tasks: Iterable[Task]) -> Iterator[dict]: ...


class SerialExecutor:
    """Runs tasks one after the other in this process."""

    def __init__(self, before: Callable[[str], None] | None = None):
        self.before = before

    def run(self, fn, tasks):
        for task in tasks:
            if self.before is not None:
                self.before(task[0])
            yield fn(*task)


class ProcessExecutor:
    """Runs tasks in ``jobs`` worker processes (one method per process at a time)."""

    def __init__(self, jobs: int):
        self.jobs = jobs

    def run(self, fn, tasks):
        with cf.ProcessPoolExecutor(max_workers=self.jobs) as pool:
            futures = [pool.submit(fn, *task) for task in tasks]
            for fut in cf.as_completed(futures):
                yield fut.result()


def summarize(result: dict) -> str:
    """One line for a finished method: status, times, headline verdict and the kinds counted apart."""
    if result["status"] != "ok":
        return f"error after {result.get('wall_s', 0):.0f}s ({result['error']})"
    cpu = result.get("cpu_s")
    cpu_text = f", {cpu:.0f}s CPU" if cpu is not None else ""
    return f"ok in {result['wall_s']:.0f}s wall{cpu_text} ({describe_claims(result['claims'])})"


class _Heartbeat:
    """Prints ``<slug>: still running, 120s elapsed`` every ``every`` seconds while a method runs.

    A user watching CI or ``make demo | tee`` sees the run move even where no progress bar is drawn.
    """

    def __init__(self, echo: Callable[[str], None], every: float):
        self.echo, self.every = echo, every
        self._stop = threading.Event()
        self._slug: str | None = None
        self._t0 = 0.0
        self._thread: threading.Thread | None = None

    def start(self, slug: str) -> None:
        self._slug, self._t0 = slug, time.perf_counter()
        if self._thread is None and self.every > 0:
            self._thread = threading.Thread(target=self._loop, daemon=True)
            self._thread.start()

    def _loop(self) -> None:
        while not self._stop.wait(self.every):
            slug = self._slug
            if slug is not None:
                self.echo(f"  {slug}: still running, {time.perf_counter() - self._t0:.0f}s elapsed")

    def stop(self) -> None:
        self._slug = None
        self._stop.set()


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
) -> dict[str, dict]:
    """Run the reproductions of ``slugs`` into ``out`` and return every result by slug.

    Methods already finished in ``out`` are skipped unless ``force`` (their files are not touched);
    a directory made at another scale or seed is refused rather than mixed. ``echo`` receives one line
    when a method starts, one when it ends (times and verdicts) and, every ``heartbeat_s`` seconds, a
    still-running line; default: the terminal's stdout, even while a method's own output goes to its log.
    """
    if echo is None:
        stream = sys.stdout

        def echo(line: str) -> None:
            stream.write(line + "\n")
            stream.flush()
    scale = Scale.parse(scale)
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1; got {jobs}")
    rd = RunDir(out)
    rd.path.mkdir(parents=True, exist_ok=True)
    old = rd.config()
    if old and (old.get("scale") != str(scale) or old.get("seed") != seed):
        raise ValueError(
            f"{rd.path} holds a run at scale={old.get('scale')} seed={old.get('seed')}; "
            f"use another --out for scale={scale} seed={seed}"
        )
    methods = sorted(set(old.get("methods", [])) | set(slugs))
    rd.write_config({"scale": str(scale), "seed": seed, "methods": methods, "jobs": jobs,
                     "created": old.get("created") or dt.datetime.now().isoformat(timespec="seconds")})
    rd.write_environment()

    results: dict[str, dict] = {}
    todo: list[Task] = []
    for slug in slugs:
        if rd.finished(slug) and not force:
            results[slug] = read_json(rd.result_path(slug))
            echo(f"  {slug}: already finished, skipped (use --force to re-run)")
        else:
            todo.append((slug, str(scale), seed, str(rd.path)))

    beat = _Heartbeat(echo, heartbeat_s)
    t_run = time.perf_counter()

    def starting(slug: str) -> None:
        echo(f"  {slug}: started at scale {scale} ({time.perf_counter() - t_run:.0f}s into the run)")
        beat.start(slug)

    if executor is None:
        if jobs > 1 and len(todo) > 1:
            executor = ProcessExecutor(jobs)
            echo(f"  {len(todo)} method(s) in {jobs} worker processes: {', '.join(t[0] for t in todo)}")
            beat.start(f"{len(todo)} method(s)")
        else:
            executor = SerialExecutor(before=starting)
    bar = None
    if interactive() and todo:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(todo), desc="methods", unit="method", position=0, leave=True)
    try:
        for k, result in enumerate(executor.run(run_one, todo), start=1):
            results[result["slug"]] = result
            line = (f"[{k}/{len(todo)}] {result['slug']}: {summarize(result)}; "
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
    return {s: results[s] for s in slugs if s in results}
