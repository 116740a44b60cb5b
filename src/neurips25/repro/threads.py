"""Thread control for reproductions: one cap on torch, BLAS/OpenMP and worker processes, restored after.

Why: on a 2-core machine shared with other jobs, torch's intra-op pool and numpy's BLAS pool each default to
every core; small-matrix workloads then spend more time synchronising than computing (a review measured one
method 12-15x slower). Capping torch alone is not enough (BLAS still spawns threads), and capping before torch
is imported is not enough either (torch reads its defaults on import). :func:`thread_cap` therefore

1. imports torch first when it is installed, and sets its intra-op threads;
2. caps every BLAS/OpenMP pool loaded in the process with threadpoolctl (numpy's OpenBLAS, torch's OpenMP/MKL);
3. sets ``OMP_NUM_THREADS`` & co. so that worker processes a method starts inherit the cap;

and restores all three when the block ends, so a method never changes the settings of the one after it.
The runner wraps every method's whole run in it; a method's ``reproduce.py`` never sets threads itself.
"""

from __future__ import annotations

import contextlib
import importlib.util
import numbers
import os
import sys

#: environment variables read by OpenMP, the BLAS libraries and tokenizers when a process starts
THREAD_ENV_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "BLIS_NUM_THREADS",
                   "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")


def _check_n(n) -> int:
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or int(n) < 1:
        raise ValueError(f"n (threads) must be an integer >= 1; got {n!r}")
    return int(n)


def _torch(import_it: bool):
    torch = sys.modules.get("torch")
    if torch is None and import_it and importlib.util.find_spec("torch") is not None:
        import torch  # noqa: PLC0415  (imported here so that its pools exist before they are capped)
    return torch


def current_threads() -> dict:
    """The thread settings in force now: torch intra-op threads, each BLAS/OpenMP pool, the env vars."""
    from threadpoolctl import threadpool_info

    torch = sys.modules.get("torch")
    return {
        "torch": torch.get_num_threads() if torch is not None else None,
        "pools": {f"{p['internal_api']}:{os.path.basename(p['filepath'])}": p["num_threads"]
                  for p in threadpool_info()},
        "env": {k: os.environ.get(k) for k in THREAD_ENV_VARS},
    }


@contextlib.contextmanager
def thread_cap(n: int = 1, import_torch: bool = True):
    """Cap torch, every BLAS/OpenMP pool and the worker-process env vars at ``n`` threads inside the block.

    Parameters
    ----------
    n : int
        Threads allowed (>= 1).
    import_torch : bool
        Import torch first when installed (default), so its pools are capped whatever the import order.

    Example
    -------
    >>> with thread_cap(1):
    ...     current_threads()["env"]["OMP_NUM_THREADS"]
    '1'
    """
    n = _check_n(n)
    from threadpoolctl import threadpool_limits

    torch = _torch(import_torch)
    if importlib.util.find_spec("scipy") is not None:
        import scipy.linalg  # noqa: F401, PLC0415  (scipy's own BLAS, loaded now so that it is capped too)
    old_torch = torch.get_num_threads() if torch is not None else None
    old_env = {k: os.environ.get(k) for k in THREAD_ENV_VARS}
    for k in THREAD_ENV_VARS:
        os.environ[k] = str(n)
    if torch is not None:
        torch.set_num_threads(n)
    try:
        with threadpool_limits(n):
            yield
    finally:
        torch_now = sys.modules.get("torch")
        if torch_now is not None:
            # torch imported inside the block starts from the machine default; restore that or the old value
            torch_now.set_num_threads(old_torch if old_torch is not None else (os.cpu_count() or 1))
        for k, v in old_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@contextlib.contextmanager
def limit_threads(n: int = 1, blas: bool = False):
    """Deprecated inner cap kept for user code: torch (and with ``blas`` the BLAS pools) at ``n``.

    Reproductions no longer need it: the runner applies :func:`thread_cap` to every method's whole run.
    """
    n = _check_n(n)
    from threadpoolctl import threadpool_limits

    torch = sys.modules.get("torch")
    old = torch.get_num_threads() if torch is not None else None
    if torch is not None:
        torch.set_num_threads(n)
    try:
        with threadpool_limits(n) if blas else contextlib.nullcontext():
            yield
    finally:
        if torch is not None:
            torch.set_num_threads(old)
