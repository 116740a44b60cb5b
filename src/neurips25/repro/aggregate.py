"""Verdicts over several seeds: one claim judged per seed, summarized across seeds.

For each claim id, the per-seed verdicts are kept beside an ``agreement`` ("3/3 reproduced") and the mean
and spread (sample s.d., min, max) of every numeric figure in its measurement. The combined verdict is the
common verdict when every seed agrees, and ``unstable`` when they differ: a claim that flips between seeds
is never shown as reproduced.
"""

from __future__ import annotations

import numbers
import statistics

from neurips25.repro.claims import Verdict


def numeric_figures(measured, prefix: str = "", depth: int = 0) -> dict[str, float]:
    """Flatten the numeric scalars of a measurement (two levels of dicts) into ``{"a.b": value}``."""
    out: dict[str, float] = {}
    if isinstance(measured, bool):
        return out
    if isinstance(measured, numbers.Real):
        out[prefix or "value"] = float(measured)
    elif isinstance(measured, dict) and depth < 2:
        for k, v in measured.items():
            out.update(numeric_figures(v, f"{prefix}.{k}" if prefix else str(k), depth + 1))
    return out


def spread(values: list[float]) -> dict:
    return {"mean": statistics.fmean(values), "sd": statistics.stdev(values) if len(values) > 1 else 0.0,
            "min": min(values), "max": max(values), "n": len(values)}


def _seed_cell(c: dict) -> dict:
    """What one seed's cell shows: its verdict, key figure, reason, one-line summary and controls' figures."""
    return {"verdict": c["verdict"], "summary": c.get("summary", ""), "key_value": c.get("key_value"),
            "reason": c.get("reason", ""), "decided_by": c.get("decided_by", ""),
            "controls": {r["name"]: {"key_value": r.get("key_value"), "passes": r.get("passes")}
                         for r in c.get("control_results", [])}}


def summarise_seed_results(per_seed: list[dict]) -> dict:
    """What a single-claim driver (``rspool.tu_run``, ``chemcot.c5_run``) writes to ``summary.json``: each seed's
    ``claims`` combined by :func:`combine_claims` (seeds that disagree make a claim *unstable*), with the seeds,
    the scale and each seed's CPU and wall seconds. ``per_seed`` holds the dicts the driver wrote per seed."""
    if not per_seed:
        raise ValueError("`per_seed` must hold at least one seed's results")
    per_seed = sorted(per_seed, key=lambda r: r["seed"])
    return {"seeds": [r["seed"] for r in per_seed], "scale": per_seed[0]["scale"],
            "claims": combine_claims({r["seed"]: r["claims"] for r in per_seed}),
            "cpu_s_per_seed": [r["cpu_s"] for r in per_seed], "wall_s_per_seed": [r["wall_s"] for r in per_seed]}


def combine_claims(per_seed: dict[int, list[dict]]) -> list[dict]:
    """Merge each seed's claim dicts into one claim per id: the union of the ids over the seeds, in the order
    they first appear. A claim missing at some seed says so and is inconclusive as a whole: a verdict is never
    taken from the seeds that happen to have it."""
    seeds = sorted(per_seed)
    order: list[str] = []
    for s in seeds:
        for c in per_seed[s]:
            if c["id"] not in order:
                order.append(c["id"])
    merged = []
    for cid in order:
        rows = {s: next((c for c in per_seed[s] if c["id"] == cid), None) for s in seeds}
        present = {s: c for s, c in rows.items() if c is not None}
        missing = [s for s in seeds if rows[s] is None]
        base = dict(next(iter(present.values())))
        verdicts = [c["verdict"] for c in present.values()]
        if missing:
            common = Verdict.INCONCLUSIVE.value
        else:
            common = verdicts[0] if len(set(verdicts)) == 1 else Verdict.UNSTABLE.value
        figures: dict[str, list[float]] = {}
        for c in present.values():
            for k, v in numeric_figures(c.get("measured")).items():
                figures.setdefault(k, []).append(v)
        n_ok = sum(v == Verdict.REPRODUCED.value for v in verdicts)
        base.update({
            "verdict": common,
            "agreement": f"{n_ok}/{len(seeds)} reproduced" + (f" (missing at seed {', '.join(map(str, missing))})"
                                                            if missing else ""),
            "per_seed": {str(s): (_seed_cell(c) if c else None) for s, c in rows.items()},
            "spread": {k: spread(v) for k, v in figures.items() if len(v) == len(seeds)},
            "measured": {str(s): c.get("measured") for s, c in present.items()},
        })
        keys = [c.get("key_value") for c in present.values()]
        if base.get("key") and all(isinstance(k, numbers.Real) and not isinstance(k, bool) for k in keys) \
                and len(keys) == len(seeds):
            base["key_spread"] = spread([float(k) for k in keys])
        if missing:
            base["reason"] = (f"claim missing at seed {', '.join(map(str, missing))} (recorded at seed "
                              f"{', '.join(map(str, present))}): not judged across seeds")
            base["summary"] = f"missing at seed {', '.join(map(str, missing))}; " + "; ".join(
                f"seed {s}: {c['verdict'].replace('_', ' ')}" for s, c in present.items())
        elif common == Verdict.UNSTABLE.value:
            base["reason"] = "seeds disagree: " + "; ".join(
                f"seed {s}: {c['verdict'].replace('_', ' ')} ({c.get('reason', '')})" for s, c in present.items())
            base["summary"] = (f"unstable across seeds ({base['agreement']}): " +
                               "; ".join(f"seed {s}: {c['verdict'].replace('_', ' ')}" for s, c in present.items()))
        else:
            first = present[seeds[0]].get("summary", "")
            base["summary"] = f"{base['agreement']}; seed {seeds[0]}: {first}" if first else base["agreement"]
        merged.append(base)
    return merged


def combine_results(slug: str, per_seed: dict[int, dict]) -> dict:
    """One result for a method run at several seeds (written as ``<slug>/result.json``)."""
    seeds = sorted(per_seed)
    failed = {s: r for s, r in per_seed.items() if r.get("status") != "ok"}
    first = per_seed[seeds[0]]
    result = {
        "slug": slug, "status": "ok" if not failed else "error",
        "error": "; ".join(f"seed {s}: {r.get('error')}" for s, r in failed.items()) or None,
        "scale": first.get("scale"), "seed": seeds[0], "seeds": seeds,
        "wall_s": round(sum(r.get("wall_s", 0.0) for r in per_seed.values()), 3),
        "cpu_s": round(sum(r.get("cpu_s") or 0.0 for r in per_seed.values()), 3),
        "threads": first.get("threads", {}),
        "finished_at": max(r.get("finished_at", "") for r in per_seed.values()),
        "claims": combine_claims({s: r.get("claims", []) for s, r in per_seed.items() if r.get("status") == "ok"})
        if len(failed) < len(seeds) else [],
        "metrics": {}, "notes": first.get("notes", ""),
        "figures": [f"seed-{s}/{f}" for s in seeds for f in per_seed[s].get("figures", [])],
    }
    return result
