"""The headline claim c5 alone, one seed at a time: the reproduction's causal-LM experiment at any scale.

``neurips25 reproduce eva --scale paper`` runs every claim, and its c3 (5 seeds x 300 steps x 4 rates on
MiniLM) costs far more than c5. This entry point runs only c5 with the reproduction's own code and settings
(:data:`reproduce.LM_SCALES`, :func:`reproduce._causal_lm`, the criterion :func:`reproduce._lm_passes`), one
seed per call of ``_causal_lm`` so that every finished seed is written to ``<out>/seed_<s>.json`` at once and
a partial run is still usable; ``<out>/summary.json`` holds the verdict on the finished seeds, set by the
machinery: the reproduction's own declared claim (:func:`reproduce.claim_c5`) records EVA's figures and the
random-direction control's, and :func:`neurips25.repro.claims.decide` judges both by the same criterion.

Seeds are run exactly as the reproduction runs them: ``--seeds 0 1 2`` at the paper scale is the
reproduction's ``--seed 0`` (seeds 0, 1, 2 inside the experiment). A seed whose JSON exists is skipped unless
``--rerun``; ``--summarise`` only judges what is there.

    python -m neurips25.eva.c5_run --scale paper --seeds 0 1 2 --out runs/eva_c5_paper
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import resource
import time
from pathlib import Path

import numpy as np

from neurips25.eva.reproduce import LM_SCALES, _causal_lm, _lm_passes, _lm_window, c5_figures, claim_c5
from neurips25.repro import Scale
from neurips25.repro.intervals import mean_interval
from neurips25.repro.store import read_seed_results, run_missing_seeds


def run_seed(scale, seed: int) -> dict:
    """c5 for one seed at ``scale``: the reproduction's per-seed results plus the CPU and wall seconds."""
    cfg = dataclasses.replace(LM_SCALES[Scale.parse(scale)], n_seeds=1)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    res = _causal_lm(cfg, int(seed), allocation=False)  # c5 only: no c4 figures
    res["seed"] = int(seed)
    res["config"] = dataclasses.asdict(cfg)
    res["cpu_s"] = time.process_time() - cpu0
    res["wall_s"] = time.perf_counter() - wall0
    res["load_avg_end"] = list(_load_average())
    return res


def merge(per_seed: list[dict]) -> dict:
    """Concatenate per-seed results (in seed order) into the shape ``_causal_lm`` returns for several seeds."""
    if not per_seed:
        raise ValueError("`per_seed` must hold at least one seed's results")
    per_seed = sorted(per_seed, key=lambda r: r["seed"])
    inits = per_seed[0]["config"]["inits"]
    out: dict = {i: {k: [v for r in per_seed for v in r[i][k]] for k in per_seed[0][i]} for i in inits}
    out["params"] = per_seed[0]["params"]
    out["seeds"] = [r["seed"] for r in per_seed]
    return out


def _interval(x) -> dict:
    """Mean, min, max and a two-sided 95 % t-interval of the mean (None for a single value)."""
    x = np.asarray(x, dtype=float)
    iv = mean_interval(x)
    return {"mean": iv.mean, "min": float(x.min()), "max": float(x.max()),
            "ci95": None if iv.n < 2 else [iv.lo, iv.hi]}


def _wilson(hits: int, n: int) -> list[float]:
    """95 % Wilson interval of a proportion, in percent."""
    if n == 0:
        return [float("nan"), float("nan")]
    z, p = 1.96, hits / n
    c = (p + z * z / (2 * n)) / (1 + z * z / n)
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return [100 * (c - h), 100 * (c + h)]


def summarise(per_seed: list[dict]) -> dict:
    """The c5 verdict on the finished seeds, with per-seed numbers, paired gaps and intervals."""
    res = merge(per_seed)
    cfg = per_seed[0]["config"]
    n_test = cfg["n_test"]
    inits = cfg["inits"]
    eva_ok, eva_m = _lm_passes(res, "eva")
    ctl_ok, ctl_m = (_lm_passes(res, "control") if "control" in inits else (None, {}))
    w = _lm_window(cfg["steps"])
    claim = claim_c5(w, len(res["seeds"]))
    claim.record(c5_figures("eva", eva_m),
                 controls={"random_directions": c5_figures("control", ctl_m) if ctl_m else None})
    gaps = {f"{b}_minus_{who}": _interval(np.array(res[b]["loss_window"]) - np.array(res[who]["loss_window"]))
            for who in ("eva", "control") if who in inits for b in ("lora", "pissa", "olora") if b in inits}
    em = {}
    for i in inits:
        hits = int(round(sum(res[i]["exact_match"]) * n_test))
        em[i] = {"pct": 100 * float(np.mean(res[i]["exact_match"])), "hits": hits, "n": n_test * len(res["seeds"]),
                 "wilson95_pct": _wilson(hits, n_test * len(res["seeds"]))}
    return {
        "seeds": res["seeds"], "loss_window_steps": [w[0] + 1, w[1]], "config": cfg,
        "verdict": claim.verdict.value.replace("_", " "), "reason": claim.reason, "decided_by": claim.decided_by,
        "eva_passes": eva_ok, "control_passes": ctl_ok, "criterion_means": {"eva": eva_m, "control": ctl_m},
        "loss_window": {i: _interval(res[i]["loss_window"]) for i in inits},
        "loss_window_per_seed": {i: res[i]["loss_window"] for i in inits},
        "test_answer_loss": {i: _interval(res[i]["test_loss"]) for i in inits},
        "exact_match": em, "exact_match_per_seed": {i: res[i]["exact_match"] for i in inits},
        "paired_loss_gaps": gaps, "trainable_params": res["params"],
        "cpu_s_per_seed": [r["cpu_s"] for r in sorted(per_seed, key=lambda r: r["seed"])],
        "wall_s_per_seed": [r["wall_s"] for r in sorted(per_seed, key=lambda r: r["seed"])],
    }


def _load_average() -> tuple[float, float, float]:
    try:
        import os

        return os.getloadavg()
    except OSError:  # pragma: no cover - platform without getloadavg
        return (float("nan"),) * 3


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", default="paper", choices=[s.value for s in Scale])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--out", type=Path, required=True, help="folder for seed_<s>.json and summary.json")
    ap.add_argument("--rerun", action="store_true", help="run seeds whose JSON already exists again")
    ap.add_argument("--summarise", action="store_true", help="only judge the seeds already in --out")
    args = ap.parse_args(argv)
    if len(set(args.seeds)) != len(args.seeds):
        raise SystemExit(f"--seeds must be distinct, got {args.seeds}")
    run_missing_seeds(args.out, [] if args.summarise else args.seeds, lambda s: run_seed(args.scale, s),
                      rerun=args.rerun, echo=lambda line: print(line, flush=True))
    per_seed = read_seed_results(args.out)
    per_seed = [r for r in per_seed if r["config"]["model"] == dataclasses.asdict(
        LM_SCALES[Scale.parse(args.scale)])["model"] and r["seed"] in args.seeds]
    if not per_seed:
        raise SystemExit(f"no finished seed of {args.seeds} in {args.out}")
    summary = summarise(per_seed)
    ru = resource.getrusage(resource.RUSAGE_SELF)
    summary["process_cpu_s"] = ru.ru_utime + ru.ru_stime
    summary["process_max_rss_mb"] = ru.ru_maxrss / 1024
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1))
    m = summary["criterion_means"]["eva"]
    print(f"c5 ({args.scale}, seeds {summary['seeds']}): {summary['verdict']}; loss EVA {m['loss']['eva']:.4f} vs "
          f"LoRA {m['loss']['lora']:.4f}, PiSSA {m['loss']['pissa']:.4f}; EM EVA {m['em']['eva']:.1f}% vs LoRA "
          f"{m['em']['lora']:.1f}%; control passes: {summary['control_passes']}", flush=True)


if __name__ == "__main__":
    main()
