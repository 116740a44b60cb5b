"""Diagnosis of the headline claim c4 where it fails at quick scale: scale, a reconstructed detail, or the claim?

    python -m neurips25.pref_diffusion.diagnosis [--tasks dtlz2 re21] [--seeds 3] [--out DIR]

On the tasks where PGD does not beat both D(best) and the unguided prior, the quick-scale PGD is compared,
on the same offline data as ``neurips25 reproduce pref_diffusion --scale quick --seed 0`` and the same
algorithm seeds, with one change at a time:

- ``quick``: the reproduction's PGD (crowding labels, w = 10);
- ``hv_contrib``: within-front score = exclusive hypervolume contribution instead of crowding (the
  paper's alternative label; crowding is weak with 3 objectives);
- ``w5``: guidance scale 5 instead of 10 (the same fitted model);
- ``large``: a larger budget (width 256, 3x the prior epochs, 2.4x the preference epochs, 300-step
  sampler), crowding labels, w = 10, with its own unguided prior.

For each it reports HV / HV(D(best)) and HV / HV(unguided prior of the same budget), mean and range over
seeds. It also checks the reused reference utility (issue 30) on ZDT1 at the quick budget: the
Bradley-Terry weight trace and the HV with the reference reused vs recomputed. The experiment only; the
method lives in the other modules.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path

import numpy as np


@dataclasses.dataclass(frozen=True)
class Budget:
    hidden: int
    epochs: int
    preference_epochs: int
    patience: int
    sample_steps: int


QUICK = Budget(hidden=128, epochs=40, preference_epochs=25, patience=8, sample_steps=150)
LARGE = Budget(hidden=256, epochs=120, preference_epochs=60, patience=12, sample_steps=300)


def _hv(task, X) -> float:
    from neurips25.pref_diffusion import metrics as M

    return M.hv(task.evaluate(X), task.ideal, task.nadir, ref_factor=1.1)


VARIANTS = ("quick", "large", "w5", "hv_contrib")


def diagnose(
    tasks=("dtlz2", "re21"), n_seeds: int = 3, data_seed: int = 0, n: int = 256, variants=VARIANTS
) -> dict:
    """Run the variants above; returns {task: {variant: {"vs_data_best": [...], "vs_unguided": [...]}}}."""
    unknown = set(variants) - set(VARIANTS)
    if unknown:
        raise ValueError(f"`variants` must be among {VARIANTS}, got {sorted(unknown)}")
    from neurips25.pref_diffusion import PreferenceGuidedDiffusion, make_offline_task
    from neurips25.repro import thread_cap

    out: dict = {}
    with thread_cap(1):
        for name in tasks:
            task = make_offline_task(name, n=2500, prune_top=0.4, seed=data_seed)
            hv_best = _hv(task, task.best(n)[0])
            rows: dict[str, dict[str, list[float]]] = {}

            def add(variant, hv_x, hv_ung, rows=rows, hv_best=hv_best):
                r = rows.setdefault(variant, {"vs_data_best": [], "vs_unguided": [], "hv": []})
                r["vs_data_best"].append(hv_x / hv_best)
                r["vs_unguided"].append(hv_x / hv_ung)
                r["hv"].append(hv_x)

            for k in range(n_seeds):
                seed = data_seed * 1000 + k
                t0 = time.perf_counter()
                models = {}
                budgets = [(b, B) for b, B in (("quick", QUICK), ("large", LARGE)) if b in variants]
                if {"w5", "hv_contrib"} & set(variants) and "quick" not in variants:
                    budgets.insert(0, ("quick", QUICK))
                for bname, b in budgets:
                    common = dict(
                        n_steps=1000, bounds=(task.xl, task.xu), random_state=seed, **dataclasses.asdict(b)
                    )
                    pgd = PreferenceGuidedDiffusion(**common).fit(task.X, task.Y)
                    hv_ung = _hv(task, pgd.sample(n, guidance_scale=0.0))
                    if bname in variants:
                        add(bname, _hv(task, pgd.sample(n)), hv_ung)
                    models[bname] = (pgd, common, hv_ung)
                if "w5" in variants:
                    pgd, common, hv_ung = models["quick"]
                    add("w5", _hv(task, pgd.sample(n, guidance_scale=5.0)), hv_ung)
                if "hv_contrib" in variants:
                    pgd, common, hv_ung = models["quick"]
                    hvc = PreferenceGuidedDiffusion(metric="hv_contrib", **common).fit(
                        task.X, task.Y, prior=pgd
                    )
                    add("hv_contrib", _hv(task, hvc.sample(n)), hv_ung)
                print(
                    f"{name} seed {k} ({time.perf_counter() - t0:.0f} s): "
                    + ", ".join(
                        f"{v}: {r['vs_data_best'][-1]:.3f}/{r['vs_unguided'][-1]:.3f}" for v, r in rows.items()
                    ),
                    flush=True,
                )
            out[name] = {"hv_data_best": hv_best, **rows}
    return out


def reference_reuse_check(name: str = "zdt1", seed: int = 0, n: int = 256) -> dict:
    """HV and Bradley-Terry weight trace with the reference utility reused vs recomputed, same model."""
    from neurips25.pref_diffusion import PreferenceGuidedDiffusion, make_offline_task
    from neurips25.repro import thread_cap

    out = {}
    with thread_cap(1):
        task = make_offline_task(name, n=2500, prune_top=0.4, seed=0)
        m = PreferenceGuidedDiffusion(
            n_steps=1000, bounds=(task.xl, task.xu), random_state=seed, **dataclasses.asdict(QUICK)
        ).fit(task.X, task.Y)
        for reuse in (True, False):
            m.set_params(reuse_reference=reuse)
            h = _hv(task, m.sample(n))
            w = m.guidance_weights_[:, 1]
            out["reused" if reuse else "recomputed"] = {
                "hv": h,
                "weight_median": float(np.median(w)),
                "weight_range_after_first_step": [float(w[1:].min()), float(w[1:].max())],
                "share_of_steps_within_0.5+-0.05": float(np.mean(np.abs(w - 0.5) < 0.05)),
            }
    return out


def table(res: dict) -> str:
    """Markdown: per task and variant, HV / D(best) and HV / unguided as mean [min, max] over seeds."""
    lines = [
        "| task | variant | HV / D(best) | HV / unguided | beats both (seed mean) |",
        "|---|---|---|---|---|",
    ]
    for name, rows in res.items():
        for v, r in rows.items():
            if v == "hv_data_best":
                continue
            a, b = np.asarray(r["vs_data_best"]), np.asarray(r["vs_unguided"])
            both = "yes" if a.mean() > 1 and b.mean() > 1 else "no"
            lines.append(
                f"| {name} | {v} | {a.mean():.3f} [{a.min():.3f}, {a.max():.3f}] | "
                f"{b.mean():.3f} [{b.min():.3f}, {b.max():.3f}] | {both} |"
            )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", nargs="+", default=["dtlz2", "re21"])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=VARIANTS)
    ap.add_argument("--no-reuse-check", action="store_true", help="skip the reference-reuse check")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    t0 = time.perf_counter()
    res = diagnose(tuple(args.tasks), args.seeds, variants=tuple(args.variants))
    if not args.no_reuse_check:
        reuse = reference_reuse_check()
        print("reference reuse check (zdt1, quick budget):", json.dumps(reuse))
        res["_reference_reuse"] = reuse
    print(table({k: v for k, v in res.items() if not k.startswith("_")}))
    print(f"total {time.perf_counter() - t0:.0f} s")
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "c4_diagnosis.json").write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
