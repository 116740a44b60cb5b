"""The flow solver: physical drag ranking, invariances, divergence-free projection, bad inputs."""

import math

import numpy as np
import pytest
import torch

from neurips25.inverse3d import BrinkmanSpectralNS, box_sdf, ellipsoid_sdf, sphere_sdf, voxelize

C = (2.5, 2.0, 2.0)


def _equal_volume_bodies(r=0.5):
    a = r / 2 ** (1 / 3)
    return {"prolate": ellipsoid_sdf(C, (2 * a, a, a)), "sphere": sphere_sdf(C, r),
            "cube": box_sdf(C, (r * (math.pi / 6) ** (1 / 3),) * 3)}


def test_drag_ranking_streamlined_sphere_cube(small_solver):
    # equal-volume bodies at Re 50: an aligned prolate spheroid has less drag than a sphere, a cube more
    ns = small_solver
    d = {k: ns.solve(voxelize(f, ns.grid, ns.h)).drag for k, f in _equal_volume_bodies().items()}
    assert 0 < d["prolate"] < d["sphere"] < d["cube"]
    # a loose band only: 4 cells a diameter, the one-cell ramp and 100 steps from rest (the resolved, steady check
    # is test_sphere_drag_matches_schiller_naumann_when_resolved_and_steady)
    cd = d["sphere"] / (0.5 * math.pi * 0.25)
    assert 1.54 * 0.9 < cd < 1.54 * 1.4


def test_drag_grows_with_size(small_solver):
    ns = small_solver
    small = ns.solve(voxelize(sphere_sdf(C, 0.4), ns.grid, ns.h)).drag
    big = ns.solve(voxelize(sphere_sdf(C, 0.6), ns.grid, ns.h)).drag
    assert big > 1.5 * small


def test_mirror_and_translation_invariance():
    # the box is periodic in y and z and the flow symmetric: mirrored or y-shifted bodies have equal drag
    ns = BrinkmanSpectralNS(grid=(24, 12, 12), steps=40)
    body = box_sdf((2.5, 2.0, 2.0), (0.5, 0.3, 0.4))
    occ = voxelize(body, ns.grid, ns.h)
    occ[:, :6] *= 0.9  # break the y symmetry of the body itself
    d0 = ns.solve(occ).drag
    assert ns.solve(occ[:, ::-1].copy()).drag == pytest.approx(d0, rel=1e-4)
    assert ns.solve(np.roll(occ, 1, axis=1)).drag == pytest.approx(d0, rel=1e-4)


def test_projection_is_divergence_free(small_solver):
    ns = small_solver
    g = torch.Generator().manual_seed(0)
    u = torch.randn((3, *ns.grid), generator=g)
    u_hat = ns._project(torch.fft.rfftn(u, dim=(-3, -2, -1)))
    div = (1j * ns._k * u_hat).sum(0)
    assert float(div.abs().max()) < 1e-4 * float(u_hat.abs().max())


def test_result_fields_and_convergence(small_solver):
    ns = small_solver
    res = ns.solve(voxelize(sphere_sdf(C, 0.5), ns.grid, ns.h))
    assert res.pressure.shape == ns.grid and res.velocity.shape == (3, *ns.grid)
    # stagnation point upstream has higher pressure than the wake behind the body
    i0, j = int(2.0 / ns.h), ns.grid[1] // 2
    assert res.pressure[i0 - 1, j, j] > res.pressure[int(3.0 / ns.h) + 1, j, j]
    assert res.converged and res.drift < 0.01
    assert res.cdv == pytest.approx(res.drag / (0.5 * res.volume ** (2 / 3)))


@pytest.mark.parametrize("grid, match", [((33, 16, 16), "even"), ((48, 24), "3 ints"), ((4, 16, 16), ">= 8")])
def test_bad_grid(grid, match):
    with pytest.raises(ValueError, match=match):
        BrinkmanSpectralNS(grid=grid)


def test_bad_parameters():
    with pytest.raises(ValueError, match="`re`"):
        BrinkmanSpectralNS(re=-1)
    with pytest.raises(ValueError, match="`cfl`"):
        BrinkmanSpectralNS(cfl=2.0)
    with pytest.raises(ValueError, match="`sponge`"):
        BrinkmanSpectralNS(sponge=0.7)


def test_bad_occupancy():
    ns = BrinkmanSpectralNS(grid=(24, 12, 12), steps=10)
    with pytest.raises(ValueError, match="empty"):
        ns.solve(np.zeros(ns.grid))
    with pytest.raises(ValueError, match="full"):
        ns.solve(np.ones(ns.grid))
    touching = np.zeros(ns.grid)
    touching[5:9, 0:4, 4:8] = 1
    with pytest.raises(ValueError, match="touches the domain boundary"):
        ns.solve(touching)
    sponge = np.zeros(ns.grid)
    sponge[20:22, 5:7, 5:7] = 1
    with pytest.raises(ValueError, match="sponge"):
        ns.solve(sponge)
    with pytest.raises(ValueError, match="transposed"):
        ns.solve(np.zeros((12, 24, 12)))
    bad = np.zeros(ns.grid)
    bad[5, 5, 5] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        ns.solve(bad)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        ns.solve(np.full(ns.grid, 2.0))


def test_divergence_is_reported_not_returned():
    from neurips25.inverse3d import SolverDivergedError

    ns = BrinkmanSpectralNS(grid=(24, 12, 12), steps=200, re=1e6, cfl=0.5, sponge_rate=50.0)
    occ = voxelize(box_sdf(C, (0.6, 0.6, 0.6)), ns.grid, ns.h)
    with pytest.raises(SolverDivergedError, match="diverged"):
        ns.solve(occ)


def test_unrolled_drag_continues_the_solve_and_has_a_gradient(small_solver):
    # from the converged flow, the differentiable unroll must reproduce the solver's drag (same discrete scheme)
    ns = small_solver
    occ = voxelize(sphere_sdf(C, 0.5), ns.grid, ns.h)
    res = ns.solve(occ)
    chi = torch.as_tensor(occ).requires_grad_(True)
    drag, u = ns.unrolled_drag(chi, res.velocity, steps=10, average=5)
    assert float(drag.detach()) == pytest.approx(res.drag, rel=0.02)
    assert u.shape == (3, *ns.grid) and not u.requires_grad
    drag.backward()
    g = chi.grad.numpy()
    assert np.isfinite(g).all()
    # adding solid in the fluid next to the body raises drag ...
    near = (occ == 0) & (np.abs(np.gradient(occ)).sum(0) > 0)
    assert g[near].mean() > 0
    # ... and the gradient matches a finite difference at one upstream cell next to the body
    i = tuple(np.argwhere(near & (np.arange(ns.grid[0])[:, None, None] < 20))[0])
    bumped = torch.as_tensor(occ).clone()
    bumped[i] += 1e-5  # the penalisation is stiff (dt / eta = 1e3): stay in its linear range
    fd = (float(ns.unrolled_drag(bumped, res.velocity, steps=10, average=5)[0]) - float(drag.detach())) / 1e-5
    assert fd == pytest.approx(float(g[i]), rel=0.1)
    with pytest.raises(ValueError, match="`u0` must have shape"):
        ns.unrolled_drag(chi, res.velocity[:, :-1])
    with pytest.raises(ValueError, match="`chi` must be a torch tensor"):
        ns.unrolled_drag(occ, res.velocity)


def test_resample_flow_round_trip():
    from neurips25.inverse3d.cfd import resample_flow

    x = (torch.arange(16) + 0.5) / 16 * 2 * math.pi
    X, Y, Z = torch.meshgrid(x, x[:8] * 2, x[:8] * 2, indexing="ij")
    u = torch.stack([1 + 0.3 * torch.sin(X) * torch.cos(Y), 0.1 * torch.cos(Z), torch.zeros_like(X)]).numpy()
    up = resample_flow(u, (32, 16, 16))
    assert up.shape == (3, 32, 16, 16)
    np.testing.assert_allclose(resample_flow(up, (16, 8, 8)), u, atol=1e-5)
    with pytest.raises(ValueError, match="`u` must have shape"):
        resample_flow(u[0], (8, 8, 8))


def test_sphere_drag_matches_schiller_naumann_when_resolved_and_steady():
    # the cheap version of c1 (review #23: the 350-step default was ~8% above its steady value, the ramp
    # voxelisation +7%): the level-set solid on 8 cells a diameter, warm-started from 6 cells, steady (a
    # continuation as long again moves C_D by < 1%), within 6% of Schiller-Naumann at Re 50 (box blockage 4.9%)
    from neurips25.inverse3d.reproduce import schiller_naumann, sphere_drag

    cd, cd_cont = sphere_drag(50.0, 8, 4.0)
    assert abs(cd_cont / cd - 1) < 0.01
    assert abs(cd / schiller_naumann(50.0) - 1) < 0.06, cd
