"""Countdown-style task: the verifier accepts any valid derivation and rejects every broken one."""

import numpy as np
import pytest

from neurips25.behavior_injection import BehaviorInjector, filler_like
from neurips25.behavior_injection.countdown import Countdown, verify_derivation


def test_reference_and_bridge_completions_are_rewarded():
    task = Countdown(n_numbers=(3, 5), n_ops=(2, 2), seed=3)
    inj = BehaviorInjector(seed=0)
    for p in task.samples(50):
        assert task.reward(p, p.completion) == 1.0
        assert task.reward(p, inj.inject(p)) == 1.0  # exploration / exploitation keep the derivation valid
        assert task.reward(p, filler_like(p, len(p.completion.split()) + 10, 0)) == 1.0
        assert set(p.question.split()) <= set(task.vocabulary())


def test_another_valid_solution_is_accepted():
    nums = {"A": 3, "B": 5, "C": 2}
    # 3 + 5 = 1 (mod 7), 1 * 2 = 2; or 5 * 2 = 3, 3 + 3 = 6 ... the verifier checks the derivation only
    assert verify_derivation(nums, 2, "D = A + B = 3 + 5 = 1 ; E = D * C = 1 * 2 = 2 ; ANS 2", 7)
    assert verify_derivation(nums, 3, "D = B * C = 5 * 2 = 3 ; ANS 3", 7)


@pytest.mark.parametrize("bad", [
    "ANS 2",                                                        # no derivation
    "D = A + B = 3 + 5 = 2 ; ANS 2",                                # wrong arithmetic
    "D = A + B = 3 + 4 = 0 ; E = D * C = 0 * 2 = 0 ; ANS 2",        # wrong operand value
    "D = A + B = 3 + 5 = 1 ; E = D * A = 1 * 3 = 3 ; ANS 3",        # A used twice
    "D = A + Z = 3 + 1 = 4 ; ANS 4",                                # unknown quantity
    "D = A + B = 3 + 5 = 1 ; E = D * C = 1 * 2 = 2 ; ANS 1",        # answer is not the last step
    "A = B + C = 5 + 2 = 0 ; ANS 0",                                # redefines a given number
    "D = A + B = 3 + 5 = 1 ; junk ; ANS 1",                         # an unparsable segment
])
def test_invalid_derivations_are_rejected(bad):
    assert not verify_derivation({"A": 3, "B": 5, "C": 2}, int(bad.split()[-1]), bad, 7)


def test_the_target_alone_is_not_enough():
    task = Countdown(n_numbers=4, n_ops=3, seed=0)
    rng = np.random.default_rng(0)
    for p in task.samples(20):
        assert task.reward(p, f"ANS {p.answer}") == 0.0
        steps = p.completion.split(";")
        k = int(rng.integers(len(steps) - 2))  # not the last step (its predecessor may equal the target)
        assert task.reward(p, ";".join(steps[:k] + steps[k + 1:])) == 0.0  # a step removed


def test_bad_arguments():
    with pytest.raises(ValueError, match="n_ops"):
        Countdown(n_numbers=3, n_ops=3)
    with pytest.raises(ValueError, match="mod"):
        Countdown(mod=1)
    with pytest.raises(ValueError, match="ops"):
        Countdown(ops=("/",))
    with pytest.raises(TypeError, match="completion"):
        verify_derivation({"A": 1}, 1, None, 7)
