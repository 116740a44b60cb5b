"""FFD refinement lowers its surrogate and keeps topology; baselines optimise planted objectives."""

import numpy as np
import pytest
import torch

from neurips25.inverse3d import (
    CEMLatent,
    FFDLattice,
    GDLatent,
    GPBOVoxelPCA,
    TopologyPreservingRefiner,
    mesh_validity,
    occupancy_to_mesh,
    sphere_sdf,
    voxelize,
)


def _setup(n=12, h=0.125):
    occ = voxelize(sphere_sdf((0.75, 0.75, 0.75), 0.4), (n, n, n), h)
    lo = np.full(3, 0.5 * h)
    hi = lo + (n - 1) * h
    return occ, FFDLattice(lo, hi, (4, 3, 3)), h


def test_refiner_moves_body_downhill_and_keeps_topology():
    occ, lat, h = _setup()
    xs = torch.linspace(0, 1, occ.shape[0])[:, None, None]

    def surrogate(o):  # "drag" = occupancy-weighted x (lower = body further upstream)
        return (o * xs).sum((1, 2, 3)) / o.sum((1, 2, 3))

    ref = TopologyPreservingRefiner(surrogate, lat, occ.shape, np.ones(occ.shape), lam_smooth=0.1, lam_vol=0.1,
                                    lam_env=0.0, steps=20, lr=0.03)
    r = ref.refine(occ)
    assert r.predicted[1] < r.predicted[0] - 0.01
    assert r.jacobian_min > 0
    m0 = occupancy_to_mesh(occ, h)
    m1 = ref.deform_mesh(m0, r.control_disp)
    v0, v1 = mesh_validity(m0), mesh_validity(m1)
    assert v1.watertight and v1.euler == v0.euler == 2
    assert float(np.abs(m1.vertices - m0.vertices).max()) > 0.01


def test_warp_with_zero_displacement_is_identity():
    occ, lat, _ = _setup()
    ref = TopologyPreservingRefiner(lambda o: o.sum((1, 2, 3)), lat, occ.shape, np.ones(occ.shape))
    assert torch.allclose(ref.warp(torch.as_tensor(occ), lat.zeros()), torch.as_tensor(occ), atol=1e-5)


def test_cem_and_gd_find_planted_minimum():
    target = torch.tensor([0.5, -0.3, 0.2])
    J = lambda z: ((z - target) ** 2).sum(-1)
    lo, hi = -torch.ones(3), torch.ones(3)
    best = CEMLatent(J, lo, hi, pop=64, iters=15).run(torch.zeros(3), torch.ones(3), 1,
                                                      generator=torch.Generator().manual_seed(0))
    assert torch.allclose(best[0], target, atol=0.05)
    z = GDLatent(J, lo, hi, steps=300, lr=0.05).run(torch.zeros(2, 3))
    assert torch.allclose(z, target.expand(2, 3), atol=0.02)


def test_gpbo_prefers_the_low_drag_mode():
    rng = np.random.default_rng(0)
    n = 20
    size = rng.uniform(0.2, 0.45, n)
    occ = np.stack([voxelize(sphere_sdf((0.5, 0.5, 0.5), s), (10, 10, 10), 0.1) for s in size])
    drag = size.copy()  # planted: smaller body, lower drag
    gp = GPBOVoxelPCA(n_components=4, n_candidates=300, seed=0).fit(occ, drag)
    prop, pred = gp.propose(3)
    assert prop.shape == (3, 10, 10, 10) and 0 <= prop.min() and prop.max() <= 1
    assert (prop > 0.5).sum((1, 2, 3)).mean() < np.median((occ > 0.5).sum((1, 2, 3)))


def test_warp_stays_in_unit_interval():
    # regression: bilinear round-off gave 1.0000001, which the solver rejects
    occ, lat, _ = _setup()
    ref = TopologyPreservingRefiner(lambda o: o.sum((1, 2, 3)), lat, occ.shape, np.ones(occ.shape))
    ctrl = 0.05 * torch.randn(*lat.shape, 3, generator=torch.Generator().manual_seed(0))
    w = ref.warp(torch.as_tensor(occ), ctrl)
    assert float(w.min()) >= 0.0 and float(w.max()) <= 1.0


def test_refiner_standardises_the_objective_by_the_surrogates_label_spread():
    occ, lat, h = _setup()

    class Scaled(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("y_std", torch.tensor(0.1))

        def forward(self, o):
            return o.sum((1, 2, 3))

    ref = TopologyPreservingRefiner(Scaled(), lat, occ.shape, np.ones(occ.shape))
    assert ref.j_scale == pytest.approx(0.1) and ref.smoothness == "laplacian"
    assert TopologyPreservingRefiner(Scaled(), lat, occ.shape, np.ones(occ.shape), j_scale=2).j_scale == 2.0
    with pytest.raises(ValueError, match="`smoothness`"):
        TopologyPreservingRefiner(Scaled(), lat, occ.shape, np.ones(occ.shape), smoothness="l1")


def test_refine_sweep_pairs_each_setting_with_the_unrefined_body(tmp_path):
    import json

    from neurips25.inverse3d.reproduce import refine_sweep

    out = tmp_path / "sweep.json"
    r = refine_sweep("smoke", bodies=(0, 1), lambdas=(0.1, 10.0), lattices=((6, 3, 3),), steps=(2,), out=out,
                     log=lambda *a: None)
    assert len(r["rows"]) == 4 and len(r["settings"]) == 2
    labels = {}
    for row in r["rows"]:
        labels.setdefault(row["body"], row["sim_before"])
        assert row["sim_before"] == labels[row["body"]]  # one unrefined solve per body, shared by the settings
        assert row["ratio"] == pytest.approx(row["sim_after"] / row["sim_before"])
        assert row["jacobian_min"] > 0 and row["move_max_cells"] > 0
    assert labels[0] != labels[1]
    # a stiffer lattice moves the body less
    soft, stiff = r["settings"]
    assert stiff["move_max_cells"] < soft["move_max_cells"]
    assert json.loads(out.read_text())["settings"] == r["settings"]
