"""Diagnostic (not a judged run): is RS-Pool's clean-accuracy deficit on Cuneiform the raw coordinates' scale?

Cuneiform's node features are two one-hot label columns (values 0 / 1) and three coordinates (standard deviations
2.6 / 1.9 / 8.6). RS-Pool reads a graph through the dominant singular direction of its node embeddings, which
large unstandardised inputs can dominate, while sum / max keep every direction. This runs one stratified 8-fold
cross-validation at the paper recipe (:func:`neurips25.rspool.reproduce.run_tu_fold`, CE-PGD included) twice: on
the features as shipped (what c2_cuneiform / c3_cuneiform judge) and with the coordinates standardised per
fold on the training graphs' nodes. Verdicts come only from the reproduction.

    OMP_NUM_THREADS=1 python scripts/rspool/cuneiform_scaling_diagnostic.py --repeat-seed 0 --out cuneiform-diag.json
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import time

import numpy as np
import torch

from neurips25.repro import Scale
from neurips25.rspool.data import GraphSet, shipped_tudataset
from neurips25.rspool.reproduce import POOLINGS, SCALES, run_tu_fold, tu_folds


def standardised(ds: GraphSet, train_idx, columns: slice) -> GraphSet:
    """``ds`` with feature ``columns`` centred and scaled by the training graphs' node statistics."""
    nodes = np.concatenate([ds.xs[i][:, columns] for i in train_idx])
    mu, sd = nodes.mean(0), nodes.std(0) + 1e-8
    xs = []
    for x in ds.xs:
        x = x.copy()
        x[:, columns] = (x[:, columns] - mu) / sd
        xs.append(x.astype(np.float32))
    return dataclasses.replace(ds, xs=xs)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat-seed", type=int, default=0)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    torch.set_num_threads(1)
    cfg = SCALES[Scale.PAPER]
    ds = shipped_tudataset("Cuneiform")
    coords = slice(ds.num_features - 3, ds.num_features)
    n_folds = int(min(cfg.tu_folds, np.bincount(ds.ys).min()))
    t0 = time.process_time()
    rows = {"as_shipped": [], "coordinates_standardised": []}
    for k, (tr, va, te) in enumerate(tu_folds(ds.ys, n_folds, args.repeat_seed)):
        s = args.repeat_seed * cfg.tu_folds + k
        for name, data in (("as_shipped", ds), ("coordinates_standardised", standardised(ds, tr, coords))):
            res = run_tu_fold(data, tr, va, te, cfg, s)
            rows[name].append({p: {m: res[p][m] for m in ("clean", f"pgd@{cfg.budget}")} for p in POOLINGS})
            print(name, k, {p: round(res[p]["clean"], 3) for p in POOLINGS}, flush=True)
    means = {name: {p: {m: float(np.mean([f[p][m] for f in folds])) for m in folds[0][p]} for p in POOLINGS}
             for name, folds in rows.items()}
    out = {"repeat_seed": args.repeat_seed, "folds": n_folds, "means": means, "per_fold": rows,
           "cpu_s": time.process_time() - t0}
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
    for name, m in means.items():
        print(name, {p: (round(v["clean"], 3), round(v[f"pgd@{cfg.budget}"], 3)) for p, v in m.items()})


if __name__ == "__main__":
    main()
