"""Thread limits for a reproduction: small-tensor workloads run faster and steadier on one thread.

On a 2-core machine shared with other jobs, torch's default intra-op threads and the BLAS pools of numpy
can spend more time synchronising than computing on the small matrices most reproductions use, and make
timings noisy. :func:`limit_threads` caps both for the duration of a block and restores them after, so a
method never changes the settings of the methods that run after it in the same process.
"""

from __future__ import annotations

import contextlib
import sys


@contextlib.contextmanager
def limit_threads(n: int = 1, blas: bool = False):
    """Cap torch intra-op threads (when torch is imported) at ``n``, and with ``blas`` also the BLAS/OpenMP
    pools of numpy and scipy; restore everything after."""
    if int(n) < 1:
        raise ValueError(f"n must be >= 1; got {n}")
    from threadpoolctl import threadpool_limits

    torch = sys.modules.get("torch")
    old = torch.get_num_threads() if torch is not None else None
    if torch is not None:
        torch.set_num_threads(int(n))
    try:
        with threadpool_limits(int(n)) if blas else contextlib.nullcontext():
            yield
    finally:
        if torch is not None:
            torch.set_num_threads(old)
