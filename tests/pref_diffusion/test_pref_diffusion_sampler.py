"""The DDPM schedule and the guided reverse chain against a plain loop transcription of Eq. 6."""

import numpy as np
import pytest
import torch

from neurips25.pref_diffusion import DDPM


def test_full_schedule_is_the_original_chain():
    d = DDPM(T=100)
    tau, beta, alpha, abar = d.schedule(None)
    assert tau.tolist() == list(range(1, 100))
    torch.testing.assert_close(beta, d.beta[1:])
    torch.testing.assert_close(abar, d.abar[1:])


def test_respaced_schedule_keeps_the_marginals():
    d = DDPM(T=1000)
    tau, beta, alpha, abar = d.schedule(50)
    assert len(tau) == 50 and tau[0] == 1 and tau[-1] == 999
    # the respaced betas multiply back to the original cumulative products at the kept steps
    torch.testing.assert_close(torch.cumprod(alpha, 0) * d.abar[0], abar)


def _loop_reference(d, eps_model, g_fn, n, dim, w, ref, steps, clamp_every, seed):
    """Eq. 6 written step by step, with the reference replaced by the current iterate."""
    gen = torch.Generator().manual_seed(seed)
    tau, beta, alpha, abar = d.schedule(steps)
    every = max(1, round(clamp_every * len(tau) / (d.T - 1)))
    x = torch.randn((n, dim), generator=gen)
    r = ref.expand(n, dim).clone()
    for k in reversed(range(len(tau))):
        t = torch.full((n,), int(tau[k]))
        eps = eps_model(x, t)
        g = g_fn(x, r, t)
        r = x
        z = torch.randn((n, dim), generator=gen) if k > 0 else torch.zeros(n, dim)
        x = (x - beta[k] / torch.sqrt(1 - abar[k]) * eps) / torch.sqrt(alpha[k]) + torch.sqrt(beta[k]) * z
        x = (x + w * beta[k] * g).float()
        if k % every == 0:
            x = x.clamp(-1, 1)
    return x.clamp(-1, 1)


@pytest.mark.parametrize("steps", [30, 99])
def test_guided_chain_matches_loop_transcription(steps):
    d = DDPM(T=100)

    def eps_model(x, t):
        return 0.3 * x + 0.001 * t[:, None]

    def g_fn(x, r, t):  # depends on x and on the reference, so a wrong reference update shows
        return torch.tanh(r - x) + 0.5

    ref = torch.full((1, 2), 0.2)
    out = d.p_sample_guided(
        eps_model,
        16,
        2,
        guidance_fn=g_fn,
        w=3.0,
        ref=ref,
        n_steps=steps,
        clamp_every=20,
        generator=torch.Generator().manual_seed(7),
    )
    exp = _loop_reference(d, eps_model, g_fn, 16, 2, 3.0, ref, steps, 20, 7)
    torch.testing.assert_close(out, exp, atol=1e-5, rtol=1e-5)
    assert out.abs().max() <= 1


def test_guidance_pushes_along_the_gradient():
    d = DDPM(T=100)

    def eps_model(x, t):
        return torch.zeros_like(x)

    def g_fn(x, r, t):
        return torch.ones_like(x)

    base = d.p_sample_guided(eps_model, 256, 1, generator=torch.Generator().manual_seed(0))
    pushed = d.p_sample_guided(
        eps_model, 256, 1, guidance_fn=g_fn, w=5.0, generator=torch.Generator().manual_seed(0)
    )
    assert pushed.mean() > base.mean() + 0.1


def test_ddpm_bad_arguments():
    with pytest.raises(ValueError, match="`T` must be"):
        DDPM(T=1)
    with pytest.raises(ValueError, match="`beta` must satisfy"):
        DDPM(beta=(0.1, 0.01))
    with pytest.raises(ValueError, match="`n` must be a positive integer"):
        DDPM(T=10).p_sample_guided(lambda x, t: x, 0, 2)
    assert np.isclose(float(DDPM().beta[-1]), 0.02)
