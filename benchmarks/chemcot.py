"""ChemCoTBench benchmarks, as ratios in one run.

1. Oracle throughput (molecules / s) for QED + penalized logP + ESOL on 2,000 molecules: one parse per
   molecule and the three scores from it (``score_many``-style, as the metrics use) against TDC-style
   per-molecule calls (each oracle parses the SMILES itself; penalized logP builds a networkx graph from the
   dense adjacency matrix, as TDC does).
2. Harness items / s through the local HTTP server with 1 vs 4 client workers: against a batching LM
   server (TransformersResponder; ``--lm tiny`` a 2-layer random Llama, ``--lm smollm2`` the real model)
   and against the rule-based solver (pure Python under the GIL, so it cannot use more workers).

Run: ``python benchmarks/chemcot.py [--n 2000] [--lm tiny|smollm2]``.
"""

from __future__ import annotations

import argparse
import json
import time


def oracle_throughput(n: int) -> dict:
    from rdkit import Chem

    from neurips25.chemcot.data import molecule_pool
    from neurips25.chemcot.oracles import ESOL, QED, PenalizedLogP
    from neurips25.chemcot.reproduce import tdc_penalized_logp

    smiles = molecule_pool("moses" if _has_moses() else "nci", n, 0)
    q, p, e = QED(), PenalizedLogP(), ESOL()
    p("CCO")  # load the SA fragment table outside the timing
    t = time.perf_counter()
    ours = []
    for s in smiles:
        m = Chem.MolFromSmiles(s)
        ours.append((q.score_mol(m), p.score_mol(m), e.score_mol(m)))
    t_ours = time.perf_counter() - t
    t = time.perf_counter()
    tdc = [(q(s), tdc_penalized_logp(s), e(s)) for s in smiles]
    t_tdc = time.perf_counter() - t
    same = all(abs(a - b) < 1e-9 for x, y in zip(ours, tdc) for a, b in zip(x, y))
    return {"n": len(smiles), "ours_mol_per_s": len(smiles) / t_ours, "tdc_style_mol_per_s": len(smiles) / t_tdc,
            "ratio": t_tdc / t_ours, "identical_scores": same}


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


def harness_throughput(lm: str, n_items: int, max_tokens: int) -> dict:
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
        rates = {}
        try:
            for workers in (1, 4):
                client = OpenAIChatClient(url, "m", max_tokens=max_tokens, timeout=600)
                t = time.perf_counter()
                evaluate(client, items, workers=workers)
                rates[workers] = len(items) / (time.perf_counter() - t)
        finally:
            stop()
        out[name] = {"items_per_s_1": rates[1], "items_per_s_4": rates[4], "speedup_4_over_1": rates[4] / rates[1]}
    out["lm_model"] = lm
    out["n_items"] = len(items)
    return out


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=2000, help="molecules for the oracle benchmark")
    ap.add_argument("--items", type=int, default=24, help="items for the harness benchmark")
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--lm", choices=["tiny", "smollm2"], default="tiny")
    args = ap.parse_args(argv)
    res = {"oracles": oracle_throughput(args.n), "harness": harness_throughput(args.lm, args.items, args.max_tokens)}
    print(json.dumps(res, indent=1))
    return res


if __name__ == "__main__":
    main()
