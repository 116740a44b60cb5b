"""A Countdown-style second task: combine given numbers to reach a target, each number used at most once.

Countdown (the numbers game; a common RL-with-verifiable-reward benchmark) gives a few numbers and a target;
a solution combines two available quantities into a new one, step by step, each quantity consumed at most
once, until the target appears. Unlike mini-iGSM the question does not list the definitions: the model has to
search, and many solutions are correct, so the reward is a *verifier* of the whole derivation, not an
exact match with the reference. Arithmetic is modular (``mod``) so the word-level vocabulary stays small.

The reference solution is a :class:`~neurips25.behavior_injection.dag.ReasoningDAG` (leaves = the numbers,
inner nodes = the steps, the query = the last step), so BRIDGE's injection applies unchanged.

Text format::

    question:   "A = 3 ; B = 5 ; C = 2 ; D = 6 ; reach 2 :"
    completion: "E = A + B = 3 + 5 = 1 ; F = E * C = 1 * 2 = 2 ; ANS 2"
"""

from __future__ import annotations

import numbers
import re

import numpy as np

from neurips25.behavior_injection.dag import OPS, ReasoningDAG, apply_op
from neurips25.behavior_injection.tasks import ANSWER_WORD, NAMES, Problem, _check_range, parse_answer, solve_step

_STEP = re.compile(r"(\S+) = (\S+) ([+\-*]) (\S+) = (\S+) ([+\-*]) (\S+) = (\S+)$")


def verify_derivation(numbers_: dict[str, int], target: int, completion: str, mod: int) -> bool:
    """True when ``completion`` derives ``target`` from ``numbers_`` (name -> value) with correct steps.

    Rules: every step ``N = X op Y = a op b = v`` (an exploitation prefix ``since ... ,`` is allowed) defines a
    new name ``N`` from two known quantities with their true values, ``v = a op b mod mod``; every quantity is
    an operand at most once; ``try ...`` (exploration) and ``note ...`` segments define nothing; the final
    ``ANS v`` equals ``target`` and is the value of the last step.
    """
    if not isinstance(completion, str):
        raise TypeError(f"`completion` must be a str, got {type(completion).__name__}")
    known = dict(numbers_)
    used: set[str] = set()
    last = None
    for seg in completion.split(";"):
        seg = seg.strip()
        if not seg or seg.startswith(("try ", "note ", ANSWER_WORD)):
            continue
        m = _STEP.search(seg)
        if m is None:
            return False
        n, x, op, y, a, op2, b, v = m.groups()
        if n in known or x not in known or y not in known or x == y or x in used or y in used or op != op2:
            return False
        if a != str(known[x]) or b != str(known[y]) or v != str(apply_op(op, known[x], known[y], mod)):
            return False
        used.update((x, y))
        known[n] = int(v)
        last = n
    got = parse_answer(completion)
    return last is not None and got == str(int(target)) and known[last] == int(target)


class Countdown:
    """Generator of Countdown-style problems in modular arithmetic.

    Parameters
    ----------
    n_numbers : int or (int, int), default (4, 5)
        How many numbers are given.
    n_ops : int or (int, int), default (2, 3)
        Steps of the reference solution (at most ``n_numbers - 1``; unused numbers act as distractors).
    mod : int, default 7
    ops : tuple of str, default ("+", "-", "*")
    seed : int, default 0

    Examples
    --------
    >>> task = Countdown(n_numbers=4, n_ops=2, seed=0)
    >>> p = task.sample()
    >>> task.reward(p, p.completion)
    1.0
    """

    def __init__(self, n_numbers=(4, 5), n_ops=(2, 3), mod: int = 7, ops=OPS, seed: int = 0):
        self.n_numbers = _check_range("n_numbers", n_numbers, 2)
        self.n_ops = _check_range("n_ops", n_ops, 1)
        if self.n_ops[1] > self.n_numbers[0] - 1:
            raise ValueError(f"`n_ops` must be at most n_numbers - 1 = {self.n_numbers[0] - 1}, got {n_ops!r}")
        if self.n_numbers[1] + self.n_ops[1] > len(NAMES):
            raise ValueError(f"`n_numbers` and `n_ops` need more than the {len(NAMES)} available names")
        if not isinstance(mod, numbers.Integral) or not 2 <= int(mod) <= 1000:
            raise ValueError(f"`mod` must be an int in [2, 1000], got {mod!r}")
        self.mod = int(mod)
        ops = tuple(ops)
        if not ops or any(o not in OPS for o in ops):
            raise ValueError(f"`ops` must be a non-empty subset of {OPS}, got {ops!r}")
        self.ops = ops
        if not isinstance(seed, numbers.Integral):
            raise ValueError(f"`seed` must be an int, got {seed!r}")
        self.rng = np.random.default_rng(int(seed))

    def sample(self) -> Problem:
        rng = self.rng
        k = int(rng.integers(self.n_numbers[0], self.n_numbers[1] + 1))
        n_ops = int(rng.integers(self.n_ops[0], self.n_ops[1] + 1))
        names = list(rng.permutation(NAMES))
        leaves = [names.pop() for _ in range(k)]
        value = {n: int(rng.integers(self.mod)) for n in leaves}
        parents: dict[str, tuple[str, ...]] = {n: () for n in leaves}
        op: dict[str, str] = {}
        available = list(leaves)
        order = []
        for _ in range(n_ops):  # combine two available quantities into a new one (each consumed once)
            i, j = rng.choice(len(available), size=2, replace=False)
            a, b = available[int(i)], available[int(j)]
            if order and order[-1] not in (a, b):  # the last result is an operand, so every step is needed
                a = order[-1]
                b = [x for x in available if x != a][int(rng.integers(len(available) - 1))]
                a, b = (a, b) if rng.random() < 0.5 else (b, a)
            n = names.pop()
            parents[n], op[n] = (a, b), self.ops[int(rng.integers(len(self.ops)))]
            value[n] = apply_op(op[n], value[a], value[b], self.mod)
            available = [x for x in available if x not in (a, b)] + [n]
            order.append(n)
        dag = ReasoningDAG(tuple(parents), parents, op, value, order[-1], mod=self.mod)
        question = " ".join(f"{n} = {value[n]} ;" for n in leaves) + f" reach {value[order[-1]]} :"
        cot = " ".join(solve_step(dag, n) for n in order)
        return Problem(question, cot, value[order[-1]], dag, tuple(order))

    def samples(self, n: int) -> list[Problem]:
        if not isinstance(n, numbers.Integral) or n < 0:
            raise ValueError(f"`n` must be a non-negative int, got {n!r}")
        return [self.sample() for _ in range(int(n))]

    def reward(self, problem: Problem, completion: str) -> float:
        """Verifier reward: 1.0 when ``completion`` is a valid derivation of the target (any solution)."""
        leaves = {n: problem.dag.value[n] for n in problem.dag.nodes if problem.dag.is_leaf(n)}
        return float(verify_derivation(leaves, problem.answer, completion, self.mod))

    def vocabulary(self) -> list[str]:
        from neurips25.behavior_injection.augment import BEHAVIOR_WORDS

        return [*NAMES, *(str(v) for v in range(self.mod)), *OPS, "=", ";", ",", "reach", ":", ANSWER_WORD,
                *BEHAVIOR_WORDS]
