"""Mesh GNN surrogate: graph from a mesh, exact volume / area, mirror invariance of the geometry, learning a
planted drag, gradients through an FFD map, the refiner's mesh mode, bad inputs."""

import numpy as np
import pytest
import torch
from scipy.stats import spearmanr

from neurips25.inverse3d import (
    FFDLattice,
    MeshDragGNN,
    MeshGraph,
    TopologyPreservingRefiner,
    ellipsoid_sdf,
    occupancy_to_mesh,
    sphere_sdf,
    voxelize,
)
from neurips25.inverse3d.meshgnn import mirror_meshes, surface_terms
from neurips25.inverse3d.surrogate import fit_regressor

H = 0.125
C = (0.75, 0.75, 0.75)


def _mesh(sdf, n=12):
    return occupancy_to_mesh(voxelize(sdf, (n, n, n), H), H)


def test_graph_edges_and_exact_volume_area():
    m = _mesh(sphere_sdf(C, 0.4))
    g = MeshGraph.from_mesh(m)
    # a closed triangle mesh has E = 3F/2 undirected edges; the graph holds both directions
    assert g.edges.shape == (2, 3 * len(m.faces))
    assert set(map(tuple, g.edges.T.tolist())) == {(j, i) for i, j in g.edges.T.tolist()}
    n, vol, area = surface_terms(g.vertices, g.faces)
    assert float(vol) == pytest.approx(m.volume, rel=1e-4)
    assert float(area) == pytest.approx(m.area, rel=1e-4)
    # normals point outward: away from the centre on a sphere
    assert float(((g.vertices - torch.tensor(C)) * n).sum(-1).min()) > 0


def test_mirror_keeps_volume_and_outward_normals():
    g = MeshGraph.from_mesh(_mesh(ellipsoid_sdf((0.7, 0.8, 0.75), (0.45, 0.3, 0.25))))
    v0 = float(surface_terms(g.vertices, g.faces)[1])
    for fy, fz in ((True, False), (False, True), (True, True)):
        gm = g.mirrored(fy, fz, C)
        assert float(surface_terms(gm.vertices, gm.faces)[1]) == pytest.approx(v0, rel=1e-5)
    # the model's prediction of a mirrored body equals the mirror of its input (features are geometric)
    model = MeshDragGNN(C, (0.5, 0.5, 0.5)).set_reference([g])
    assert torch.isfinite(model([g, g.mirrored(True, False, C)])).all()


def test_learns_a_planted_drag():
    # "drag" = length of an ellipsoid along x at varying width: a geometric quantity read from the mesh
    rng = np.random.default_rng(0)
    c = (1.0, 0.75, 0.75)
    graphs, y = [], []
    for a in np.linspace(0.3, 0.8, 8):
        b = rng.uniform(0.2, 0.3)
        occ = voxelize(ellipsoid_sdf(c, (a, b, b)), (16, 12, 12), H)
        graphs.append(MeshGraph.from_mesh(occupancy_to_mesh(occ, H)))
        y.append(a)
    torch.manual_seed(0)
    model = MeshDragGNN(c, (0.9, 0.5, 0.5)).set_reference(graphs)
    fit_regressor(model, graphs, np.array(y), 120, lr=1e-2, batch=4, generator=torch.Generator().manual_seed(0),
                  augment=mirror_meshes(c))
    with torch.no_grad():
        pred = model(graphs).numpy()
    assert spearmanr(pred, y).statistic > 0.9
    # ... and a model fitted to shuffled labels does not recover the order (the test can fail)
    torch.manual_seed(0)
    shuf = MeshDragGNN(c, (0.9, 0.5, 0.5)).set_reference(graphs)
    fit_regressor(shuf, graphs, np.array(y)[[3, 6, 0, 7, 1, 5, 2, 4]], 60, lr=1e-2, batch=4,
                  generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        assert spearmanr(shuf(graphs).numpy(), y).statistic < 0.9


def test_gradient_reaches_ffd_control_points_and_refiner_mesh_mode():
    occ = voxelize(sphere_sdf(C, 0.35), (12, 12, 12), H)
    mesh = occupancy_to_mesh(occ, H)
    lo = np.full(3, 0.5 * H)
    lat = FFDLattice(lo, lo + 11 * H, (4, 3, 3))
    g = MeshGraph.from_mesh(mesh)
    model = MeshDragGNN(C, (0.5, 0.5, 0.5)).set_reference([g])
    ctrl = lat.zeros().requires_grad_(True)
    model([g.with_vertices(lat.deform(g.vertices, ctrl))]).sum().backward()
    assert torch.isfinite(ctrl.grad).all() and float(ctrl.grad.abs().sum()) > 0

    class XMean(torch.nn.Module):  # a mesh "surrogate": mean vertex x (lower = body moved upstream)
        reads_mesh = True

        def forward(self, graphs):
            return torch.stack([gr.vertices[:, 0].mean() for gr in graphs])

    ref = TopologyPreservingRefiner(XMean(), lat, occ.shape, np.ones(occ.shape), lam_smooth=0.1, lam_vol=0.1,
                                    lam_env=0.0, steps=15, lr=0.03)
    r = ref.refine(occ, mesh=mesh)
    assert r.predicted[1] < r.predicted[0] - 0.01 and r.jacobian_min > 0
    # the refined occupancy moved the same way as the mesh
    xs = np.arange(12)[:, None, None]
    assert (r.occupancy * xs).sum() / r.occupancy.sum() < (occ * xs).sum() / occ.sum() - 0.05
    with pytest.raises(ValueError, match="`mesh` is required"):
        ref.refine(occ)


def test_fit_regressor_accepts_graph_lists():
    g = MeshGraph.from_mesh(_mesh(sphere_sdf(C, 0.35)))
    model = MeshDragGNN(C, (0.5, 0.5, 0.5)).set_reference([g])
    loss = fit_regressor(model, [g, g.mirrored(True, False, C)], np.array([1.0, 1.0]), 3, batch=2)
    assert np.isfinite(loss)


def test_bad_inputs():
    m = _mesh(sphere_sdf(C, 0.35))
    g = MeshGraph.from_mesh(m)
    bad = m.copy()
    bad.faces = np.asarray(m.faces) + len(m.vertices)

    class Mesh:
        vertices = np.zeros((4, 2))
        faces = np.zeros((1, 3), dtype=int)
    with pytest.raises(ValueError, match=r"`mesh.vertices` must have shape \(N, 3\)"):
        MeshGraph.from_mesh(Mesh())
    with pytest.raises(ValueError, match="`mesh.faces` index vertices outside"):
        MeshGraph.from_mesh(bad)
    with pytest.raises(ValueError, match="`vertices` must have shape"):
        g.with_vertices(g.vertices[:-1])
    with pytest.raises(ValueError, match="`half_size`"):
        MeshDragGNN(C, (0.5, 0.0, 0.5))
    with pytest.raises(ValueError, match="`graphs` must be a MeshGraph"):
        MeshDragGNN(C, (0.5, 0.5, 0.5))(torch.zeros(3, 3))
