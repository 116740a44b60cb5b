"""Benchmark: neighborhood attention (pure torch, linear) vs dense masked attention (the anchor).

Forward + backward time and memory at L = 2k, 8k, 32k with kernel 33, in one run, printed as ratios.
Targets (issue 4): time(32k) / time(8k) <= 4.5 (linear scaling), and >= 10x less memory than dense
attention at 32k.

Memory is measured two ways:
- activation bytes: every tensor autograd keeps for backward plus the output, recorded with
  ``torch.autograd.graph.saved_tensors_hooks``. Dense attention at 32k would need tens of GB, so it
  is traced on the ``meta`` device (shapes only, nothing allocated) -- exact bytes, not a guess;
- peak resident-memory growth of a fresh subprocess (the real allocator), for every case that
  fits in memory (Linux).

Run: ``python benchmarks/prsformer.py`` (one thread, so timings on a shared machine are steadier).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import torch

from neurips25.prsformer import neighborhood_attention, reference_neighborhood_attention

K, H, D = 33, 1, 32
LENGTHS = (2048, 8192, 32768)
DENSE_RUN_MAX = 8192  # dense beyond this needs > 4 GB per score tensor copy on this machine


def fn(name):
    return neighborhood_attention if name == "na" else reference_neighborhood_attention


def inputs(L, device="cpu"):
    gen = torch.Generator().manual_seed(0)
    if device == "meta":
        return [torch.empty(1, H, L, D, device="meta", requires_grad=True) for _ in range(3)]
    return [torch.randn(1, H, L, D, generator=gen).requires_grad_() for _ in range(3)]


def activation_bytes(name, L, device="cpu"):
    seen = {}

    def pack(t):
        seen[id(t)] = t.numel() * t.element_size()
        return t

    q, k, v = inputs(L, device)
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = fn(name)(q, k, v, K, 1)
    return sum(seen.values()) + out.numel() * out.element_size()


def time_fwd_bwd(name, L, reps=5):
    q, k, v = inputs(L)
    times = []
    for _ in range(reps + 1):
        t0 = time.perf_counter()
        fn(name)(q, k, v, K, 1).sum().backward()
        times.append(time.perf_counter() - t0)
        q.grad = k.grad = v.grad = None
    return min(times[1:])  # first call warms up; min over repeats, as timeit does, to shed noise


def peak_rss_child(name, L):
    """Peak resident-memory growth (bytes) of forward + backward in a fresh process.

    Linux only: the high-water mark is reset through /proc/self/clear_refs after the inputs exist.
    """
    code = (
        "import re, sys, torch; sys.path.insert(0, 'benchmarks'); torch.set_num_threads(1);"
        "import prsformer as b;"
        "st = lambda key: int(re.search(key + r':\\s+(\\d+)', open('/proc/self/status').read()).group(1)) * 1024;"
        f"q, k, v = b.inputs({L}); open('/proc/self/clear_refs', 'w').write('5'); base = st('VmRSS');"
        f"b.fn('{name}')(q, k, v, b.K, 1).sum().backward();"
        "print(st('VmHWM') - base)"
    )
    try:
        res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
        return int(res.stdout.strip().splitlines()[-1]) if res.returncode == 0 else None
    except (OSError, ValueError, IndexError, subprocess.TimeoutExpired):
        return None


def main():
    torch.set_num_threads(1)
    rows = {}
    for L in LENGTHS:
        row = {"na_time_s": time_fwd_bwd("na", L), "na_act_bytes": activation_bytes("na", L),
               "dense_act_bytes": activation_bytes("dense", L, device="meta"),
               "na_rss_bytes": peak_rss_child("na", L)}
        if L <= DENSE_RUN_MAX:
            row["dense_time_s"] = time_fwd_bwd("dense", L)
            row["dense_rss_bytes"] = peak_rss_child("dense", L)
        rows[L] = row
        print(f"L={L}: " + ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                                     for k, v in row.items()), flush=True)
    t_ratio = rows[32768]["na_time_s"] / rows[8192]["na_time_s"]
    m_ratio = rows[32768]["dense_act_bytes"] / rows[32768]["na_act_bytes"]
    ratios = {
        "na_time_32k_over_8k": t_ratio,
        "na_time_8k_over_2k": rows[8192]["na_time_s"] / rows[2048]["na_time_s"],
        "dense_over_na_memory_32k (activations)": m_ratio,
        "dense_over_na_memory_8k (activations)": rows[8192]["dense_act_bytes"] / rows[8192]["na_act_bytes"],
        "dense_over_na_memory_8k (peak RSS)": (rows[8192]["dense_rss_bytes"] or 0)
        / max(rows[8192]["na_rss_bytes"] or 1, 1),
        "dense_over_na_time_2k": rows[2048]["dense_time_s"] / rows[2048]["na_time_s"],
        "dense_over_na_time_8k": rows[8192]["dense_time_s"] / rows[8192]["na_time_s"],
    }
    print(f"\nkernel={K}, heads={H}, head_dim={D}, batch=1, fp32, 1 thread")
    for k, v in ratios.items():
        print(f"  {k:42s} {v:8.2f}")
    print(f"target time(32k)/time(8k) <= 4.5: {'PASS' if t_ratio <= 4.5 else 'FAIL'} ({t_ratio:.2f})")
    print(f"target dense/NA memory at 32k >= 10: {'PASS' if m_ratio >= 10 else 'FAIL'} ({m_ratio:.1f})")
    print(json.dumps({"rows": rows, "ratios": ratios}, default=float))


if __name__ == "__main__":
    main()
