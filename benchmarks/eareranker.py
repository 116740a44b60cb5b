"""Benchmark: per-pair scoring cost of EAReranker vs a MiniLM cross-encoder against document length.

For documents of 50, 500 and 2000 words (AdequacySynth), one query, ``--pairs`` documents per length:
- EAReranker (default estimator: whole-vector lift to T=4 tokens, d_model=64, 2 layers) scoring precomputed MiniLM
  embeddings
  (what a vector store holds; the embedding is not timed, as in the paper's claim);
- sentence-transformers ``CrossEncoder`` built on the shipped all-MiniLM-L6-v2 (max 256 word pieces, as the
  model itself), scoring the text pairs (tokenisation included: it is part of its cost);
- for reference, EAReranker when the document embedding is not precomputed (MiniLM bi-encoder + scorer).

Time: minimum over ``--reps`` rounds in which all legs are interleaved, the whole measurement repeated ``--repeats``
times (ratios reported per repeat and as their median: a shared machine's load hits every leg alike). Memory: peak
live tensor
bytes during the call (torch dispatcher tracking, :mod:`neurips25.eareranker.cost`). Weights are untrained:
cost does not depend on their values. Targets (issue #20): EAReranker >= 2x faster than the cross-encoder at
500 words; EAReranker time and memory flat in length (2000/50 within 10%).
Run: ``python benchmarks/eareranker.py [--pairs 32] [--reps 7] [--repeats 3] [--threads 1]``.
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import torch

from neurips25.eareranker import AdequacySynth, EARerankerEstimator, MiniLMEncoder
from neurips25.eareranker.cost import interleaved_min_time, peak_tensor_bytes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=32)
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--max-length", type=int, default=256)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    from sentence_transformers import CrossEncoder

    from neurips25.pretrained import minilm_dir

    lengths = (50, 500, 2000)
    synth = AdequacySynth(n_entities=6)
    query = "What are the birth year and occupation of the person described?"
    docs = {n: [synth.make_document(n, seed=1000 * n + i) for i in range(args.pairs)] for n in lengths}
    enc = MiniLMEncoder(max_seq_length=args.max_length)
    q_emb = enc([query])
    embs = {n: enc(d) for n, d in docs.items()}
    rng = np.random.default_rng(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # one step: weights untrained, cost does not depend on them
        est = EARerankerEstimator(max_steps=1, seed=0).fit(rng.normal(size=(64, 384)), rng.normal(size=(64, 384)),
                                                           rng.uniform(0, 100, 64))
    ce = CrossEncoder(str(minilm_dir()), num_labels=1, max_length=args.max_length, device="cpu")
    Q = np.repeat(q_emb, args.pairs, 0)
    tile = int(np.ceil(1024 / args.pairs))  # EAReranker calls are sub-millisecond: time 1024 pairs per call
    tiled = {n: np.tile(e, (tile, 1)) for n, e in embs.items()}
    Qt = np.repeat(q_emb, args.pairs * tile, 0)
    fns = {}
    for n in lengths:
        fns[("ea", n)] = lambda n=n: est.predict_score(Qt, tiled[n])
        fns[("ce", n)] = lambda n=n: ce.predict([(query, d) for d in docs[n]], batch_size=args.pairs,
                                                show_progress_bar=False)
        fns[("ea+embed", n)] = lambda n=n: est.predict_score(Q, enc(docs[n]))
    with torch.no_grad():
        for f in fns.values():
            f()  # warm-up
        repeats = [interleaved_min_time(fns, args.reps) for _ in range(max(1, args.repeats))]
        mem = {k: peak_tensor_bytes(f)[0] for k, f in fns.items() if k[0] != "ea+embed"}
    t = {key: min(r[key] for r in repeats) for key in fns}
    tok = ce.processor
    k = args.pairs
    for key in list(t):
        if key[0] == "ea":  # per-pair figures: EAReranker calls score k * tile pairs
            t[key] /= tile
            mem[key] /= tile
            for r in repeats:
                r[key] /= tile
    print(f"per-pair cost, {k} pairs per call, {args.threads} thread(s), min of {args.reps} interleaved rounds x "
          f"{len(repeats)} repeats; {sum(p.numel() for p in est.model_.parameters())} EAReranker parameters")
    print(f"{'words':>6} {'EA ms':>8} {'CE ms':>8} {'CE/EA':>7} {'EA+embed ms':>12} {'EA KiB':>8} {'CE KiB':>9} "
          f"{'CE tokens':>9} {'CE trunc':>8}")
    for n in lengths:
        ntok = [len(tok(query, d, truncation=False)["input_ids"]) for d in docs[n]]
        print(f"{n:>6} {1e3 * t[('ea', n)] / k:8.3f} {1e3 * t[('ce', n)] / k:8.2f} {t[('ce', n)] / t[('ea', n)]:7.1f} "
              f"{1e3 * t[('ea+embed', n)] / k:12.2f} {mem[('ea', n)] / k / 1024:8.1f} {mem[('ce', n)] / k / 1024:9.1f} "
              f"{np.mean(ntok):9.0f} {np.mean(np.array(ntok) > args.max_length):8.0%}")
    lo, hi = lengths[0], lengths[-1]

    def per_repeat(f):
        vals = [f(r) for r in repeats]
        return f"{np.median(vals):.3f} (repeats: {', '.join(f'{v:.3f}' for v in vals)})"

    print("ratios (target), median over repeats:")
    print(f"  CE/EA time at 500 words: {per_repeat(lambda r: r[('ce', 500)] / r[('ea', 500)])} (>= 2x)")
    print(f"  CE/(EA+embed) time at 500 words: {per_repeat(lambda r: r[('ce', 500)] / r[('ea+embed', 500)])}")
    print(f"  EA time 2000/50 words: {per_repeat(lambda r: r[('ea', hi)] / r[('ea', lo)])} (within 0.90-1.10); "
          f"EA memory 2000/50: {mem[('ea', hi)] / mem[('ea', lo)]:.3f} (within 0.90-1.10)")
    print(f"  CE time 2000/50 words: {per_repeat(lambda r: r[('ce', hi)] / r[('ce', lo)])}; CE memory 2000/50: "
          f"{mem[('ce', hi)] / mem[('ce', lo)]:.2f} (grows until truncation at {args.max_length} word pieces)")


if __name__ == "__main__":
    main()
