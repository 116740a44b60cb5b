"""reasoning-gym tasks behind the method's interface (issue #60): graphs, verifier rewards, the arms' completions."""

import socket

import numpy as np
import pytest

pytest.importorskip("reasoning_gym")

from neurips25.behavior_injection.rg_tasks import (  # noqa: E402
    RGCountdown,
    RGGSMSymbolic,
    countdown_graph,
    extract_answer,
    line_graph,
)


@pytest.fixture(scope="module")
def countdown():
    return RGCountdown(seed=3)


@pytest.fixture(scope="module")
def gsm():
    return RGGSMSymbolic(seed=3)


def test_countdown_graph_values_order_and_refusals():
    """The expression tree becomes a DAG whose post-order values are the worked solution's results."""
    g, order = countdown_graph("5*(65 + 35)")
    assert [g.value[n] for n in order] == [100, 500] and g.query == order[-1]
    g, order = countdown_graph("36 - 24 + 99")
    assert [g.value[n] for n in order] == [12, 111]
    assert g.locked({n for n in g.nodes if g.is_leaf(n)}, among=list(order)) == [order[1]]
    for bad in ("8 / 2 + 1", "-3 + 5", "x + 1", "7"):
        with pytest.raises(ValueError, match="expression"):
            countdown_graph(bad)


def test_generation_is_offline_and_seeded(monkeypatch):
    """reasoning-gym generates without the network, and the same seed gives the same items."""
    def no_net(*a, **k):
        raise OSError("network used")

    monkeypatch.setattr(socket, "socket", no_net)
    a = [p.question for p in RGCountdown(seed=5).samples(4)]
    b = [p.question for p in RGCountdown(seed=5).samples(4)]
    c = [p.question for p in RGCountdown(seed=6).samples(4)]
    assert a == b and a != c
    assert len(RGGSMSymbolic(seed=5).samples(3)) == 3


def test_countdown_reward_is_the_verifier_at_full_credit(countdown):
    """Reward 1 only for full credit: the verifier's partial 0.05 (right numbers, wrong value) is a 0."""
    p = countdown.samples(3)[0]
    assert countdown.reward(p, p.completion) == 1.0
    nums = p.entry["metadata"]["numbers"]
    wrong = "Answer: " + " + ".join(str(x) for x in nums)
    if eval(" + ".join(str(x) for x in nums)) != p.entry["metadata"]["target"]:  # noqa: S307 - digits only
        assert countdown.score(p, wrong) == pytest.approx(0.05)
        assert countdown.reward(p, wrong) == 0.0
    assert countdown.reward(p, "no answer line") == 0.0
    assert countdown.reward(p, p.completion + "\nAnswer: 1 + 1") == 0.0  # the LAST answer line counts
    assert extract_answer("x\nAnswer:  3*4 \nmore") == "3*4"


@pytest.mark.parametrize("arm", ["plain", "bridge", "filler"])
def test_every_arm_keeps_the_answer_and_its_reward(countdown, gsm, arm):
    rng = np.random.default_rng(0)
    for task in (countdown, gsm):
        for p in task.samples(6):
            c = task.completion(p, arm, rng)
            assert extract_answer(c) == p.final
            assert task.reward(p, c) == 1.0


def test_bridge_explores_locked_nodes_and_filler_matches_its_length(countdown):
    """BRIDGE's 'Try' steps name an expression whose inner part is not computed yet at that point; the filler
    has the BRIDGE completion's length (within one insertion) and no behaviour."""
    probs = countdown.samples(40)
    tries, lens = 0, []
    for i, p in enumerate(probs):
        b = countdown.completion(p, "bridge", np.random.default_rng(i), p=1.0)
        f = countdown.completion(p, "filler", np.random.default_rng(i), p=1.0)
        lines = b.splitlines()
        for k, line in enumerate(lines):
            if line.startswith("Try "):
                tries += 1
                missing = line.split(": ", 1)[1].split(" is not computed")[0]
                value = eval(missing)  # noqa: S307 - an arithmetic expression built here
                assert not any(x.endswith(f"= {value}") for x in lines[:k]), (missing, lines)
        assert "Try" not in f and "We have" not in f
        lens.append(abs(len(f.split()) - len(b.split())))
    assert tries > 10 and max(lens) <= 4


def test_gsm_line_graph_and_bridge_write_every_line_once_after_its_parents(gsm):
    g, order = line_graph("Ann has 3 bags of 4.", ["3 * 4 = 12 apples", "12 + 5 = 17", "So 17 - 2 = 15"])
    assert g.parents["l1"] == ("l0",) and g.parents["l2"] == ("l1",) and g.parents["l0"] == ()
    for i, p in enumerate(gsm.samples(10)):
        b = gsm.completion(p, "bridge", np.random.default_rng(i), p=1.0).splitlines()
        pos = {}
        for n in p.order:
            text = p.dag.text[n]
            hits = [k for k, line in enumerate(b) if line == text or line.endswith(", so " + text.strip())]
            assert len(hits) == 1, (text, b)
            pos[n] = hits[0]
        assert all(pos[q] < pos[n] for n in p.order for q in p.dag.parents[n])


def test_bad_arguments_name_themselves(countdown):
    with pytest.raises(ValueError, match="`n_numbers`"):
        RGCountdown(n_numbers=1)
    with pytest.raises(ValueError, match="`seed`"):
        RGCountdown(seed=-1)
    with pytest.raises(ValueError, match="`arm`"):
        countdown.completion(countdown.sample(), "oracle")
    with pytest.raises(TypeError, match="`completion`"):
        extract_answer(3)
    with pytest.raises(ValueError, match="exhausted"):
        RGCountdown(seed=1, size=2).samples(3)
