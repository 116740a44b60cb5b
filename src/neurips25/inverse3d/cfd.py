"""A real 3D incompressible flow solver: pseudo-spectral Navier-Stokes with Brinkman penalisation.

The paper checks its designs with OpenFOAM RANS on DrivAerNet++ ("Sim-Drag"). Neither is available
offline, so this module ships its own solver (reconstructed, see docs/inverse3d.md):

* periodic box, Fourier derivatives with real-to-complex FFTs (``torch.fft.rfftn``), float32;
* rotational form ``du/dt = u x w - grad(P) + nu lap(u)`` (``P = p + |u|^2 / 2``), the nonlinear term
  dealiased by the 2/3 rule and advanced by Adams-Bashforth 2, viscosity by Crank-Nicolson (so a
  steady state is the exact discrete steady state, whatever the time step);
* incompressibility by Leray projection ``u_hat <- u_hat - k (k . u_hat) / |k|^2``;
* the body as a penalisation mask ``chi`` in [0, 1] (a one-cell linear ramp), applied implicitly:
  ``u <- u / (1 + chi dt / eta)``; the drag is the momentum that step removes,
  ``F_x = sum chi-cells (u_x,before - u_x,after) dV / dt`` (Brinkman force);
* a fringe (sponge) over the last ``sponge`` fraction of x relaxes the flow to the free stream ``U e_x``,
  so the periodic box behaves as an inflow / outflow channel.

Units: the free stream ``U = 1`` and the reference length ``1`` (a sphere of diameter 1 at Re = 50 has
``nu = 0.02``); the box spans ``extent`` reference lengths across y and z, cells are cubes.
"""

from __future__ import annotations

import dataclasses
import math
import numbers

import numpy as np
import torch


class SolverDivergedError(RuntimeError):
    """The flow blew up (non-finite or runaway velocity); no drag is returned for such a run."""


@dataclasses.dataclass
class FlowResult:
    """What :meth:`BrinkmanSpectralNS.solve` returns for one body.

    Attributes
    ----------
    drag : float
        Streamwise force ``F_x`` (rho = 1, U = 1, reference length 1).
    cdv : float
        Volumetric drag coefficient ``F_x / (0.5 rho U^2 V^(2/3))`` (the objective of the reproduction).
    cd_frontal : float
        Drag coefficient on the projected frontal area, ``F_x / (0.5 rho U^2 A_front)``.
    volume, frontal_area : float
        Of the penalised body (``sum chi dV``; the yz-projection of ``chi > 0.5``).
    pressure : numpy.ndarray, shape (nx, ny, nz)
        Static pressure ``p`` (gauge: zero mean).
    velocity : numpy.ndarray, shape (3, nx, ny, nz)
    converged : bool
        Drag drift over the last 10% of steps below ``tol`` (relative).
    drift : float
        ``(max - min) / |mean|`` of the drag over the last 10% of steps.
    history : numpy.ndarray
        Drag after every step.
    """

    drag: float
    cdv: float
    cd_frontal: float
    volume: float
    frontal_area: float
    pressure: np.ndarray
    velocity: np.ndarray
    converged: bool
    drift: float
    history: np.ndarray


def _check_int(name, value, lo):
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < lo:
        raise ValueError(f"`{name}` must be an integer >= {lo}; got {value!r}")
    return int(value)


def _check_pos(name, value):
    if not isinstance(value, numbers.Real) or isinstance(value, bool) or not math.isfinite(value) or value <= 0:
        raise ValueError(f"`{name}` must be a finite number > 0; got {value!r}")
    return float(value)


class BrinkmanSpectralNS:
    """Pseudo-spectral incompressible Navier-Stokes around a penalised body in a sponge-fed periodic box.

    Parameters
    ----------
    grid : tuple of 3 ints, default (48, 24, 24)
        Cells ``(nx, ny, nz)``, each even and >= 8 (the 2/3-rule and Nyquist handling need even sizes);
        x is the flow direction.
    re : float, default 50
        Reynolds number on the reference length 1: ``nu = U * 1 / re``.
    extent : float, default 4
        Box size across y in reference lengths; the cell size is ``h = extent / ny`` in every direction.
    cfl : float, default 0.1
        ``U dt / h``.
    steps : int, default 350
        Time steps from the free-stream start.
    sponge : float, default 0.15
        Fraction of x (at the outlet end) where the flow is relaxed to the free stream.
    sponge_rate : float, default 2.0
        Peak relaxation rate of the sponge (1 / time).
    eta_ratio : float, default 1e3
        ``dt / eta``: penalisation stiffness per step.
    tol : float, default 0.01
        Relative drag drift over the last 10% of steps below which a run counts as converged.

    Examples
    --------
    >>> from neurips25.inverse3d import BrinkmanSpectralNS, sphere_sdf, voxelize
    >>> ns = BrinkmanSpectralNS(grid=(32, 16, 16), steps=60)
    >>> occ = voxelize(sphere_sdf((2.5, 2.0, 2.0), 0.5), ns.grid, ns.h)
    >>> ns.solve(occ).drag > 0
    True
    """

    def __init__(self, grid=(48, 24, 24), re=50.0, extent=4.0, cfl=0.1, steps=350, sponge=0.15,
                 sponge_rate=2.0, eta_ratio=1e3, tol=0.01):
        if not isinstance(grid, (tuple, list)) or len(grid) != 3:
            raise ValueError(f"`grid` must be a tuple of 3 ints (nx, ny, nz); got {grid!r}")
        g = tuple(_check_int("grid", n, 8) for n in grid)
        if any(n % 2 for n in g):
            raise ValueError(f"`grid` sizes must be even (2/3 dealiasing and Nyquist modes); got {g}")
        self.grid = g
        self.re = _check_pos("re", re)
        self.extent = _check_pos("extent", extent)
        self.cfl = _check_pos("cfl", cfl)
        if self.cfl > 0.5:
            raise ValueError(f"`cfl` must be <= 0.5 for the explicit advection step; got {cfl}")
        self.steps = _check_int("steps", steps, 10)
        self.sponge = _check_pos("sponge", sponge)
        if self.sponge >= 0.5:
            raise ValueError(f"`sponge` must be a fraction in (0, 0.5); got {sponge}")
        self.sponge_rate = _check_pos("sponge_rate", sponge_rate)
        self.eta_ratio = _check_pos("eta_ratio", eta_ratio)
        self.tol = _check_pos("tol", tol)
        self.h = self.extent / g[1]
        self.nu = 1.0 / self.re
        self.dt = self.cfl * self.h
        self._build()

    @property
    def lengths(self):
        """Box size (Lx, Ly, Lz) in reference lengths."""
        return tuple(n * self.h for n in self.grid)

    def _build(self):
        nx, ny, nz = self.grid
        h = self.h
        kx = torch.fft.fftfreq(nx, d=h) * 2 * math.pi
        ky = torch.fft.fftfreq(ny, d=h) * 2 * math.pi
        kz = torch.fft.rfftfreq(nz, d=h) * 2 * math.pi
        KX, KY, KZ = torch.meshgrid(kx, ky, kz, indexing="ij")
        self._k = torch.stack([KX, KY, KZ])  # (3, nx, ny, nz//2+1)
        k2 = (KX**2 + KY**2 + KZ**2)
        self._k2 = k2
        self._k2_safe = torch.where(k2 == 0, torch.ones_like(k2), k2)
        # 2/3 rule: keep |k_i| < (2/3) k_max,i in every direction
        keep = torch.ones_like(k2, dtype=torch.bool)
        for K in (KX, KY, KZ):
            keep &= K.abs() < (2.0 / 3.0) * (math.pi / h) * (1 - 1e-6) + 1e-12
        self._dealias = keep.to(torch.float32)
        # Crank-Nicolson factors for nu lap
        a = self.nu * k2 * self.dt
        self._cn_a = (1 - a / 2) / (1 + a / 2)
        self._cn_b = self.dt / (1 + a / 2)
        # sponge profile sigma(x): smooth ramp up and down over the last `sponge` fraction of x
        x = (torch.arange(nx, dtype=torch.float32) + 0.5) / nx
        s0 = 1.0 - self.sponge
        prof = torch.zeros(nx)
        inside = x >= s0
        xi = (x[inside] - s0) / self.sponge
        prof[inside] = torch.sin(math.pi * xi) ** 2
        self._sponge_x = prof
        self._sigma = (self.sponge_rate * prof).view(nx, 1, 1)
        self._sponge_start = int(math.floor(s0 * nx))

    # ------------------------------------------------------------------ checks
    def _check_occupancy(self, occupancy):
        if isinstance(occupancy, torch.Tensor):
            occ = occupancy.detach().cpu().numpy()
        else:
            occ = np.asarray(occupancy)
        if occ.dtype == bool:
            occ = occ.astype(np.float32)
        if not np.issubdtype(occ.dtype, np.number):
            raise ValueError(f"`occupancy` must be numeric; got dtype {occ.dtype}")
        if occ.shape != self.grid:
            hint = " (transposed? x is the flow direction, axis 0)" if sorted(occ.shape) == sorted(self.grid) else ""
            raise ValueError(f"`occupancy` must have shape {self.grid}; got {occ.shape}{hint}")
        if not np.all(np.isfinite(occ)):
            raise ValueError("`occupancy` contains NaN or inf")
        if occ.min() < 0 or occ.max() > 1:
            raise ValueError(f"`occupancy` values must lie in [0, 1]; got [{occ.min():.3g}, {occ.max():.3g}]")
        solid = occ > 0.5
        if not solid.any():
            raise ValueError("`occupancy` is empty: no cell has occupancy > 0.5 (no body to compute drag on)")
        if solid.all() or solid.mean() > 0.5:
            raise ValueError(f"`occupancy` is (nearly) full: {solid.mean():.0%} of the box is solid; a body must "
                             "leave fluid around it")
        faces = (occ[0], occ[-1], occ[:, 0], occ[:, -1], occ[:, :, 0], occ[:, :, -1])
        if any((f > 0).any() for f in faces):
            raise ValueError("`occupancy`: the body touches the domain boundary; keep at least one fluid cell "
                             "on every face of the box")
        if (occ[self._sponge_start:] > 0).any():
            raise ValueError(f"`occupancy`: the body reaches the sponge region (x index >= {self._sponge_start}); "
                             "move it upstream")
        return occ.astype(np.float32)

    # ------------------------------------------------------------------ solver
    def _rhs_hat(self, u_hat, u=None):
        """Dealiased spectral nonlinear term ``u x w`` (before projection).

        ``u`` is ``u_hat`` in physical space when the caller has it (saves three inverse FFTs a step).
        """
        dims = (-3, -2, -1)
        k = self._k
        w_hat = torch.stack([
            1j * (k[1] * u_hat[2] - k[2] * u_hat[1]),
            1j * (k[2] * u_hat[0] - k[0] * u_hat[2]),
            1j * (k[0] * u_hat[1] - k[1] * u_hat[0]),
        ])
        if u is None:
            u = torch.fft.irfftn(u_hat, s=self.grid, dim=dims)
        w = torch.fft.irfftn(w_hat, s=self.grid, dim=dims)
        n = torch.linalg.cross(u, w, dim=0)
        return torch.fft.rfftn(n, dim=dims) * self._dealias, u

    def _project(self, f_hat):
        kdot = (self._k * f_hat).sum(0) / self._k2_safe
        return f_hat - self._k * kdot

    def solve(self, occupancy, return_fields=True, u0=None):
        """Run the solver to (near) steady state around one body.

        Parameters
        ----------
        occupancy : array-like, shape ``grid``, values in [0, 1]
            The penalisation mask chi (1 = solid). It must hold a body (some cell > 0.5), leave most of the
            box fluid, stay off every face of the box and out of the sponge.
        return_fields : bool
            Keep pressure and velocity (set False to save memory in large sweeps).
        u0 : array-like (3, *grid), optional
            Flow to start from (a warm start: the converged flow of this or a nearby body, or a coarser
            grid's flow through :func:`resample_flow`); default the free stream.

        Returns
        -------
        FlowResult

        Raises
        ------
        SolverDivergedError
            If the velocity becomes non-finite or exceeds 20 U.
        """
        occ = self._check_occupancy(occupancy)
        chi = torch.from_numpy(occ)
        dims = (-3, -2, -1)
        dt, eta_ratio = self.dt, self.eta_ratio
        pen = 1.0 / (1.0 + chi * eta_ratio)  # implicit penalisation factor
        sig = self._sigma * dt
        spg_keep = 1.0 / (1.0 + sig)          # implicit sponge: u <- (u + sig U) / (1 + sig)
        spg_add = sig / (1.0 + sig)
        dV = self.h ** 3

        if u0 is None:
            u = torch.zeros((3, *self.grid), dtype=torch.float32)
            u[0] = 1.0
        else:
            u = torch.as_tensor(np.asarray(u0), dtype=torch.float32).clone()
            if tuple(u.shape) != (3, *self.grid):
                raise ValueError(f"`u0` must have shape {(3, *self.grid)}; got {tuple(u.shape)}")
            if not torch.isfinite(u).all():
                raise ValueError("`u0` contains NaN or inf")
        u = u * pen
        u_hat = torch.fft.rfftn(u, dim=dims)
        n_prev = None
        hist = np.empty(self.steps)
        for it in range(self.steps):
            n_hat, _ = self._rhs_hat(u_hat, u)
            ab = n_hat if n_prev is None else 1.5 * n_hat - 0.5 * n_prev
            n_prev = n_hat
            u_hat = self._project(self._cn_a * u_hat + self._cn_b * ab)
            u = torch.fft.irfftn(u_hat, s=self.grid, dim=dims)
            # sponge (relax x-velocity to U, others to 0), then the body
            u = u * spg_keep
            u[0] = u[0] + spg_add
            u_before = u[0].clone()
            u = u * pen
            drag = float((u_before - u[0]).sum() * dV / dt)
            hist[it] = drag
            umax = float(u.abs().max())
            if not math.isfinite(drag) or not math.isfinite(umax) or umax > 20.0:
                raise SolverDivergedError(f"flow diverged at step {it + 1} of {self.steps} "
                                          f"(max |u| = {umax:.3g}); lower `cfl` or raise the resolution")
            u_hat = torch.fft.rfftn(u, dim=dims)

        tail = hist[-max(2, self.steps // 10):]
        mean = float(np.mean(tail))
        drift = float((tail.max() - tail.min()) / max(abs(mean), 1e-12))
        volume = float(chi.sum()) * dV
        frontal = float((chi > 0.5).any(dim=0).sum()) * self.h ** 2
        drag = float(hist[-1])
        pressure = velocity = None
        if return_fields:
            pressure = self._pressure(u, u_hat, chi).numpy()
            velocity = u.numpy()
        return FlowResult(drag=drag, cdv=drag / (0.5 * volume ** (2 / 3)), cd_frontal=drag / (0.5 * frontal),
                          volume=volume, frontal_area=frontal, pressure=pressure, velocity=velocity,
                          converged=bool(drift < self.tol), drift=drift, history=hist)

    def unrolled_drag(self, chi, u0, steps=25, average=10):
        """Drag after ``steps`` time steps from the flow ``u0`` around the mask ``chi``, differentiable in ``chi``.

        Back-propagating through this short unroll gives a truncated-adjoint gradient ``d F_x / d chi`` of the
        real solver (the "oracle gradient" of the refinement ablation). ``chi`` is a torch tensor of shape
        ``grid`` in [0, 1] (it may require grad); ``u0`` (3, *grid) is a flow to start from, e.g. the
        converged field of a nearby shape. Returns the mean drag over the last ``average`` steps (a 0-d
        tensor) and the final flow (detached), to warm-start the next call.
        """
        if not isinstance(chi, torch.Tensor) or tuple(chi.shape) != self.grid:
            raise ValueError(f"`chi` must be a torch tensor of shape {self.grid}")
        u = torch.as_tensor(u0, dtype=torch.float32)
        if tuple(u.shape) != (3, *self.grid):
            raise ValueError(f"`u0` must have shape {(3, *self.grid)}; got {tuple(u.shape)}")
        steps = _check_int("steps", steps, 1)
        average = min(_check_int("average", average, 1), steps)
        dims = (-3, -2, -1)
        dt, dV = self.dt, self.h ** 3
        pen = 1.0 / (1.0 + chi * self.eta_ratio)
        sig = self._sigma * dt
        keep, add = 1.0 / (1.0 + sig), sig / (1.0 + sig)
        u = u * pen
        u_hat = torch.fft.rfftn(u, dim=dims)
        n_prev, drags = None, []
        for _ in range(steps):
            n_hat, _ = self._rhs_hat(u_hat, u)
            ab = n_hat if n_prev is None else 1.5 * n_hat - 0.5 * n_prev
            n_prev = n_hat
            u_hat = self._project(self._cn_a * u_hat + self._cn_b * ab)
            u = torch.fft.irfftn(u_hat, s=self.grid, dim=dims) * keep
            ux = u[0] + add
            drags.append((ux - ux * pen).sum() * dV / dt)
            u = torch.cat([ux[None], u[1:]]) * pen
            u_hat = torch.fft.rfftn(u, dim=dims)
        return torch.stack(drags[-average:]).mean(), u.detach()

    def _pressure(self, u, u_hat, chi):
        """Static pressure from one Poisson solve: lap P = div(u x w + f), p = P - |u|^2 / 2."""
        dims = (-3, -2, -1)
        n_hat, _ = self._rhs_hat(u_hat)
        # steady penalisation and sponge forces as body forces (their per-step effect / dt)
        f = torch.zeros_like(u)
        f[0] = -self._sigma * (u[0] - 1.0)
        f[1:] = -self._sigma * u[1:]
        f = f - chi * (self.eta_ratio / self.dt) * u
        f = f * (chi < 0.999)  # inside the solid the penalisation force is a numerical artefact
        total = n_hat + torch.fft.rfftn(f, dim=dims)
        div = (1j * self._k * total).sum(0)
        P_hat = -div / self._k2_safe
        P_hat[0, 0, 0] = 0
        P = torch.fft.irfftn(P_hat, s=self.grid, dim=dims)
        p = P - 0.5 * (u ** 2).sum(0)
        return p - p.mean()


def resample_flow(u, grid):
    """A periodic velocity field (3, nx, ny, nz) resampled to ``grid`` by Fourier zero-padding / truncation.

    Used to warm-start a fine-grid solve from a coarse-grid flow over the same box.
    """
    u = torch.as_tensor(np.asarray(u), dtype=torch.float32)
    if u.ndim != 4 or u.shape[0] != 3:
        raise ValueError(f"`u` must have shape (3, nx, ny, nz); got {tuple(u.shape)}")
    src, dst = tuple(u.shape[1:]), tuple(int(n) for n in grid)
    U = torch.fft.fftn(u, dim=(-3, -2, -1))
    out = torch.zeros((3, *dst), dtype=U.dtype)
    sl_src, sl_dst = [], []
    for a, b in zip(src, dst):
        m = min(a, b) // 2  # keep |k| < m on both sides (drops the Nyquist mode)
        sl_src.append(np.r_[0:m, a - m + 1:a])
        sl_dst.append(np.r_[0:m, b - m + 1:b])
    ix_s = np.ix_(*sl_src)
    ix_d = np.ix_(*sl_dst)
    for c in range(3):
        out[c][ix_d] = U[c][ix_s]
    scale = float(np.prod(dst)) / float(np.prod(src))
    return (torch.fft.ifftn(out, dim=(-3, -2, -1)).real * scale).numpy()
