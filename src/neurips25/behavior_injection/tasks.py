"""Tasks with verifiable rewards whose solutions are DAGs: a mini-iGSM generator.

mini-iGSM follows the idea of iGSM (Ye et al., "Physics of Language Models 2.1"): a random DAG of
quantities in modular arithmetic, its definitions listed in shuffled order with distractors (quantities the
question does not need), the question asking for one node. The reference chain of thought solves the needed
inner nodes in a random topological order, one step each, then writes ``ANS v``; the reward is the exact
match of ``v``. In- and out-of-distribution splits differ by the number of operations.

Text format (word-level; one token per word)::

    question:   "B = 4 ; D = B * A ; A = 7 ; C = A + B ; E = C - B ; ask E :"
    completion: "C = A + B = 7 + 4 = 11 ; E = C - B = 11 - 4 = 7 ; ANS 7"
"""

from __future__ import annotations

import dataclasses
import numbers
import re

import numpy as np

from neurips25.behavior_injection.dag import OPS, ReasoningDAG, apply_op

NAMES = tuple("ABCDEFGHIJKLMNOPQRST")
ANSWER_WORD = "ANS"
_ANS = re.compile(r"(?:^|\s)ANS\s+(\S+)")


@dataclasses.dataclass(frozen=True)
class Problem:
    """One generated problem: its question, reference chain of thought, answer and solution graph.

    ``order`` is the sequence of inner nodes the reference chain of thought solves.
    """

    question: str
    cot: str
    answer: int
    dag: ReasoningDAG
    order: tuple[str, ...]

    @property
    def completion(self) -> str:
        """The SFT target: the chain of thought and the final answer."""
        return f"{self.cot} {format_answer(self.answer)}"

    @property
    def n_ops(self) -> int:
        return len(self.order)


def format_answer(answer: int) -> str:
    return f"{ANSWER_WORD} {answer}"


def solve_step(dag: ReasoningDAG, n: str) -> str:
    """The reference step solving inner node ``n``: ``"C = A + B = 7 + 4 = 11 ;"``."""
    a, b = dag.parents[n]
    op = dag.op[n]
    return f"{n} = {a} {op} {b} = {dag.value[a]} {op} {dag.value[b]} = {dag.value[n]} ;"


def parse_answer(completion: str) -> str | None:
    """The word after the last ``ANS`` in ``completion``, or None."""
    if not isinstance(completion, str):
        raise TypeError(f"`completion` must be a str, got {type(completion).__name__}")
    found = _ANS.findall(completion)
    return found[-1] if found else None


def exact_match_reward(answer: int, completion: str) -> float:
    """1.0 when the last ``ANS v`` of ``completion`` equals ``answer``, else 0.0."""
    got = parse_answer(completion)
    return float(got is not None and got == str(int(answer)))


def _check_range(name: str, value, lo_min: int) -> tuple[int, int]:
    if isinstance(value, numbers.Integral):
        value = (int(value), int(value))
    try:
        lo, hi = (int(v) for v in value)
    except (TypeError, ValueError):
        raise ValueError(f"`{name}` must be an int or a (low, high) pair of ints, got {value!r}") from None
    if not lo_min <= lo <= hi:
        raise ValueError(f"`{name}` must satisfy {lo_min} <= low <= high, got {value!r}")
    return lo, hi


class MiniIGSM:
    """Generator of mini-iGSM problems (modular-arithmetic DAGs with shuffled, distracting statements).

    Parameters
    ----------
    n_ops : int or (int, int), default (3, 5)
        Number of inner nodes the answer needs (inclusive range); the OOD split uses larger values.
    mod : int, default 23
        Arithmetic modulus; values are 0 .. mod-1.
    ops : tuple of str, default ("+", "-", "*")
    distractors : int or (int, int), default (1, 2)
        Extra inner nodes the question does not need.
    shape : {"chain", "tree"}, default "chain"
        ``"chain"``: each inner node takes the previous one (at most one needed node is ever ready to solve, so
        BRIDGE's exploitation can only restate known values). ``"tree"`` (#48): a random binary tree of inner
        nodes whose operands are fresh leaves, earlier leaves or earlier unconsumed results, so several needed
        nodes are often ready at once and locked nodes exist from the start (reconstructed: iGSM's own
        generator is richer).
    seed : int, default 0

    Examples
    --------
    >>> p = MiniIGSM(n_ops=2, seed=0).sample()
    >>> MiniIGSM.reward(p, p.completion)
    1.0
    """

    def __init__(self, n_ops=(3, 5), mod: int = 23, ops=OPS, distractors=(1, 2), seed: int = 0,
                 shape: str = "chain"):
        if shape not in ("chain", "tree"):
            raise ValueError(f"`shape` must be 'chain' or 'tree', got {shape!r}")
        self.shape = shape
        self.n_ops = _check_range("n_ops", n_ops, 1)
        self.distractors = _check_range("distractors", distractors, 0)
        if not isinstance(mod, numbers.Integral) or not 2 <= int(mod) <= 1000:
            raise ValueError(f"`mod` must be an int in [2, 1000], got {mod!r}")
        self.mod = int(mod)
        ops = tuple(ops)
        if not ops or any(o not in OPS for o in ops):
            raise ValueError(f"`ops` must be a non-empty subset of {OPS}, got {ops!r}")
        self.ops = ops
        # leaves <= n_ops + 1 (the chain's first node takes two leaves, the others at most one)
        if self.n_ops[1] * 2 + 1 + self.distractors[1] > len(NAMES):
            raise ValueError(f"`n_ops` and `distractors` need more than the {len(NAMES)} available names")
        if not isinstance(seed, numbers.Integral):
            raise ValueError(f"`seed` must be an int, got {seed!r}")
        self.rng = np.random.default_rng(int(seed))

    def sample(self) -> Problem:
        rng = self.rng
        k = int(rng.integers(self.n_ops[0], self.n_ops[1] + 1))
        n_dis = int(rng.integers(self.distractors[0], self.distractors[1] + 1))
        names = list(rng.permutation(NAMES))
        self._names = names
        parents: dict[str, tuple[str, ...]] = {}
        op: dict[str, str] = {}
        leaves: list[str] = []
        inner: list[str] = []

        def new_leaf() -> str:
            n = names.pop()
            parents[n] = ()
            leaves.append(n)
            return n

        if self.shape == "tree":
            self._tree(k, rng, new_leaf, parents, op, leaves, inner)
        # a chain of k inner nodes (depth k); each takes the previous one and a second parent, which is
        # a fresh leaf or an earlier node, so the graph branches and re-uses quantities
        for _ in range(k if self.shape == "chain" else 0):
            first = inner[-1] if inner else new_leaf()
            pool = [x for x in leaves + inner if x != first]
            second = new_leaf() if (not pool or rng.random() < 0.5) else pool[int(rng.integers(len(pool)))]
            pair = [first, second] if rng.random() < 0.5 else [second, first]
            n = names.pop()
            parents[n] = tuple(pair)
            op[n] = self.ops[int(rng.integers(len(self.ops)))]
            inner.append(n)
        query = inner[-1]
        for _ in range(n_dis):  # distractors: defined on existing quantities, needed by nothing
            existing = leaves + inner
            a, b = rng.choice(len(existing), size=2, replace=False)
            n = names.pop()
            parents[n] = (existing[int(a)], existing[int(b)])
            op[n] = self.ops[int(rng.integers(len(self.ops)))]
            inner.append(n)
        value: dict[str, int] = {}
        for n in leaves:
            value[n] = int(rng.integers(self.mod))
        for n in inner:
            a, b = parents[n]
            value[n] = apply_op(op[n], value[a], value[b], self.mod)
        nodes = tuple(leaves + inner)
        dag = ReasoningDAG(nodes, parents, op, value, query, mod=self.mod)
        statements = [f"{n} = {value[n]} ;" if not parents[n] else f"{n} = {parents[n][0]} {op[n]} "
                      f"{parents[n][1]} ;" for n in nodes]
        order_idx = rng.permutation(len(statements))
        question = " ".join(statements[i] for i in order_idx) + f" ask {query} :"
        order = random_topological_order(dag, rng)
        cot = " ".join(solve_step(dag, n) for n in order)
        return Problem(question, cot, value[query], dag, tuple(order))

    def _tree(self, k, rng, new_leaf, parents, op, leaves, inner) -> None:
        """k inner nodes forming one binary tree rooted at the last (every inner node is needed): each step
        consumes c in {0, 1, 2} open results (inner nodes not yet used) plus 2 - c leaves (fresh, or with
        probability 0.3 an earlier leaf), c drawn among the counts that still let the open results merge into one
        by the end."""
        open_: list[str] = []
        for step in range(k):
            left = k - 1 - step  # steps after this one
            feasible = [c for c in (0, 1, 2) if c <= len(open_) and len(open_) + 1 - c - 1 <= left]
            if step == 0:
                feasible = [0]
            c = feasible[int(rng.integers(len(feasible)))]
            operands = [open_.pop(int(rng.integers(len(open_)))) for _ in range(c)]
            while len(operands) < 2:
                reuse = [x for x in leaves if x not in operands]
                operands.append(reuse[int(rng.integers(len(reuse)))] if reuse and rng.random() < 0.3 else new_leaf())
            if rng.random() < 0.5:
                operands.reverse()
            n = self._names.pop()
            parents[n] = tuple(operands)
            op[n] = self.ops[int(rng.integers(len(self.ops)))]
            inner.append(n)
            open_.append(n)
        assert len(open_) == 1 and open_[0] == inner[-1]

    def samples(self, n: int) -> list[Problem]:
        if not isinstance(n, numbers.Integral) or n < 0:
            raise ValueError(f"`n` must be a non-negative int, got {n!r}")
        return [self.sample() for _ in range(int(n))]

    @staticmethod
    def reward(problem: Problem, completion: str) -> float:
        """Exact-match reward: 1.0 when the completion's final ``ANS v`` is the answer."""
        return exact_match_reward(problem.answer, completion)

    @staticmethod
    def chain_reward(problem: Problem, completion: str) -> float:
        """Process-checked reward (a diagnostic, not the paper's reward): 1.0 when the final answer is right
        AND every reference step (each needed node with its true parents and values, ``solve_step``) appears
        in the completion; 0.0 for a right answer reached by a wrong chain (a lucky guess, 1/mod by chance).

        ``reward - chain_reward`` marks the rewarded rollouts whose reasoning is wrong: with a small modulus
        they dominate the outcome reward of a model that cannot yet chain operations (docs, v2.2).
        """
        if not isinstance(problem, Problem):
            raise TypeError(f"`problem` must be a Problem, got {type(problem).__name__}")
        if exact_match_reward(problem.answer, completion) != 1.0:
            return 0.0
        return float(all(solve_step(problem.dag, n) in completion for n in problem.order))

    def vocabulary(self) -> list[str]:
        """Every word a question, a chain of thought or an injected behaviour can contain."""
        from neurips25.behavior_injection.augment import BEHAVIOR_WORDS

        return [*NAMES, *(str(v) for v in range(self.mod)), *OPS, "=", ";", ",", "ask", ":", ANSWER_WORD,
                *BEHAVIOR_WORDS]


def random_topological_order(dag: ReasoningDAG, rng: np.random.Generator) -> list[str]:
    """The needed inner nodes in a random topological order (random choice among unlocked nodes)."""
    needed = dag.needed()
    solved = {n for n in dag.nodes if dag.is_leaf(n)}
    order = []
    while len(order) < len(needed):
        ready = dag.unlocked(solved, among=needed)
        n = ready[int(rng.integers(len(ready)))]
        order.append(n)
        solved.add(n)
    return order


_STEP_VALUE = re.compile(r"^(\S+) = (\S+) ([+\-*]) (\S+) = (\S+) [+\-*] (\S+) = (\S+)$")


def stated_values(completion: str) -> dict[str, int]:
    """The values a chain of thought states: ``{N: v}`` for each step ``N = X op Y = a op b = v`` (also the
    operands' values ``X: a``, ``Y: b``); exploration (``try``) and restatement (``note``) segments are skipped,
    an exploitation prefix ``since X = a , Y = b ,`` is read as well."""
    if not isinstance(completion, str):
        raise TypeError(f"`completion` must be a str, got {type(completion).__name__}")
    out: dict[str, int] = {}
    for seg in completion.split(";"):
        seg = seg.strip()
        if seg.startswith("since "):
            seg = seg.rsplit(",", 1)[-1].strip()
        m = _STEP_VALUE.match(seg)
        if m is None:
            continue
        n, x, _, y, a, b, v = m.groups()
        for name, val in ((x, a), (y, b), (n, v)):
            if val.lstrip("-").isdigit():
                out.setdefault(name, int(val))
    return out


def parse_solution(question: str, completion: str, mod: int | None = None) -> tuple[ReasoningDAG, list[str]]:
    """Rebuild ``(dag, order)`` from a mini-iGSM question and a reference completion (a DAG extractor for
    :meth:`BehaviorInjector.inject_qa`): definitions from the question, the solving order from the steps.

    ``mod=None`` (default) takes each needed node's value from the completion itself (the values it states)
    and keeps only the nodes the query depends on; with ``mod`` every value is recomputed in that arithmetic
    and checked (a wrong ``mod`` raises instead of writing wrong chains). Before #48 the default was 23,
    which silently rewrote the values of problems in any other modulus.
    """
    if not isinstance(question, str) or " ask " not in f" {question}":
        raise ValueError("`question` must be a mini-iGSM question ending with `ask X :`")
    if mod is not None and (isinstance(mod, bool) or not isinstance(mod, numbers.Integral) or mod < 2):
        raise ValueError(f"`mod` must be an int >= 2 or None, got {mod!r}")
    body, _, tail = question.rpartition("ask")
    query = tail.replace(":", "").strip()
    parents: dict[str, tuple[str, ...]] = {}
    op: dict[str, str] = {}
    value: dict[str, int] = {}
    for stmt in (s.split() for s in body.split(";") if s.strip()):
        if len(stmt) == 3 and stmt[1] == "=":
            parents[stmt[0]] = ()
            value[stmt[0]] = int(stmt[2])
        elif len(stmt) == 5 and stmt[1] == "=" and stmt[3] in OPS:
            parents[stmt[0]] = (stmt[2], stmt[4])
            op[stmt[0]] = stmt[3]
        else:
            raise ValueError(f"`question` has a statement that is not a definition: {' '.join(stmt)!r}")
    nodes = tuple(parents)
    proto = ReasoningDAG(nodes, parents, op, {n: 0 for n in nodes}, query)  # checks names and acyclicity
    if mod is None:
        keep = proto.ancestors_of([query], include_self=True)
        nodes = tuple(n for n in nodes if n in keep)
        parents = {n: parents[n] for n in nodes}
        op = {n: o for n, o in op.items() if n in keep}
        stated = stated_values(completion)
        missing = [n for n in nodes if parents[n] and n not in stated]
        if missing:
            raise ValueError(f"`completion` does not state the values of the needed nodes {missing}; pass `mod` "
                             "to compute them")
        value.update({n: stated[n] for n in nodes if parents[n]})
        dag = ReasoningDAG(nodes, parents, op, {n: value[n] for n in nodes}, query)
    else:
        for n in proto.topo_order():
            if parents[n]:
                value[n] = apply_op(op[n], value[parents[n][0]], value[parents[n][1]], int(mod))
        dag = ReasoningDAG(nodes, parents, op, value, query, mod=int(mod))
    needed = set(dag.needed())
    order = [s.split()[0] for s in completion.split(";") if s.split() and s.split()[0] in needed]
    return dag, order
