"""Meshes of designs: marching cubes (scikit-image), trimesh objects, validity, STL / OBJ export."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
from scipy import ndimage

from neurips25.extras import require


def largest_component(occupancy, level=0.5):
    """Keep only the largest 6-connected solid component (cells above ``level``); the rest is set to 0."""
    occ = np.asarray(occupancy, dtype=np.float32)
    lab, n = ndimage.label(occ > level)
    if n <= 1:
        return occ.copy()
    sizes = ndimage.sum(np.ones_like(occ), lab, index=np.arange(1, n + 1))
    keep = lab == (1 + int(np.argmax(sizes)))
    # keep the ramp cells touching the kept component, drop those of the others
    near = ndimage.binary_dilation(keep, iterations=1)
    return np.where(near & ~((lab > 0) & ~keep), occ, 0.0).astype(np.float32)


def solid_mask(occupancy, level=0.5):
    """The design's body for the solver: cells at or above ``level`` are solid (1), the rest fluid (0).

    The solver's penalisation is stiff (``dt / eta = 1e3``): any cell with occupancy above ~0.005 acts as
    solid. Decoded or FFD-interpolated fields carry small positive tails around the body, which would
    silently thicken a design by a cell; thresholding at the marching-cubes level puts the effective body
    where the design's mesh is.
    """
    occ = np.asarray(occupancy, dtype=np.float32)
    return (occ >= level).astype(np.float32)


def occupancy_to_mesh(occupancy, h, level=0.5):
    """Triangle mesh of the ``level`` iso-surface of an occupancy grid (marching cubes, Lewiner).

    The grid is padded by one empty cell, so a body touching the grid's faces still gives a closed surface.
    Vertices are in the same coordinates as :func:`~neurips25.inverse3d.shapes.cell_centers`.

    Returns
    -------
    trimesh.Trimesh
    """
    measure = require("skimage.measure", "inverse3d")
    trimesh = require("trimesh", "inverse3d")
    occ = np.asarray(occupancy, dtype=np.float32)
    if occ.ndim != 3:
        raise ValueError(f"`occupancy` must be a 3-D grid; got shape {occ.shape}")
    if not (occ > level).any():
        raise ValueError(f"`occupancy` has no cell above level {level}: nothing to mesh")
    pad = np.pad(occ, 1)
    verts, faces, _, _ = measure.marching_cubes(pad, level=level, spacing=(h, h, h))
    verts = verts - h / 2  # padding shift (-h) plus cell-centre offset (+h/2)
    return trimesh.Trimesh(vertices=verts, faces=faces[:, ::-1], process=True)


@dataclasses.dataclass
class Validity:
    """A design is valid when its surface is watertight and it is one solid piece of genus 0."""

    watertight: bool
    components: int
    euler: int

    @property
    def valid(self) -> bool:
        return self.watertight and self.components == 1


def mesh_validity(mesh) -> Validity:
    """Watertightness, number of connected bodies and Euler characteristic of a trimesh."""
    parts = mesh.split(only_watertight=False)
    return Validity(bool(mesh.is_watertight), len(parts), int(mesh.euler_number))


def export_mesh(mesh, path):
    """Write a design as STL or OBJ (by the suffix of ``path``) for any CAD or CFD tool."""
    path = Path(path)
    if path.suffix.lower() not in (".stl", ".obj"):
        raise ValueError(f"`path` must end in .stl or .obj; got {path.name!r}")
    path.parent.mkdir(parents=True, exist_ok=True)
    mesh.export(str(path))
    return path
