"""DDPM forward process and preference-guided reverse sampling (PGD-MOO Section 3.3, Eq. 6).

Training uses the full T-step linear schedule. Sampling may use a strided sub-sequence of K steps
(``respace``): the betas are recomputed from the cumulative products at the kept steps,
beta'_k = 1 - abar_{tau_k} / abar_{tau_{k-1}} (Nichol & Dhariwal 2021), so a K-step chain is a valid
DDPM of the same marginals; with K = T it is exactly the paper's sampler.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from neurips25.pref_diffusion.validation import check_positive_int

__all__ = ["DDPM"]

GuidanceFn = Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]


class DDPM:
    """Linear-beta DDPM with epsilon prediction on vectors in [-1, 1].

    Parameters
    ----------
    T : int
        Number of training steps (1000 in the paper).
    beta : tuple of float
        (beta_1, beta_T) of the linear schedule ((1e-4, 0.02) in the paper).

    Examples
    --------
    >>> d = DDPM(T=100)
    >>> x0 = torch.zeros(4, 2); t = torch.full((4,), 99)
    >>> xt, eps = d.q_sample(x0, t)
    >>> bool(torch.allclose(xt, d.abar[99].sqrt() * x0 + (1 - d.abar[99]).sqrt() * eps))
    True
    """

    def __init__(self, T: int = 1000, beta: tuple[float, float] = (1e-4, 0.02)):
        self.T = check_positive_int(T, "T")
        if T < 2:
            raise ValueError(f"`T` must be >= 2, got {T}")
        b0, b1 = float(beta[0]), float(beta[1])
        if not 0 < b0 <= b1 < 1:
            raise ValueError(f"`beta` must satisfy 0 < beta_1 <= beta_T < 1, got {beta!r}")
        self.beta = torch.linspace(b0, b1, T, dtype=torch.float64)
        self.abar = torch.cumprod(1.0 - self.beta, dim=0)

    def sample_t(self, n: int, generator: torch.Generator | None = None) -> torch.Tensor:
        """Uniform training steps in [1, T) (the official code never trains on t = 0)."""
        return torch.randint(1, self.T, (n,), generator=generator)

    def q_sample(self, x0: torch.Tensor, t: torch.Tensor, generator: torch.Generator | None = None):
        """Forward process q(x_t | x_0) = N(sqrt(abar_t) x_0, (1 - abar_t) I); returns (x_t, eps)."""
        eps = torch.randn(x0.shape, generator=generator, dtype=x0.dtype)
        a = self.abar[t].to(x0.dtype)[:, None]
        return a.sqrt() * x0 + (1 - a).sqrt() * eps, eps

    def schedule(self, n_steps: int | None = None):
        """Kept steps tau (ascending, int64) and their respaced (beta', alpha', abar') of length K."""
        K = self.T - 1 if n_steps is None else min(check_positive_int(n_steps, "n_steps"), self.T - 1)
        # the official chain runs t = T-1 ... 1; keep K of those steps, always including both ends
        tau = torch.linspace(1, self.T - 1, K).round().long().unique()
        abar = self.abar[tau]
        # abar just before the first kept step, then each kept step's predecessor in the sub-sequence
        abar_prev = torch.cat([self.abar[tau[0] - 1 : tau[0]], abar[:-1]])
        beta = 1 - abar / abar_prev
        return tau, beta, 1 - beta, abar

    @torch.no_grad()
    def p_sample_guided(
        self,
        eps_model: Callable,
        n: int,
        dim: int,
        guidance_fn: GuidanceFn | None = None,
        w: float = 0.0,
        ref: torch.Tensor | None = None,
        n_steps: int | None = None,
        clamp_every: int = 100,
        generator: torch.Generator | None = None,
    ) -> torch.Tensor:
        """Run the reverse chain from x_T ~ N(0, I); returns x_0 of shape (n, dim), clamped to [-1, 1].

        Each step (PGD-MOO Eq. 6, official ``sample_with_preference``)::

            x_{t-1} = (x_t - beta_t / sqrt(1 - abar_t) eps_theta(x_t, t)) / sqrt(alpha_t)
                      + sqrt(beta_t) z + w beta_t g,      g = guidance_fn(x_t, ref, t)

        and then ``ref <- x_t``: the reference of the next step is the current iterate, so each particle
        is pushed to beat its previous self. ``z = 0`` at the last step. The state is clamped to [-1, 1]
        every ``clamp_every`` *original* steps (every 100 in the paper) and at the end.
        """
        n = check_positive_int(n, "n")
        tau, beta, alpha, abar = self.schedule(n_steps)
        K = len(tau)
        every = max(1, round(clamp_every * K / (self.T - 1)))
        x = torch.randn((n, dim), generator=generator)
        guided = guidance_fn is not None and w != 0.0
        if guided:
            ref = (ref if ref is not None else x).to(torch.float32).expand(n, dim).clone()
        for k in range(K - 1, -1, -1):
            t = torch.full((n,), int(tau[k]), dtype=torch.long)
            eps = eps_model(x, t)
            b, a, ab = float(beta[k]), float(alpha[k]), float(abar[k])
            mean = (x - b / (1 - ab) ** 0.5 * eps) / a**0.5
            if guided:
                with torch.enable_grad():
                    g = guidance_fn(x, ref, t)
                ref = x
                mean = mean + w * b * g
            noise = torch.randn((n, dim), generator=generator) if k > 0 else torch.zeros(n, dim)
            x = mean + b**0.5 * noise
            if k % every == 0:
                x = x.clamp(-1, 1)
        return x.clamp(-1, 1)
