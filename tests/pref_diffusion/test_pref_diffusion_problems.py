"""RE21 / RE37 against published reference values and a scalar transcription; task generation."""

import numpy as np
import pytest

from neurips25.pref_diffusion import RE21, RE37, get_problem, hv, make_offline_task, true_front


def test_re21_published_ideal_point():
    # Tanabe & Ishibuchi's RE21 ideal point is (1237.8414230005742, 0.002761423749158419); f1 is minimal
    # at the lower bounds, f2 at (3, 3, sqrt 2, 3); at the f1 minimiser f2 equals the published nadir 0.04
    p = RE21()
    F = p.evaluate(np.array([p.xl, [3.0, 3.0, np.sqrt(2), 3.0]]))
    np.testing.assert_allclose(F[0], [1237.8414230005742, 0.04], rtol=1e-12)
    np.testing.assert_allclose(F[1, 1], 0.002761423749158419, rtol=1e-9)


def _re37_scalar(x):
    # written as a plain per-point transcription of the response surfaces, term by term
    a, ha, oa, tt = x
    f1 = 0.692 + 0.477 * a - 0.687 * ha - 0.080 * oa - 0.0650 * tt - 0.167 * a**2 - 0.0129 * ha * a
    f1 += 0.0796 * ha**2 - 0.0634 * oa * a - 0.0257 * oa * ha + 0.0877 * oa**2 - 0.0521 * tt * a
    f1 += 0.00156 * tt * ha + 0.00198 * tt * oa + 0.0184 * tt**2
    f2 = 0.153 - 0.322 * a + 0.396 * ha + 0.424 * oa + 0.0226 * tt + 0.175 * a**2 + 0.0185 * ha * a
    f2 += -0.0701 * ha**2 - 0.251 * oa * a + 0.179 * oa * ha + 0.0150 * oa**2 + 0.0134 * tt * a
    f2 += 0.0296 * tt * ha + 0.0752 * tt * oa + 0.0192 * tt**2
    f3 = 0.370 - 0.205 * a + 0.0307 * ha + 0.108 * oa + 1.019 * tt - 0.135 * a**2 + 0.0141 * ha * a
    f3 += 0.0998 * ha**2 + 0.208 * oa * a - 0.0301 * oa * ha - 0.226 * oa**2 + 0.353 * tt * a
    f3 += -0.0497 * tt * oa - 0.423 * tt**2 + 0.202 * ha * a**2 - 0.281 * oa * a**2 - 0.342 * ha**2 * a
    f3 += -0.245 * ha**2 * oa + 0.281 * oa**2 * ha - 0.184 * tt**2 * a - 0.281 * ha * a * oa
    return [f1, f2, f3]


def test_re37_vectorised_equals_scalar_transcription():
    X = np.random.default_rng(0).random((20, 4))
    np.testing.assert_allclose(RE37().evaluate(X), np.array([_re37_scalar(x) for x in X]), rtol=1e-12)


def test_get_problem_and_fronts():
    assert get_problem("ZDT2", n_var=5).n_var == 5
    assert get_problem("dtlz2").n_obj == 3
    assert true_front(get_problem("dtlz2")).shape == (91, 3)
    assert true_front(RE21()) is None
    with pytest.raises(ValueError, match="`name` must be one of"):
        get_problem("zdt5")
    with pytest.raises(ValueError, match="fixed for"):
        get_problem("re21", n_var=3)


def test_offline_task_prunes_the_best_designs():
    full = make_offline_task("zdt1", n=600, n_var=5, prune_top=0.0, seed=0)
    pruned = make_offline_task("zdt1", n=600, n_var=5, prune_top=0.4, seed=0)
    assert pruned.X.shape == (600, 5) and pruned.Y.shape == (600, 2)
    assert np.all((pruned.X >= pruned.xl) & (pruned.X <= pruned.xu))
    np.testing.assert_allclose(pruned.evaluate(pruned.X), pruned.Y)
    ideal, nadir = full.Y.min(0), full.Y.max(0)
    assert hv(pruned.best(100)[1], ideal, nadir) < hv(full.best(100)[1], ideal, nadir)


def test_offline_task_bad_inputs():
    with pytest.raises(ValueError, match="`prune_top` must be in"):
        make_offline_task("zdt1", n=100, prune_top=1.0)
    with pytest.raises(TypeError, match="`problem` must be"):
        make_offline_task(42)
    with pytest.raises(ValueError, match="`n` must be a positive integer"):
        make_offline_task("re21", n=0)
    task = make_offline_task("re21", n=200, seed=0)
    with pytest.raises(ValueError, match="outside the bounds"):
        task.evaluate(np.zeros((1, 4)))
