"""PG-VAE: a physics-geometry variational autoencoder with a triplane latent (3DID, Sec. 3.1).

Two encoder branches read point clouds: geometry ``P_geo`` (xyz + normals) and physics ``P_phy``
(xyz + surface pressure). Each branch embeds points with Fourier features, lets ``n_tokens`` learnable
tokens cross-attend to them (Perceiver style) and refines the tokens with self-attention. The two token
sets are concatenated and an MLP maps them to the mean and log-variance of a latent ``z`` laid out as a
triplane ``(3, r, r, c)``. The decoder upsamples each plane to ``(R, R, d_t)``; a query point reads the
three planes bilinearly (xy, xz, yz projections), sums the features, and two MLP heads predict the
occupancy logit and the surface field. Loss (paper weights by default):
``lambda_bce * BCE(occ) + lambda_mse * MSE(field) + lambda_kl * KL``.

``use_physics=False`` gives the geometry-only ablation (TripNet-like: no physics branch, no field loss).
Coordinates are normalised to [-1, 1]^3 over the design box ``(lo, hi)``.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F


def _check_finite(name, cloud):
    bad = ~torch.isfinite(cloud)
    if bool(bad.any()):
        raise ValueError(f"`{name}` must be finite (a NaN / inf point gives a NaN latent); got {int(bad.sum())} "
                         f"non-finite values in points {sorted(set(bad.any(-1).nonzero()[:, 1].tolist()))[:5]}")


class FourierFeatures(nn.Module):
    """``[x, sin(2^k pi x), cos(2^k pi x)]`` for k < n_freq."""

    def __init__(self, n_freq=6):
        super().__init__()
        self.register_buffer("freq", (2.0 ** torch.arange(n_freq)) * math.pi, persistent=False)
        self.out_dim = 3 + 6 * n_freq

    def forward(self, x):
        xf = x.unsqueeze(-1) * self.freq  # (..., 3, F)
        return torch.cat([x, xf.sin().flatten(-2), xf.cos().flatten(-2)], -1)


class PointBranch(nn.Module):
    """Fourier features -> cross-attention from learnable tokens -> self-attention."""

    def __init__(self, extra_dim, dim, n_tokens, heads, n_freq):
        super().__init__()
        self.ff = FourierFeatures(n_freq)
        self.embed = nn.Sequential(nn.Linear(self.ff.out_dim + extra_dim, dim), nn.SiLU(), nn.Linear(dim, dim))
        self.tokens = nn.Parameter(torch.randn(n_tokens, dim) * 0.02)
        self.cross = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm = nn.LayerNorm(dim)
        self.self_attn = nn.TransformerEncoderLayer(dim, heads, 2 * dim, dropout=0.0, batch_first=True,
                                                    norm_first=True)

    def forward(self, xyz, extra):
        h = self.embed(torch.cat([self.ff(xyz), extra], -1))
        q = self.tokens.expand(xyz.shape[0], -1, -1)
        t, _ = self.cross(q, h, h, need_weights=False)
        return self.self_attn(self.norm(t + q))


class PGVAE(nn.Module):
    """Physics-geometry VAE with a triplane latent.

    Parameters
    ----------
    lo, hi : sequence of 3 floats
        The design box (world coordinates) mapped to [-1, 1]^3.
    r, c : int, default 4, 4
        Latent triplane: 3 planes of r x r cells with c channels (``latent_shape = (3, r, r, c)``).
    R, d_t : int, default 16, 16
        Decoded planes: R x R with d_t channels.
    dim, n_tokens, heads, n_freq : int
        Encoder width, learnable tokens per branch, attention heads, Fourier octaves.
    use_physics : bool, default True
        False drops the physics branch and the field loss (geometry-only ablation).
    lambda_bce, lambda_mse, lambda_kl : float, default 1e-3, 1e-5, 1e-6
        Loss weights (the paper's, per the summary).

    Shapes
    ------
    encode: ``p_geo`` (B, N, 6) [xyz, normal], ``p_phy`` (B, M, 4) [xyz, field] -> mu, logvar (B, 3, r, r, c).
    decode: ``z`` (B, 3, r, r, c), ``query`` (B, Q, 3) -> occupancy logit (B, Q), field (B, Q).
    """

    def __init__(self, lo, hi, r=4, c=4, R=16, d_t=16, dim=32, n_tokens=8, heads=4, n_freq=6,
                 use_physics=True, lambda_bce=1e-3, lambda_mse=1e-5, lambda_kl=1e-6):
        super().__init__()
        for name, v in dict(r=r, c=c, R=R, d_t=d_t, dim=dim, n_tokens=n_tokens, heads=heads).items():
            if not isinstance(v, int) or v < 1:
                raise ValueError(f"`{name}` must be a positive integer; got {v!r}")
        if R % r:
            raise ValueError(f"`R` must be a multiple of `r` (the planes are upsampled by R / r); got R={R}, r={r}")
        if dim % heads:
            raise ValueError(f"`dim` must be divisible by `heads`; got {dim} and {heads}")
        lo_t, hi_t = torch.as_tensor(lo, dtype=torch.float32), torch.as_tensor(hi, dtype=torch.float32)
        if lo_t.shape != (3,) or hi_t.shape != (3,) or not bool((hi_t > lo_t).all()):
            raise ValueError(f"`lo` and `hi` must be 3-vectors with hi > lo in every coordinate (the box the "
                             f"point clouds are normalised by); got lo={lo!r}, hi={hi!r}")
        # persistent: a checkpoint carries the box its coordinates were normalised by
        self.register_buffer("lo", lo_t)
        self.register_buffer("hi", hi_t)
        self.r, self.c, self.R, self.d_t = r, c, R, d_t
        self.use_physics = bool(use_physics)
        self.weights = (float(lambda_bce), float(lambda_mse if use_physics else 0.0), float(lambda_kl))
        self.geo = PointBranch(3, dim, n_tokens, heads, n_freq)
        self.phy = PointBranch(1, dim, n_tokens, heads, n_freq) if self.use_physics else None
        n_in = n_tokens * dim * (2 if self.use_physics else 1)
        self.latent_dim = 3 * r * r * c
        self.to_latent = nn.Sequential(nn.Linear(n_in, 4 * dim), nn.SiLU(), nn.Linear(4 * dim, 2 * self.latent_dim))
        ups = []
        ch = c
        size = r
        while size < R:
            ups += [nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False),
                    nn.Conv2d(ch, d_t, 3, padding=1), nn.SiLU()]
            ch, size = d_t, size * 2
        ups += [nn.Conv2d(ch, d_t, 3, padding=1)]
        self.up = nn.Sequential(*ups)
        self.plane_embed = nn.Parameter(torch.zeros(3, d_t, 1, 1))
        self.occ_head = nn.Sequential(nn.Linear(d_t, 48), nn.SiLU(), nn.Linear(48, 48), nn.SiLU(), nn.Linear(48, 1))
        self.field_head = nn.Sequential(nn.Linear(d_t, 32), nn.SiLU(), nn.Linear(32, 1))

    @property
    def latent_shape(self):
        return (3, self.r, self.r, self.c)

    def normalize(self, xyz):
        return 2 * (xyz - self.lo) / (self.hi - self.lo) - 1

    def encode(self, p_geo, p_phy=None):
        """Posterior mean and log-variance of the triplane latent."""
        if p_geo.ndim != 3 or p_geo.shape[-1] != 6:
            raise ValueError(f"`p_geo` must have shape (B, N, 6) [xyz, normal]; got {tuple(p_geo.shape)}")
        _check_finite("p_geo", p_geo)
        tok = [self.geo(self.normalize(p_geo[..., :3]), p_geo[..., 3:])]
        if self.use_physics:
            if p_phy is None or p_phy.ndim != 3 or p_phy.shape[-1] != 4:
                got = None if p_phy is None else tuple(p_phy.shape)
                raise ValueError(f"`p_phy` must have shape (B, M, 4) [xyz, field]; got {got}")
            _check_finite("p_phy", p_phy)
            tok.append(self.phy(self.normalize(p_phy[..., :3]), p_phy[..., 3:]))
        h = torch.cat(tok, 1).flatten(1)
        mu, logvar = self.to_latent(h).chunk(2, -1)
        shape = (-1, *self.latent_shape)
        return mu.reshape(shape), logvar.clamp(-12, 6).reshape(shape)

    def planes(self, z):
        """Decoded planes (B, 3, d_t, R, R)."""
        B = z.shape[0]
        x = z.reshape(B * 3, self.r, self.r, self.c).permute(0, 3, 1, 2)
        return self.up(x).reshape(B, 3, self.d_t, self.R, self.R) + self.plane_embed

    def decode(self, z, query, planes=None):
        """Occupancy logits and field at world-coordinate query points (B, Q, 3)."""
        if z.ndim != 5 or tuple(z.shape[1:]) != self.latent_shape:
            raise ValueError(f"`z` must have shape (B, {', '.join(map(str, self.latent_shape))}); got {tuple(z.shape)}")
        P = self.planes(z) if planes is None else planes
        q = self.normalize(query)
        feats = 0
        for i, (a, b) in enumerate(((0, 1), (0, 2), (1, 2))):
            # grid_sample wants (x, y) = (width, height) = (second axis, first axis) of the plane
            g = torch.stack([q[..., b], q[..., a]], -1).unsqueeze(1)  # (B, 1, Q, 2)
            feats = feats + F.grid_sample(P[:, i], g, mode="bilinear", align_corners=False,
                                          padding_mode="border")[:, :, 0].transpose(1, 2)
        return self.occ_head(feats)[..., 0], self.field_head(feats)[..., 0]

    def loss(self, p_geo, p_phy, occ_query, occ_target, field_query, field_target, generator=None):
        """The weighted PG-VAE loss and its parts (BCE on soft occupancy targets in [0, 1])."""
        mu, logvar = self.encode(p_geo, p_phy)
        eps = torch.randn(mu.shape, generator=generator)
        z = mu + (0.5 * logvar).exp() * eps
        occ_logit, _ = self.decode(z, occ_query)
        bce = F.binary_cross_entropy_with_logits(occ_logit, occ_target)
        mse = torch.zeros(())
        if self.use_physics:
            _, field = self.decode(z, field_query)
            mse = F.mse_loss(field, field_target)
        kl = 0.5 * (mu**2 + logvar.exp() - 1 - logvar).sum((1, 2, 3, 4)).mean()
        wb, wm, wk = self.weights
        parts = dict(bce=float(bce.detach()), mse=float(mse.detach()), kl=float(kl.detach()))
        return wb * bce + wm * mse + wk * kl, parts
