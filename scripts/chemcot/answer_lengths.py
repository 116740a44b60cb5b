"""The token length of a right answer to every item the SmolLM2 arm of c4b sees, and the budget it implies.

A right answer is the JSON object the prompt asks for, ``{"<key>": <value>}`` (``json.dumps``), whose value is
the item's reference, or for editing / optimisation items (no reference answer) the source molecule's SMILES
(an answer of the source's size). Lengths are counted with SmolLM2-135M-Instruct's own tokenizer, plus one
token for the end of the reply. The reproduction's SmolLM2 budget (``ChemcotConfig.llm_max_tokens``) is the
90th percentile of this distribution over the quick suites of seeds 0 and 1, rounded up to a multiple of 8.

Usage: python scripts/chemcot/answer_lengths.py [--seeds 0,1] [--per-subtask 20] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import math

import numpy as np


def answer_text(item) -> str:
    key, _kind = item.answer_key
    value = item.reference
    if value is None or item.task in ("mol_edit", "mol_opt"):
        value = item.meta.get("reference") or item.meta.get("source")
    if isinstance(value, str) and value.lower() in ("yes", "no"):
        value = value.capitalize()
    return json.dumps({key: value})


def lengths(seeds=(0, 1), per_subtask: int = 20) -> dict:
    from neurips25.chemcot.data import available_sources, generate_suite
    from neurips25.pretrained import load_smollm2_tokenizer

    tok = load_smollm2_tokenizer()
    out = {}
    for seed in seeds:
        items = generate_suite(available_sources()[0], per_subtask, seed)
        by: dict[str, list] = {}
        for it in items:
            by.setdefault(it.subtask, []).append(it)
        chosen = [it for s in sorted(by) for it in by[s][:per_subtask]]
        out[seed] = [len(tok.encode(answer_text(it), add_special_tokens=False)) + 1 for it in chosen]
    return out


def summary(per_seed: dict) -> dict:
    allv = np.concatenate([np.asarray(v) for v in per_seed.values()])
    pct = {p: float(np.percentile(allv, p)) for p in (50, 75, 90, 95, 100)}
    budget = int(8 * math.ceil(pct[90] / 8))
    return {"n": int(allv.size), "percentiles": pct, "share_over_32": float(np.mean(allv > 32)),
            "budget_p90_rounded_to_8": budget, "share_over_budget": float(np.mean(allv > budget))}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="0,1")
    ap.add_argument("--per-subtask", type=int, default=20)
    ap.add_argument("--json", default=None, help="write the lengths and the summary here")
    a = ap.parse_args(argv)
    seeds = tuple(int(s) for s in a.seeds.split(","))
    per = lengths(seeds, a.per_subtask)
    s = summary(per)
    print(json.dumps(s, indent=1))
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"lengths": {str(k): v for k, v in per.items()}, "summary": s}, fh)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
