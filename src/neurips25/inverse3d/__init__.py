"""3DID: direct 3D inverse design for aerodynamics with physics-aware optimisation.

Hao, Zhu & Yang, NeurIPS 2025 (arXiv 2512.08987). A physics-geometry VAE (:class:`PGVAE`) embeds shapes
and their surface pressure in a continuous triplane latent; a latent diffusion prior (:class:`LatentDiT`)
is sampled from pure noise with objective guidance through the Tweedie estimate
(``eps' = eps + gamma * grad_{z_t} J(ẑ0(z_t))``, :class:`ObjectiveGuidedSampler`); each candidate is then
sculpted by a topology-preserving free-form deformation (:class:`FFDLattice`,
:class:`TopologyPreservingRefiner`) against a drag surrogate. Designs are checked with a real 3D flow
solver, :class:`BrinkmanSpectralNS` (pseudo-spectral Navier-Stokes with Brinkman penalisation), never by
the surrogate that produced them.

Reconstructed here (the paper's full text was not available; details from a third-party summary):
the car-body family replaces DrivAerNet++, the in-package solver at Re 50 replaces OpenFOAM RANS, the
MeshGraphNet surrogate is a small message-passing GNN (:class:`MeshDragGNN`; a voxel CNN is the compared
alternative), sizes are CPU-sized; see docs/inverse3d.md.

Example
-------
>>> from neurips25.inverse3d import BrinkmanSpectralNS, sphere_sdf, voxelize
>>> ns = BrinkmanSpectralNS(grid=(32, 16, 16), steps=60)
>>> res = ns.solve(voxelize(sphere_sdf((2.5, 2.0, 2.0), 0.5), ns.grid, ns.h))
>>> res.drag > 0
True
"""

from neurips25.inverse3d.baselines import CEMLatent, GDLatent, GPBOVoxelPCA
from neurips25.inverse3d.cfd import BrinkmanSpectralNS, FlowResult, SolverDivergedError
from neurips25.inverse3d.data import DesignSpace, SolveCache, build_dataset
from neurips25.inverse3d.diffusion import LatentDiT, ObjectiveGuidedSampler, make_scheduler, train_dit
from neurips25.inverse3d.ffd import FFDLattice
from neurips25.inverse3d.mesh import export_mesh, largest_component, mesh_validity, occupancy_to_mesh, solid_mask
from neurips25.inverse3d.meshgnn import MeshDragGNN, MeshGraph
from neurips25.inverse3d.metrics import coverage, iou_matrix, novelty
from neurips25.inverse3d.pgvae import PGVAE
from neurips25.inverse3d.refine import TopologyPreservingRefiner
from neurips25.inverse3d.shapes import (
    CarBody,
    CarBodyFamily,
    box_sdf,
    ellipsoid_sdf,
    sphere_sdf,
    surface_points,
    voxelize,
)
from neurips25.inverse3d.surrogate import LatentDragHead, VoxelDragCNN

__all__ = [
    "BrinkmanSpectralNS", "FlowResult", "SolverDivergedError",
    "CarBody", "CarBodyFamily", "sphere_sdf", "box_sdf", "ellipsoid_sdf", "voxelize", "surface_points",
    "occupancy_to_mesh", "mesh_validity", "export_mesh", "largest_component", "solid_mask",
    "PGVAE", "LatentDiT", "ObjectiveGuidedSampler", "make_scheduler", "train_dit",
    "LatentDragHead", "VoxelDragCNN", "MeshDragGNN", "MeshGraph", "FFDLattice", "TopologyPreservingRefiner",
    "CEMLatent", "GDLatent", "GPBOVoxelPCA", "novelty", "coverage", "iou_matrix",
    "DesignSpace", "SolveCache", "build_dataset",
]
