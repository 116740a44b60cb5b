"""The solver as a differentiable drag "surrogate": the oracle-gradient ablation of the refinement stage.

Refinement in 3DID follows the gradient of a learned surrogate. To tell a weak surrogate from a weak
refinement stage, :class:`SolverGradientOracle` gives the refiner the real solver's own gradient instead:
the crop occupancy is sharpened to the solid the solver sees (``chi = sigmoid((occ - 0.5) / tau)``),
embedded in the box, and ``C_DV = F_x / (0.5 V^(2/3))`` is differentiated by back-propagation through a
short unroll of :meth:`~neurips25.inverse3d.cfd.BrinkmanSpectralNS.unrolled_drag` (truncated adjoint). The
flow is warm-started from the converged field of the design and carried from call to call, so it tracks
the shape while the lattice moves (a one-shot optimisation). Call :meth:`reset` before each new design.

Its value is biased high against the solver's C_DV of the thresholded design (x1.25 at 48x24x24): under the
stiff penalisation the sigmoid's small tails act solid. The refiner uses its gradient; designs are always
re-solved as their 0.5-level solid.
"""

from __future__ import annotations

import numbers

import numpy as np
import torch
from torch.nn import functional as F

from neurips25.inverse3d.mesh import solid_mask


class SolverGradientOracle:
    """Occupancy crops (1, nx, ny, nz) -> solver C_DV (1,), differentiable (the refiner's ``surrogate``).

    Parameters
    ----------
    solver : BrinkmanSpectralNS
    space : DesignSpace
        Where the crop sits in the solver's box.
    unroll : int, default 25; average : int, default 10
        Time steps back-propagated per call, and the trailing steps whose drag is averaged.
    tau : float, default 0.02
        Sharpness of the occupancy -> solid map.
    """

    def __init__(self, solver, space, unroll=25, average=10, tau=0.02):
        if tuple(space.grid) != tuple(solver.grid):
            raise ValueError(f"`space` is on grid {space.grid} but `solver` on {solver.grid}")
        if not isinstance(tau, numbers.Real) or not tau > 0:
            raise ValueError(f"`tau` must be > 0; got {tau!r}")
        self.solver, self.space = solver, space
        self.unroll, self.average, self.tau = int(unroll), int(average), float(tau)
        sl = space.slices
        self._pad = []
        for s, n in zip(reversed(sl), reversed(solver.grid)):  # F.pad lists the last dimension first
            self._pad += [s.start, n - s.stop]
        self.u = None
        self.calls = 0

    def reset(self):
        """Forget the warm flow (a new design follows)."""
        self.u = None

    def __call__(self, crops):
        if not isinstance(crops, torch.Tensor) or crops.ndim != 4 or len(crops) != 1:
            raise ValueError("`crops` must be a tensor (1, nx, ny, nz): the oracle solves one design at a time")
        if self.u is None:  # converge the flow around the design once, then keep it warm
            full = self.space.embed(solid_mask(crops[0].detach().numpy()))
            self.u = torch.from_numpy(np.asarray(self.solver.solve(full).velocity))
        chi = F.pad(torch.sigmoid((crops[0] - 0.5) / self.tau), self._pad)
        drag, self.u = self.solver.unrolled_drag(chi, self.u, self.unroll, self.average)
        volume = chi.sum() * self.solver.h ** 3
        self.calls += 1
        return (drag / (0.5 * volume ** (2 / 3)))[None]
