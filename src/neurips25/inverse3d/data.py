"""The solver-labelled car-body data set, the design space and a cache of solved shapes.

Every body of :class:`~neurips25.inverse3d.shapes.CarBodyFamily` is voxelised on the solver grid and solved
with :class:`~neurips25.inverse3d.cfd.BrinkmanSpectralNS` as the same level-set solid the designs are solved
as (:meth:`DesignSpace.solver_body`); the record keeps its occupancy in the design box,
its volumetric drag coefficient, a geometry point cloud (surface points + normals) and a physics point
cloud (surface points + static pressure just outside the wall), plus occupancy queries for the PG-VAE.
Solved shapes are cached as ``.npz`` keyed by a hash of occupancy and solver settings, so seeds and a
resumed run reuse them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
from pathlib import Path

import numpy as np
from scipy.interpolate import RegularGridInterpolator

from neurips25.inverse3d.cfd import FlowResult
from neurips25.inverse3d.mesh import largest_component, solid_mask
from neurips25.inverse3d.shapes import CENTER, ENVELOPE, CarBodyFamily, cell_centers, surface_points, voxelize


@dataclasses.dataclass
class DesignSpace:
    """Where designs live on the solver grid: the envelope box and the crop (envelope + margin) around it."""

    grid: tuple
    h: float
    center: tuple = CENTER
    envelope: tuple = ENVELOPE
    margin: float = 0.25

    def __post_init__(self):
        c, e = np.asarray(self.center), np.asarray(self.envelope)
        centers = [(np.arange(n) + 0.5) * self.h for n in self.grid]
        self.slices = []
        for i in range(3):
            idx = np.nonzero(np.abs(centers[i] - c[i]) <= e[i] / 2 + self.margin)[0]
            self.slices.append(slice(int(idx[0]), int(idx[-1]) + 1))
        self.slices = tuple(self.slices)
        self.crop_shape = tuple(s.stop - s.start for s in self.slices)
        self.crop_lo = np.array([centers[i][s.start] for i, s in enumerate(self.slices)])
        self.crop_hi = np.array([centers[i][s.stop - 1] for i, s in enumerate(self.slices)])
        pts = self.crop_points()
        self.envelope_mask = (np.abs(pts - c) <= e / 2 + 1e-9).all(-1).astype(np.float32)

    def crop_points(self):
        """Cell centres of the crop, (cx, cy, cz, 3)."""
        return cell_centers(self.grid, self.h)[self.slices]

    def embed(self, crop):
        """A crop occupancy placed in an empty full grid."""
        full = np.zeros(self.grid, dtype=np.float32)
        full[self.slices] = crop
        return full

    def crop(self, full):
        return np.asarray(full)[self.slices]

    def solver_body(self, crop):
        """The one body convention for labels and designs: a crop occupancy -> the solid the solver sees.

        The largest piece at the marching-cubes level (0.5), as a 0/1 solid in the full grid. Training
        bodies (a one-cell ramp from :func:`~neurips25.inverse3d.shapes.voxelize`, i.e. ``sdf <= 0``) and
        decoded or refined designs are solved through this same function, so a surrogate trained on the
        labels learns the quantity the designs are judged by.
        """
        return self.embed(solid_mask(largest_component(crop)))


class SolveCache:
    """Solver results on disk, keyed by occupancy + solver settings (``None`` path = memory only)."""

    def __init__(self, path=None):
        self.path = None if path is None else Path(path)
        if self.path is not None:
            self.path.mkdir(parents=True, exist_ok=True)
        self.mem = {}
        self.hits = self.misses = 0

    @staticmethod
    def key(solver, occ):
        h = hashlib.sha1(np.ascontiguousarray(occ, dtype=np.float32).tobytes())
        cfg = (solver.grid, solver.re, solver.extent, solver.cfl, solver.steps, solver.sponge, solver.sponge_rate,
               solver.eta_ratio)
        h.update(repr(cfg).encode())
        return h.hexdigest()[:20]

    def solve(self, solver, occ) -> FlowResult:
        k = self.key(solver, occ)
        if k in self.mem:
            self.hits += 1
            return self.mem[k]
        f = None if self.path is None else self.path / f"{k}.npz"
        if f is not None and f.exists():
            d = np.load(f)
            res = FlowResult(drag=float(d["drag"]), cdv=float(d["cdv"]), cd_frontal=float(d["cd_frontal"]),
                             volume=float(d["volume"]), frontal_area=float(d["frontal_area"]),
                             pressure=d["pressure"].astype(np.float32), velocity=None,
                             converged=bool(d["converged"]), drift=float(d["drift"]), history=d["history"])
            self.hits += 1
        else:
            res = solver.solve(occ)
            self.misses += 1
            if f is not None:
                tmp = f.with_name(f.stem + f".{os.getpid()}.tmp.npz")
                np.savez_compressed(tmp, drag=res.drag, cdv=res.cdv, cd_frontal=res.cd_frontal, volume=res.volume,
                                    frontal_area=res.frontal_area, pressure=res.pressure.astype(np.float16),
                                    converged=res.converged, drift=res.drift, history=res.history)
                os.replace(tmp, f)
            res = dataclasses.replace(res, velocity=None)
        self.mem[k] = res
        return res


def pressure_at(pressure, h, xyz):
    """Trilinear interpolation of a cell-centred field at points (N, 3)."""
    axes = [(np.arange(n) + 0.5) * h for n in pressure.shape]
    return RegularGridInterpolator(axes, pressure, bounds_error=False, fill_value=None)(xyz)


def build_dataset(n_shapes, solver, space, cache, seed, n_points=512, n_occ=2048, progress=None):
    """Sample, voxelise and solve ``n_shapes`` car bodies; returns a dict of stacked arrays.

    Keys: ``params`` (n, 9), ``occ`` (n, *crop_shape), ``cdv`` (n,), ``drag``, ``converged``, ``drift``,
    ``p_geo`` (n, n_points, 6), ``p_phy`` (n, n_points, 4) with standardised pressure, ``q_xyz`` (n, n_occ, 3),
    ``q_occ`` (n, n_occ), ``p_scale`` (mean, std of the surface pressure).
    """
    fam = CarBodyFamily(seed=seed)
    rng = np.random.default_rng(seed + 1)
    lo = np.asarray(space.center) - np.asarray(space.envelope) / 2 - space.margin
    hi = np.asarray(space.center) + np.asarray(space.envelope) / 2 + space.margin
    rows = []
    bodies = fam.samples(n_shapes)
    it = bodies if progress is None else progress(bodies, desc="solving training bodies")
    for body in it:
        occ = voxelize(body.sdf, solver.grid, solver.h)
        res = cache.solve(solver, space.solver_body(space.crop(occ)))  # the designs' convention
        xyz, nrm = surface_points(body.sdf, n_points, lo, hi, rng)
        p_wall = pressure_at(res.pressure.astype(np.float32), solver.h, xyz + 1.5 * solver.h * nrm)
        near = rng.uniform(lo, hi, size=(n_occ, 3))
        sxyz, snrm = surface_points(body.sdf, n_occ // 2, lo, hi, rng)
        near[: n_occ // 2] = sxyz + snrm * rng.normal(0, 1.5 * solver.h, size=(n_occ // 2, 1))
        q_occ = np.clip(0.5 - body.sdf(near) / solver.h, 0, 1)
        rows.append(dict(params=body.params(), occ=space.crop(occ), cdv=res.cdv, drag=res.drag,
                         converged=res.converged, drift=res.drift, p_geo=np.concatenate([xyz, nrm], 1),
                         p_wall=p_wall, q_xyz=near, q_occ=q_occ))
    out = {k: np.stack([r[k] for r in rows]) for k in rows[0]}
    pw = out.pop("p_wall")
    m, s = float(pw.mean()), float(pw.std() + 1e-9)
    out["p_phy"] = np.concatenate([out["p_geo"][..., :3], ((pw - m) / s)[..., None]], -1)
    out["p_scale"] = np.array([m, s])
    return {k: (v.astype(np.float32) if v.dtype == np.float64 else v) for k, v in out.items()}
