"""BRIDGE: behaviour-injection data augmentation of SFT chains of thought (Cen et al., NeurIPS 2025, Alg. 1).

While walking the reference solution in its order, before each step:

- exploration, with probability ``p_explore``: pick a *locked* needed node (some parent unsolved), start to
  solve it, notice the missing quantity and back off -- ``"try E = C - B , C unknown , back ;"``;
- exploitation, with probability ``p_exploit``: pick an *unlocked* needed node (all parents solved), gather
  the known values it needs, then solve it now -- ``"since A = 7 , B = 4 , C = A + B = 7 + 4 = 11 ;"``;
  that node is then not solved again later.

Every inserted step is correct where it stands (the locked node is locked at that point, exploitation uses
only solved values) and the final ``ANS v`` is unchanged. The template wording is reconstructed (the paper's
text was not available); ``filler_like`` builds the length-matched control (restatements of solved values,
no exploration or exploitation content).
"""

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Callable, Sequence

import numpy as np

from neurips25.behavior_injection.dag import ReasoningDAG
from neurips25.behavior_injection.tasks import Problem, format_answer, parse_answer, solve_step

BEHAVIOR_WORDS = ("try", "unknown", "back", "since", "note")


def _check_p(name: str, p) -> float:
    if not isinstance(p, numbers.Real) or isinstance(p, bool) or not 0.0 <= float(p) <= 1.0:
        raise ValueError(f"`{name}` must be a probability in [0, 1], got {p!r}")
    return float(p)


def _check_rng(rng) -> np.random.Generator:
    if isinstance(rng, numbers.Integral):
        return np.random.default_rng(int(rng))
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"`rng` must be a numpy Generator or an int seed, got {type(rng).__name__}")
    return rng


def explore_step(dag: ReasoningDAG, n: str, missing: str) -> str:
    """Attempt locked node ``n``, notice ``missing`` is not known yet, back off."""
    a, b = dag.parents[n]
    return f"try {n} = {a} {dag.op[n]} {b} , {missing} unknown , back ;"


def exploit_step(dag: ReasoningDAG, n: str) -> str:
    """Gather the known parent values of unlocked node ``n``, then solve it."""
    a, b = dag.parents[n]
    return f"since {a} = {dag.value[a]} , {b} = {dag.value[b]} , {solve_step(dag, n)}"


@dataclasses.dataclass(frozen=True)
class StepTemplates:
    """How the three kinds of step are written: ``solve(dag, n)``, ``explore(dag, n, missing)`` and
    ``exploit(dag, n)``, each returning one step's text. The default is the word-level mini-iGSM wording; a
    natural-language wording for a pretrained LM (Countdown on SmolLM2) is
    :data:`neurips25.behavior_injection.rg_tasks.COUNTDOWN_TEMPLATES`."""

    solve: Callable[[ReasoningDAG, str], str] = solve_step
    explore: Callable[[ReasoningDAG, str, str], str] = explore_step
    exploit: Callable[[ReasoningDAG, str], str] = exploit_step


def inject_behaviors(solution_graph: ReasoningDAG, p_explore: float, p_exploit: float,
                     rng: np.random.Generator | int, order: Sequence[str] | None = None,
                     templates: StepTemplates | None = None) -> list[str]:
    """The BRIDGE-augmented steps of a solution (Alg. 1), without the final answer.

    Parameters
    ----------
    solution_graph : ReasoningDAG
        The solution's graph (checked acyclic when it was built).
    p_explore, p_exploit : float in [0, 1]
        Per-step probabilities of inserting an exploration / an exploitation behaviour.
    rng : numpy Generator or int seed
    order : sequence of str, optional
        The reference order of the inner nodes solved (default: ``solution_graph.needed()``); must be a
        topological order of the needed nodes.

    Returns
    -------
    list of str
        Steps; ``" ".join(steps)`` is the chain of thought. With both probabilities 0 it is the reference.
    templates : StepTemplates, optional
        The wording of each step (default: the word-level mini-iGSM wording).
    """
    tpl = StepTemplates() if templates is None else templates
    if not isinstance(tpl, StepTemplates):
        raise TypeError(f"`templates` must be a StepTemplates, got {type(templates).__name__}")
    if not isinstance(solution_graph, ReasoningDAG):
        raise TypeError(f"`solution_graph` must be a ReasoningDAG, got {type(solution_graph).__name__}")
    p_explore, p_exploit = _check_p("p_explore", p_explore), _check_p("p_exploit", p_exploit)
    rng = _check_rng(rng)
    dag = solution_graph
    needed = dag.needed()
    remaining = list(needed if order is None else order)
    if sorted(remaining) != sorted(needed):
        raise ValueError(f"`order` must list the needed inner nodes {sorted(needed)}, got {list(remaining)}")
    solved = {n for n in dag.nodes if dag.is_leaf(n)}
    for n in remaining:
        if any(p not in solved for p in dag.parents[n]):
            raise ValueError(f"`order` is not a topological order: {n!r} comes before one of its parents")
        solved.add(n)
    solved = {n for n in dag.nodes if dag.is_leaf(n)}
    steps: list[str] = []
    while remaining:
        locked = dag.locked(solved, among=remaining)
        if locked and rng.random() < p_explore:
            n = locked[int(rng.integers(len(locked)))]
            unknown = [p for p in dag.parents[n] if p not in solved]
            steps.append(tpl.explore(dag, n, unknown[int(rng.integers(len(unknown)))]))
        if rng.random() < p_exploit:
            ready = dag.unlocked(solved, among=remaining)
            n = ready[int(rng.integers(len(ready)))]
            steps.append(tpl.exploit(dag, n))
            remaining.remove(n)
        else:
            n = remaining.pop(0)  # parents precede it in a topological order, so it is unlocked
            steps.append(tpl.solve(dag, n))
        solved.add(n)
    return steps


def filler_like(problem: Problem, n_words: int, rng: np.random.Generator | int) -> str:
    """Control augmentation: the reference steps with ``"note X = v ;"`` restatements of already-known values
    inserted at random step boundaries until the completion has about ``n_words`` words (within 4)."""
    rng = _check_rng(rng)
    dag = problem.dag
    steps = [solve_step(dag, n) for n in problem.order]
    known_before = []  # values known before step i: leaves plus the inner nodes solved so far
    known = [n for n in dag.nodes if dag.is_leaf(n)]
    for n in problem.order:
        known_before.append(list(known))
        known.append(n)
    inserts: list[list[str]] = [[] for _ in steps]
    words = len(problem.completion.split())
    while words + 5 <= n_words + 2:
        i = int(rng.integers(len(steps)))
        m = known_before[i][int(rng.integers(len(known_before[i])))]
        inserts[i].append(f"note {m} = {dag.value[m]} ;")
        words += 5
    out = []
    for ins, step in zip(inserts, steps):
        out.extend(ins)
        out.append(step)
    return " ".join(out) + " " + format_answer(problem.answer)


def check_against_reference(dag: ReasoningDAG, answer_text: str) -> None:
    """Raise ValueError when ``dag`` contradicts a value ``answer_text`` states, or its final answer."""
    from neurips25.behavior_injection.tasks import stated_values

    if not isinstance(dag, ReasoningDAG):
        raise TypeError(f"`dag_extractor` must return (ReasoningDAG, order), got {type(dag).__name__}")
    wrong = {n: (v, dag.value[n]) for n, v in stated_values(answer_text).items()
             if n in dag.value and dag.value[n] != v}
    if wrong:
        shown = ", ".join(f"{n}: reference {a}, graph {b}" for n, (a, b) in list(wrong.items())[:4])
        raise ValueError(f"`dag_extractor` returned a graph whose values contradict the reference solution "
                         f"({shown}); a wrong modulus or parser would write wrong chains")
    final = parse_answer(answer_text)
    if final is not None and final != str(dag.value[dag.query]):
        raise ValueError(f"`dag_extractor` returned a graph whose query {dag.query!r} has value "
                         f"{dag.value[dag.query]}, but the reference answer is {final}")


class BehaviorInjector:
    """BRIDGE augmentation as an object: ``inject(problem)`` returns the augmented SFT completion.

    Parameters
    ----------
    p_explore, p_exploit : float in [0, 1], default 0.5
        Per-step probabilities (``p`` of Alg. 1, split by behaviour; 0 disables one behaviour).
    seed : int, default 0

    Examples
    --------
    >>> from neurips25.behavior_injection.tasks import MiniIGSM
    >>> p = MiniIGSM(n_ops=3, seed=1).sample()
    >>> out = BehaviorInjector(seed=0).inject(p)
    >>> out.split()[-2:] == p.completion.split()[-2:]
    True
    """

    def __init__(self, p_explore: float = 0.5, p_exploit: float = 0.5, seed: int = 0):
        self.p_explore = _check_p("p_explore", p_explore)
        self.p_exploit = _check_p("p_exploit", p_exploit)
        if not isinstance(seed, numbers.Integral):
            raise ValueError(f"`seed` must be an int, got {seed!r}")
        self.rng = np.random.default_rng(int(seed))

    def inject(self, problem: Problem) -> str:
        steps = inject_behaviors(problem.dag, self.p_explore, self.p_exploit, self.rng, order=problem.order)
        return " ".join(steps) + " " + format_answer(problem.answer)

    def inject_qa(self, question: str, answer_text: str,
                  dag_extractor: Callable[[str, str], tuple[ReasoningDAG, Sequence[str]]]) -> str:
        """Task-agnostic form: ``dag_extractor(question, answer_text) -> (dag, order)`` gives the solution graph;
        the final answer word of ``answer_text`` is kept as it is.

        The extracted graph must reproduce what the reference states (every ``N = ... = v`` value and the
        final answer as the query's value); otherwise ValueError: injected steps would carry wrong values.
        """
        final = parse_answer(answer_text)
        if final is None:
            raise ValueError("`answer_text` must end with a final answer `ANS v`")
        dag, order = dag_extractor(question, answer_text)
        check_against_reference(dag, answer_text)
        steps = inject_behaviors(dag, self.p_explore, self.p_exploit, self.rng, order=order)
        return " ".join(steps) + f" ANS {final}"

    def as_map_fn(self, dag_extractor, prompt_key: str = "prompt", completion_key: str = "completion",
                  leading_space: bool = False):
        """A ``datasets.Dataset.map``-compatible function replacing ``completion_key`` by its augmentation;
        works with ``batched=True`` too (lists in, lists out).

        ``leading_space=True`` starts each augmented completion with a space: TRL's ``SFTTrainer`` joins prompt
        and completion without a separator, so with a word-level tokenizer ``"... ask R :"`` + ``"F = ..."``
        would read ``":F"`` (an unknown word) instead of ``":"`` and ``"F"``.
        """
        pre = " " if leading_space else ""

        def one(prompt: str, completion: str) -> str:
            return pre + self.inject_qa(prompt, completion, dag_extractor)

        def fn(example: dict) -> dict:
            prompt, completion = example[prompt_key], example[completion_key]
            if isinstance(prompt, (list, tuple)):  # batched=True
                return {completion_key: [one(p, c) for p, c in zip(prompt, completion)]}
            return {completion_key: one(prompt, completion)}

        return fn
