"""Meshes (marching cubes + trimesh), validity, export, and the novelty / coverage metrics."""

import math

import numpy as np
import pytest

from neurips25.inverse3d import (
    coverage,
    export_mesh,
    largest_component,
    mesh_validity,
    novelty,
    occupancy_to_mesh,
    sphere_sdf,
    voxelize,
)

H = 0.1


def _ball(c=(1.0, 1.0, 1.0), r=0.5, grid=(20, 20, 20)):
    return voxelize(sphere_sdf(c, r), grid, H)


def test_sphere_mesh_is_watertight_genus_zero_with_right_volume():
    m = occupancy_to_mesh(_ball(), H)
    v = mesh_validity(m)
    assert v.valid and v.euler == 2
    assert m.volume == pytest.approx(4 / 3 * math.pi * 0.5**3, rel=0.05)
    assert np.allclose(m.vertices.mean(0), 1.0, atol=0.02)


def test_two_balls_are_invalid_and_largest_component_keeps_one():
    occ = np.maximum(_ball((0.6, 1.0, 1.0), 0.3), _ball((1.5, 1.0, 1.0), 0.2))
    assert mesh_validity(occupancy_to_mesh(occ, H)).components == 2
    one = largest_component(occ)
    v = mesh_validity(occupancy_to_mesh(one, H))
    assert v.valid and (one[:, :, :] > 0.5).sum() == (_ball((0.6, 1.0, 1.0), 0.3) > 0.5).sum()


def test_torus_has_euler_zero():
    def torus(p):
        q = np.asarray(p) - 1.0
        return np.hypot(np.hypot(q[..., 0], q[..., 1]) - 0.5, q[..., 2]) - 0.2
    v = mesh_validity(occupancy_to_mesh(voxelize(torus, (20, 20, 20), H), H))
    assert v.watertight and v.euler == 0


def test_export_round_trip(tmp_path):
    trimesh = pytest.importorskip("trimesh")
    m = occupancy_to_mesh(_ball(), H)
    back = trimesh.load(str(export_mesh(m, tmp_path / "d.stl")))
    assert back.is_watertight and back.volume == pytest.approx(m.volume, rel=1e-4)
    with pytest.raises(ValueError, match=".stl or .obj"):
        export_mesh(m, tmp_path / "d.ply")


def test_mesh_bad_inputs():
    with pytest.raises(ValueError, match="nothing to mesh"):
        occupancy_to_mesh(np.zeros((5, 5, 5)), H)
    with pytest.raises(ValueError, match="3-D"):
        occupancy_to_mesh(np.zeros((5, 5)), H)


def test_novelty_and_coverage_hand_cases():
    a, b = _ball(r=0.3), _ball(r=0.5)
    train = np.stack([a, b])
    assert novelty(train, train) == pytest.approx([0.0, 0.0])
    nov = novelty(np.stack([_ball(r=0.45)]), train)[0]
    iou = (_ball(r=0.45) > 0.5).sum() / (b > 0.5).sum()
    assert nov == pytest.approx(1 - iou, rel=1e-6)
    assert coverage(np.stack([a, a]), train) == 0.5
    assert coverage(train, train) == 1.0


def test_solid_mask_thresholds_at_the_mesh_level():
    from neurips25.inverse3d import solid_mask

    occ = np.array([[[0.0, 0.02, 0.49, 0.5, 0.9, 1.0]]], dtype=np.float32)
    assert solid_mask(occ).tolist() == [[[0.0, 0.0, 0.0, 1.0, 1.0, 1.0]]]


def test_knn_coverage_has_no_k_over_n_cap():
    # review #23: nearest-neighbour coverage of k designs over N shapes cannot exceed k / N
    from neurips25.inverse3d.metrics import coverage, knn_coverage

    train = np.zeros((8, 10, 4, 4), dtype=np.float32)
    for i in range(8):  # eight boxes of lengths 1..8 cells: neighbours overlap heavily
        train[i, : i + 1] = 1.0
    design = train[3:4]
    assert coverage(design, train) == 1 / 8
    assert knn_coverage(design, train, k=2) > 1 / 8
    far = np.zeros((1, 10, 4, 4), dtype=np.float32)
    far[0, :, 3] = 1.0  # no overlap with any training box
    assert knn_coverage(far, train, k=2) == 0.0
    with pytest.raises(ValueError, match="`k` must be below"):
        knn_coverage(design, train, k=8)


def test_review_bad_inputs_get_clear_errors():
    # review #23 section 6: these gave "'int' object is not iterable", a reshape error, silent NaN coordinates
    import torch

    from neurips25.inverse3d import PGVAE, FFDLattice, sphere_sdf, voxelize
    from neurips25.inverse3d.metrics import novelty

    with pytest.raises(ValueError, match="`grid` must be a tuple of 3"):
        voxelize(sphere_sdf((1, 1, 1), 0.5), 24, 0.1)
    with pytest.raises(ValueError, match="empty"):
        novelty(np.zeros((0, 4, 4, 4)), np.ones((2, 4, 4, 4)))
    with pytest.raises(ValueError, match="`lo` and `hi`"):
        PGVAE(np.zeros(3), np.zeros(3))
    vae = PGVAE(np.zeros(3), np.ones(3))
    assert {"lo", "hi"} <= set(vae.state_dict())  # the box travels with a checkpoint
    lat = FFDLattice(np.zeros(3), np.ones(3), (3, 3, 3))
    assert lat.deform(torch.rand(5, 3, dtype=torch.float64), lat.zeros()).dtype == torch.float64
