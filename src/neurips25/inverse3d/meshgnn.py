"""A MeshGraphNet-style drag surrogate on surface meshes (the paper's refinement surrogate ``f_GNN``).

3DID refines a candidate by moving the vertices of its mesh through a free-form-deformation lattice and
asks a pretrained MeshGraphNet (Pfaff et al., ICLR 2021) for the drag of the deformed mesh. This module is
that surrogate in plain torch (reconstructed: sizes, features and readout are ours):

* graph = the mesh's vertices and its undirected edges (both directions);
* node features: position relative to ``center`` in units of ``half_size`` and the area-weighted vertex
  normal (a differentiable function of the vertex positions); edge features: the relative position
  ``x_j - x_i`` and its length, both in the same units;
* ``layers`` message-passing blocks with residual updates,
  ``e_ij <- e_ij + MLP_e([h_i, h_j, e_ij])``, ``h_i <- h_i + MLP_v([h_i, sum_j e_ij])``;
* readout: mean and max of the node states plus the enclosed volume and surface area (divergence theorem
  on the triangles), an MLP to the standardised volumetric drag coefficient.

Every feature is a smooth function of the vertex positions, so ``d C_DV / d vertices`` exists and the
FFD refiner can differentiate the prediction in the lattice's control points.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import torch
from torch import nn


@dataclasses.dataclass
class MeshGraph:
    """A triangle mesh as a graph: ``vertices`` (N, 3) float, ``faces`` (F, 3) long, ``edges`` (2, E) long."""

    vertices: torch.Tensor
    faces: torch.Tensor
    edges: torch.Tensor

    @classmethod
    def from_mesh(cls, mesh):
        """From a ``trimesh.Trimesh`` (or anything with ``vertices`` and ``faces``)."""
        v = np.asarray(mesh.vertices, dtype=np.float32)
        f = np.asarray(mesh.faces, dtype=np.int64)
        if v.ndim != 2 or v.shape[1] != 3 or len(v) == 0:
            raise ValueError(f"`mesh.vertices` must have shape (N, 3) with N > 0; got {v.shape}")
        if f.ndim != 2 or f.shape[1] != 3 or len(f) == 0:
            raise ValueError(f"`mesh.faces` must have shape (F, 3) with F > 0; got {f.shape}")
        if f.min() < 0 or f.max() >= len(v):
            raise ValueError(f"`mesh.faces` index vertices outside [0, {len(v)}); got [{f.min()}, {f.max()}]")
        e = np.concatenate([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]])
        e = np.unique(np.sort(e, axis=1), axis=0)
        edges = np.concatenate([e, e[:, ::-1]]).T.copy()
        return cls(torch.from_numpy(v), torch.from_numpy(f), torch.from_numpy(edges))

    def with_vertices(self, vertices):
        """The same connectivity with moved vertices (e.g. after an FFD map; keeps the autograd graph)."""
        if tuple(vertices.shape) != tuple(self.vertices.shape):
            raise ValueError(f"`vertices` must have shape {tuple(self.vertices.shape)}; got {tuple(vertices.shape)}")
        return MeshGraph(vertices, self.faces, self.edges)

    def mirrored(self, flip_y, flip_z, center):
        """The mirror image in y and / or z about ``center`` (faces re-wound so normals still point out)."""
        s = torch.tensor([1.0, -1.0 if flip_y else 1.0, -1.0 if flip_z else 1.0])
        c = torch.as_tensor(center, dtype=torch.float32)
        v = c + (self.vertices - c) * s
        f = self.faces[:, [0, 2, 1]] if (flip_y != flip_z) else self.faces
        return MeshGraph(v, f, self.edges)


def surface_terms(vertices, faces):
    """Area-weighted vertex normals (N, 3), enclosed volume and surface area of a closed triangle mesh."""
    a, b, c = (vertices[faces[:, i]] for i in range(3))
    cr = torch.linalg.cross(b - a, c - a, dim=-1)  # 2 x area x unit normal
    n = torch.zeros_like(vertices)
    for i in range(3):
        n = n.index_add(0, faces[:, i], cr)
    n = n / n.norm(dim=-1, keepdim=True).clamp_min(1e-12)
    volume = (a * torch.linalg.cross(b, c, dim=-1)).sum() / 6.0
    area = cr.norm(dim=-1).sum() / 2.0
    return n, volume, area


def _mlp(i, w, o):
    return nn.Sequential(nn.Linear(i, w), nn.GELU(), nn.Linear(w, o), nn.LayerNorm(o))


class MeshDragGNN(nn.Module):
    """MeshGraphNet-style regressor ``list[MeshGraph] -> C_DV`` (B,), differentiable in the vertices.

    Parameters
    ----------
    center, half_size : sequence of 3 floats
        Positions enter as ``(x - center) / half_size`` (the design envelope's centre and half extent).
    width : int, default 16; layers : int, default 2
        Latent width and number of message-passing blocks.
    """

    reads_mesh = True

    def __init__(self, center, half_size, width=16, layers=2):
        super().__init__()
        c = torch.as_tensor(center, dtype=torch.float32)
        s = torch.as_tensor(half_size, dtype=torch.float32)
        if c.shape != (3,) or s.shape != (3,) or not bool((s > 0).all()):
            raise ValueError(f"`center` and `half_size` must be 3-vectors, `half_size` > 0; got {center}, {half_size}")
        if int(width) < 1 or int(layers) < 1:
            raise ValueError(f"`width` and `layers` must be >= 1; got {width}, {layers}")
        self.register_buffer("center", c)
        self.register_buffer("scale", s)
        w = int(width)
        self.enc_v = _mlp(6, w, w)
        self.enc_e = _mlp(4, w, w)
        self.edge_mlps = nn.ModuleList([_mlp(3 * w, w, w) for _ in range(int(layers))])
        self.node_mlps = nn.ModuleList([_mlp(2 * w, w, w) for _ in range(int(layers))])
        self.head = nn.Sequential(nn.Linear(2 * w + 2, 32), nn.GELU(), nn.Linear(32, 1))
        self.register_buffer("vol_ref", torch.ones(()))
        self.register_buffer("area_ref", torch.ones(()))
        self.register_buffer("y_mean", torch.zeros(()))
        self.register_buffer("y_std", torch.ones(()))

    def forward(self, graphs):
        if isinstance(graphs, MeshGraph):
            graphs = [graphs]
        if not isinstance(graphs, (list, tuple)) or not graphs or not all(isinstance(g, MeshGraph) for g in graphs):
            raise ValueError("`graphs` must be a MeshGraph or a non-empty list of MeshGraph")
        # one disjoint union graph for the batch; `seg` maps every vertex to its mesh
        offs = np.cumsum([0] + [len(g.vertices) for g in graphs])
        verts = torch.cat([g.vertices for g in graphs])
        edges = torch.cat([g.edges + int(o) for g, o in zip(graphs, offs)], 1)
        seg = torch.cat([torch.full((len(g.vertices),), i, dtype=torch.long) for i, g in enumerate(graphs)])
        terms = [surface_terms(g.vertices, g.faces) for g in graphs]
        normals = torch.cat([t[0] for t in terms])
        vol = torch.stack([t[1] for t in terms])
        area = torch.stack([t[2] for t in terms])
        x = (verts - self.center) / self.scale
        src, dst = edges
        rel = x[dst] - x[src]
        h = self.enc_v(torch.cat([x, normals], -1))
        e = self.enc_e(torch.cat([rel, rel.norm(dim=-1, keepdim=True)], -1))
        for em, nm in zip(self.edge_mlps, self.node_mlps):
            e = e + em(torch.cat([h[src], h[dst], e], -1))
            agg = torch.zeros_like(h).index_add(0, dst, e)
            h = h + nm(torch.cat([h, agg], -1))
        B, w = len(graphs), h.shape[1]
        counts = torch.as_tensor(np.diff(offs), dtype=h.dtype)[:, None]
        mean = torch.zeros(B, w, dtype=h.dtype).index_add(0, seg, h) / counts
        mx = torch.full((B, w), -torch.inf, dtype=h.dtype).scatter_reduce(
            0, seg[:, None].expand(-1, w), h, reduce="amax", include_self=True)
        glob = torch.stack([vol / self.vol_ref - 1, area / self.area_ref - 1], 1)
        return self.head(torch.cat([mean, mx, glob], 1))[:, 0] * self.y_std + self.y_mean

    def set_reference(self, graphs):
        """Volume and area scales from training meshes (call before fitting)."""
        with torch.no_grad():
            terms = [surface_terms(g.vertices, g.faces) for g in graphs]
            self.vol_ref.fill_(float(np.mean([float(t[1]) for t in terms])))
            self.area_ref.fill_(float(np.mean([float(t[2]) for t in terms])))
        return self


def mirror_meshes(center):
    """An ``augment`` for :func:`~neurips25.inverse3d.surrogate.fit_regressor`: random y / z mirror images."""

    def augment(graphs, generator=None):
        flips = torch.rand(len(graphs), 2, generator=generator) < 0.5
        return [g.mirrored(bool(f[0]), bool(f[1]), center) for g, f in zip(graphs, flips)]
    return augment
