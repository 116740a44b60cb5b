"""Issue #59 probes: tt_decompose on a low-precision tensor; fit with a float16 perception network."""

import pytest
import torch

from neurips25.ctsketch import CTSketchLearner, cp_decompose, sum_tree, tt_decompose


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_tt_decompose_a_low_precision_tensor_like_cp(dtype):
    # tt failed with NotImplementedError "linalg_svd_cpu" not implemented for 'BFloat16'; cp and tucker ran
    t = torch.rand(5, 6, 7, generator=torch.Generator().manual_seed(0))
    for randomized in (True, False):
        ref = tt_decompose(t, 3, seed=0, randomized=randomized)
        sk = tt_decompose(t.to(dtype), 3, seed=0, randomized=randomized)
        assert sk.full().dtype == dtype and all(c.dtype == dtype for c in sk.tensors())
        assert abs(sk.error(t) - ref.error(t)) < 0.02
    assert cp_decompose(t.to(dtype), 3, seed=0).full().dtype == dtype


def test_fit_refuses_a_float16_network_by_name():
    # a float16 perception net turned NaN in Adam's first step (its eps underflows): "`ps` holds NaN" followed
    x, y = torch.randn(8, 4, 4), torch.randint(0, 37, (8,)).float()
    for move in (lambda m: CTSketchLearner(m.half(), sum_tree(4, seed=0)),
                 lambda m: CTSketchLearner(m, sum_tree(4, seed=0)).half()):
        learner = move(torch.nn.Sequential(torch.nn.Linear(4, 10)))
        with pytest.raises(ValueError, match=r"float16 parameters.*float32 or bfloat16"):
            learner.fit(x.half(), y, epochs=1, batch_size=4)
    learner = CTSketchLearner(torch.nn.Sequential(torch.nn.Linear(4, 10)).bfloat16(), sum_tree(4, seed=0))
    hist = learner.fit(x.bfloat16(), y, epochs=2, batch_size=4)  # bfloat16 trains
    assert all(torch.isfinite(torch.tensor(hist["loss"])))
