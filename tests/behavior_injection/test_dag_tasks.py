"""ReasoningDAG state logic, the mini-iGSM generator and its reward."""

import numpy as np
import pytest

from neurips25.behavior_injection import MiniIGSM, ReasoningDAG, exact_match_reward, parse_answer, parse_solution


def _diamond():
    # a, b leaves; c = a + b; d = c * a; e = d - c
    parents = {"a": (), "b": (), "c": ("a", "b"), "d": ("c", "a"), "e": ("d", "c")}
    return ReasoningDAG(("a", "b", "c", "d", "e"), parents, {"c": "+", "d": "*", "e": "-"},
                        {"a": 2, "b": 3, "c": 5, "d": 10, "e": 5}, query="e")


def test_locked_unlocked_by_hand():
    g = _diamond()
    assert g.unlocked({"a", "b"}) == ["c"]
    assert g.locked({"a", "b"}) == ["d", "e"]
    assert g.unlocked({"a", "b", "c"}) == ["d"]
    assert g.locked({"a", "b", "c"}) == ["e"]
    assert g.needed() == ["c", "d", "e"]
    g.check_values(1000)


def test_cycle_is_rejected_with_the_cycle_named():
    with pytest.raises(ValueError, match="acyclic graph; found the cycle"):
        ReasoningDAG(("a", "b"), {"a": ("b", "b"), "b": ("a", "a")}, {"a": "+", "b": "+"}, {"a": 0, "b": 0}, "a")


@pytest.mark.parametrize("kw, msg", [
    (dict(parents={"a": (), "b": ("a", "z")}), "unknown nodes"),
    (dict(op={"b": "/"}), "`op\\['b'\\]` must be one of"),
    (dict(query="z"), "`query` must be a node"),
    (dict(value={"a": 1}), "`value` must give every node"),
])
def test_bad_graphs(kw, msg):
    base = dict(nodes=("a", "b"), parents={"a": (), "b": ("a", "a")}, op={"b": "+"}, value={"a": 1, "b": 2},
                query="b")
    base.update(kw)
    with pytest.raises(ValueError, match=msg):
        ReasoningDAG(**base)


def test_generator_values_order_and_reward():
    gen = MiniIGSM(n_ops=(2, 5), mod=23, distractors=(0, 2), seed=3)
    for p in gen.samples(50):
        p.dag.check_values(23)
        assert 2 <= p.n_ops <= 5 and sorted(p.order) == sorted(p.dag.needed())
        solved = {n for n in p.dag.nodes if p.dag.is_leaf(n)}
        for n in p.order:  # the reference order is topological
            assert n in p.dag.unlocked(solved)
            solved.add(n)
        assert gen.reward(p, p.completion) == 1.0
        assert gen.reward(p, p.completion.replace(f"ANS {p.answer}", f"ANS {(p.answer + 1) % 23}")) == 0.0
        dag, order = parse_solution(p.question, p.completion, mod=23)  # the text holds the whole graph
        assert order == list(p.order) and dict(dag.value) == dict(p.dag.value)


def test_same_seed_same_problems():
    a = [p.question for p in MiniIGSM(seed=5).samples(5)]
    b = [p.question for p in MiniIGSM(seed=5).samples(5)]
    assert a == b and a != [p.question for p in MiniIGSM(seed=6).samples(5)]


def test_answer_parser():
    assert parse_answer("x = 1 ; ANS 4 ; ANS 7") == "7"
    assert parse_answer("no answer") is None
    assert exact_match_reward(np.int64(7), "ANS 7") == 1.0
    with pytest.raises(TypeError, match="`completion` must be a str"):
        parse_answer(3)


@pytest.mark.parametrize("kw, msg", [(dict(n_ops=(0, 2)), "`n_ops`"), (dict(mod=1), "`mod`"),
                                     (dict(ops=("/",)), "`ops`"), (dict(n_ops=(9, 9), distractors=5), "names")])
def test_bad_generator_args(kw, msg):
    with pytest.raises(ValueError, match=msg):
        MiniIGSM(**kw)


def test_chain_reward_rejects_lucky_answers():
    """The process-checked diagnostic reward: reference and BRIDGE chains pass, a right answer reached by a
    wrong chain (or by no chain) fails, the outcome reward accepts both."""
    from neurips25.behavior_injection import BehaviorInjector

    for p in MiniIGSM(n_ops=(2, 3), mod=7, distractors=0, seed=3).samples(20):
        assert MiniIGSM.chain_reward(p, p.completion) == 1.0
        assert MiniIGSM.chain_reward(p, BehaviorInjector(0.5, 0.5, seed=1).inject(p)) == 1.0
        lucky = f"ANS {p.answer}"
        assert MiniIGSM.reward(p, lucky) == 1.0 and MiniIGSM.chain_reward(p, lucky) == 0.0
        first = p.completion.split(" ; ")[0].split()
        wrong = " ".join([*first[:-1], str((int(first[-1]) + 1) % 7)])  # first step's value corrupted
        bad = p.completion.replace(" ".join(first), wrong, 1)
        assert MiniIGSM.reward(p, bad) == 1.0 and MiniIGSM.chain_reward(p, bad) == 0.0
    with pytest.raises(TypeError, match="`problem` must be a Problem"):
        MiniIGSM.chain_reward("E = 1", "ANS 1")
