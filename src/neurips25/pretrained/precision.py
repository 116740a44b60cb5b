"""CPU precision choice shared by the methods: bfloat16 only where this CPU runs it faster than float32.

bfloat16 halves a matrix product's time on CPUs with native bf16 units (AVX512-BF16, AMX) but is emulated,
often 10-50x slower, elsewhere (AVX2, plain AVX512). :func:`choose_cpu_dtype` resolves ``"auto"`` with a one-off
timed probe (a small matrix product in each dtype, a few milliseconds), cached for the process, and logs the
choice; an explicit ``"bfloat16"`` / ``"float32"`` is returned as asked.
"""

from __future__ import annotations

import logging
import time

log = logging.getLogger(__name__)

#: bfloat16 is chosen when its product takes at most this fraction of the float32 one
SPEEDUP_REQUIRED = 0.8
_CHOICES = ("auto", "bfloat16", "float32")
_cache: dict = {}


def _best_of(fn, reps: int) -> float:
    best = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def probe_bf16_speed(size: int = 256, reps: int = 5) -> float:
    """Time of a ``size`` x ``size`` matrix product in bfloat16 over the same in float32 (best of ``reps``).

    Below 1, bfloat16 is faster on this CPU. Runs under the current torch thread setting.
    """
    import torch

    g = torch.Generator().manual_seed(0)
    a32 = torch.randn(size, size, generator=g)
    b32 = torch.randn(size, size, generator=g)
    a16, b16 = a32.bfloat16(), b32.bfloat16()
    with torch.no_grad():
        torch.mm(a32, b32), torch.mm(a16, b16)  # warm-up (first-call dispatch, allocator)
        t32 = _best_of(lambda: torch.mm(a32, b32), reps)
        t16 = _best_of(lambda: torch.mm(a16, b16), reps)
    return t16 / max(t32, 1e-9)


def bf16_is_fast() -> bool:
    """Whether bfloat16 matrix products beat float32 on this CPU (probed once per process, then cached)."""
    if "fast" not in _cache:
        import torch

        ratio = probe_bf16_speed()
        _cache["ratio"], _cache["fast"] = ratio, ratio <= SPEEDUP_REQUIRED
        log.info("CPU %s: a bfloat16 matrix product takes %.2fx the float32 time; bfloat16 is %s",
                 torch.backends.cpu.get_cpu_capability(), ratio, "used" if _cache["fast"] else "not used")
    return _cache["fast"]


def choose_cpu_dtype(requested: str = "auto"):
    """The torch dtype for CPU work: ``"auto"`` -> bfloat16 if :func:`bf16_is_fast`, else float32.

    Parameters
    ----------
    requested : {"auto", "bfloat16", "float32"} or torch.dtype
        ``"auto"`` probes (once per process); anything else is returned as asked.

    Returns
    -------
    torch.dtype
        ``torch.bfloat16`` or ``torch.float32``.
    """
    import torch

    if isinstance(requested, torch.dtype) and requested in (torch.bfloat16, torch.float32):
        return requested
    if requested not in _CHOICES:
        raise ValueError(f"`requested` must be one of {', '.join(_CHOICES)} (or torch.bfloat16 / torch.float32); "
                         f"got {requested!r}")
    if requested == "auto":
        dtype = torch.bfloat16 if bf16_is_fast() else torch.float32
        log.info("precision 'auto' -> %s", str(dtype).removeprefix("torch."))
        return dtype
    return getattr(torch, requested)


def cpu_autocast_bf16(requested="auto") -> bool:
    """Whether to run under CPU bfloat16 autocast: ``True`` / ``False`` as given, ``"auto"`` as probed."""
    if isinstance(requested, bool) or type(requested).__name__ == "bool_":  # numpy's bool too
        return bool(requested)
    if requested != "auto":
        raise ValueError(f"`bf16` must be True, False or 'auto'; got {requested!r}")
    import torch

    return choose_cpu_dtype("auto") == torch.bfloat16
