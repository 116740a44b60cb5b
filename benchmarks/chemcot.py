"""ChemCoTBench benchmarks, as ratios in one run.

1. Oracle throughput (molecules / s) for QED + penalized logP + ESOL on 2,000 molecules: one parse per
   molecule and the three scores from it (``score_many``-style, as the metrics use) against TDC-style
   per-molecule calls (each oracle parses the SMILES itself; penalized logP builds a networkx graph from the
   dense adjacency matrix, as TDC does).
2. Harness items / s through the local HTTP server with 1 vs 4 client workers: against a batching LM
   server (TransformersResponder; ``--lm tiny`` a 2-layer random Llama, ``--lm smollm2`` the real model)
   and against the rule-based solver (pure Python under the GIL, so it cannot use more workers).

Both legs of every ratio are run interleaved (A B, then B A, ...) and repeated ``--repeats`` times; the
ratio reported is the median of the per-repeat ratios, with its min and max, so a load change on a shared
machine shows as spread instead of as a biased ratio.

Run: ``python benchmarks/chemcot.py [--n 2000] [--lm tiny|smollm2] [--repeats 3]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time


def _spread(ratios: list[float]) -> dict:
    return {"ratio_median": float(statistics.median(ratios)), "ratio_min": min(ratios), "ratio_max": max(ratios),
            "ratios": [round(r, 4) for r in ratios]}


def oracle_throughput(n: int, repeats: int) -> dict:
    from rdkit import Chem

    from neurips25.chemcot.data import molecule_pool
    from neurips25.chemcot.oracles import ESOL, QED, PenalizedLogP
    from neurips25.chemcot.reproduce import tdc_penalized_logp

    smiles = molecule_pool("moses" if _has_moses() else "nci", n, 0)
    q, p, e = QED(), PenalizedLogP(), ESOL()
    p("CCO")  # load the SA fragment table outside the timing

    def ours():
        out = []
        for s in smiles:
            m = Chem.MolFromSmiles(s)
            out.append((q.score_mol(m), p.score_mol(m), e.score_mol(m)))
        return out

    def tdc():
        return [(q(s), tdc_penalized_logp(s), e(s)) for s in smiles]

    ratios, t_o, t_t, same = [], [], [], True
    for r in range(repeats):
        times = {}
        for name, fn in ((("ours", ours), ("tdc", tdc)) if r % 2 == 0 else (("tdc", tdc), ("ours", ours))):
            t = time.perf_counter()
            times[name] = (fn(), time.perf_counter() - t)
        same &= all(abs(a - b) < 1e-9 for x, y in zip(times["ours"][0], times["tdc"][0]) for a, b in zip(x, y))
        t_o.append(times["ours"][1])
        t_t.append(times["tdc"][1])
        ratios.append(times["tdc"][1] / times["ours"][1])
    return {"n": len(smiles), "repeats": repeats, "ours_mol_per_s": len(smiles) / statistics.median(t_o),
            "tdc_style_mol_per_s": len(smiles) / statistics.median(t_t), "identical_scores": same, **_spread(ratios)}


def _has_moses() -> bool:
    from neurips25.chemcot.data import available_sources

    return "moses" in available_sources()


def _tiny_lm():
    import torch
    import transformers
    from tokenizers import Tokenizer, models, pre_tokenizers

    torch.manual_seed(0)
    chars = list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789{}[]()=#@+-\":,. \n")
    vocab = {c: i for i, c in enumerate(["<pad>", "<eos>", *chars])}
    tk = Tokenizer(models.WordLevel(vocab, unk_token="<pad>"))
    tk.pre_tokenizer = pre_tokenizers.Split("", "isolated")
    tok = transformers.PreTrainedTokenizerFast(tokenizer_object=tk, pad_token="<pad>", eos_token="<eos>")
    tok.chat_template = "{% for m in messages %}{{ m['content'] }}{% endfor %}"
    cfg = transformers.LlamaConfig(vocab_size=len(vocab), hidden_size=256, intermediate_size=512,
                                   num_hidden_layers=4, num_attention_heads=4, num_key_value_heads=2,
                                   max_position_embeddings=2048, pad_token_id=0, eos_token_id=1, bos_token_id=1)
    return transformers.LlamaForCausalLM(cfg).eval(), tok


def harness_throughput(lm: str, n_items: int, max_tokens: int, repeats: int) -> dict:
    from neurips25.chemcot import OpenAIChatClient, RuleBasedSolver, evaluate, generate_suite, serve
    from neurips25.chemcot.server import TransformersResponder

    items = generate_suite("nci", max(n_items // 12 + 1, 1), seed=0, pool_size=200)[:n_items]
    if lm == "smollm2":
        from neurips25.pretrained import load_smollm2, load_smollm2_tokenizer

        model, tok = load_smollm2(), load_smollm2_tokenizer()
    else:
        model, tok = _tiny_lm()
    out = {}
    for name, responder in (("lm", TransformersResponder(model, tok, max_batch=4, default_max_tokens=max_tokens,
                                                         min_new_tokens=max_tokens)),
                            ("rule_based", RuleBasedSolver(depth=1, max_sites=2))):
        url, stop = serve(responder)
        ratios, rates = [], {1: [], 4: []}
        try:
            evaluate(OpenAIChatClient(url, "m", max_tokens=max_tokens, timeout=600), items[:4], workers=4)  # warm-up
            for r in range(repeats):
                got = {}
                for workers in ((1, 4) if r % 2 == 0 else (4, 1)):
                    client = OpenAIChatClient(url, "m", max_tokens=max_tokens, timeout=600)
                    t = time.perf_counter()
                    evaluate(client, items, workers=workers)
                    got[workers] = len(items) / (time.perf_counter() - t)
                    rates[workers].append(got[workers])
                ratios.append(got[4] / got[1])
        finally:
            stop()
        out[name] = {"items_per_s_1": statistics.median(rates[1]), "items_per_s_4": statistics.median(rates[4]),
                     **_spread(ratios)}
    out["lm_model"] = lm
    out["n_items"] = len(items)
    return out


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=2000, help="molecules for the oracle benchmark")
    ap.add_argument("--items", type=int, default=24, help="items for the harness benchmark")
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--lm", choices=["tiny", "smollm2"], default="tiny")
    ap.add_argument("--repeats", type=int, default=3, help="interleaved repeats of every pair of legs")
    args = ap.parse_args(argv)
    if args.repeats < 1:
        ap.error("--repeats must be >= 1")
    res = {"oracles": oracle_throughput(args.n, args.repeats),
           "harness": harness_throughput(args.lm, args.items, args.max_tokens, args.repeats)}
    print(json.dumps(res, indent=1))
    return res


if __name__ == "__main__":
    main()
