"""tensorize / program_image: tabulating sub-programs, and their input checks."""

import numpy as np
import pytest
import torch

from neurips25.ctsketch import program_image, tensorize


def test_value_tensor_matches_program_on_every_entry():
    # guards: index -> value mapping of each mode (a transposed or shifted table would fail)
    T = tensorize(lambda a, b, c: 100 * a + 10 * b + c, [2, 3, [5, 7]])
    assert T.shape == (2, 3, 2)
    assert T[1, 2, 0].item() == 125.0 and T[0, 1, 1].item() == 17.0


def test_vectorized_equals_loop():
    prog = lambda a, b: np.maximum(a, b) * 2 + a  # noqa: E731
    loop = tensorize(lambda a, b: max(a, b) * 2 + a, [6, 4])
    assert torch.equal(tensorize(prog, [6, 4], vectorized=True), loop)


def test_onehot_output_mode_is_distribution_of_output():
    T = tensorize(lambda a, b: (a + b) % 3, [3, 3], output="onehot")
    assert T.shape == (3, 3, 3)
    assert torch.equal(T.sum(-1), torch.ones(3, 3, dtype=T.dtype))
    assert T[2, 2].argmax().item() == 1  # (2 + 2) % 3


def test_program_image_is_sorted_distinct_outputs():
    assert program_image(lambda a, b: a * b, [3, 3]).tolist() == [0.0, 1.0, 2.0, 4.0]


def test_program_raising_names_the_inputs():
    def prog(a, b):
        return {0: 1}[a] + b

    with pytest.raises(ValueError, match=r"`program` raised KeyError at inputs \(1, 0\)"):
        tensorize(prog, [2, 2])


def test_program_returning_non_number_or_nan():
    with pytest.raises(TypeError, match="must return a number"):
        tensorize(lambda a: "x", [2])
    with pytest.raises(ValueError, match="non-finite"):
        tensorize(lambda a: float("nan"), [2])


def test_bad_domains():
    with pytest.raises(ValueError, match=r"input_domains\[1\]"):
        tensorize(lambda a, b: a, [3, 0])
    with pytest.raises(ValueError, match="repeated"):
        tensorize(lambda a: a, [[1, 1]])
    with pytest.raises(TypeError, match="input_domains"):
        tensorize(lambda a: a, 3)
    with pytest.raises(ValueError, match="`output`"):
        tensorize(lambda a: a, [3], output="probs")


def test_output_missing_from_output_domain():
    with pytest.raises(ValueError, match="not in `output_domain`"):
        tensorize(lambda a, b: a + b, [2, 2], output="onehot", output_domain=[0, 1])
