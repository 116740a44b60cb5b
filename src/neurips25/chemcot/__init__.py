"""ChemCoTBench: modular chemical operations, the official metrics, and an OpenAI-compatible harness.

Li, Cao, Feng, Shao, Tang, Yan, Yuan, Tian, Li, "Beyond Chemical QA: Evaluating LLM's Chemical Reasoning with
Modular Chemical Operations", NeurIPS 2025 Datasets & Benchmarks (arXiv 2505.21318).

The benchmark decomposes chemical reasoning into modular operations on molecules -- count, add, delete,
substitute a functional group -- and asks LLMs four families of questions: molecule understanding, editing,
property optimisation and reactions. An answer is a JSON object; editing is judged by SMARTS match counts
(``count(out, g) = count(src, g) + 1`` for an addition), optimisation by the oracle delta
``f(out) - f(src)`` with invalid answers scored 0, reactions by exact match and fingerprint similarity.

This package gives the operations (:mod:`.ops`), the oracles with the official definitions (:mod:`.oracles`:
TDC's penalized logP, refit ESOL, QED), the metrics (:mod:`.metrics`), items and the release's JSON loader
(:mod:`.tasks`), offline suites (:mod:`.data`), a parser robust to reasoning models (:mod:`.parsing`), an
OpenAI-compatible client (:mod:`.clients`) and local server (:mod:`.server`), reference solvers
(:mod:`.solvers`), the evaluation harness (:mod:`.harness`) and verified CoT traces + LoRA (:mod:`.cot`).
Reconstructed (not from the paper's text, which was available only in part): our SMARTS set and attachment
fragments, the reaction templates of the offline forward-synthesis family, the prompts' wording.

Examples
--------
>>> from neurips25.chemcot import add_group, count_group
>>> [count_group(s, "hydroxyl") for s in add_group("CCC", "hydroxyl")]
[1, 1]
"""

from neurips25.chemcot.clients import CallableClient, ChatClient, ChatError, OpenAIChatClient
from neurips25.chemcot.data import available_sources, generate_suite, molecule_pool
from neurips25.chemcot.harness import Report, evaluate, score
from neurips25.chemcot.metrics import METRICS, score_subtask
from neurips25.chemcot.ops import (
    FUNCTIONAL_GROUPS,
    OperationError,
    PlanResult,
    Step,
    add_group,
    apply_plan,
    count_group,
    delete_group,
    substitute_group,
)
from neurips25.chemcot.oracles import (
    ESOL,
    QED,
    CrippenLogP,
    Oracle,
    PenalizedLogP,
    SklearnFingerprintOracle,
    get_oracle,
    register_oracle,
)
from neurips25.chemcot.parsing import extract_answer
from neurips25.chemcot.server import Noise, TransformersResponder, serve
from neurips25.chemcot.solvers import IdentitySolver, RandomEditSolver, RuleBasedSolver
from neurips25.chemcot.tasks import SUBTASKS, Item, load_official_json, save_items

__all__ = [
    "FUNCTIONAL_GROUPS", "OperationError", "Step", "PlanResult", "count_group", "add_group", "delete_group",
    "substitute_group", "apply_plan", "Oracle", "QED", "PenalizedLogP", "CrippenLogP", "ESOL",
    "SklearnFingerprintOracle", "get_oracle", "register_oracle", "Item", "SUBTASKS", "load_official_json",
    "save_items", "generate_suite", "molecule_pool", "available_sources", "extract_answer", "METRICS",
    "score_subtask", "ChatClient", "ChatError", "OpenAIChatClient", "CallableClient", "serve", "Noise",
    "TransformersResponder", "RuleBasedSolver", "RandomEditSolver", "IdentitySolver", "evaluate", "score",
    "Report",
]
