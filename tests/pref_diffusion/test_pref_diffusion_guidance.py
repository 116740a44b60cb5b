"""The guidance term: the reused reference utility (issue 30) against a loop transcription, its cost in
utility passes, the exact variant, and that sampling leaves the fitted preference model untouched."""

import numpy as np
import pytest
import torch

from neurips25.pref_diffusion import DDPM, PreferenceGuidedDiffusion, PreferenceNet
from neurips25.pref_diffusion.guidance import PreferenceGuidance

TINY = dict(n_steps=50, sample_steps=20, hidden=32, epochs=3, preference_epochs=3, patience=3)


@pytest.fixture(scope="module")
def net():
    torch.manual_seed(0)
    return PreferenceNet(2, hidden=16).eval()


def _chain(guidance, steps=12, n=5, seed=0):
    """A toy reverse chain with the sampler's reference rule (ref <- x after each step)."""
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 2, generator=gen)
    ref = torch.zeros(n, 2)
    out = []
    for k in range(steps, 0, -1):
        t = torch.full((n,), k)
        g = guidance(x, ref, t)
        out.append((x, ref, t, g))
        ref = x
        x = x + 0.1 * g + 0.05 * torch.randn(n, 2, generator=gen)
    return out


def _utility_grad(net, x, t):
    xg = x.clone().requires_grad_(True)
    (ds,) = torch.autograd.grad(net.utility(xg, t).sum(), xg)
    return ds


def test_reused_reference_is_the_previous_iterates_utility(net):
    # g_k = sigmoid(s(x_{k+1}, t_{k+1}) - s(x_k, t_k)) grad s(x_k, t_k); the first step scores the given ref
    steps = _chain(PreferenceGuidance(net, reuse_reference=True))
    prev = None
    for x, ref, t, g in steps:
        with torch.no_grad():
            s_r = net.utility(ref, t) if prev is None else net.utility(prev[0], prev[1])
            w = torch.sigmoid(s_r - net.utility(x, t))
        torch.testing.assert_close(g, w[:, None] * _utility_grad(net, x, t))
        prev = (x, t)


def test_exact_variant_scores_the_reference_at_the_current_step(net):
    for x, ref, t, g in _chain(PreferenceGuidance(net, reuse_reference=False)):
        with torch.no_grad():
            w = torch.sigmoid(net.utility(ref, t) - net.utility(x, t))
        torch.testing.assert_close(g, w[:, None] * _utility_grad(net, x, t))


def test_reuse_saves_one_utility_pass_per_step(net):
    reuse, exact = PreferenceGuidance(net), PreferenceGuidance(net, reuse_reference=False)
    _chain(reuse, steps=12)
    _chain(exact, steps=12)
    assert exact.utility_passes == 24 and reuse.utility_passes == 13
    # a reference that is not the last iterate is scored afresh, never served from the cache
    x, t = torch.randn(5, 2), torch.full((5,), 3)
    n = reuse.utility_passes
    reuse(x, torch.zeros(5, 2), t)
    assert reuse.utility_passes == n + 2
    assert all(0 < m < 1 for _, m, _ in reuse.weights)


def test_sampler_with_reuse_matches_a_chain_driven_by_the_exact_rule_on_the_same_cache():
    # through DDPM.p_sample_guided: the reference handed to the guidance is the previous iterate itself,
    # so the cache is hit at every step after the first
    torch.manual_seed(1)
    pref = PreferenceNet(2, hidden=8).eval()
    g = PreferenceGuidance(pref)
    DDPM(T=60).p_sample_guided(
        lambda x, t: 0.1 * x, 8, 2, guidance_fn=g, w=2.0, ref=torch.zeros(1, 2), n_steps=20,
        generator=torch.Generator().manual_seed(0),
    )
    assert g.utility_passes == 20 + 1
    assert len(g.weights) == 20


def test_guidance_rejects_a_non_preference_model():
    with pytest.raises(TypeError, match="`model` must be a PreferenceNet"):
        PreferenceGuidance(torch.nn.Linear(2, 1))


@pytest.fixture(scope="module")
def toy():
    rng = np.random.default_rng(0)
    X = rng.random((300, 3))
    Y = np.column_stack([X[:, 0], 1 - np.sqrt(X[:, 0]) + 2 * X[:, 1:].sum(1)])
    return X, Y


def test_sampling_records_weights_and_leaves_the_model_trainable(toy):
    # review of issue 7: sample() used to switch requires_grad off on the fitted preference model for good
    X, Y = toy
    m = PreferenceGuidedDiffusion(random_state=0, **TINY).fit(X, Y)
    m.sample(16)
    assert all(p.requires_grad for p in m.preference_model_.parameters())
    w = m.guidance_weights_
    assert w.shape == (20, 3) and np.all((w[:, 1] > 0) & (w[:, 1] < 1))
    assert w[0, 0] > w[-1, 0]  # steps run from high t to low t


def test_reuse_and_exact_samplers_give_close_designs(toy):
    # the weight stays near 0.5, so scoring the reference one step late moves designs only slightly
    X, Y = toy
    m = PreferenceGuidedDiffusion(random_state=0, **TINY).fit(X, Y)
    a = m.sample(64)
    m.set_params(reuse_reference=False)
    b = m.sample(64)
    assert not np.array_equal(a, b)
    assert np.abs(a - b).mean() < 0.05 * np.abs(a - a.mean(0)).mean()
