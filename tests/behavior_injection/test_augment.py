"""BRIDGE augmentation: every inserted step is correct where it stands; the final answer is unchanged."""

import numpy as np
import pytest

from neurips25.behavior_injection import BehaviorInjector, MiniIGSM, filler_like, inject_behaviors, parse_solution


def _replay(p, text):
    """Walk an augmented completion, checking each step against the graph and the solved set."""
    dag, solved = p.dag, {n for n in p.dag.nodes if p.dag.is_leaf(n)}
    kinds = []
    steps = [s.split() for s in text.split(";")]
    for w in steps[:-1]:
        if w[0] == "try":  # try N = a op b , M unknown , back
            n, missing = w[1], w[7]
            assert n not in solved and missing in dag.parents[n] and missing not in solved
            assert tuple(w[3:6:2]) == dag.parents[n] and w[4] == dag.op[n] and w[-1] == "back"
            kinds.append("explore")
            continue
        if w[0] == "since":  # since a = va , b = vb , N = ...
            a, va, b, vb = w[1], int(w[3]), w[5], int(w[7])
            assert a in solved and b in solved and va == dag.value[a] and vb == dag.value[b]
            w = w[9:]
            kinds.append("exploit")
        elif w[0] == "note":
            assert w[1] in solved and int(w[3]) == dag.value[w[1]]
            kinds.append("note")
            continue
        else:
            kinds.append("plain")
        n = w[0]
        assert all(q in solved for q in dag.parents[n]) and n not in solved
        assert int(w[-1]) == dag.value[n]
        solved.add(n)
    assert steps[-1] == ["ANS", str(p.answer)]
    assert set(p.dag.needed()) <= solved
    return kinds


def test_injected_steps_are_correct_in_context():
    gen = MiniIGSM(n_ops=(2, 6), mod=23, distractors=(0, 2), seed=1)
    inj = BehaviorInjector(p_explore=0.7, p_exploit=0.7, seed=2)
    counts = {"explore": 0, "exploit": 0, "plain": 0}
    for p in gen.samples(200):
        for k in _replay(p, inj.inject(p)):
            counts[k] += 1
    assert counts["explore"] > 100 and counts["exploit"] > 100  # both behaviours are really injected


def test_zero_probability_is_the_reference():
    p = MiniIGSM(seed=4).sample()
    assert " ".join(inject_behaviors(p.dag, 0.0, 0.0, 0, order=p.order)) == p.cot


def test_filler_matches_length_and_holds_no_behaviour():
    gen = MiniIGSM(n_ops=(2, 5), seed=7)
    inj = BehaviorInjector(seed=0)
    for p in gen.samples(50):
        b = inj.inject(p)
        f = filler_like(p, len(b.split()), np.random.default_rng(0))
        assert abs(len(f.split()) - len(b.split())) <= 4
        assert set(_replay(p, f)) <= {"note", "plain"}


def test_map_fn_on_text_only():
    p = MiniIGSM(mod=23, seed=9).sample()
    fn = BehaviorInjector(seed=1).as_map_fn(lambda q, a: parse_solution(q, a, mod=23))
    out = fn({"prompt": p.question, "completion": p.completion})["completion"]
    _replay(p, out)


@pytest.mark.parametrize("kw, msg", [(dict(p_explore=1.5), "`p_explore` must be a probability"),
                                     (dict(p_exploit=-0.1), "`p_exploit` must be a probability"),
                                     (dict(p_explore=float("nan")), "`p_explore`")])
def test_bad_probabilities(kw, msg):
    with pytest.raises(ValueError, match=msg):
        BehaviorInjector(**kw)


def test_bad_order_and_graph():
    p = MiniIGSM(n_ops=3, seed=2).sample()
    with pytest.raises(ValueError, match="not a topological order"):
        inject_behaviors(p.dag, 0.5, 0.5, 0, order=list(reversed(p.order)))
    with pytest.raises(TypeError, match="`solution_graph` must be a ReasoningDAG"):
        inject_behaviors({"a": 1}, 0.5, 0.5, 0)
