"""PG-VAE: shapes, the geometry-only ablation, the loss learns occupancy, bad inputs."""

import numpy as np
import pytest
import torch

from neurips25.inverse3d import PGVAE


def _batch(B=2, N=32, Q=64):
    g = torch.Generator().manual_seed(0)
    return (torch.rand(B, N, 6, generator=g), torch.rand(B, N, 4, generator=g), torch.rand(B, Q, 3, generator=g))


def test_shapes_and_geometry_only_ignores_physics():
    pg, pp, q = _batch()
    vae = PGVAE((0, 0, 0), (1, 1, 1))
    mu, logvar = vae.encode(pg, pp)
    assert mu.shape == (2, *vae.latent_shape) == (2, 3, 4, 4, 4)
    occ, field = vae.decode(mu, q)
    assert occ.shape == field.shape == (2, 64)
    geo = PGVAE((0, 0, 0), (1, 1, 1), use_physics=False)
    a, _ = geo.encode(pg, pp)
    b, _ = geo.encode(pg, pp * 0 + 5)
    assert torch.equal(a, b)
    # ... while the physics branch reads the field
    c, _ = vae.encode(pg, torch.cat([pp[..., :3], pp[..., 3:] + 5], -1))
    assert not torch.allclose(mu, c)


def test_loss_fits_a_sphere_occupancy():
    torch.manual_seed(0)
    vae = PGVAE((-1, -1, -1), (1, 1, 1), lambda_bce=1.0, lambda_mse=1.0, lambda_kl=1e-4)
    pg, pp, _ = _batch(B=1)
    q = torch.rand(1, 256, 3) * 2 - 1
    target = (q.norm(dim=-1) < 0.6).float()
    opt = torch.optim.Adam(vae.parameters(), lr=3e-3)
    first = None
    for _ in range(50):
        loss, parts = vae.loss(pg, pp, q, target, pp[..., :3], pp[..., 3])
        first = first if first is not None else parts["bce"]
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert parts["bce"] < 0.5 * first


def test_bad_inputs():
    vae = PGVAE((0, 0, 0), (1, 1, 1))
    pg, pp, q = _batch()
    with pytest.raises(ValueError, match=r"`p_geo` must have shape \(B, N, 6\)"):
        vae.encode(pg[..., :3], pp)
    with pytest.raises(ValueError, match="`p_phy`"):
        vae.encode(pg, None)
    with pytest.raises(ValueError, match="`z` must have shape"):
        vae.decode(torch.zeros(2, 3, 4, 4), q)
    with pytest.raises(ValueError, match="multiple of `r`"):
        PGVAE((0, 0, 0), (1, 1, 1), r=3, R=16)
    assert np.isfinite(float(vae.loss(pg, pp, q, torch.rand(2, 64), pp[..., :3], pp[..., 3])[0].detach()))
