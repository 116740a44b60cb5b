"""RS-Pool's claims on the real TU sets alone (c2_mutag, c3_mutag, c2_cuneiform, c3_cuneiform; issue #61), one
run seed at a time, at any scale.

``neurips25 reproduce rspool --scale paper`` runs every claim, and its generated-set part (5 seeds x 1,000
graphs x 4 data sets) costs about 35 CPU minutes a seed. This entry point runs only the TU part with the
reproduction's own code and settings (:data:`reproduce.SCALES`, :func:`reproduce.run_tu`,
:func:`reproduce.record_tu`) and the claims :func:`reproduce.declare_claims` declares, so the verdicts are set
by the machinery exactly as in the full run; each run seed is written to ``<out>/seed_<s>.json`` as soon as it
finishes, and ``<out>/summary.json`` combines the finished seeds (``repro.aggregate.combine_claims``: seeds
that disagree make a claim *unstable*).

    OMP_NUM_THREADS=1 python -m neurips25.rspool.tu_run --scale paper --seeds 0 1 --out runs/rspool-mutag-paper
    OMP_NUM_THREADS=1 python -m neurips25.rspool.tu_run --datasets Cuneiform --seeds 0 1 --out runs/rspool-cuneiform

``--datasets`` (default: MUTAG) names the TU sets of :data:`reproduce.TU_SETS` to run, each judged at the
given scale whatever the scale's own ``tu_names``.

A seed whose JSON exists is skipped unless ``--rerun``; ``--summarise`` only combines what is there.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import time
from pathlib import Path

from neurips25.repro import Outcome, Scale, seed_everything, thread_cap
from neurips25.repro.claims import jsonable, validate_outcome
from neurips25.repro.store import drive_claim_seeds
from neurips25.rspool.reproduce import SCALES, TU_SETS, declare_claims, record_tu, run_tu, tu_claim_ids


def run_seed(scale, seed: int, log=print, datasets=("MUTAG",)) -> dict:
    """The claims of the TU sets ``datasets`` for run seed ``seed`` at ``scale``: claims (judged by the
    machinery), the per-fold results, the config, and the CPU and wall seconds of this seed (one torch / BLAS
    thread). The datasets run one after another in the order given, each with the seed set afresh."""
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"`seed` must be an int >= 0, got {seed!r}")
    if isinstance(datasets, str) or not datasets or any(d not in TU_SETS for d in datasets):
        raise ValueError(f"`datasets` must be a non-empty sequence of {', '.join(TU_SETS)}; got {datasets!r}")
    datasets = tuple(dict.fromkeys(datasets))
    scale = Scale.parse(scale)
    cfg = SCALES[scale]
    ids = [i for d in datasets for i in tu_claim_ids(d)]
    claims = {c.id: c for c in declare_claims(scale) if c.id in ids}
    cpu0, wall0 = time.process_time(), time.perf_counter()
    tables, tus = {}, {}
    with thread_cap(1, import_torch=True):
        for name in datasets:
            seed_everything(seed)
            tus[name] = run_tu(cfg, seed, log=log, name=name)
            tables[name], _ = record_tu(claims, tus[name], cfg, name)
    outcome = Outcome([claims[c] for c in ids])
    validate_outcome(outcome, hand_verdicts_allowed=False)
    one = len(datasets) == 1 and datasets[0] == "MUTAG"  # the layout of the MUTAG-only runs made before
    return {"scale": str(scale), "seed": seed, "config": dataclasses.asdict(cfg), "datasets": list(datasets),
            "claims": [c.to_dict() for c in outcome.claims], "table": tables["MUTAG"] if one else tables,
            "tu": jsonable(tus["MUTAG"] if one else tus),
            "cpu_s": time.process_time() - cpu0, "wall_s": time.perf_counter() - wall0,
            "load_avg_end": list(os.getloadavg()) if hasattr(os, "getloadavg") else None}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", default="paper", choices=[s.value for s in Scale])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    ap.add_argument("--datasets", nargs="+", default=["MUTAG"], choices=list(TU_SETS),
                    help="the TU sets to run (default: MUTAG)")
    ap.add_argument("--out", type=Path, required=True, help="folder for seed_<s>.json and summary.json")
    ap.add_argument("--rerun", action="store_true", help="run seeds whose JSON already exists again")
    ap.add_argument("--summarise", action="store_true", help="only combine the seeds already in --out")
    args = ap.parse_args(argv)
    if len(set(args.seeds)) != len(args.seeds) or min(args.seeds) < 0:
        raise SystemExit(f"--seeds must be distinct ints >= 0, got {args.seeds}")
    datasets = list(dict.fromkeys(args.datasets))
    drive_claim_seeds(args.out, args.scale, args.seeds,
                      lambda s: run_seed(args.scale, s, log=lambda line: print(line, flush=True), datasets=datasets),
                      rerun=args.rerun, summarise_only=args.summarise,
                      keep=lambda r: r.get("datasets", ["MUTAG"]) == datasets)

if __name__ == "__main__":
    main()
