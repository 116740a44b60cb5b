"""The two networks of PGD-MOO: the noise predictor of the diffusion prior and the noisy-input utility.

Both are small MLPs on a design vector plus a sinusoidal embedding of the diffusion step t, following
the official code's layout (Linear - ReLU - LayerNorm blocks of width ``hidden``).
"""

from __future__ import annotations

import math

import torch
from torch import nn

__all__ = ["timestep_embedding", "EpsMLP", "PreferenceNet"]


def timestep_embedding(t: torch.Tensor, dim: int, max_period: float = 10_000.0) -> torch.Tensor:
    """Sinusoidal embedding of integer steps ``t`` (shape (n,)) -> (n, dim) (Vaswani et al. frequencies)."""
    half = dim // 2
    freqs = torch.exp(-math.log(max_period) * torch.arange(half, dtype=torch.float32, device=t.device) / half)
    args = t.float()[:, None] * freqs[None]
    emb = torch.cat([torch.sin(args), torch.cos(args)], dim=-1)
    if dim % 2:
        emb = torch.cat([emb, torch.zeros_like(emb[:, :1])], dim=-1)
    return emb


class _TimeMLP(nn.Module):
    """x (n, d) and t (n,) -> (n, out): Linear(x) + Linear(emb(t)), then two ReLU-LayerNorm-Linear blocks."""

    def __init__(self, dim: int, out: int, hidden: int, t_dim: int):
        super().__init__()
        if dim < 1 or hidden < 1:
            raise ValueError(f"`dim` and `hidden` must be >= 1, got dim={dim}, hidden={hidden}")
        self.t_dim = t_dim
        self.inp = nn.Linear(dim, hidden)
        self.temb = nn.Linear(t_dim, hidden)
        self.body = nn.Sequential(
            nn.ReLU(),
            nn.LayerNorm(hidden),
            nn.Linear(hidden, hidden),
            nn.ReLU(),
            nn.LayerNorm(hidden),
            nn.Linear(hidden, out),
        )

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        # embed each distinct step once: during sampling all rows share one t, so this is one row
        steps, inverse = torch.unique(t, return_inverse=True)
        return self.body(self.inp(x) + self.temb(timestep_embedding(steps, self.t_dim))[inverse])


class EpsMLP(nn.Module):
    """Noise predictor eps_theta(x_t, t) of the DDPM prior (PGD-MOO Section 3.1).

    The official code calls it ``Model_unconditional``.

    Parameters
    ----------
    dim : int
        Design dimension d.
    hidden : int
        Width of the hidden layers (512 in the paper's code).
    t_dim : int
        Width of the sinusoidal step embedding.

    Notes
    -----
    Shapes: ``x`` (n, d), ``t`` (n,) int -> (n, d).

    Examples
    --------
    >>> EpsMLP(3, hidden=16)(torch.zeros(5, 3), torch.arange(5)).shape
    torch.Size([5, 3])
    """

    def __init__(self, dim: int, hidden: int = 512, t_dim: int = 64):
        super().__init__()
        self.net = _TimeMLP(dim, dim, hidden, t_dim)

    def forward(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        return self.net(x, t)


class PreferenceNet(nn.Module):
    """Time-conditioned Bradley-Terry preference model on noisy designs (PGD-MOO Eq. 4).

    A scalar utility s_phi(x_t, t) per design; for a pair the logits are (s(x1), s(x2)), so
    ``softmax(forward(x1, x2, t))[..., 0] = P(x1 > x2 | t) = sigmoid(s(x1) - s(x2))``, and
    ``P(x1 > x2) + P(x2 > x1) = 1`` exactly (swapping the inputs swaps the logits).

    Parameters
    ----------
    dim : int
        Design dimension d.
    hidden : int
        Width of the hidden layers.
    t_dim : int
        Width of the sinusoidal step embedding.

    Examples
    --------
    >>> net = PreferenceNet(2, hidden=8)
    >>> x1, x2, t = torch.randn(4, 2), torch.randn(4, 2), torch.full((4,), 10)
    >>> p = net.log_prob_prefers(x1, x2, t).exp() + net.log_prob_prefers(x2, x1, t).exp()
    >>> bool(torch.allclose(p, torch.ones(4)))
    True
    """

    def __init__(self, dim: int, hidden: int = 512, t_dim: int = 64):
        super().__init__()
        self.net = _TimeMLP(dim, 1, hidden, t_dim)

    def utility(self, x: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        """s_phi(x_t, t): shape (n, d), (n,) -> (n,)."""
        return self.net(x, t).squeeze(-1)

    def forward(self, x1: torch.Tensor, x2: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        """Logits (n, 2) of "x1 preferred" / "x2 preferred"; one batched pass through the utility."""
        n = x1.shape[0]
        s = self.utility(torch.cat([x1, x2]), torch.cat([t, t]))
        return torch.stack([s[:n], s[n:]], dim=-1)

    def log_prob_prefers(self, x1: torch.Tensor, x2: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        """log P(x1 > x2 | t) = log sigmoid(s(x1) - s(x2)), shape (n,)."""
        return torch.log_softmax(self.forward(x1, x2, t), dim=-1)[..., 0]
