"""Drag surrogates: a latent head (for diffusion guidance) and a voxel CNN (a refinement surrogate).

The paper guides diffusion with a drag predictor and refines meshes with a MeshGraphNet surrogate. Here
:class:`LatentDragHead` reads the (normalised) triplane latent and :class:`VoxelDragCNN` reads the
occupancy of the design box: the FFD refiner can differentiate either the CNN through the deformed
occupancy (a smooth function of the lattice) or the paper's mesh GNN
(:class:`~neurips25.inverse3d.meshgnn.MeshDragGNN`) through the deformed vertices; the reproduction
compares the two. All predict the volumetric drag coefficient C_DV, standardised.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn


class LatentDragHead(nn.Module):
    """MLP ``z -> C_DV`` on flattened latents; ``forward`` returns the de-standardised prediction."""

    def __init__(self, latent_dim, hidden=128, dropout=0.1):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(latent_dim, hidden), nn.GELU(), nn.Dropout(dropout),
                                 nn.Linear(hidden, hidden), nn.GELU(), nn.Linear(hidden, 1))
        self.register_buffer("y_mean", torch.zeros(()))
        self.register_buffer("y_std", torch.ones(()))

    def forward(self, z):
        return self.net(z.flatten(1))[:, 0] * self.y_std + self.y_mean


class _AvgPool3d(nn.AvgPool3d):
    """AvgPool3d that runs on CPU in bfloat16 / float16 too (torch's CPU kernel has neither: it pools in float32)."""

    def forward(self, x):
        if x.device.type == "cpu" and x.dtype in (torch.bfloat16, torch.float16):
            return super().forward(x.float()).to(x.dtype)
        return super().forward(x)


class VoxelDragCNN(nn.Module):
    """3D CNN ``occupancy (B, nx, ny, nz) -> C_DV`` on the design box crop (float32, float64, bfloat16, float16)."""

    def __init__(self, width=8):
        super().__init__()
        w = width
        self.net = nn.Sequential(
            nn.Conv3d(1, w, 3, padding=1), nn.GELU(), _AvgPool3d(2),
            nn.Conv3d(w, 2 * w, 3, padding=1), nn.GELU(), _AvgPool3d(2),
            nn.Conv3d(2 * w, 2 * w, 3, padding=1), nn.GELU())
        self.head = nn.Sequential(nn.Linear(4 * w + 1, 32), nn.GELU(), nn.Linear(32, 1))
        self.register_buffer("y_mean", torch.zeros(()))
        self.register_buffer("y_std", torch.ones(()))

    def forward(self, occ):
        h = self.net(occ.unsqueeze(1))
        feat = torch.cat([h.mean((2, 3, 4)), h.amax((2, 3, 4)), occ.mean((1, 2, 3))[:, None] * 10], 1)
        return self.head(feat)[:, 0] * self.y_std + self.y_mean


def _take(x, idx):
    """Rows ``idx`` of a tensor / array, or items of a list (e.g. of mesh graphs)."""
    if isinstance(x, (list, tuple)):
        return [x[int(i)] for i in idx]
    return x[idx]


def fit_regressor(model, x, y, steps, lr=2e-3, batch=32, weight_decay=1e-3, generator=None, augment=None):
    """Fit ``model(x) ~ y`` by AdamW on the MSE of standardised targets; returns the final train loss.

    ``x`` is a tensor (rows are samples) or a list of samples (e.g. :class:`MeshGraph`). ``augment``
    (optional) maps a batch to an equally labelled batch (e.g. mirror images of a body). A bfloat16 model reads
    tensor rows cast to its dtype (the loss is taken in float32); a float16 one is refused (AdamW cannot train
    float16 weights: its eps underflows and they turn NaN).
    """
    if any(p.dtype == torch.float16 for p in model.parameters()):
        raise ValueError("`model` has float16 parameters: AdamW's update divides by sqrt(v) + eps, both 0 in "
                         "float16, and the weights turn NaN; train in float32 or bfloat16 (cast afterwards)")
    dtype = next((p.dtype for p in model.parameters() if p.is_floating_point()), torch.float32)
    y = torch.as_tensor(y, dtype=torch.float32)
    model.y_mean.fill_(float(y.mean()))
    model.y_std.fill_(float(y.std().clamp_min(1e-6)))
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    cos = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    model.train()
    loss = torch.zeros(())
    for _ in range(int(steps)):
        idx = torch.randint(len(x), (min(batch, len(x)),), generator=generator)
        xb = _take(x, idx)
        if augment is not None:
            xb = augment(xb, generator)
        if isinstance(xb, torch.Tensor) and xb.is_floating_point():
            xb = xb.to(dtype)
        loss = (((model(xb).float() - y[idx]) / model.y_std.float()) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        cos.step()
    model.eval()
    return float(loss.detach())


def cross_val_r2(make_model, x, y, steps, folds=5, seed=0, augment=None, prepare=None, batch=32):
    """K-fold out-of-fold R^2 of a freshly trained regressor per fold.

    ``prepare(model, x_train)`` (optional) runs before each fold's fit (e.g. setting reference scales).
    """
    y = np.asarray(y, dtype=float)
    n = len(y)
    perm = np.random.default_rng(seed).permutation(n)
    pred = np.empty(n)
    for k in range(folds):
        test = perm[k::folds]
        train = np.setdiff1d(perm, test)
        torch.manual_seed(seed * 100 + k)
        m = make_model()
        if prepare is not None:
            prepare(m, _take(x, train))
        fit_regressor(m, _take(x, train), y[train], steps, generator=torch.Generator().manual_seed(seed * 100 + k),
                      augment=augment, batch=batch)
        with torch.no_grad():
            pred[test] = m(_take(x, test)).numpy()
    return float(1 - ((pred - y) ** 2).sum() / ((y - y.mean()) ** 2).sum()), pred


def mirror_yz(occ, generator=None):
    """Random y / z mirror images of occupancy crops (B, nx, ny, nz): the drag of a mirrored body is equal."""
    flip_y = torch.rand(len(occ), generator=generator) < 0.5
    flip_z = torch.rand(len(occ), generator=generator) < 0.5
    out = torch.where(flip_y[:, None, None, None], occ.flip(2), occ)
    return torch.where(flip_z[:, None, None, None], out.flip(3), out)
