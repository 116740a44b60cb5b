"""Where our re-scores of the released replies and the release's own scores part (issue #62's positive control).

Prints, per task, how many (model, task) cells agree within ``release.TOLERANCE`` with our official metrics, and
for the two optimisation properties that disagree, the agreement under other definitions of the oracle:
Crippen logP for "logp" (TDC's older ``logp``) and, for solubility, the linear model of the release's own scoring
code at 080a8eb (``0.16 - 0.63 logP - 0.0062 MW + 0.066 HBD - 0.074 HBA``, 0.0 for an invalid SMILES). Then the
reasoning vs non-reasoning gap on the release's own success rates, beside ours.

Usage: python scripts/chemcot/release_diagnostics.py RELEASE_DIR [--json OUT]
"""

from __future__ import annotations

import argparse
import json

import numpy as np


def release_solubility(smiles):
    from rdkit import Chem
    from rdkit.Chem import Descriptors

    mol = Chem.MolFromSmiles(smiles) if isinstance(smiles, str) else None
    if mol is None:
        return 0.0  # the release's calculate_solubility returns 0.0 for an invalid molecule
    return (0.16 - 0.63 * Descriptors.MolLogP(mol) - 0.0062 * Descriptors.MolWt(mol)
            + 0.066 * Descriptors.NumHDonors(mol) - 0.074 * Descriptors.NumHAcceptors(mol))


def release_gap(rescore, props=("qed", "logp", "solubility")) -> dict:
    """Mean success of each group on the release's own scores (no interval: one number per model and property)."""
    from neurips25.chemcot.release import MODELS

    per = {}
    for stem, m in MODELS.items():
        vals = [rescore.release_scores.get((stem, p)) for p in props]
        if m.group in ("reasoning", "non-reasoning") and all(v is not None for v in vals):
            per[stem] = float(np.mean(vals))
    r = [v for s, v in per.items() if MODELS[s].group == "reasoning"]
    n = [v for s, v in per.items() if MODELS[s].group == "non-reasoning"]
    return {"reasoning": float(np.mean(r)), "non_reasoning": float(np.mean(n)),
            "gap": float(np.mean(r) - np.mean(n)), "n_models": [len(r), len(n)], "per_model": per}


def main(argv=None) -> int:
    from neurips25.chemcot.oracles import CrippenLogP
    from neurips25.chemcot.release import agreement, reasoning_gap, rescore_release

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("release")
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    ours = rescore_release(a.release)
    alt = rescore_release(a.release, tasks=["logp", "solubility"],
                          oracles={"logp": CrippenLogP(), "solubility": release_solubility})
    out = {"commit": ours.commit, "ours": agreement(ours),
           "opt_alternative_definitions": agreement(alt, families=("deep_mol_opt",)),
           "gap_ours": {k: v for k, v in reasoning_gap(ours).items() if k != "per_model_success"},
           "gap_release_scores": release_gap(ours),
           "table": ours.table()}
    print(json.dumps({k: v for k, v in out.items() if k != "table"}, indent=1))
    print(f"\n{'model':34} {'task':12} {'ours':>7} {'ours(rel.den.)':>14} {'release':>8} agrees")
    for r in out["table"]:
        rel = "-" if r["release"] is None else f"{r['release']:.3f}"
        print(f"{r['model']:34} {r['task']:12} {r['ours']:7.3f} {r['ours_release_convention']:14.3f} {rel:>8} "
              f"{r['agrees']}")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(out, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
