"""Before / after of the kernels issue #64 changed, in one process, legs interleaved, against the same ceilings.

    .venv/bin/python benchmarks/roofline_before_after.py

The "before" code is read from git (the commit before each change) into a temporary module; both legs run at one
thread, alternating, and are counted (FLOPs, op-level bytes) and rated exactly as ``benchmarks/roofline.py`` does,
against a one-thread triad bandwidth measured in the same run. rspool's timing is of twenty calls (a 1-ms kernel).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import roofline as R  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
#: kernel -> (module path, commit whose parent holds the "before" code)
CHANGED = {"prsformer": ("src/neurips25/prsformer/neighborhood_attention.py", "c03830f"),
           "rspool": ("src/neurips25/rspool/functional.py", "b66bb26"),
           "sliced_wasserstein": ("src/neurips25/sliced_wasserstein/slicing.py", "40a6e5e"),
           "ctsketch": ("src/neurips25/ctsketch/decompose.py", "c6c516d")}


def old_module(path: str, commit: str, name: str):
    src = subprocess.run(["git", "show", f"{commit}~1:{path}"], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    f = Path(tempfile.mkdtemp()) / f"{name}.py"
    f.write_text(src)
    spec = importlib.util.spec_from_file_location(name, f)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


def legs_prsformer(mod):
    g = torch.Generator().manual_seed(0)
    qkv = [torch.randn(128, 2, 256, 8, generator=g).requires_grad_() for _ in range(3)]

    def fn():
        for d in (1, 4):
            out = mod.neighborhood_attention(*qkv, 9, d)
            out.backward(torch.ones_like(out))
        for t in qkv:
            t.grad = None
    return fn


def legs_rspool(mod):
    g = torch.Generator().manual_seed(0)
    sizes = torch.randint(20, 41, (32,), generator=g)
    batch = torch.repeat_interleave(torch.arange(32), sizes)
    x = torch.randn(int(sizes.sum()), 32, generator=g).requires_grad_()

    def fn():
        for _ in range(20):  # a 1-ms kernel: twenty calls a timing
            mod.rs_pool(x, batch, num_iterations=2, alpha=20.0).sum().backward()
            x.grad = None
    return fn


def legs_sliced_wasserstein(mod):
    from neurips25.sliced_wasserstein import directions

    rng = np.random.default_rng(0)
    samples = [rng.normal(size=(500, 2)) * rng.uniform(0.5, 2, 2) for _ in range(200)]
    dirs, u = directions(2, 90), mod.quantile_levels(201)
    return lambda: mod.sliced_quantiles(samples, dirs, u, method="kde")


def legs_ctsketch(mod):
    from neurips25.ctsketch import tensorize

    T = tensorize(lambda *r: sum(r), [10] * 6, vectorized=True)
    return lambda: mod.tt_decompose(T, 2, seed=0)


def main() -> None:
    import importlib

    torch.set_num_threads(1)
    bw = R.stream(1, 2 ** 27)["triad_GBs"]
    torch.set_num_threads(1)
    print(f"load {R.loadavg()}; one-thread triad {bw:.1f} GB/s (float64 arrays of 1 GiB)")
    builders = {"prsformer": legs_prsformer, "rspool": legs_rspool, "sliced_wasserstein": legs_sliced_wasserstein,
                "ctsketch": legs_ctsketch}
    for key, (path, commit) in CHANGED.items():
        new = importlib.import_module(path.removeprefix("src/").removesuffix(".py").replace("/", "."))
        fns = {"before": builders[key](old_module(path, commit, f"old_{key}")), "after": builders[key](new)}
        counts, times = {}, {k: [] for k in fns}
        for name, fn in fns.items():
            fn()
            if key == "sliced_wasserstein":  # numpy: the formula of roofline.py's row, the same for both
                spec = R.k_sliced_wasserstein()
                counts[name] = (spec["flops"], spec["bytes"], None)
                continue
            with R.Counter() as c:
                fn()
            counts[name] = (c.total_flops, c.bytes, c.ops)
        for r in range(5 if key == "sliced_wasserstein" else 9):  # interleaved, the order alternating
            for name in (fns if r % 2 == 0 else list(fns)[::-1]):
                t = time.process_time()
                fns[name]()
                times[name].append(time.process_time() - t)
        for name in fns:
            s = min(times[name])
            flops, nbytes, ops = counts[name]
            print(f"{key:10s} {name:6s} {s * 1e3:7.1f} ms CPU (median {np.median(times[name]) * 1e3:.1f}), "
                  f"{flops / s / 1e9:5.2f} GFLOP/s, {nbytes / s / 1e9:5.2f} GB/s = {nbytes / s / 1e9 / bw:4.0%} of "
                  f"triad, {ops} ops")
        print(f"{key:10s} speed-up {min(times['before']) / min(times['after']):.2f}x (least CPU times)")


if __name__ == "__main__":
    main()
