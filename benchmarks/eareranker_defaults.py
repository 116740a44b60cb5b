"""EARerankerEstimator's defaults on planted adequacy at the embedding sizes real encoders produce (issue #59).

For each d: 4,000 training pairs and 2,000 held-out pairs from :func:`neurips25.eareranker.data.planted_pairs`;
held-out Spearman correlation with the noisy score of the raw cosine, of the oracle (the noise-free planted
score), and of the default estimator (``predict_score``, the one decision, and ``predict_raw_score``, the score
head alone), with the kept checkpoint, the warm-up and the CPU seconds. One torch thread.

    .venv/bin/python benchmarks/eareranker_defaults.py [--dims 32 128 384 768] [--n 4000]
"""

from __future__ import annotations

import argparse
import time
import warnings


def run(dims=(32, 128, 384, 768), n: int = 4000, n_test: int = 2000, seed: int = 0) -> list[dict]:
    import numpy as np
    import torch

    from neurips25.eareranker import EARerankerEstimator, spearman
    from neurips25.eareranker.data import planted_pairs

    torch.set_num_threads(1)
    rows = []
    for d in dims:
        q, x, s, oracle = planted_pairs(n + n_test, d, seed=seed)
        tr, te = slice(0, n), slice(n, None)
        t = time.process_time()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est = EARerankerEstimator(seed=seed).fit(q[tr], x[tr], s[tr])
        rows.append({"d": d, "cosine": spearman(np.sum(q[te] * x[te], 1), s[te]),
                     "oracle": spearman(oracle[te], s[te]),
                     "defaults": spearman(est.predict_score(q[te], x[te]), s[te]),
                     "score_head": spearman(est.predict_raw_score(q[te], x[te]), s[te]),
                     "best_step": est.best_step_, "warmup": est.warmup_steps_, "steps": est.n_steps_,
                     "cpu_s": time.process_time() - t, "warnings": len(caught)})
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dims", type=int, nargs="+", default=[32, 128, 384, 768])
    ap.add_argument("--n", type=int, default=4000)
    args = ap.parse_args(argv)
    rows = run(tuple(args.dims), args.n)
    print("| d | raw cosine | defaults (predict_score) | score head alone | oracle | kept step (warm-up) | CPU s |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['d']} | {r['cosine']:.3f} | {r['defaults']:.3f} | {r['score_head']:.3f} | {r['oracle']:.3f} | "
              f"{r['best_step']} of {r['steps']} ({r['warmup']}) | {r['cpu_s']:.0f} |")


if __name__ == "__main__":
    main()
