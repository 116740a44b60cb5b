"""Diagnosis drivers of the reproduction, runnable from the command line (one configuration per run).

``config NAME``: the reproduction's claims under a named configuration of ``DIAGNOSTIC_CONFIGS`` or a scale of
``CONFIGS``, with optional ``--set key=value`` overrides; writes ``result.json`` (claims, metrics, config).

``calibrate``: the GRPO calibration on plain SFT that c2's precondition asks for (#48): one base model, one
plain SFT, then each ``--rl key=value,...`` GRPO setting from a copy of the same SFT model; writes each
setting's held-out ID gain with its 95 % interval over the paired evaluation problems, and the time it took.

Examples::

    python -m neurips25.behavior_injection.diagnose config quick_v2.4 --seed 0 --out runs/bi-v24
    python -m neurips25.behavior_injection.diagnose calibrate --base quick --seed 0 --out runs/bi-cal \\
        --rl rl_lr=5e-4,rl_steps=40 --rl rl_lr=1e-4,rl_steps=40
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import json
import os
import time
from pathlib import Path

import numpy as np


def _parse_value(text: str):
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    if "," in text or text.startswith("("):
        return tuple(_parse_value(t) for t in text.strip("()").split(":") if t)
    return text


def overrides(pairs: list[str]) -> dict:
    """``["rl_lr=1e-4", "id_ops=(2:3)"]`` -> ``{"rl_lr": 1e-4, "id_ops": (2, 3)}`` (tuples with ``:``)."""
    from neurips25.behavior_injection.reproduce import Config

    fields = {f.name for f in dataclasses.fields(Config)}
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or key not in fields:
            raise ValueError(f"`--set`/`--rl` must be key=value with key a Config field ({sorted(fields)}), "
                             f"got {pair!r}")
        out[key] = (tuple(_parse_value(t) for t in value.strip("()").split(":")) if ":" in value
                    else _parse_value(value))
    return out


def base_config(name: str):
    from neurips25.behavior_injection.reproduce import CONFIGS, DIAGNOSTIC_CONFIGS

    table = {**CONFIGS, **DIAGNOSTIC_CONFIGS}
    if name not in table:
        raise ValueError(f"unknown configuration {name!r}; one of {sorted(table)}")
    return table[name]


def run_named(name: str, seed: int, out: Path, sets: list[str]) -> dict:
    from neurips25.behavior_injection.reproduce import run_config
    from neurips25.repro.claims import jsonable

    cfg = dataclasses.replace(base_config(name), **overrides(sets))
    out.mkdir(parents=True, exist_ok=True)
    t0, c0 = time.perf_counter(), time.process_time()
    outcome = run_config(cfg, seed, out, label=f"diagnostic {name} {' '.join(sets)}".strip())
    res = {"config_name": name, "overrides": sets, "seed": seed, "config": dataclasses.asdict(cfg),
           "claims": [c.to_dict() for c in outcome.claims], "metrics": outcome.metrics, "notes": outcome.notes,
           "wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0}
    (out / "result.json").write_text(json.dumps(jsonable(res), indent=1))
    return res


def calibrate(base: str, seed: int, out: Path, settings: list[str], sets: list[str]) -> dict:
    """Plain SFT once, then GRPO under each setting; the held-out ID gain and its interval per setting."""
    import torch

    from neurips25.behavior_injection.data import arm_completions
    from neurips25.behavior_injection.model import build_tokenizer
    from neurips25.behavior_injection.reproduce import (
        greedy_hits,
        grpo_train,
        paired_gain_interval,
        pretrain,
        seed_splits,
    )
    from neurips25.behavior_injection.sft import sft_train
    from neurips25.repro.claims import jsonable

    cfg = dataclasses.replace(base_config(base), **overrides(sets))
    out.mkdir(parents=True, exist_ok=True)
    t0, c0 = time.perf_counter(), time.process_time()
    torch.manual_seed(seed)
    splits = seed_splits(cfg, seed)
    tok = build_tokenizer(splits.task.vocabulary())
    model = pretrain(cfg, tok, seed)
    comps = arm_completions(splits.sft, "plain", cfg.p, seed)
    sft_train(model, tok, [q.question for q in splits.sft], comps, cfg.sft_steps, cfg.sft_batch, cfg.sft_lr,
              warmup=30, seed=seed, desc="SFT plain")
    sft_hits, _ = greedy_hits(model, tok, splits.eval_id, cfg.max_new_tokens)
    res = {"base": base, "overrides": sets, "seed": seed, "config": dataclasses.asdict(cfg),
           "sft_acc_id": float(sft_hits.mean()), "time_to_sft_s": time.perf_counter() - t0,
           "n_parameters": sum(p.numel() for p in model.parameters()), "settings": []}
    for setting in settings:
        rl_cfg = dataclasses.replace(cfg, **overrides(setting.split(",")))
        m = copy.deepcopy(model)
        t1, c1 = time.perf_counter(), time.process_time()
        torch.manual_seed(seed)
        curve, zero, _ = grpo_train(rl_cfg, m, tok, splits.rl, seed, desc=f"GRPO {setting}")
        rl_hits, _ = greedy_hits(m, tok, splits.eval_id, cfg.max_new_tokens)
        g, lo, hi = paired_gain_interval([{"plain": {"sft_hits_id": sft_hits, "rl_hits_id": rl_hits}}], "plain")
        res["settings"].append({"setting": setting, "rl_acc_id": float(rl_hits.mean()), "gain_id": g,
                                "gain_lo": lo, "gain_hi": hi, "precondition_holds": bool(lo > 0),
                                "reward_first_5": float(np.mean(curve[:5])),
                                "reward_last_5": float(np.mean(curve[-5:])),
                                "frac_zero_std_mean": float(np.mean(zero)), "wall_s": time.perf_counter() - t1,
                                "cpu_s": time.process_time() - c1})
        print(f"{setting}: SFT {res['sft_acc_id']:.3f} -> RL {rl_hits.mean():.3f}, gain {g:+.3f} "
              f"[{lo:+.3f}, {hi:+.3f}]", flush=True)
    res.update(wall_s=time.perf_counter() - t0, cpu_s=time.process_time() - c0)
    (out / "calibration.json").write_text(json.dumps(jsonable(res), indent=1))
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m neurips25.behavior_injection.diagnose", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("config", help="the claims under a named configuration")
    a.add_argument("name")
    b = sub.add_parser("calibrate", help="GRPO settings on one plain SFT model: held-out gain and interval")
    b.add_argument("--base", default="quick")
    b.add_argument("--rl", action="append", default=[], help="one GRPO setting: key=value[,key=value...]")
    for p in (a, b):
        p.add_argument("--seed", type=int, default=0)
        p.add_argument("--out", type=Path, required=True)
        p.add_argument("--set", action="append", default=[], help="Config override key=value (tuples a:b)")
    args = ap.parse_args(argv)
    import torch

    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    if args.cmd == "config":
        res = run_named(args.name, args.seed, args.out, args.set)
        for c in res["claims"]:
            print(f"{c['id']:24s} {c['verdict']:15s} {c['summary']}")
    else:
        if not args.rl:
            ap.error("calibrate needs at least one --rl setting")
        calibrate(args.base, args.seed, args.out, args.rl, args.set)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
