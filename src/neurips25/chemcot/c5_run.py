"""ChemCoTBench's c5 alone (LoRA on verified operation traces against LoRA on the answers alone), one run seed at
a time, at any scale, resumable arm by arm (issue #58).

``neurips25 reproduce chemcot --scale paper`` runs every claim; its c5 alone (60 held-out editing items, three
LoRA seeds x two arms plus the untuned model, SmolLM2-135M-Instruct) takes about two hours of a core, which a
shared machine rarely gives in one piece. This entry point runs only c5 with the reproduction's own code and
settings (:func:`reproduce._configs`, :func:`reproduce._c5`) and the claim :func:`reproduce.declare_claims`
declares, so the verdict is set by the machinery as in the full run. Each finished arm is kept under
``<out>/seed_<s>-work/`` (:func:`reproduce.c5_arm_cache`: keyed by the configuration, the seed, the precision
and this package's source), so a killed run resumes at the next arm; each finished seed is written to
``<out>/seed_<s>.json`` and ``<out>/summary.json`` combines the finished seeds (seeds that disagree make the
claim *unstable*).

    OMP_NUM_THREADS=1 python -m neurips25.chemcot.c5_run --scale paper --seeds 0 --out runs/chemcot-c5-paper

The held-out items exclude the molecules of the seed's benchmark suite, as in the full run (the suite is
generated, not evaluated, here). A seed whose JSON exists is skipped unless ``--rerun``; ``--summarise`` only
combines what is there.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import time
from pathlib import Path

from neurips25.chemcot.data import generate_suite
from neurips25.chemcot.reproduce import _c5, _configs, _llm_available, c5_arm_cache, c5_note, declare_claims
from neurips25.pretrained.precision import choose_cpu_dtype
from neurips25.repro import Outcome, Scale, seed_everything, thread_cap
from neurips25.repro.claims import jsonable, validate_outcome
from neurips25.repro.store import drive_claim_seeds


def run_seed(scale, seed: int, out: str | Path) -> dict:
    """c5 for run seed ``seed`` at ``scale``: the claim (judged by the machinery), its details, the config, the
    precision used and the CPU and wall seconds of this call (arms read back from the cache cost nothing)."""
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"`seed` must be an int >= 0, got {seed!r}")
    scale = Scale.parse(scale)
    cfg = _configs()[str(scale)]
    if cfg.lora_heldout == 0:
        raise ValueError(f"c5 is not run at scale {scale} (no held-out items); use quick or paper")
    missing = _llm_available()
    if missing:
        raise ModuleNotFoundError(f"c5 needs SmolLM2 and PEFT: {missing}")
    import torch

    from neurips25.pretrained import load_smollm2, load_smollm2_tokenizer

    work = Path(out) / f"seed_{seed}-work"
    work.mkdir(parents=True, exist_ok=True)
    claim = next(c for c in declare_claims(scale) if c.id == "c5_cot_lora")
    cpu0, wall0 = time.process_time(), time.perf_counter()
    with thread_cap(1, import_torch=True):
        seed_everything(seed)
        suite_sources = {it.meta.get("source") for it in generate_suite(cfg.source, cfg.n, seed,
                                                                         pool_size=cfg.pool_size)}
        dtype = str(choose_cpu_dtype(cfg.llm_dtype)).removeprefix("torch.")
        lm, tok = load_smollm2().to(getattr(torch, dtype)), load_smollm2_tokenizer()
        arm_cache = c5_arm_cache(work, cfg, seed, dtype)
        m5, ctl5, d5 = _c5(cfg, seed, lm, tok, work, suite_sources, arm_cache=arm_cache)
    claim.record(m5, controls={"answer_only_lora": ctl5}, details=d5, note=c5_note(cfg, d5, dtype))
    validate_outcome(Outcome([claim]), hand_verdicts_allowed=False)
    return {"scale": str(scale), "seed": seed, "config": dataclasses.asdict(cfg), "dtype": dtype,
            "claims": [claim.to_dict()], "details": jsonable(d5), "arm_cache": arm_cache.name,
            "cpu_s": time.process_time() - cpu0, "wall_s": time.perf_counter() - wall0,
            "load_avg_end": list(os.getloadavg()) if hasattr(os, "getloadavg") else None}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scale", default="paper", choices=["quick", "paper"])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--out", type=Path, required=True, help="folder for seed_<s>.json, summary.json and the arms")
    ap.add_argument("--rerun", action="store_true", help="run seeds whose JSON already exists again")
    ap.add_argument("--summarise", action="store_true", help="only combine the seeds already in --out")
    args = ap.parse_args(argv)
    if len(set(args.seeds)) != len(args.seeds) or min(args.seeds) < 0:
        raise SystemExit(f"--seeds must be distinct ints >= 0, got {args.seeds}")
    drive_claim_seeds(args.out, args.scale, args.seeds, lambda s: run_seed(args.scale, s, args.out),
                      rerun=args.rerun, summarise_only=args.summarise)

if __name__ == "__main__":
    main()
