"""Topology-preserving refinement by free-form deformation (3DID, Sec. 3.3).

A candidate is embedded in an :class:`~neurips25.inverse3d.ffd.FFDLattice`; the control displacements
``C`` minimise ``L(C) = J_hat(C) / s + lambda_smooth sum ||Δc||^2 + lambda_vol sum_cells (V_def / V_orig - 1)^2``
with AdamW and a cosine schedule; ``s`` is the surrogate's label spread (a standardised objective) and ``Δ``
a Laplacian (second differences: affine maps cost nothing). ``J_hat`` is a differentiable drag surrogate of
the deformed body; the
local volume ratio ``V_def / V_orig`` is the Jacobian determinant of the map, sampled per lattice cell.
The deformed occupancy is ``occ'(y) = occ(F^{-1}(y))`` (a fixed-point inverse of the smooth map), and the
mesh of the candidate moves by ``v' = v + d(v)``: with ``det J > 0`` everywhere the map is a
diffeomorphism, so the mesh keeps its connectivity, stays watertight and keeps its Euler characteristic.
An extra ``lambda_env`` term keeps the body inside the design envelope.

``J_hat`` reads either the deformed occupancy (a voxel CNN) or, as in the paper, the deformed mesh: a
surrogate with ``reads_mesh = True`` (:class:`~neurips25.inverse3d.meshgnn.MeshDragGNN`) gets the
candidate's mesh with vertices ``v' = v + d(v)``, so the gradient reaches the control points through the
vertices. The refined occupancy is in both cases the candidate warped by the optimised map.
"""

from __future__ import annotations

import dataclasses
import numbers

import numpy as np
import torch
from torch.nn import functional as F

from neurips25.inverse3d.ffd import FFDLattice
from neurips25.inverse3d.meshgnn import MeshGraph


@dataclasses.dataclass
class RefineResult:
    occupancy: np.ndarray       # refined occupancy on the crop grid
    control_disp: torch.Tensor  # optimised lattice displacements
    jacobian_min: float         # min det J over the lattice sample
    history: list               # loss per step
    predicted: tuple            # surrogate drag before, after


def _pos(name, v, allow_zero=True):
    ok = isinstance(v, numbers.Real) and np.isfinite(v) and (v >= 0 if allow_zero else v > 0)
    if not ok:
        raise ValueError(f"`{name}` must be a finite number {'>=' if allow_zero else '>'} 0; got {v!r}")
    return float(v)


def _module_dtype(fn):
    """The floating dtype of a module's first parameter (None for a plain callable or a module without one)."""
    if isinstance(fn, torch.nn.Module):
        for p in fn.parameters():
            if p.is_floating_point():
                return p.dtype
    return None


class TopologyPreservingRefiner:
    """FFD refinement of a voxel design against a differentiable drag surrogate.

    Parameters
    ----------
    surrogate : callable
        Occupancy crops (B, nx, ny, nz) -> predicted drag (B,), differentiable; or, when it has
        ``reads_mesh = True``, a list of :class:`MeshGraph` -> drag (B,) (then :meth:`refine` needs the mesh).
    lattice : FFDLattice
        Its box must be the crop's box: ``crop_lo`` .. ``crop_hi`` cell centres.
    crop_shape : tuple of 3 ints
        Cells of the crop.
    envelope_mask : array (nx, ny, nz) of {0, 1}
        Cells inside the design envelope.
    lam_smooth, lam_vol, lam_env : float
        Weights of the smoothness, volume and envelope terms.
    smoothness : {"laplacian", "first_difference"}, default "laplacian"
        The smoothness penalty (see :meth:`FFDLattice.smoothness`); the Laplacian leaves affine maps free.
    j_scale : float or None, default None
        ``J_hat`` enters the loss divided by this (a standardised objective, so the weights are unit-free);
        ``None`` takes the surrogate's ``y_std`` (its training labels' spread) when it has one, else 1.
    steps : int, default 100; lr : float, default 0.01
        AdamW steps (cosine schedule) and learning rate (in reference lengths per step).
    """

    def __init__(self, surrogate, lattice, crop_shape, envelope_mask, lam_smooth=1.0, lam_vol=1.0,
                 lam_env=5.0, steps=100, lr=0.01, smoothness="laplacian", j_scale=None):
        if not callable(surrogate):
            raise ValueError("`surrogate` must be callable (occupancy crops -> drag)")
        if not isinstance(lattice, FFDLattice):
            raise ValueError(f"`lattice` must be an FFDLattice; got {type(lattice).__name__}")
        self.surrogate, self.lattice = surrogate, lattice
        self.reads_mesh = bool(getattr(surrogate, "reads_mesh", False))
        self.crop_shape = tuple(int(n) for n in crop_shape)
        mask = torch.as_tensor(np.asarray(envelope_mask), dtype=torch.float32)
        if tuple(mask.shape) != self.crop_shape:
            raise ValueError(f"`envelope_mask` must have shape {self.crop_shape}; got {tuple(mask.shape)}")
        self.mask = mask
        self.lam_smooth, self.lam_vol = _pos("lam_smooth", lam_smooth), _pos("lam_vol", lam_vol)
        self.lam_env = _pos("lam_env", lam_env)
        if smoothness not in ("laplacian", "first_difference"):
            raise ValueError(f"`smoothness` must be 'laplacian' or 'first_difference'; got {smoothness!r}")
        self.smoothness = smoothness
        if j_scale is None:
            ys = getattr(surrogate, "y_std", None)
            j_scale = float(ys) if ys is not None and np.isfinite(float(ys)) and float(ys) > 0 else 1.0
        self.j_scale = _pos("j_scale", j_scale, allow_zero=False)
        if not isinstance(steps, numbers.Integral) or steps < 1:
            raise ValueError(f"`steps` must be an integer >= 1; got {steps!r}")
        self.steps, self.lr = int(steps), _pos("lr", lr, allow_zero=False)
        lo, hi = lattice.lo, lattice.hi
        axes = [torch.linspace(float(lo[i]), float(hi[i]), n) for i, n in enumerate(self.crop_shape)]
        self._pts = torch.stack(torch.meshgrid(*axes, indexing="ij"), -1).reshape(-1, 3)

    def warp(self, occ, control_disp):
        """``occ'(y) = occ(F^{-1}(y))`` on the crop grid (differentiable in ``control_disp``)."""
        x = self.lattice.inverse(self._pts, control_disp)
        g = 2 * (x - self.lattice.lo) / (self.lattice.hi - self.lattice.lo) - 1  # align_corners=True grid
        g = g.flip(-1).reshape(1, *self.crop_shape, 3)  # grid_sample wants (z, y, x) -> (W, H, D) order
        out = F.grid_sample(occ[None, None], g, mode="bilinear", align_corners=True, padding_mode="zeros")[0, 0]
        return out.clamp(0.0, 1.0)  # interpolation round-off may step just outside [0, 1]

    def refine(self, occupancy, mesh=None):
        """Optimise the lattice for one design (an occupancy crop of ``crop_shape``).

        ``mesh`` (a trimesh or :class:`MeshGraph` of the candidate, in the lattice's coordinates) is required
        when the surrogate reads meshes and ignored otherwise.
        """
        occ = torch.as_tensor(np.asarray(occupancy), dtype=torch.float32)
        if tuple(occ.shape) != self.crop_shape:
            raise ValueError(f"`occupancy` must have shape {self.crop_shape}; got {tuple(occ.shape)}")
        graph = None
        if self.reads_mesh:
            if mesh is None:
                raise ValueError("`mesh` is required: the surrogate reads meshes (reads_mesh = True)")
            graph = mesh if isinstance(mesh, MeshGraph) else MeshGraph.from_mesh(mesh)
            self._check_in_box(graph.vertices)

        dtype = _module_dtype(self.surrogate)

        def predict(warped, ctrl):
            if graph is None:  # a bfloat16 / float16 surrogate reads the crop in its own dtype
                j = self.surrogate((warped * self.mask)[None].to(dtype or warped.dtype))
            else:
                j = self.surrogate([graph.with_vertices(self.lattice.deform(graph.vertices, ctrl))])
            if not isinstance(j, torch.Tensor) or tuple(j.shape) != (1,):
                shape = tuple(j.shape) if isinstance(j, torch.Tensor) else type(j).__name__
                raise ValueError(f"`surrogate` must return one drag per design, shape (B,) = (1,); got shape {shape}")
            return j[0].float()

        ctrl = self.lattice.zeros().requires_grad_(True)
        opt = torch.optim.AdamW([ctrl], lr=self.lr, weight_decay=0.0)
        cos = torch.optim.lr_scheduler.CosineAnnealingLR(opt, self.steps)
        with torch.no_grad():
            before = float(predict(occ, self.lattice.zeros()))
        hist = []
        for _ in range(self.steps):
            warped = self.warp(occ, ctrl)
            j_hat = predict(warped, ctrl)
            det = self.lattice.jacobian_det(ctrl, n=4)
            loss = (j_hat / self.j_scale + self.lam_smooth * self.lattice.smoothness(ctrl, self.smoothness)
                    + self.lam_vol * ((det - 1) ** 2).sum()
                    + self.lam_env * (warped * (1 - self.mask)).sum() / max(1.0, float(occ.sum())))
            opt.zero_grad()
            loss.backward()
            opt.step()
            cos.step()
            hist.append(float(loss.detach()))
        ctrl = ctrl.detach()
        with torch.no_grad():
            out = self.warp(occ, ctrl) * self.mask
            after = float(predict(out, ctrl))
        return RefineResult(out.numpy(), ctrl, float(self.lattice.jacobian_det(ctrl, n=8).min()), hist,
                            (before, after))

    def _check_in_box(self, vertices):
        """A mesh must lie in the lattice box (give or take one crop cell: a marching-cubes surface of a body
        touching the crop's faces reaches half a cell beyond the outer cell centres); vertices outside it
        would not move, so a mesh in other coordinates would come back unchanged without a word."""
        v = torch.as_tensor(np.asarray(vertices, dtype=np.float64))
        lo, hi = self.lattice.lo.double(), self.lattice.hi.double()
        cell = (hi - lo) / torch.tensor([max(n - 1, 1) for n in self.crop_shape], dtype=torch.float64)
        out = ((v < lo - cell) | (v > hi + cell)).any(-1)
        if bool(out.any()):
            raise ValueError(
                f"`mesh` must lie in the lattice box (the crop's coordinates) lo={lo.tolist()}, hi={hi.tolist()} "
                f"(one crop cell of slack); {int(out.sum())} of {len(v)} vertices lie outside, spanning "
                f"{v.min(0).values.tolist()} .. {v.max(0).values.tolist()}")

    def deform_mesh(self, mesh, control_disp):
        """The candidate's mesh carried by the lattice: same faces, moved vertices (a new trimesh)."""
        self._check_in_box(mesh.vertices)
        moved = self.lattice.deform(torch.as_tensor(mesh.vertices, dtype=torch.float32), control_disp)
        out = mesh.copy()
        out.vertices = moved.numpy().astype(float)
        return out
