"""Real reasoning tasks from ``reasoning-gym`` behind the method's task interface (issue #60).

``reasoning-gym`` (Apache-2.0, the ``lm`` extra) generates tasks offline with their own verifiers
(``score_answer``). Two of them, as in the paper's setting of a pretrained LM on DAG-structured problems:

- :class:`RGCountdown`: Countdown (as in TinyZero): reach a target from given numbers, each used once. The
  reference expression (``"5*(65 + 35)"``) is parsed into a :class:`~neurips25.behavior_injection.dag.ReasoningDAG`
  (leaves = the numbers, inner nodes = the binary operations), so BRIDGE's injection applies unchanged, written in
  natural language (:data:`COUNTDOWN_TEMPLATES`) for a pretrained LM.
- :class:`RGGSMSymbolic`: GSM-Symbolic (100 GSM8K templates with fresh numbers and GSM8K-style worked solutions
  ending ``"#### N"``). Its worked solution is split into lines; each line's parents are the earlier lines whose
  result it uses (:func:`line_graph`), so BRIDGE's exploration / exploitation act on lines.

Both expose ``samples(n)``, ``reward(problem, completion) -> {0.0, 1.0}`` (``score_answer`` of the text after
the last ``"Answer:"``; 1 only when the verifier gives full credit: Countdown's 0.01 / 0.05 format credit is a
0) and ``completion(problem, arm, rng)`` for the plain, BRIDGE and filler arms. A completion is::

    65 + 35 = 100
    5 * 100 = 500
    Answer: 5*(65 + 35)

Reconstructed (the paper's text was not available): the wording of every step and behaviour.
"""

from __future__ import annotations

import ast
import dataclasses
import numbers
import re
from typing import Any

import numpy as np

from neurips25.behavior_injection.augment import StepTemplates, inject_behaviors
from neurips25.behavior_injection.dag import ReasoningDAG
from neurips25.extras import require

ANSWER_PREFIX = "Answer:"
RG_ARMS = ("plain", "bridge", "filler")
_ANSWER = re.compile(r"Answer:\s*(.*)")


@dataclasses.dataclass(frozen=True)
class RGProblem:
    """One reasoning-gym item: the prompt, the worked solution (lines), the final answer text, the item (for its
    verifier) and the solution graph with the reference order of its inner nodes."""

    question: str
    steps: tuple[str, ...]
    final: str
    entry: dict
    dag: Any
    order: tuple[str, ...]

    @property
    def completion(self) -> str:
        """The plain worked solution: one step a line, then ``Answer: <final>``."""
        return "\n".join((*self.steps, f"{ANSWER_PREFIX} {self.final}"))


def extract_answer(completion: str) -> str | None:
    """The text after the last ``Answer:`` of ``completion`` (to the end of its line), or None."""
    if not isinstance(completion, str):
        raise TypeError(f"`completion` must be a str, got {type(completion).__name__}")
    found = _ANSWER.findall(completion)
    return found[-1].strip() if found else None


def _check_int(name: str, v, lo: int) -> int:
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or int(v) < lo:
        raise ValueError(f"`{name}` must be an int >= {lo}, got {v!r}")
    return int(v)


class _RGTask:
    """Shared part: a reasoning-gym dataset read item by item, its verifier, the arms' completions."""

    name = ""
    templates: StepTemplates | None = None

    def __init__(self, seed: int = 0, size: int = 100_000, **config):
        self.seed = _check_int("seed", seed, 0)
        self.size = _check_int("size", size, 1)
        rg = require("reasoning_gym", "lm")
        self.dataset = rg.create_dataset(self.name, size=self.size, seed=self.seed, **config)
        self._next = 0
        self.skipped = 0

    def _parse(self, entry: dict) -> RGProblem | None:
        raise NotImplementedError

    def sample(self) -> RGProblem:
        while self._next < self.size:
            entry = self.dataset[self._next]
            self._next += 1
            prob = self._parse(entry)
            if prob is not None:
                return prob
            self.skipped += 1
        raise ValueError(f"the {self.name} dataset (size {self.size}) is exhausted; pass a larger `size`")

    def samples(self, n: int) -> list[RGProblem]:
        n = _check_int("n", n, 0)
        return [self.sample() for _ in range(n)]

    def score(self, problem: RGProblem, completion: str) -> float:
        """The verifier's raw score of the answer in ``completion`` (0.0 when there is no ``Answer:``)."""
        got = extract_answer(completion)
        if got is None:
            return 0.0
        return float(self.dataset.score_answer(got, problem.entry))

    def reward(self, problem: RGProblem, completion: str) -> float:
        """Binary verifier reward: 1.0 when ``score_answer`` gives full credit to the answer, else 0.0."""
        return float(self.score(problem, completion) >= 1.0)

    def completion(self, problem: RGProblem, arm: str, rng: np.random.Generator | int = 0, p: float = 0.5,
                   n_words: int | None = None) -> str:
        """The SFT target of ``arm``: ``"plain"`` (the worked solution), ``"bridge"`` (exploration and
        exploitation injected with per-step probability ``p``) or ``"filler"`` (restatements of known values to
        ``n_words`` words, default the BRIDGE completion's length drawn from the same ``rng``)."""
        if arm not in RG_ARMS:
            raise ValueError(f"`arm` must be one of {RG_ARMS}, got {arm!r}")
        rng = np.random.default_rng(int(rng)) if isinstance(rng, numbers.Integral) else rng
        if arm == "plain":
            return problem.completion
        if arm == "bridge" or n_words is None:
            steps = inject_behaviors(problem.dag, p, p, rng, order=problem.order, templates=self.templates)
            bridge = "\n".join((*steps, f"{ANSWER_PREFIX} {problem.final}"))
            if arm == "bridge":
                return bridge
            n_words = len(bridge.split())
        return self._filler(problem, n_words, rng)

    def _filler(self, problem: RGProblem, n_words: int, rng: np.random.Generator) -> str:
        """Length-matched control: ``"Note: X is known."`` restatements of values known at that point, inserted
        at random step boundaries, no exploration or exploitation content."""
        dag = problem.dag
        known = [_shown(dag, n) for n in dag.nodes if dag.is_leaf(n)]
        known_before = []
        for n in problem.order:
            known_before.append(list(known))
            known.append(_shown(dag, n))
        inserts: list[list[str]] = [[] for _ in problem.steps]
        words = len(problem.completion.split())
        while words + 4 <= n_words + 2:
            i = int(rng.integers(len(problem.steps)))
            inserts[i].append(f"Note: {known_before[i][int(rng.integers(len(known_before[i])))]} is known.")
            words += 4
        lines = [x for ins, step in zip(inserts, problem.steps) for x in (*ins, step)]
        return "\n".join((*lines, f"{ANSWER_PREFIX} {problem.final}"))

    def rl_ready_stats(self, problems, completions) -> dict:
        """Explorations and exploitations per problem in ``completions`` (the behaviours' content)."""
        return {"explorations_per_problem": float(np.mean([c.count("Try ") for c in completions])),
                "exploitations_per_problem": float(np.mean([c.count("We have ") for c in completions])),
                "words": float(np.mean([len(c.split()) for c in completions]))}


def _shown(dag: ReasoningDAG, n: str) -> str:
    """How a node is named in text: its value (Countdown) or its label (GSM-Symbolic lines)."""
    label = getattr(dag, "labels", None)
    return str(dag.value[n]) if label is None else label[n]


# --- Countdown ------------------------------------------------------------------------------------------------
_OPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*"}


def _expr(dag: ReasoningDAG, n: str) -> str:
    """The infix expression of node ``n``'s subtree over the given numbers."""
    if dag.is_leaf(n):
        return str(dag.value[n])
    a, b = dag.parents[n]
    sa, sb = _expr(dag, a), _expr(dag, b)
    sa = sa if dag.is_leaf(a) else f"({sa})"
    sb = sb if dag.is_leaf(b) else f"({sb})"
    return f"{sa} {dag.op[n]} {sb}"


def _cd_solve(dag: ReasoningDAG, n: str) -> str:
    a, b = dag.parents[n]
    return f"{dag.value[a]} {dag.op[n]} {dag.value[b]} = {dag.value[n]}"


def _cd_explore(dag: ReasoningDAG, n: str, missing: str) -> str:
    return f"Try {_expr(dag, n)}: {_expr(dag, missing)} is not computed yet, back."


def _cd_exploit(dag: ReasoningDAG, n: str) -> str:
    a, b = dag.parents[n]
    return f"We have {dag.value[a]} and {dag.value[b]}, so {_cd_solve(dag, n)}"


COUNTDOWN_TEMPLATES = StepTemplates(solve=_cd_solve, explore=_cd_explore, exploit=_cd_exploit)


def countdown_graph(expression: str) -> tuple[ReasoningDAG, tuple[str, ...]]:
    """The solution graph of a Countdown expression (``+``, ``-``, ``*`` over integers) and its post-order.

    Raises ValueError on anything else (division, unary minus, names), which :class:`RGCountdown` skips.

    Examples
    --------
    >>> g, order = countdown_graph("5*(65 + 35)")
    >>> [int(g.value[n]) for n in order]
    [100, 500]
    """
    try:
        tree = ast.parse(expression, mode="eval").body
    except SyntaxError as exc:
        raise ValueError(f"`expression` is not an arithmetic expression: {expression!r}") from exc
    parents: dict[str, tuple[str, ...]] = {}
    op: dict[str, str] = {}
    value: dict[str, int] = {}
    order: list[str] = []

    def visit(node) -> str:
        if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
            name = f"x{len(parents)}"
            parents[name], value[name] = (), int(node.value)
            return name
        if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
            a, b = visit(node.left), visit(node.right)
            name = f"s{len(order)}"
            o = _OPS[type(node.op)]
            parents[name], op[name] = (a, b), o
            value[name] = {"+": value[a] + value[b], "-": value[a] - value[b], "*": value[a] * value[b]}[o]
            order.append(name)
            return name
        raise ValueError(f"`expression` may hold only integers, +, - and *: {expression!r}")

    query = visit(tree)
    if not order:
        raise ValueError(f"`expression` has no operation: {expression!r}")
    return ReasoningDAG(tuple(parents), parents, op, value, query), tuple(order)


class RGCountdown(_RGTask):
    """reasoning-gym's Countdown with ``+ - *`` (integer steps), as a BRIDGE task.

    Parameters
    ----------
    n_numbers : int, default 3
        How many numbers are given (all must be used: the verifier checks it).
    seed : int, default 0
        reasoning-gym's dataset seed (item ``i`` is a pure function of seed and ``i``).
    size : int, default 100000
        The dataset's length (items are drawn in order; ones with a division are never produced).
    max_target : int, default 999

    Examples
    --------
    >>> task = RGCountdown(seed=1)                                   # doctest: +SKIP
    >>> p = task.sample()                                            # doctest: +SKIP
    >>> task.reward(p, p.completion)                                 # doctest: +SKIP
    1.0
    """

    name = "countdown"
    templates = COUNTDOWN_TEMPLATES

    def __init__(self, n_numbers: int = 3, seed: int = 0, size: int = 100_000, max_target: int = 999):
        n = _check_int("n_numbers", n_numbers, 2)
        max_target = _check_int("max_target", max_target, 100)
        super().__init__(seed=seed, size=size, min_numbers=n, max_numbers=n, operators=("+", "-", "*"),
                         max_target=max_target)

    def _parse(self, entry: dict) -> RGProblem | None:
        meta = entry["metadata"]
        try:
            dag, order = countdown_graph(meta["expression"])
        except ValueError:
            return None
        nums = ", ".join(str(x) for x in meta["numbers"])
        question = f"Use the numbers {nums} once each, with + - *, to make {meta['target']}.\n"
        steps = tuple(_cd_solve(dag, n) for n in order)
        return RGProblem(question, steps, meta["expression"], entry, dag, order)


# --- GSM-Symbolic ---------------------------------------------------------------------------------------------
_NUM = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(?![\w.]*\w)")


@dataclasses.dataclass(frozen=True)
class LineGraph:
    """A worked solution's lines as a graph: ``parents[n]`` = the earlier lines whose result line ``n`` uses.

    It quacks like the part of :class:`ReasoningDAG` that the filler and :func:`inject_lines` read."""

    nodes: tuple[str, ...]
    parents: dict
    value: dict
    labels: dict
    text: dict

    def is_leaf(self, n: str) -> bool:
        return n.startswith("q")


def _numbers(text: str) -> list[str]:
    return [m.group(1) for m in _NUM.finditer(text.replace(",", ""))]


def line_graph(question: str, lines: list[str]) -> tuple[LineGraph, tuple[str, ...]]:
    """Lines of a worked solution as a graph. A line's result is the last number it states; its parents are the
    earlier lines whose result appears among its other numbers (the latest such line). The question's numbers
    are leaves ``q*``. Lines with no number are kept as context steps without parents."""
    nodes, parents, value, labels, text = [], {}, {}, {}, {}
    for i, x in enumerate(dict.fromkeys(_numbers(question))):
        n = f"q{i}"
        nodes.append(n)
        parents[n], value[n], labels[n] = (), x, x
    result_of: dict[str, str] = {}
    order = []
    for i, line in enumerate(lines):
        n = f"l{i}"
        nums = _numbers(line)
        uses = nums[:-1] if nums else []
        ps = tuple(dict.fromkeys(result_of[u] for u in uses if u in result_of))
        nodes.append(n)
        parents[n], value[n], text[n] = ps, (nums[-1] if nums else ""), line
        labels[n] = nums[-1] if nums else line
        if nums:
            result_of[nums[-1]] = n
        order.append(n)
    return LineGraph(tuple(nodes), parents, value, labels, text), tuple(order)


def inject_lines(graph: LineGraph, order, p_explore: float, p_exploit: float, rng: np.random.Generator) -> list[str]:
    """BRIDGE on worked-solution lines (Alg. 1 with lines as nodes): before each reference line, with probability
    ``p_explore`` try a *locked* later line (one of its parent lines is not written yet) and back off; with
    probability ``p_exploit`` write a *ready* later line now, after gathering the results it uses. Every line is
    still written once, after all its parents, so the solution stays valid and the final answer unchanged."""
    remaining = list(order)
    done: set[str] = set()
    out: list[str] = []
    while remaining:
        locked = [n for n in remaining[1:] if any(p not in done for p in graph.parents[n])]
        if locked and rng.random() < p_explore:
            n = locked[int(rng.integers(len(locked)))]
            missing = [p for p in graph.parents[n] if p not in done]
            m = missing[int(rng.integers(len(missing)))]
            line = graph.text[n].strip()
            cut = line.find(graph.labels[m])  # stop where the missing result would be used: no value leaks
            out.append(f"Try: {line[:cut] if cut > 0 else ''}? ... that result is not computed yet, back.")
        ready = [n for n in remaining[1:] if graph.parents[n] and all(p in done for p in graph.parents[n])]
        if ready and rng.random() < p_exploit:
            n = ready[int(rng.integers(len(ready)))]
            known = " and ".join(graph.labels[p] for p in graph.parents[n])
            out.append(f"We have {known}, so {graph.text[n].strip()}")
            remaining.remove(n)
        else:
            n = remaining.pop(0)
            out.append(graph.text[n])
        done.add(n)
    return out


class RGGSMSymbolic(_RGTask):
    """reasoning-gym's GSM-Symbolic (GSM8K templates, fresh numbers, worked solutions), as a BRIDGE task.

    The prompt is the question; the plain completion is the worked solution without its ``#### N`` line, then
    ``Answer: N``; the verifier compares the number.

    Parameters
    ----------
    seed : int, default 0
        reasoning-gym's dataset seed.
    size : int, default 100000
        The dataset's length.
    """

    name = "gsm_symbolic"

    def __init__(self, seed: int = 0, size: int = 100_000):
        super().__init__(seed=seed, size=size)

    def _parse(self, entry: dict) -> RGProblem | None:
        cot = entry["metadata"].get("answer_cot") or ""
        lines = [x for x in cot.strip().splitlines() if x.strip() and not x.strip().startswith("####")]
        if not lines:
            return None
        question = entry["question"].replace(" Give the result as your final answer. Do not include units.", "")
        graph, order = line_graph(question, lines)
        return RGProblem(question.strip() + "\n", tuple(lines), str(entry["answer"]), entry, graph, order)

    def completion(self, problem: RGProblem, arm: str, rng: np.random.Generator | int = 0, p: float = 0.5,
                   n_words: int | None = None) -> str:
        if arm not in RG_ARMS:
            raise ValueError(f"`arm` must be one of {RG_ARMS}, got {arm!r}")
        rng = np.random.default_rng(int(rng)) if isinstance(rng, numbers.Integral) else rng
        if arm == "plain":
            return problem.completion
        bridge = "\n".join((*inject_lines(problem.dag, problem.order, p, p, rng), f"{ANSWER_PREFIX} {problem.final}"))
        if arm == "bridge":
            return bridge
        return self._filler(problem, len(bridge.split()) if n_words is None else n_words, rng)


RG_TASKS = {"countdown": RGCountdown, "gsm_symbolic": RGGSMSymbolic}
