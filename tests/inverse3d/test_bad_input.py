"""Review #23 sections 5-6 (issue #52): checkpoints, dtypes and bad input through the public API.

Each test failed before its fix: a silent wrong answer (NaN latents, a refiner that cannot move its mesh) or
an obscure error from deep inside torch / sklearn (numpy objectives, GP-BO on one shape), a float32 result
for a bfloat16 mesh, and (before commit 0052fb0) a PGVAE checkpoint without its box.
"""

import io

import numpy as np
import pytest
import torch

from neurips25.inverse3d import (
    PGVAE,
    CEMLatent,
    FFDLattice,
    GDLatent,
    GPBOVoxelPCA,
    LatentDiT,
    ObjectiveGuidedSampler,
    TopologyPreservingRefiner,
)
from neurips25.inverse3d.diffusion import make_scheduler


def _vae(lo=(0.0, 0.0, 0.0), hi=(1.0, 1.0, 1.0)):
    return PGVAE(np.asarray(lo), np.asarray(hi), r=2, c=2, R=4, d_t=4, dim=8, n_tokens=2, heads=2, n_freq=2)


def _clouds(n=1, pts=16, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(n, pts, 6, generator=g), torch.rand(n, pts, 4, generator=g)


def test_pgvae_box_survives_a_checkpoint_round_trip():
    torch.manual_seed(0)
    vae = _vae(lo=(-1.0, -2.0, -0.5), hi=(3.0, 2.0, 0.5)).eval()
    p_geo, p_phy = _clouds()
    query = torch.rand(1, 5, 3) * torch.tensor([4.0, 4.0, 1.0]) - torch.tensor([1.0, 2.0, 0.5])
    with torch.no_grad():
        mu, _ = vae.encode(p_geo, p_phy)
        ref = vae.decode(mu, query)
    # state_dict by value into a model built with another box: the checkpoint's box wins
    buf = io.BytesIO()
    torch.save(vae.state_dict(), buf)
    buf.seek(0)
    other = _vae().eval()
    other.load_state_dict(torch.load(buf, weights_only=True))
    assert torch.equal(other.lo, vae.lo) and torch.equal(other.hi, vae.hi)
    with torch.no_grad():
        mu2, _ = other.encode(p_geo, p_phy)
        got = other.decode(mu2, query)
    assert torch.equal(mu2, mu)
    assert all(torch.equal(a, b) for a, b in zip(got, ref))
    # the whole module pickled
    buf = io.BytesIO()
    torch.save(vae, buf)
    buf.seek(0)
    whole = torch.load(buf, weights_only=False)
    assert torch.equal(whole.lo, vae.lo) and torch.equal(whole.hi, vae.hi)


def test_pgvae_refuses_non_finite_point_clouds():
    vae = _vae()
    p_geo, p_phy = _clouds()
    bad = p_geo.clone()
    bad[0, 3, 1] = float("nan")
    with pytest.raises(ValueError, match="`p_geo` must be finite"):
        vae.encode(bad, p_phy)
    bad = p_phy.clone()
    bad[0, 2, 3] = float("inf")
    with pytest.raises(ValueError, match="`p_phy` must be finite"):
        vae.encode(p_geo, bad)
    mu, logvar = vae.encode(p_geo, p_phy)  # the good clouds still encode
    assert torch.isfinite(mu).all() and torch.isfinite(logvar).all()


@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16, torch.float16])
def test_ffd_deform_keeps_the_input_dtype(dtype):
    lat = FFDLattice(np.zeros(3), np.ones(3), (3, 3, 3))
    x = torch.rand(7, 3, dtype=torch.float64)
    disp = lat.zeros()
    disp[1, 1, 1] = 0.1
    ref = lat.deform(x, disp)
    got = lat.deform(x.to(dtype), disp)
    assert got.dtype == dtype
    tol = 1e-12 if dtype == torch.float64 else 2e-2
    assert torch.allclose(got.double(), ref, atol=tol)
    assert lat.deform(np.zeros((2, 3), dtype=np.int64), disp).dtype == torch.float32  # integers -> float32


class _MeshDrag:
    """A mesh-reading surrogate: drag = mean x of the vertices (moving them back lowers it)."""

    reads_mesh = True

    def __call__(self, graphs):
        return torch.stack([g.vertices[:, 0].mean() for g in graphs])


def test_refiner_refuses_a_mesh_outside_its_lattice_box():
    trimesh = pytest.importorskip("trimesh")
    shape = (6, 5, 5)
    lat = FFDLattice((0.0, 0.0, 0.0), (1.0, 0.8, 0.8), (3, 3, 3))
    ref = TopologyPreservingRefiner(_MeshDrag(), lat, shape, np.ones(shape), steps=2)
    occ = np.zeros(shape, dtype=np.float32)
    occ[2:4, 2:3, 2:3] = 1
    body = trimesh.creation.icosphere(subdivisions=1, radius=0.2)
    body.apply_translation((0.5, 0.4, 0.4))
    r = ref.refine(occ, mesh=body)  # inside the box: runs and moves
    assert r.predicted[1] < r.predicted[0]
    far = body.copy()
    far.apply_translation((5.0, 0.0, 0.0))  # a crop in other coordinates: before, nothing moved, (p, p) came back
    with pytest.raises(ValueError, match="`mesh`.*lattice box"):
        ref.refine(occ, mesh=far)
    with pytest.raises(ValueError, match="`mesh`.*lattice box"):
        ref.deform_mesh(far, r.control_disp)


def test_objectives_returning_numpy_or_without_a_gradient_get_clear_errors():
    lo, hi = -torch.ones(2), torch.ones(2)
    numpy_obj = lambda z: (z**2).sum(-1).detach().numpy()  # noqa: E731
    const_obj = lambda z: torch.zeros(len(z))  # noqa: E731
    with pytest.raises(ValueError, match="`objective` must return a torch tensor"):
        GDLatent(numpy_obj, lo, hi, steps=2).run(torch.zeros(3, 2))
    with pytest.raises(ValueError, match="`objective` must be differentiable"):
        GDLatent(const_obj, lo, hi, steps=2).run(torch.zeros(3, 2))
    # CEM needs no gradient: numpy scores are taken as they are
    cem = CEMLatent(numpy_obj, lo, hi, pop=8, iters=3)
    best = cem.run(torch.full((2,), 0.5), torch.ones(2), 2, generator=torch.Generator().manual_seed(0))
    assert best.shape == (2, 2) and isinstance(best, torch.Tensor)

    dit = LatentDiT((3, 2, 2, 2), dim=8, depth=1, heads=2, patch=1)
    for obj, msg in ((lambda z: (z**2).sum((1, 2, 3, 4)).detach().numpy(), "must return a torch tensor"),
                     (lambda z: torch.zeros(len(z)), "must be differentiable"),
                     (lambda z: torch.zeros(len(z), requires_grad=True), "must be differentiable")):
        s = ObjectiveGuidedSampler(dit, make_scheduler(), obj, 0.5, 2)
        with pytest.raises(ValueError, match=f"`objective` {msg}"):
            s.sample(2, generator=torch.Generator().manual_seed(0))


def test_gpbo_needs_two_shapes():
    occ = np.random.default_rng(0).random((1, 4, 4, 4))
    with pytest.raises(ValueError, match="`occupancies` must hold at least 2 shapes"):
        GPBOVoxelPCA(n_components=2, n_candidates=16).fit(occ, [1.0])
    occ2 = np.random.default_rng(0).random((3, 4, 4, 4))
    gp = GPBOVoxelPCA(n_components=np.int64(2), n_candidates=np.int64(16)).fit(occ2, np.array([1.0, 2.0, 3.0]))
    assert gp.propose(np.int64(2))[0].shape == (2, 4, 4, 4)
