"""CPU precision choice shared by the methods: bfloat16 only where this CPU runs it faster than float32.

bfloat16 halves a matrix product's time on CPUs with native bf16 units (AVX512-BF16, AMX) but is emulated,
often 10-50x slower, elsewhere (AVX2, plain AVX512: issue #64 measured 46x for a 512 x 512 product on a Zen 3).
:func:`choose_cpu_dtype` resolves ``"auto"`` by measurement, once per process: a one-off timed probe
(:func:`probe_bf16_speed`: a 256 x 256 matrix product, then a ``Linear(384, 384)`` forward + backward on 256 rows
under CPU bf16 autocast, the way the methods train; each in bfloat16 and in float32, best of a few, tens of
milliseconds; the two precisions timed in alternating rounds so that load from other processes hits
both) picks bfloat16 only when both take at most :data:`SPEEDUP_REQUIRED` of their float32 time. torch's
CPU capability (``torch.backends.cpu.get_cpu_capability()``) is recorded beside the timings: it names the vector
unit torch dispatches to (``AVX2`` hosts have no native bfloat16; ``AVX512`` ones may or may not have
AVX512-BF16 / AMX), but the timing decides, so a capability that torch reports coarsely cannot mislead it.

The choice and its reason are logged and kept (:func:`precision_record`); a reproduction's ``result.json``
records them under ``provenance.process`` (:func:`provenance_facts`, read by ``repro.store.provenance``).
An explicit ``"bfloat16"`` / ``"float32"`` is returned as asked.

Examples
--------
>>> import torch
>>> from neurips25.pretrained.precision import choose_cpu_dtype
>>> choose_cpu_dtype("float32")
torch.float32
>>> choose_cpu_dtype("auto") in (torch.bfloat16, torch.float32)
True
"""

from __future__ import annotations

import logging
import platform
import time

log = logging.getLogger(__name__)

#: bfloat16 is chosen when each probe takes at most this fraction of its float32 time
SPEEDUP_REQUIRED = 0.8
_CHOICES = ("auto", "bfloat16", "float32")
_cache: dict = {}


def _best_of_pair(fn_a, fn_b, reps: int) -> tuple[float, float]:
    """The best (smallest) time of ``fn_a`` and of ``fn_b`` over ``reps`` rounds, the two run alternately.

    Alternating makes a burst of load from another process land on both sides of the comparison instead of
    on one, and the minimum of each discards the rounds the burst hit: on a loaded 2-core machine the
    ratio of the two minima moves far less than two back-to-back blocks of runs do (issue #64 saw the
    blocked probe flip its choice between two runs at load 9-15)."""
    best_a = best_b = float("inf")
    for _ in range(reps):
        t = time.perf_counter()
        fn_a()
        best_a = min(best_a, time.perf_counter() - t)
        t = time.perf_counter()
        fn_b()
        best_b = min(best_b, time.perf_counter() - t)
    return best_a, best_b


def probe_matmul_speed(size: int = 256, reps: int = 9) -> float:
    """Time of a ``size`` x ``size`` matrix product in bfloat16 over the same in float32 (best of ``reps``
    alternating rounds).

    Below 1, bfloat16 is faster on this CPU. Runs under the current torch thread setting.
    """
    import torch

    g = torch.Generator().manual_seed(0)
    a32 = torch.randn(size, size, generator=g)
    b32 = torch.randn(size, size, generator=g)
    a16, b16 = a32.bfloat16(), b32.bfloat16()
    with torch.no_grad():
        torch.mm(a32, b32), torch.mm(a16, b16)  # warm-up (first-call dispatch, allocator)
        t32, t16 = _best_of_pair(lambda: torch.mm(a32, b32), lambda: torch.mm(a16, b16), reps)
    return t16 / max(t32, 1e-9)


def probe_autocast_linear_speed(rows: int = 256, width: int = 384, reps: int = 7) -> float:
    """Time of a ``Linear(width, width)`` forward + backward on ``rows`` rows under CPU bf16 autocast, over the
    same in float32 (best of ``reps`` alternating rounds): how a model trains in bf16 mixed precision. Below 1,
    autocast pays."""
    import torch

    g = torch.Generator().manual_seed(0)
    lin = torch.nn.Linear(width, width)
    x = torch.randn(rows, width, generator=g)

    def step(on: bool) -> None:
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=on):
            y = lin(x)
        y.float().square().mean().backward()

    step(False), step(True)  # warm-up
    t32, t16 = _best_of_pair(lambda: step(False), lambda: step(True), reps)
    lin.zero_grad(set_to_none=True)
    return t16 / max(t32, 1e-9)


def probe_bf16_speed(*, detail: dict | None = None) -> float:
    """The one-off probe: bfloat16 time over float32 time, the worse of :func:`probe_matmul_speed` and (when the
    product alone is fast enough) :func:`probe_autocast_linear_speed`. Below :data:`SPEEDUP_REQUIRED`, bfloat16
    is used. ``detail`` (a dict), when given, receives ``matmul_time_ratio`` and ``linear_time_ratio`` (None
    when not run)."""
    mm = probe_matmul_speed()
    lin = probe_autocast_linear_speed() if mm <= SPEEDUP_REQUIRED else None
    if detail is not None:
        detail.update(matmul_time_ratio=round(mm, 4), linear_time_ratio=None if lin is None else round(lin, 4))
    return mm if lin is None else max(mm, lin)


def _decide() -> dict:
    """The choice for this process, with its evidence (the capability is recorded; the timing decides)."""
    import torch

    record = {"cpu_capability": torch.backends.cpu.get_cpu_capability(), "machine": platform.machine(),
              "threads": torch.get_num_threads(), "speedup_required": SPEEDUP_REQUIRED,
              "matmul_time_ratio": None, "linear_time_ratio": None}
    detail: dict = {}
    ratio = float(probe_bf16_speed(detail=detail))
    record.update(detail)
    record["time_ratio"] = round(ratio, 4)
    record["bf16"] = ratio <= SPEEDUP_REQUIRED
    parts = [f"matmul {record['matmul_time_ratio']:.2f}x" if record["matmul_time_ratio"] is not None else None,
             f"autocast Linear fwd+bwd {record['linear_time_ratio']:.2f}x"
             if record["linear_time_ratio"] is not None else None]
    shown = ", ".join(p for p in parts if p) or f"{ratio:.2f}x"
    record["reason"] = (f"CPU capability {record['cpu_capability']}: bfloat16 takes {shown} the float32 time "
                        f"({'<=' if record['bf16'] else '>'} {SPEEDUP_REQUIRED:g}x required)")
    return record


def precision_record() -> dict:
    """What ``"auto"`` resolves to on this CPU and why (decided once per process, then cached).

    Keys: ``bf16`` (bool), ``dtype`` (``"bfloat16"`` / ``"float32"``), ``reason`` (one line), ``cpu_capability``,
    ``time_ratio`` (the probe's bfloat16 over float32 time), ``matmul_time_ratio`` / ``linear_time_ratio`` (each
    probe's; None where not run), ``machine``, ``threads`` (torch threads during the probe), ``speedup_required``.
    """
    if "record" not in _cache:
        record = _decide()
        record["dtype"] = "bfloat16" if record["bf16"] else "float32"
        _cache["record"] = record
        log.info("precision 'auto' -> %s (%s)", record["dtype"], record["reason"])
    return dict(_cache["record"])


def bf16_is_fast() -> bool:
    """Whether bfloat16 beats float32 on this CPU (see :func:`precision_record`; decided once per process)."""
    return precision_record()["bf16"]


def provenance_facts() -> dict | None:
    """The precision choice of this process for ``result.json``'s provenance (None when ``"auto"`` was never
    resolved here). ``repro.store.provenance`` reads this from every loaded ``neurips25`` module that has it."""
    return {"precision_auto": dict(_cache["record"])} if "record" in _cache else None


def choose_cpu_dtype(requested: str = "auto"):
    """The torch dtype for CPU work: ``"auto"`` -> bfloat16 if :func:`bf16_is_fast`, else float32.

    Parameters
    ----------
    requested : {"auto", "bfloat16", "float32"} or torch.dtype
        ``"auto"`` decides once per process (a timed probe; logged, and recorded by
        :func:`precision_record`); anything else is returned as asked.

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
        return torch.bfloat16 if bf16_is_fast() else torch.float32
    return getattr(torch, requested)


def cpu_autocast_bf16(requested="auto") -> bool:
    """Whether to run under CPU bfloat16 autocast: ``True`` / ``False`` as given, ``"auto"`` as probed."""
    if isinstance(requested, bool) or type(requested).__name__ == "bool_":  # numpy's bool too
        return bool(requested)
    if requested != "auto":
        raise ValueError(f"`bf16` must be True, False or 'auto'; got {requested!r}")
    import torch

    return choose_cpu_dtype("auto") == torch.bfloat16
