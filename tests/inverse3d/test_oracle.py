"""The solver-gradient oracle: a differentiable C_DV of a design crop, a warm flow it resets, bad inputs."""

import numpy as np
import pytest
import torch

from neurips25.inverse3d import BrinkmanSpectralNS, DesignSpace, solid_mask, sphere_sdf, voxelize
from neurips25.inverse3d.oracle import SolverGradientOracle

C = (2.5, 2.0, 2.0)


def test_oracle_is_differentiable_and_tracks_the_solver(small_solver):
    ns = small_solver
    space = DesignSpace(ns.grid, ns.h)
    occ = space.crop(voxelize(sphere_sdf(C, 0.5), ns.grid, ns.h))
    orc = SolverGradientOracle(ns, space, unroll=5, average=3)
    crop = torch.as_tensor(occ)[None].requires_grad_(True)
    cdv = orc(crop)
    cdv.sum().backward()
    g = crop.grad[0].numpy()
    assert cdv.shape == (1,) and np.isfinite(g).all() and np.abs(g).sum() > 0
    # the gradient sits on the interface (the sharpened solid map is flat far from the 0.5 level)
    assert np.abs(g[(occ > 0.05) & (occ < 0.95)]).mean() > 10 * np.abs(g[occ == 0]).mean()
    # its value is biased high against the solver's C_DV of the thresholded body: under the stiff penalisation
    # the sigmoid's tails act solid (x1.25 at 48x24x24, x2 on this 4-cells-a-diameter grid); only its gradient
    # is used
    ref = ns.solve(space.embed(solid_mask(occ))).cdv
    assert ref < float(cdv.detach()) < 2.5 * ref
    assert orc.u is not None
    orc.reset()
    assert orc.u is None


def test_bad_inputs(small_solver):
    space = DesignSpace(small_solver.grid, small_solver.h)
    with pytest.raises(ValueError, match="`space` is on grid"):
        SolverGradientOracle(BrinkmanSpectralNS(grid=(24, 12, 12), steps=10), space)
    with pytest.raises(ValueError, match="`tau` must be > 0"):
        SolverGradientOracle(small_solver, space, tau=0.0)
    orc = SolverGradientOracle(small_solver, space)
    with pytest.raises(ValueError, match="one design at a time"):
        orc(torch.zeros(2, *space.crop_shape))
