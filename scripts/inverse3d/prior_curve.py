"""The unguided prior's training curve: where its designs' real drag sits among the training bodies' (issue #61).

c2's precondition asks that the unguided prior's designs (the top ``k`` of ``n_pool`` unguided samples ranked by
the latent drag head, exactly the reproduction's "unguided diffusion" arm) have a mean Sim-Drag at or below the
training labels' median. This driver trains the PG-VAE, the head and the DiT of one seed at several step budgets
(each budget a fresh run with the reproduction's own schedules), samples the unguided pool, solves every pool
design with the reproduction's solver and reports, per budget:

* ``prior_percentile``: the precondition's figure (fraction of training labels below the top-k mean);
* ``topk_median_percentile`` and ``pool_median_percentile``: the same for the median design of the top k and of
  the whole pool (an empty design counts as worse than every label);
* the training CPU seconds (VAE + head + DiT, this process) and the VAE's reconstruction IoU.

It writes ``<out>.json`` after every budget (a re-run skips budgets already there) and ``<out>.png``.

Usage::

    python scripts/inverse3d/prior_curve.py --budgets 300:600,1200:2400,2400:4800 --out docs/img/inverse3d_prior_curve
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

from neurips25.inverse3d.cfd import BrinkmanSpectralNS
from neurips25.inverse3d.data import DesignSpace, SolveCache, build_dataset
from neurips25.inverse3d.diffusion import ObjectiveGuidedSampler, make_scheduler
from neurips25.inverse3d.reproduce import LatentSpace, _config, _dit, _evaluate, _head, _train_vae
from neurips25.repro import Scale


def _budgets(text):
    out = []
    for part in text.split(","):
        try:
            v, d = (int(x) for x in part.split(":"))
        except ValueError as err:
            raise argparse.ArgumentTypeError(f"--budgets: '{part}' is not VAE_STEPS:DIT_STEPS") from err
        if v < 1 or d < 1:
            raise argparse.ArgumentTypeError(f"--budgets: steps must be >= 1; got '{part}'")
        out.append((v, d))
    return out


def _percentile(y, x):
    return float(np.mean(y < x)) if np.isfinite(x) else 1.0


def measure_budget(data, solver, space, cache, cfg, seed, vae_steps, dit_steps):
    """Train the prior at one budget and solve its unguided pool; one row of the curve."""
    y = data["cdv"]
    t0 = time.process_time()
    vae, mu, lv, _ = _train_vae(data, True, vae_steps, seed, space, cfg.n_query)
    latent = LatentSpace(vae, mu, lv, space)
    head = _head(latent, y, cfg.head_steps, seed)
    dit, _ = _dit(latent, dit_steps, seed)
    train_cpu = time.process_time() - t0
    recon = latent.decode(latent.zn)
    iou = float(np.mean([((a > .5) & (b > .5)).sum() / max(1, ((a > .5) | (b > .5)).sum())
                         for a, b in zip(recon, data["occ"])]))
    sampler = ObjectiveGuidedSampler(dit, make_scheduler("ddim"), None, 0.0, cfg.infer_steps)
    pool = sampler.sample(cfg.n_pool, generator=torch.Generator().manual_seed(seed))
    with torch.no_grad():
        top = head(pool).argsort()[: cfg.k].numpy()  # the reproduction's unguided arm: top k by the head
    t1 = time.process_time()
    cdv, _, _ = _evaluate(latent.decode(pool), solver, space, cache)
    eval_cpu = time.process_time() - t1
    worst = np.where(np.isfinite(cdv), cdv, np.inf)  # an empty / failed design is worse than every label
    top_cdv = cdv[top]
    return dict(vae_steps=vae_steps, dit_steps=dit_steps, train_cpu_s=train_cpu, eval_cpu_s=eval_cpu,
                recon_iou=iou, n_pool=int(len(cdv)), n_empty=int((~np.isfinite(cdv)).sum()),
                prior_percentile=_percentile(y, float(np.mean(top_cdv[np.isfinite(top_cdv)]))
                                             if np.isfinite(top_cdv).any() else np.inf),
                topk_median_percentile=_percentile(y, float(np.median(worst[top]))),
                pool_median_percentile=_percentile(y, float(np.median(worst))),
                topk_cdv=top_cdv.tolist(), pool_cdv=cdv.tolist(), label_median=float(np.median(y)))


def plot(rows, path):
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    rows = sorted(rows, key=lambda r: r["vae_steps"])
    cpu = [r["train_cpu_s"] for r in rows]
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    for key, label, mk in (("prior_percentile", "top-k mean (c2's precondition)", "o"),
                           ("topk_median_percentile", "top-k median design", "s"),
                           ("pool_median_percentile", "whole pool's median design", "^")):
        ax.plot(cpu, [100 * r[key] for r in rows], marker=mk, label=label)
    ax.axhline(50, color="k", ls="--", lw=1, label="training labels' median")
    for r, c in zip(rows, cpu):
        ax.annotate(f"{r['vae_steps']}/{r['dit_steps']}", (c, 100 * r["prior_percentile"]), fontsize=7,
                    textcoords="offset points", xytext=(3, 5))
    ax.set_xscale("log")
    ax.set_xlabel("training CPU s (PG-VAE + head + DiT; labels: VAE / DiT steps)")
    ax.set_ylabel("percentile of the training labels' C_DV")
    ax.set_ylim(0, 105)
    ax.legend(fontsize=7, loc="lower left")
    ax.set_title("inverse3d: the unguided prior's real drag vs training budget", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", default="quick", choices=["smoke", "quick", "paper"], help="data set and sizes")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--budgets", type=_budgets, default=_budgets("300:600,1200:2400,2400:4800"),
                    help="VAE_STEPS:DIT_STEPS,... (each a fresh training run)")
    ap.add_argument("--cache", type=Path, default=None, help="solve cache folder (default: <out>_cache)")
    ap.add_argument("--out", type=Path, default=Path("docs/img/inverse3d_prior_curve"),
                    help="output stem: writes <out>.json and <out>.png")
    a = ap.parse_args(argv)
    torch.set_num_threads(1)
    cfg = _config(Scale.parse(a.scale))
    solver = BrinkmanSpectralNS(grid=cfg.grid, steps=cfg.steps, cfl=cfg.cfl)
    space = DesignSpace(solver.grid, solver.h)
    cache = SolveCache(a.cache or a.out.with_name(a.out.name + "_cache"))
    t0 = time.process_time()
    data = build_dataset(cfg.n_shapes, solver, space, cache, 1234, n_points=cfg.n_points, n_occ=cfg.n_occ)
    data_cpu = time.process_time() - t0
    jpath = a.out.with_suffix(".json")
    doc = json.loads(jpath.read_text()) if jpath.exists() else {}
    if doc.get("scale") != a.scale or doc.get("seed") != a.seed:
        doc = dict(scale=a.scale, seed=a.seed, n_shapes=cfg.n_shapes, n_pool=cfg.n_pool, k=cfg.k, rows=[])
    doc["data_cpu_s_this_run"] = data_cpu
    done = {(r["vae_steps"], r["dit_steps"]) for r in doc["rows"]}
    for v, d in a.budgets:
        if (v, d) in done:
            continue
        row = measure_budget(data, solver, space, cache, cfg, a.seed, v, d)
        doc["rows"].append(row)
        jpath.parent.mkdir(parents=True, exist_ok=True)
        jpath.write_text(json.dumps(doc, indent=1))
        print(f"VAE {v} / DiT {d}: train {row['train_cpu_s']:.0f} CPU-s, precondition percentile "
              f"{row['prior_percentile']:.0%}, top-k median {row['topk_median_percentile']:.0%}, pool median "
              f"{row['pool_median_percentile']:.0%}, empty {row['n_empty']}/{row['n_pool']}", flush=True)
        plot(doc["rows"], a.out.with_suffix(".png"))


if __name__ == "__main__":
    main()
