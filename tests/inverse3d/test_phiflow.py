"""PhiFlow as c1's independent second solver (issue #61), on a tiny grid (a few CPU seconds)."""

import numpy as np
import pytest

from neurips25.inverse3d import SolverDivergedError, sphere_sdf, voxelize
from neurips25.inverse3d.phiflow_solver import PhiFlowNS, _runs


def test_runs_cover_exactly_the_solid_cells():
    rng = np.random.default_rng(0)
    solid = rng.random((6, 5, 4)) > 0.6
    lo, hi = _runs(solid)
    back = np.zeros_like(solid)
    for a, b in zip(lo.astype(int), hi.astype(int)):
        back[a[0]:b[0], a[1]:b[1], a[2]:b[2]] = True
    assert (back == solid).all()


@pytest.fixture(scope="module")
def tiny():
    ns = PhiFlowNS(grid=(16, 8, 8), re=20, steps=6, cfl=1.0)
    small = ns.solve(voxelize(sphere_sdf((1.5, 2.0, 2.0), 0.5), ns.grid, ns.h))
    big = ns.solve(voxelize(sphere_sdf((1.5, 2.0, 2.0), 1.0), ns.grid, ns.h))
    return ns, small, big


def test_drag_is_positive_finite_and_split_into_its_parts(tiny):
    _, small, _ = tiny
    assert np.isfinite(small.history).all() and small.drag > 0
    assert small.drag_pressure + small.drag_wall == pytest.approx(small.drag, rel=1e-6)
    assert small.drag_pressure > 0  # the front face sees a higher pressure than the back


def test_a_bigger_body_has_more_drag(tiny):
    _, small, big = tiny
    assert big.volume > small.volume and big.drag > 1.5 * small.drag


def test_diffusion_substeps_keep_low_re_stable():
    ns = PhiFlowNS(grid=(16, 8, 8), re=5, steps=2, cfl=1.0)
    assert ns.diffusion_substeps >= 2 and 6 * ns.nu * ns.dt / ns.diffusion_substeps / ns.h ** 2 <= 1


@pytest.mark.parametrize("kw, word", [(dict(grid=(16, 8)), "grid"), (dict(re=-1), "re"),
                                      (dict(cfl=float("nan")), "cfl"), (dict(steps=1), "steps"),
                                      (dict(average=2.0), "average")])
def test_bad_settings_are_refused_by_name(kw, word):
    with pytest.raises(ValueError, match=word):
        PhiFlowNS(**kw)


def test_bad_bodies_are_refused_by_name():
    ns = PhiFlowNS(grid=(16, 8, 8), steps=2)
    with pytest.raises(ValueError, match="empty"):
        ns.solve(np.zeros(ns.grid))
    touching = np.zeros(ns.grid)
    touching[3, 0, 4] = 1
    with pytest.raises(ValueError, match="boundary"):
        ns.solve(touching)
    with pytest.raises(ValueError, match="shape"):
        ns.solve(np.zeros((8, 8, 8)))


def test_a_diverging_flow_raises_instead_of_returning_a_drag(monkeypatch):
    ns = PhiFlowNS(grid=(16, 8, 8), steps=3)
    from phi.torch import flow as pf

    monkeypatch.setattr(pf.advect, "semi_lagrangian", lambda f, v, dt: f * 1e3)
    with pytest.raises(SolverDivergedError):
        ns.solve(voxelize(sphere_sdf((1.5, 2.0, 2.0), 0.5), ns.grid, ns.h))
