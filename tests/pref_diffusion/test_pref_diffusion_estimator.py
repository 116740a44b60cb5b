"""PreferenceGuidedDiffusion and the baselines: fit / sample contract, bounds, determinism, bad input."""

import numpy as np
import pytest
import torch
from sklearn.exceptions import NotFittedError

from neurips25.pref_diffusion import (
    DataBest,
    EnsembleSurrogateNSGA2,
    MultiHeadSurrogateNSGA2,
    PreferenceGuidedDiffusion,
    UnguidedDiffusion,
    diversity_ranks,
    make_offline_task,
    minimize_offline,
)

TINY = dict(n_steps=50, sample_steps=20, hidden=32, epochs=3, preference_epochs=3, patience=3)


@pytest.fixture(scope="module")
def toy():
    rng = np.random.default_rng(0)
    X = rng.random((400, 3))
    Y = np.column_stack([X[:, 0], 1 - np.sqrt(X[:, 0]) + 2 * X[:, 1:].sum(1)])
    return X, Y


@pytest.fixture(scope="module")
def fitted(toy):
    X, Y = toy
    return PreferenceGuidedDiffusion(bounds=(0.0, 1.0), random_state=0, **TINY).fit(X, Y)


def test_sample_shape_bounds_and_determinism(toy, fitted):
    X, Y = toy
    a, b = fitted.sample(32), fitted.sample(32)
    assert a.shape == (32, 3)
    np.testing.assert_array_equal(a, b)  # same random_state -> same designs
    assert np.all((a >= X.min(0)) & (a <= X.max(0)))
    again = PreferenceGuidedDiffusion(bounds=(0.0, 1.0), random_state=0, **TINY).fit(X, Y)
    np.testing.assert_allclose(again.sample(32), a)
    assert not np.allclose(fitted.sample(32, random_state=5), a)


def test_guidance_gradient_is_the_bradley_terry_gradient(fitted):
    # g = grad_x log sigmoid(s(x) - s(r)) = sigmoid(s(r) - s(x)) grad_x s(x), with the reference r held fixed
    g_fn = fitted._guidance()
    pref = fitted.preference_model_
    gen = torch.Generator().manual_seed(3)
    x, r = torch.randn(6, 3, generator=gen), torch.randn(6, 3, generator=gen)
    t = torch.full((6,), 10)
    g = g_fn(x, r, t)
    xg = x.clone().requires_grad_(True)
    (ds,) = torch.autograd.grad(pref.utility(xg, t).sum(), xg)
    with torch.no_grad():
        w = torch.sigmoid(pref.utility(r, t) - pref.utility(x, t))
    torch.testing.assert_close(g, w[:, None] * ds)

    def f(z):
        return torch.nn.functional.logsigmoid(pref.utility(z, t) - pref.utility(r, t))

    h = 1e-3
    fd = torch.stack([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in torch.eye(3)], dim=1)
    torch.testing.assert_close(g, fd, atol=5e-3, rtol=5e-2)


def test_preference_model_learns_the_planted_order(toy):
    # utility at low noise should rank designs like the (front, crowding) order planted by the objectives
    X, Y = toy
    m = PreferenceGuidedDiffusion(
        n_steps=50, hidden=32, epochs=1, preference_epochs=25, patience=25, random_state=0
    ).fit(X, Y)
    with torch.no_grad():
        s = m.preference_model_.utility(
            torch.as_tensor(m._to_model(X), dtype=torch.float32), torch.full((len(X),), 1)
        ).numpy()
    front, _, _ = diversity_ranks(Y)
    rho = np.corrcoef(np.argsort(np.argsort(-s)), np.argsort(np.argsort(front)))[0, 1]
    assert rho > 0.5


def test_prior_reuse_and_unguided(toy, fitted):
    X, Y = toy
    dom = PreferenceGuidedDiffusion(diversity=False, random_state=1, **TINY).fit(X, Y, prior=fitted)
    assert dom.eps_model_ is fitted.eps_model_
    ung = UnguidedDiffusion(random_state=0, **TINY).fit(X, Y, prior=fitted)
    assert ung.preference_model_ is None
    np.testing.assert_allclose(ung.sample(16), fitted.sample(16, guidance_scale=0.0))
    with pytest.raises(ValueError, match="no preference model"):
        ung.sample(4, guidance_scale=1.0)
    with pytest.raises(TypeError, match="fixed at 0"):
        UnguidedDiffusion(guidance_scale=3.0)
    with pytest.raises(ValueError, match="different shape or range"):
        PreferenceGuidedDiffusion(**TINY).fit(X[:, :2], Y, prior=fitted)


@pytest.mark.parametrize(
    ("X", "Y", "kwargs", "match"),
    [
        (np.zeros((5, 2)), np.zeros((4, 2)), {}, "same number of rows"),
        (np.zeros((5, 2)), np.full((5, 2), np.nan), {}, "NaN or inf"),
        (np.zeros((5, 2)), np.full((5, 2), np.inf), {}, "NaN or inf"),
        (np.zeros((5, 2)), np.zeros((5, 1)), {}, "at least 2 objectives"),
        (np.full((5, 2), 2.0), np.zeros((5, 2)), {"bounds": (0.0, 1.0)}, "outside the bounds"),
        (np.zeros(5), np.zeros((5, 2)), {}, "must be 2-D"),
        (np.zeros((5, 2)), np.zeros((5, 2)), {"epochs": 0}, "`epochs` must be a positive integer"),
        (np.zeros((5, 2)), np.zeros((5, 2)), {"guidance_scale": -1.0}, "`guidance_scale` must be"),
        (np.zeros((5, 2)), np.zeros((5, 2)), {"subset_ratio": 0.0}, "`subset_ratio` must be"),
    ],
)
def test_fit_bad_input(X, Y, kwargs, match):
    with pytest.raises(ValueError, match=match):
        PreferenceGuidedDiffusion(**{**TINY, **kwargs}).fit(X, Y)


def test_sample_bad_input(fitted):
    with pytest.raises(ValueError, match="`n` must be a positive integer"):
        fitted.sample(0)
    with pytest.raises(NotFittedError, match="is not fitted"):
        PreferenceGuidedDiffusion().sample(4)


def test_surrogates_and_data_best(toy):
    X, Y = toy
    for cls in (MultiHeadSurrogateNSGA2, EnsembleSurrogateNSGA2):
        m = cls(hidden=32, epochs=150, n_gen=3, bounds=(0.0, 1.0), random_state=0).fit(X, Y)
        out = m.sample(20)
        assert out.shape == (20, 3) and np.all((out >= 0) & (out <= 1))
        # the surrogate fits this smooth problem: error under half that of predicting the mean
        Yn = (Y - Y.min(0)) / (Y.max(0) - Y.min(0))
        assert np.abs(m.predict(X) - Yn).mean() < 0.5 * np.abs(Yn - Yn.mean(0)).mean()
    best = DataBest().fit(X, Y).sample(10)
    _, _, rank = diversity_ranks(Y)
    np.testing.assert_array_equal(best, X[np.argsort(rank)[:10]])


def test_minimize_offline_scores_every_sample():
    task = make_offline_task("re21", n=300, seed=0)
    res = minimize_offline(task, PreferenceGuidedDiffusion(random_state=0, **TINY), n=12)
    assert res.X.shape == (12, 4) and res.F.shape == (12, 2)
    np.testing.assert_allclose(res.F, task.problem.evaluate(res.X))
    assert np.all((res.X >= task.xl) & (res.X <= task.xu))


def test_sklearn_clone_and_params():
    # issue 30: the estimators follow sklearn's parameter protocol, so clone / get_params / set_params work
    from sklearn.base import clone

    m = PreferenceGuidedDiffusion(hidden=16, metric="hv_contrib", bounds=(0.0, 1.0), random_state=3)
    c = clone(m)
    assert c is not m and c.get_params() == m.get_params()
    assert c.set_params(guidance_scale=5.0) is c and c.guidance_scale == 5.0 and m.guidance_scale == 10.0
    with pytest.raises(ValueError, match="Invalid parameter"):
        m.set_params(not_a_param=1)
    u = clone(UnguidedDiffusion(hidden=8, random_state=1))
    assert "guidance_scale" not in u.get_params() and u.guidance_scale == 0.0 and u.hidden == 8
    with pytest.raises(ValueError, match="fixed at 0"):
        u.set_params(guidance_scale=2.0)
    with pytest.raises(TypeError, match="unexpected parameter"):
        UnguidedDiffusion(hiden=8)
    s = clone(MultiHeadSurrogateNSGA2(hidden=12, n_gen=3))
    assert (s.hidden, s.n_gen) == (12, 3)
    assert clone(DataBest()).get_params() == {}


def test_fitted_clone_is_unfitted(fitted):
    from sklearn.base import clone

    with pytest.raises(NotFittedError, match="is not fitted"):
        clone(fitted).sample(2)


def test_hv_contrib_metric_reaches_the_pair_sampler(toy, monkeypatch):
    import neurips25.pref_diffusion.algorithm as alg

    seen = {}
    real = alg.PairSampler

    def spy(*args, **kwargs):
        seen.update(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(alg, "PairSampler", spy)
    X, Y = toy
    PreferenceGuidedDiffusion(metric="hv_contrib", random_state=0, **TINY).fit(X, Y)
    assert seen["metric"] == "hv_contrib"
    with pytest.raises(ValueError, match="`metric` must be 'crowding' or 'hv_contrib'"):
        PreferenceGuidedDiffusion(metric="igd", **TINY).fit(X, Y)


def test_constant_column_needs_bounds(toy):
    # review: a constant design column used to get span 1 silently (samples drifted to x + 1)
    X, Y = toy
    Xc = X.copy()
    Xc[:, 1] = 1.0
    with pytest.raises(ValueError, match=r"column\(s\) \[1\] are constant.*pass `bounds"):
        PreferenceGuidedDiffusion(**TINY).fit(Xc, Y)
    m = PreferenceGuidedDiffusion(bounds=(0.0, 1.0), random_state=0, **TINY).fit(Xc, Y)
    np.testing.assert_array_equal(m.x_min_[1], 0.0)
    out = m.sample(64)
    assert np.all((out[:, 1] >= 0) & (out[:, 1] <= 1))
    # a column fixed by its bounds (xl == xu) comes back exactly
    xl, xu = np.zeros(3), np.ones(3)
    xl[1] = 1.0
    out = PreferenceGuidedDiffusion(bounds=(xl, xu), random_state=0, **TINY).fit(Xc, Y).sample(16)
    np.testing.assert_array_equal(out[:, 1], 1.0)


def test_numpy_scalar_parameters_are_accepted(toy):
    X, Y = toy
    m = PreferenceGuidedDiffusion(
        n_steps=np.int64(50), sample_steps=np.int32(10), hidden=np.int64(16), epochs=np.int64(1),
        preference_epochs=np.int64(1), guidance_scale=np.float32(5.0), random_state=np.int64(0),
    ).fit(X, Y)
    assert m.sample(np.int64(4), guidance_scale=np.float64(2.0)).shape == (4, 3)
    with pytest.raises(ValueError, match="`guidance_scale` must be a finite number"):
        m.sample(4, guidance_scale="2")
    with pytest.raises(ValueError, match="`threshold` must be a finite number"):
        PreferenceGuidedDiffusion(threshold=np.nan, **TINY).fit(X, Y)
    with pytest.raises(ValueError, match="`reuse_reference` must be True or False"):
        PreferenceGuidedDiffusion(reuse_reference="yes", **TINY).fit(X, Y)


def test_pair_members_are_noised_at_the_same_step(fitted, monkeypatch):
    # review of issue 7: a pair noised at two different t would train a useless guidance classifier
    seen = []
    real = fitted.ddpm_.q_sample

    def spy(x0, t, generator=None):
        seen.append(t.clone())
        return real(x0, t, generator=generator)

    monkeypatch.setattr(fitted.ddpm_, "q_sample", spy)
    data = torch.randn(10, 3)
    i, j = np.arange(5), np.arange(5, 10)
    fitted._pair_loss(fitted.preference_model_, data, i, j, np.zeros(5, dtype=np.int64))
    assert len(seen) == 2 and torch.equal(seen[0], seen[1]) and len(torch.unique(seen[0])) > 1


def test_preference_model_ranks_at_high_noise_too(toy):
    # the utility must order designs at the noise levels guidance sees, not only at t = 1
    X, Y = toy
    m = PreferenceGuidedDiffusion(
        n_steps=50, hidden=32, epochs=1, preference_epochs=25, patience=25, random_state=0
    ).fit(X, Y)
    front, _, _ = diversity_ranks(Y)
    Xn = torch.as_tensor(m._to_model(X), dtype=torch.float32)
    for t in (1, 25, 45):
        with torch.no_grad():
            s = m.preference_model_.utility(Xn, torch.full((len(X),), t)).numpy()
        rho = np.corrcoef(np.argsort(np.argsort(-s)), np.argsort(np.argsort(front)))[0, 1]
        assert rho > 0.4, (t, rho)
