"""An independent second solver for c1: PhiFlow's incremental incompressible Navier-Stokes around a voxel body.

:class:`BrinkmanSpectralNS` (this package) is pseudo-spectral with a penalised body in a sponge-fed periodic box.
:class:`PhiFlowNS` solves the same flow with `PhiFlow <https://github.com/tum-pbs/PhiFlow>`_ 3.4 (MIT, torch
backend), a different discretisation throughout:

* a staggered (MAC) grid, semi-Lagrangian advection, explicit diffusion, and a pressure projection by conjugate
  gradients (``fluid.make_incompressible``) with the body as a PhiFlow ``Obstacle``: its faces are closed walls
  (no-slip: the face velocity is reset to 0 every step) and its cells are left out of the pressure solve;
* a real inflow / outflow box: the free stream ``U e_x`` enters through the ``x-`` face (Dirichlet), leaves
  through ``x+`` (zero gradient, ``p = 0``); ``y`` and ``z`` are periodic, as in the spectral solver.

The body is the same voxel set as the spectral solver's level-set solid (occupancy >= 0.5 in the same cells),
given to PhiFlow as a union of cell-sized boxes, so the two solvers see the same shape.

Drag (rho = 1) is the force the body exerts on the fluid, from the momentum balance of one time step:

``F_x = F_wall + F_p``, with ``F_wall = sum_{x-faces} m u_x h^3 / dt`` (the streamwise momentum that advection
and diffusion carried into and next to the body during the step and that PhiFlow's obstacle step removes: it
multiplies ``u_x`` by ``1 - m``, with ``m`` = 1 on the body's faces and its soft-resampled coverage on partly
covered faces; the viscous and convective flux into the body) and ``F_p = (h^2 / dt) sum (p_up - p_down)`` over
the body's x-faces (the projection pressure ``p`` of the fluid cell next to each upstream / downstream face;
PhiFlow's ``p`` is ``dt`` times the physical pressure; the projection leaves the body's faces closed, so
the pressure reaches the body only there). The drag of a run is the mean of ``F_x`` over the last ``average``
fraction of steps.
"""

from __future__ import annotations

import dataclasses
import math
import numbers

import numpy as np

from neurips25.inverse3d.cfd import SolverDivergedError


@dataclasses.dataclass
class PhiFlowResult:
    """What :meth:`PhiFlowNS.solve` returns for one body.

    Attributes
    ----------
    drag : float
        Streamwise force ``F_x`` (rho = 1, U = 1, reference length 1), averaged over the tail of the run.
    drag_pressure, drag_wall : float
        Its pressure part ``F_p`` and wall (no-slip) part ``F_wall`` over the same steps.
    volume : float
        Of the voxel body (solid cells times ``h^3``).
    converged : bool
        Drag drift over the averaged tail below ``tol`` (relative).
    drift : float
        ``(max - min) / |mean|`` of the drag over the averaged tail.
    history : numpy.ndarray
        Drag after every step.
    """

    drag: float
    drag_pressure: float
    drag_wall: float
    volume: float
    converged: bool
    drift: float
    history: np.ndarray


def _check_pos(name, value):
    if not isinstance(value, numbers.Real) or isinstance(value, bool) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"`{name}` must be a finite number > 0; got {value!r}")
    return float(value)


def _check_int(name, value, lo):
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < lo:
        raise ValueError(f"`{name}` must be an integer >= {lo}; got {value!r}")
    return int(value)


def _runs(solid):
    """The solid cells as boxes, one per run of consecutive solid cells along x: lower and upper cell corners."""
    lo, hi = [], []
    for j, k in zip(*np.nonzero(solid.any(axis=0))):
        col = np.concatenate([[False], solid[:, j, k], [False]]).astype(np.int8)
        d = np.diff(col)
        for a, b in zip(np.nonzero(d == 1)[0], np.nonzero(d == -1)[0]):
            lo.append((a, j, k))
            hi.append((b, j + 1, k + 1))
    return np.asarray(lo, dtype=np.float64), np.asarray(hi, dtype=np.float64)


class PhiFlowNS:
    """PhiFlow's incompressible Navier-Stokes around a voxel body in an inflow / outflow box (needs ``phiflow``).

    Parameters
    ----------
    grid : tuple of 3 ints, default (48, 24, 24)
        Cells ``(nx, ny, nz)``, each >= 4; x is the flow direction. Same box convention as
        :class:`~neurips25.inverse3d.BrinkmanSpectralNS`: the cell size is ``h = extent / ny``.
    re : float, default 50
        Reynolds number on the reference length 1: ``nu = 1 / re``.
    extent : float, default 4
        Box size across y in reference lengths.
    cfl : float, default 0.5
        ``U dt / h`` (semi-Lagrangian advection is stable beyond 1; the explicit diffusion takes sub-steps
        where ``nu dt / h^2 > 1/6``).
    steps : int, default 80
        Time steps from the free-stream start.
    average : float, default 0.2
        Fraction of the last steps whose mean drag is reported.
    tol : float, default 0.02
        Relative drag drift over the averaged tail below which a run counts as converged.
    cg_tol : float, default 1e-4
        Absolute tolerance of the pressure solve.

    Examples
    --------
    >>> from neurips25.inverse3d import sphere_sdf, voxelize
    >>> from neurips25.inverse3d.phiflow_solver import PhiFlowNS
    >>> ns = PhiFlowNS(grid=(16, 8, 8), steps=10)
    >>> ns.solve(voxelize(sphere_sdf((1.5, 2.0, 2.0), 0.6), ns.grid, ns.h)).drag > 0
    True
    """

    def __init__(self, grid=(48, 24, 24), re=50.0, extent=4.0, cfl=0.5, steps=80, average=0.2, tol=0.02,
                 cg_tol=1e-4):
        if not isinstance(grid, (tuple, list)) or len(grid) != 3:
            raise ValueError(f"`grid` must be a tuple of 3 ints (nx, ny, nz); got {grid!r}")
        self.grid = tuple(_check_int("grid", n, 4) for n in grid)
        self.re = _check_pos("re", re)
        self.extent = _check_pos("extent", extent)
        self.cfl = _check_pos("cfl", cfl)
        self.steps = _check_int("steps", steps, 2)
        self.average = _check_pos("average", average)
        if self.average > 1:
            raise ValueError(f"`average` must be a fraction in (0, 1]; got {average}")
        self.tol = _check_pos("tol", tol)
        self.cg_tol = _check_pos("cg_tol", cg_tol)
        self.h = self.extent / self.grid[1]
        self.nu = 1.0 / self.re
        self.dt = self.cfl * self.h
        # explicit diffusion is stable for nu dt / h^2 <= 1/6: sub-steps where the time step is longer
        self.diffusion_substeps = max(1, math.ceil(6 * self.nu * self.dt / self.h ** 2 * 1.05))

    def _check_occupancy(self, occupancy):
        occ = np.asarray(occupancy.detach().cpu().numpy() if hasattr(occupancy, "detach") else occupancy)
        if occ.dtype == bool:
            occ = occ.astype(np.float32)
        if not np.issubdtype(occ.dtype, np.number):
            raise ValueError(f"`occupancy` must be numeric; got dtype {occ.dtype}")
        if occ.shape != self.grid:
            raise ValueError(f"`occupancy` must have shape {self.grid}; got {occ.shape}")
        if not np.all(np.isfinite(occ)):
            raise ValueError("`occupancy` contains NaN or inf")
        solid = occ >= 0.5
        if not solid.any():
            raise ValueError("`occupancy` is empty: no cell has occupancy >= 0.5 (no body to compute drag on)")
        if solid[0].any() or solid[-1].any() or solid[:, 0].any() or solid[:, -1].any() or solid[:, :, 0].any() \
                or solid[:, :, -1].any():
            raise ValueError("`occupancy`: the body touches the domain boundary; keep at least one fluid cell on "
                             "every face of the box")
        return solid

    def solve(self, occupancy):
        """Run from the free stream for ``steps`` steps around the voxel body ``occupancy >= 0.5``.

        Parameters
        ----------
        occupancy : array-like, shape ``grid``
            Occupancy in [0, 1] (or bool); cells at or above 0.5 are solid, the spectral solver's convention.

        Returns
        -------
        PhiFlowResult

        Raises
        ------
        SolverDivergedError
            If the velocity becomes non-finite or exceeds 20 U, or the pressure solve does not converge.
        """
        solid = self._check_occupancy(occupancy)
        from phi.torch import flow as pf  # noqa: PLC0415 (optional dependency: the inverse3d extra)

        nx, ny, nz = self.grid
        h, dt = self.h, self.dt
        bounds = pf.Box(x=nx * h, y=ny * h, z=nz * h)
        bc = {"x-": pf.vec(x=1.0, y=0.0, z=0.0), "x+": pf.ZERO_GRADIENT, "y": pf.PERIODIC, "z": pf.PERIODIC}
        lo, hi = _runs(solid)
        cells = pf.Box(pf.tensor(lo * h, pf.instance("cells"), pf.channel(vector="x,y,z")),
                       pf.tensor(hi * h, pf.instance("cells"), pf.channel(vector="x,y,z")))
        obstacle = pf.Obstacle(cells)
        v = pf.StaggeredGrid(pf.vec(x=1.0, y=0.0, z=0.0), bc, bounds=bounds, x=nx, y=ny, z=nz)
        # PhiFlow's obstacle mask on the x-faces, in its own layout: the factor its no-slip step multiplies u_x by
        # (0 on the body's faces, between 0 and 1 on faces its soft resampling finds partly covered, 1 elsewhere)
        ones = pf.StaggeredGrid(pf.vec(x=1.0, y=1.0, z=1.0), bc, bounds=bounds, x=nx, y=ny, z=nz)
        removed = 1.0 - pf.fluid.apply_boundary_conditions(ones, (obstacle,)).vector["x"].values.numpy("x,y,z")
        v = pf.fluid.apply_boundary_conditions(v, (obstacle,))
        fluid = ~solid
        # closed x-faces between interior cells i and i+1: body downstream of fluid (upstream face) and vice versa
        up = fluid[:-1] & solid[1:]
        down = solid[:-1] & fluid[1:]
        p = None  # the outflow face fixes p = 0, so the pressure matrix is regular: rank_deficiency=0 below skips
        # PhiFlow's rank check (most of a step's cost otherwise)
        hist = np.empty(self.steps)
        hist_p = np.empty(self.steps)
        for it in range(self.steps):
            v = pf.advect.semi_lagrangian(v, v, dt)
            v = pf.diffuse.explicit(v, self.nu, dt, substeps=self.diffusion_substeps)
            ux = v.vector["x"].values.numpy("x,y,z")
            f_wall = float((ux * removed).sum()) * h ** 3 / dt  # what make_incompressible's mask takes away
            umax = float(np.abs(ux).max())
            if not math.isfinite(umax) or umax > 20.0:
                raise SolverDivergedError(f"PhiFlow flow diverged at step {it + 1} of {self.steps} "
                                          f"(max |u_x| = {umax:.3g}); lower `cfl` or raise the resolution")
            try:
                v, p = pf.fluid.make_incompressible(v, (obstacle,), pf.Solve("CG", 0, self.cg_tol, x0=p,
                                                                             rank_deficiency=0))
            except pf.math.NotConverged as err:
                raise SolverDivergedError(f"PhiFlow's pressure solve did not converge at step {it + 1} of "
                                          f"{self.steps}: {err}") from err
            pv = p.values.numpy("x,y,z")
            f_p = float(pv[:-1][up].sum() - pv[1:][down].sum()) * h ** 2 / dt
            hist[it], hist_p[it] = f_wall + f_p, f_p
            if not math.isfinite(hist[it]):
                raise SolverDivergedError(f"PhiFlow drag is not finite at step {it + 1} of {self.steps}")
        n = max(1, int(round(self.average * self.steps)))
        tail, tail_p = hist[-n:], hist_p[-n:]
        mean = float(tail.mean())
        drift = float((tail.max() - tail.min()) / max(abs(mean), 1e-12))
        return PhiFlowResult(drag=mean, drag_pressure=float(tail_p.mean()), drag_wall=mean - float(tail_p.mean()),
                             volume=float(solid.sum()) * h ** 3, converged=bool(drift < self.tol), drift=drift,
                             history=hist)
