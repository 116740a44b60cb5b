"""Run reproductions into a run directory: seeds, scales, resume, crash isolation, executors.

``run_methods`` is the engine behind ``neurips25 reproduce``. Each method runs through
:func:`run_one`, a top-level function of plain arguments, so any executor that can call a function
in another process (the local process pool here, Ray or a batch system later) can run it without
the methods knowing.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import datetime as dt
import logging
import sys
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Protocol

from neurips25.repro.claims import Outcome, Verdict, jsonable
from neurips25.repro.progress import interactive
from neurips25.repro.registry import get_runner
from neurips25.repro.scale import Scale
from neurips25.repro.seeding import seed_everything
from neurips25.repro.store import RunDir, read_json

Task = tuple[str, str, int, str]  # slug, scale, seed, run directory


def run_one(slug: str, scale: str, seed: int, run_dir: str) -> dict:
    """Run one method's reproduction and save its result; never raises for a method's failure.

    The method's printed output and any traceback go to ``<slug>/log.txt``. A ``KeyboardInterrupt``
    propagates (nothing is written for the interrupted method, finished ones are kept).
    """
    rd = RunDir(run_dir)
    mdir = rd.method_dir(slug)
    rd.figures_dir(slug).mkdir(parents=True, exist_ok=True)
    scale_ = Scale.parse(scale)
    status, error, outcome = "ok", None, Outcome([])
    torch = sys.modules.get("torch")
    torch_threads = torch.get_num_threads() if torch is not None else None
    t0 = time.perf_counter()
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
    figures = sorted(str(p.relative_to(mdir)) for p in rd.figures_dir(slug).glob("*.png"))
    result = {
        "slug": slug,
        "status": status,
        "error": error,
        "scale": str(scale_),
        "seed": seed,
        "wall_s": round(wall, 3),
        "finished_at": dt.datetime.now().isoformat(timespec="seconds"),
        "claims": [c.to_dict() for c in outcome.claims],
        "metrics": jsonable(outcome.metrics),
        "notes": outcome.notes,
        "figures": figures,
    }
    rd.write_result(slug, result)
    return result


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
    if result["status"] != "ok":
        return f"error ({result['error']})"
    counts: dict[str, int] = {}
    for c in result["claims"]:
        counts[c["verdict"]] = counts.get(c["verdict"], 0) + 1
    parts = ", ".join(f"{n} {v.replace('_', ' ')}" for v, n in counts.items())
    return f"ok in {result['wall_s']:.1f}s ({parts or 'no claims'})"


def run_methods(
    slugs: list[str],
    scale: str | Scale = Scale.QUICK,
    seed: int = 0,
    out: str | Path = "runs/latest",
    jobs: int = 1,
    force: bool = False,
    executor: Executor | None = None,
    echo: Callable[[str], None] = print,
) -> dict[str, dict]:
    """Run the reproductions of ``slugs`` into ``out`` and return every result by slug.

    Methods already finished in ``out`` are skipped unless ``force``; a directory made at another
    scale or seed is refused rather than mixed.
    """
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

    if executor is None:
        if jobs > 1 and len(todo) > 1:
            executor = ProcessExecutor(jobs)
        else:
            executor = SerialExecutor(before=lambda s: echo(f"  {s}: running at scale {scale} ..."))
    bar = None
    if interactive() and todo:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(todo), desc="methods", unit="method", position=0, leave=True)
    for k, result in enumerate(executor.run(run_one, todo), start=1):
        results[result["slug"]] = result
        line = f"[{k}/{len(todo)}] {result['slug']}: {summarize(result)}"
        if bar is not None:
            bar.update(1)
            bar.write(line)
        else:
            echo(line)
    if bar is not None:
        bar.close()
    return {s: results[s] for s in slugs if s in results}
