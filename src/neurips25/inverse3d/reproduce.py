"""Reproduction of 3DID's claims (Hao, Zhu & Yang, NeurIPS 2025) with a real 3D flow solver in the loop.

Criteria fixed in issue #23 before any run:

1. (check) Solver validity: sphere C_D at Re 50 within 30% of Schiller-Naumann (1.54); equal-volume
   prolate (aligned) < sphere < cube in drag on two grids; Spearman >= 0.9 between two grids over 20
   random bodies; drag drift < 1% over the last 10% of steps. Control: the same solver with the body's
   penalisation 1e5x too weak must fail the sphere test.
2. (headline) 3DID-full Sim-Drag (mean C_DV of its top designs, real solver) >= 5% below the best of
   CEM-latent, GD-latent, GP-BO-voxel-PCA and unguided diffusion; mean over seeds, every seed agreeing in
   sign; all its designs valid (watertight, one piece) and inside the envelope. Control: 3DID-full with
   drag surrogates trained on shuffled labels must fail the same criterion.
3. (supporting) Sim-Drag falls monotonically unguided -> guided -> guided + refine; refinement raises
   novelty and lowers coverage; the FFD keeps 100% of meshes watertight with unchanged Euler
   characteristic and det J > 0.
4. (supporting) The physics branch helps: latent-drag-surrogate R^2 (5-fold) of the PG-VAE >= that of the
   geometry-only VAE + 0.05, and a lower final Sim-Drag. Reported even if it fails.

Added in session 3 (fixed before any run with it): "3DID full" refines with the paper's surrogate, a
MeshGraphNet-style GNN on the candidate's mesh (:mod:`neurips25.inverse3d.meshgnn`); the voxel CNN of the
earlier sessions is kept as "3DID full (voxel-CNN refine)" for the comparison.

5. (supporting) The mesh surrogate refines: mean Sim-Drag of the GNN-refined designs <= 0.99 x that of the
   same guided designs before refinement, every refined mesh watertight; reported beside the voxel CNN
   (5-fold R^2 of both, Sim-Drag after CNN refinement). Control: the same designs refined by a GNN trained on
   shuffled labels must not meet the 0.99 bar.
"""

from __future__ import annotations

import dataclasses
import math
import os
import time
from pathlib import Path

import numpy as np
import torch
from scipy.stats import spearmanr

from neurips25.inverse3d.baselines import CEMLatent, GDLatent, GPBOVoxelPCA
from neurips25.inverse3d.cfd import BrinkmanSpectralNS, SolverDivergedError
from neurips25.inverse3d.data import DesignSpace, SolveCache, build_dataset
from neurips25.inverse3d.diffusion import LatentDiT, ObjectiveGuidedSampler, make_scheduler, train_dit
from neurips25.inverse3d.ffd import FFDLattice
from neurips25.inverse3d.mesh import export_mesh, largest_component, mesh_validity, occupancy_to_mesh
from neurips25.inverse3d.meshgnn import MeshDragGNN, MeshGraph, mirror_meshes
from neurips25.inverse3d.metrics import bootstrap_ci, coverage, novelty
from neurips25.inverse3d.pgvae import PGVAE
from neurips25.inverse3d.refine import TopologyPreservingRefiner
from neurips25.inverse3d.shapes import CENTER, ENVELOPE, CarBodyFamily, box_sdf, ellipsoid_sdf, sphere_sdf, voxelize
from neurips25.inverse3d.surrogate import LatentDragHead, VoxelDragCNN, cross_val_r2, fit_regressor, mirror_yz
from neurips25.repro import Claim, Outcome, Scale, progress, register

#: Schiller-Naumann sphere drag at Re 50: 24/Re (1 + 0.15 Re^0.687)
CD_SPHERE_RE50 = 24 / 50 * (1 + 0.15 * 50**0.687)
#: the paper's Sim-Drag table (from a third-party summary, not the paper's text)
PAPER_TABLE = {"GP on voxels": 0.4254, "CEM + TripNet latent": 0.4161, "Backprop + TripNet": 0.4170,
               "3DID without TopoRefine": 0.3766, "3DID full": 0.3536, "unguided diffusion (ablation)": 0.3944}
GNN_BATCH = 8  # meshes per GNN training step (the paper trains its MeshGraphNet with batch 8)
BASELINES = ("CEM-latent", "GD-latent", "GP-BO voxel PCA", "unguided diffusion")


@dataclasses.dataclass
class Config:
    grid: tuple
    coarse_grid: tuple
    steps: int
    coarse_steps: int
    n_shapes: int
    n_rank: int
    n_seeds: int
    n_pool: int
    k: int
    vae_steps: int
    dit_steps: int
    head_steps: int
    cnn_steps: int
    refine_steps: int
    guidance: float
    gnn_steps: int = 300
    lattice: tuple = (6, 3, 3)
    n_points: int = 512
    n_occ: int = 2048
    infer_steps: int = 50
    n_query: int = 512


def _config(scale: Scale) -> Config:
    return scale.pick(
        smoke=Config(grid=(24, 12, 12), coarse_grid=(32, 16, 16), steps=60, coarse_steps=80, n_shapes=8, n_rank=4,
                     n_seeds=1, n_pool=4, k=1, vae_steps=15, dit_steps=15, head_steps=30, cnn_steps=15,
                     refine_steps=5, guidance=2.0, n_points=64, n_occ=256, infer_steps=5, n_query=256, gnn_steps=10),
        quick=Config(grid=(48, 24, 24), coarse_grid=(32, 16, 16), steps=350, coarse_steps=150, n_shapes=48,
                     n_rank=20, n_seeds=1, n_pool=24, k=6, vae_steps=300, dit_steps=600, head_steps=300,
                     cnn_steps=200, refine_steps=40, guidance=2.0, n_points=256, n_occ=2048),
        paper=Config(grid=(48, 24, 24), coarse_grid=(64, 32, 32), steps=350, coarse_steps=500, n_shapes=160,
                     n_rank=20, n_seeds=3, n_pool=64, k=16, vae_steps=2000, dit_steps=4000, head_steps=600,
                     cnn_steps=600, refine_steps=120, guidance=2.0, gnn_steps=600),
    )


# ---------------------------------------------------------------- claim 1: the solver
def _reference_bodies(center, r=0.5):
    a = r / 2 ** (1 / 3)  # equal-volume 2:1 prolate spheroid
    side_half = r * (math.pi / 6) ** (1 / 3)  # equal-volume cube
    return {"prolate": ellipsoid_sdf(center, (2 * a, a, a)), "sphere": sphere_sdf(center, r),
            "cube": box_sdf(center, (side_half,) * 3)}


def solver_validity(cfg, cache, data, space_bodies):
    grids = {"main": (cfg.grid, cfg.steps), "second": (cfg.coarse_grid, cfg.coarse_steps)}
    drag = {}
    drift = []
    for name, (g, st) in grids.items():
        ns = BrinkmanSpectralNS(grid=g, steps=st)
        drag[name] = {}
        for body, sdf in _reference_bodies(CENTER).items():
            res = cache.solve(ns, voxelize(sdf, ns.grid, ns.h))
            drag[name][body] = res.drag
            drift.append(res.drift)
    sphere_cd = drag["main"]["sphere"] / (0.5 * math.pi * 0.25)
    ranking = {n: bool(d["prolate"] < d["sphere"] < d["cube"]) for n, d in drag.items()}
    # grid convergence of the ranking: the data set's first n_rank bodies re-solved on the second grid
    ns2 = BrinkmanSpectralNS(grid=cfg.coarse_grid, steps=cfg.coarse_steps)
    cdv2 = np.array([cache.solve(ns2, voxelize(b.sdf, ns2.grid, ns2.h)).cdv for b in space_bodies])
    rho = float(spearmanr(data["cdv"][: len(space_bodies)], cdv2).statistic)
    drift = drift + list(data["drift"])
    # control: a penalisation 1e5x too weak (dt / eta = 0.01) lets fluid through the body
    weak = BrinkmanSpectralNS(grid=cfg.coarse_grid, steps=cfg.coarse_steps, eta_ratio=1e-2)
    weak_cd = cache.solve(weak, voxelize(sphere_sdf(CENTER, 0.5), weak.grid, weak.h)).drag / (0.5 * math.pi * 0.25)
    return dict(sphere_cd=sphere_cd, reference=CD_SPHERE_RE50, drag=drag, ranking=ranking, spearman=rho,
                max_drift=float(np.max(drift)), control_weak_penalisation_cd=weak_cd)


# ---------------------------------------------------------------- models
def _train_vae(data, use_physics, steps, seed, space, n_query):
    torch.manual_seed(seed)
    lo = space.crop_lo - space.h / 2
    hi = space.crop_hi + space.h / 2
    vae = PGVAE(lo, hi, use_physics=use_physics)
    T = {k: torch.as_tensor(data[k]) for k in ("p_geo", "p_phy", "q_xyz", "q_occ")}
    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(vae.parameters(), lr=1e-3, weight_decay=1e-5)
    cos = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    n = len(T["p_geo"])
    hist = []
    for _ in range(steps):
        idx = torch.randint(n, (min(8, n),), generator=g)
        q = torch.randint(T["q_xyz"].shape[1], (n_query,), generator=g)
        loss, parts = vae.loss(T["p_geo"][idx], T["p_phy"][idx], T["q_xyz"][idx][:, q], T["q_occ"][idx][:, q],
                               T["p_phy"][idx][..., :3], T["p_phy"][idx][..., 3], generator=g)
        opt.zero_grad()
        loss.backward()
        opt.step()
        cos.step()
        hist.append(parts)
    vae.eval()
    with torch.no_grad():
        mu, logvar = vae.encode(T["p_geo"], T["p_phy"])
    return vae, mu, logvar, hist


class LatentSpace:
    """Normalised latents of one VAE, decoding to design-box occupancies."""

    def __init__(self, vae, mu, logvar, space):
        self.vae, self.space = vae, space
        self.mean, self.std = mu.mean(0), mu.std(0).clamp_min(1e-3)
        self.zn = (mu - self.mean) / self.std
        self.zn_post_std = (0.5 * logvar).exp() / self.std
        self.pts = torch.as_tensor(space.crop_points().reshape(-1, 3), dtype=torch.float32)
        self.mask = torch.as_tensor(space.envelope_mask)

    @torch.no_grad()
    def decode(self, zn, batch=8):
        out = []
        for i in range(0, len(zn), batch):
            z = zn[i:i + batch] * self.std + self.mean
            logit, _ = self.vae.decode(z, self.pts.expand(len(z), -1, -1))
            occ = torch.sigmoid(logit).reshape(len(z), *self.space.crop_shape) * self.mask
            out.append(torch.where(occ < 0.02, torch.zeros_like(occ), occ))
        return torch.cat(out).numpy()


def _head(latent, y, steps, seed):
    torch.manual_seed(seed)
    head = LatentDragHead(latent.zn[0].numel())
    fit_regressor(head, latent.zn, y, steps, generator=torch.Generator().manual_seed(seed))
    for p in head.parameters():
        p.requires_grad_(False)
    return head


def _cnn(occ, y, steps, seed):
    torch.manual_seed(seed)
    cnn = VoxelDragCNN()
    fit_regressor(cnn, torch.as_tensor(occ), y, steps, generator=torch.Generator().manual_seed(seed),
                  augment=mirror_yz)
    for p in cnn.parameters():
        p.requires_grad_(False)
    return cnn


def _crop_mesh(occ, space):
    """Marching-cubes mesh of a crop's largest piece, in solver coordinates (the FFD lattice's frame)."""
    m = occupancy_to_mesh(largest_component(occ), space.h)
    m.vertices = m.vertices + space.crop_lo - space.h / 2  # crop cell (0,0,0) centre sits at crop_lo
    return m


def _graphs(occs, space):
    return [MeshGraph.from_mesh(_crop_mesh(o, space)) for o in occs]


def _new_gnn():
    return MeshDragGNN(CENTER, np.asarray(ENVELOPE) / 2)


def _gnn(graphs, y, steps, seed):
    torch.manual_seed(seed)
    gnn = _new_gnn().set_reference(graphs)
    fit_regressor(gnn, graphs, y, steps, generator=torch.Generator().manual_seed(seed), augment=mirror_meshes(CENTER),
                  batch=GNN_BATCH)
    for p in gnn.parameters():
        p.requires_grad_(False)
    return gnn


def _dit(latent, steps, seed):
    torch.manual_seed(seed)
    dit = LatentDiT(latent.vae.latent_shape, dim=72, depth=4, heads=4)
    g = torch.Generator().manual_seed(seed)
    # posterior draws widen the 64-160 training latents into a density
    draws = torch.cat([latent.zn + latent.zn_post_std * torch.randn(latent.zn.shape, generator=g)
                       for _ in range(8)] + [latent.zn])
    hist = train_dit(dit, draws, steps, generator=g)
    dit.eval()
    for p in dit.parameters():
        p.requires_grad_(False)
    return dit, hist


# ---------------------------------------------------------------- design methods
def _top(zn, head, k):
    with torch.no_grad():
        s = head(zn)
    return zn[s.argsort()[:k]]


def _diffusion(dit, head, gamma, n_pool, k, seed, infer_steps):
    # guide on the standardised prediction, so gamma does not depend on the units of the drag coefficient
    J = (lambda z: (head(z) - head.y_mean) / head.y_std) if gamma > 0 else None
    sampler = ObjectiveGuidedSampler(dit, make_scheduler("ddim"), J, gamma, infer_steps)
    pool = sampler.sample(n_pool, generator=torch.Generator().manual_seed(seed))
    return _top(pool, head, k)


def _refine_all(occs, surrogate, space, cfg):
    """FFD-refine each design against ``surrogate`` (voxel CNN or mesh GNN); designs without a mesh stay as they are."""
    lat = FFDLattice(space.crop_lo, space.crop_hi, shape=cfg.lattice)
    ref = TopologyPreservingRefiner(surrogate, lat, space.crop_shape, space.envelope_mask, lam_smooth=1.0,
                                    lam_vol=0.5, lam_env=5.0, steps=cfg.refine_steps, lr=0.02)
    out, topo = [], []
    for occ in occs:
        try:
            m0 = _crop_mesh(occ, space)
        except ValueError:  # nothing above the 0.5 level: no mesh to refine
            out.append(np.asarray(occ, dtype=np.float32))
            topo.append(dict(jacobian_min=1.0, predicted_before=None, predicted_after=None, watertight_before=False,
                             watertight_after=False, euler_before=None, euler_after=None))
            continue
        r = ref.refine(occ, mesh=m0)
        out.append(r.occupancy)
        rec = dict(jacobian_min=r.jacobian_min, predicted_before=r.predicted[0], predicted_after=r.predicted[1])
        try:
            m1 = ref.deform_mesh(m0, r.control_disp)
            v0, v1 = mesh_validity(m0), mesh_validity(m1)
            rec.update(watertight_before=v0.watertight, watertight_after=v1.watertight, euler_before=v0.euler,
                       euler_after=v1.euler)
        except ValueError:
            rec.update(watertight_before=False, watertight_after=False, euler_before=None, euler_after=None)
        topo.append(rec)
    return np.stack(out), topo


def _evaluate(occs, solver, space, cache):
    """Sim-Drag of each design (largest piece, real solver), validity and envelope check."""
    cdv, valid, inside = [], [], []
    for occ in occs:
        if not (occ > 0.5).any():
            cdv.append(float("nan"))
            valid.append(False)
            inside.append(True)
            continue
        v = mesh_validity(occupancy_to_mesh(occ, space.h))
        valid.append(bool(v.valid))
        inside.append(bool(((occ > 0) <= (space.envelope_mask > 0)).all()))
        try:
            # the body at the marching-cubes level, for every method and the training labels alike
            cdv.append(cache.solve(solver, space.solver_body(occ)).cdv)
        except (SolverDivergedError, ValueError):
            cdv.append(float("nan"))
            valid[-1] = False
    return np.array(cdv), np.array(valid), np.array(inside)


def run_seed(seed, cfg, data, graphs, solver, space, cache, log):
    """All methods for one seed; returns per-method designs and scores."""
    t0 = time.time()
    y = data["cdv"]
    y_shuf = np.random.default_rng(seed + 99).permutation(y)
    vae_p, mu_p, lv_p, _ = _train_vae(data, True, cfg.vae_steps, seed, space, cfg.n_query)
    vae_g, mu_g, lv_g, _ = _train_vae(data, False, cfg.vae_steps, seed, space, cfg.n_query)
    log["vae_s"] = time.time() - t0
    L_p, L_g = LatentSpace(vae_p, mu_p, lv_p, space), LatentSpace(vae_g, mu_g, lv_g, space)
    recon = L_p.decode(L_p.zn)
    log["vae_recon_iou"] = float(np.mean([(((a > .5) & (b > .5)).sum() / max(1, ((a > .5) | (b > .5)).sum()))
                                          for a, b in zip(recon, data["occ"])]))
    r2_p, _ = cross_val_r2(lambda: LatentDragHead(L_p.zn[0].numel()), L_p.zn, y, cfg.head_steps, seed=seed)
    r2_g, _ = cross_val_r2(lambda: LatentDragHead(L_g.zn[0].numel()), L_g.zn, y, cfg.head_steps, seed=seed)
    r2_shuf, _ = cross_val_r2(lambda: LatentDragHead(L_p.zn[0].numel()), L_p.zn, y_shuf, cfg.head_steps, seed=seed)
    head_p, head_g = _head(L_p, y, cfg.head_steps, seed), _head(L_g, y, cfg.head_steps, seed)
    head_shuf = _head(L_p, y_shuf, cfg.head_steps, seed)
    cnn = _cnn(data["occ"], y, cfg.cnn_steps, seed)
    gnn = _gnn(graphs, y, cfg.gnn_steps, seed)
    gnn_shuf = _gnn(graphs, y_shuf, cfg.gnn_steps, seed)
    r2_cnn, _ = cross_val_r2(VoxelDragCNN, torch.as_tensor(data["occ"]), y, cfg.cnn_steps, seed=seed, augment=mirror_yz)
    r2_gnn, _ = cross_val_r2(_new_gnn, graphs, y, cfg.gnn_steps, seed=seed, augment=mirror_meshes(CENTER),
                             prepare=lambda m, g: m.set_reference(g), batch=GNN_BATCH)
    dit_p, _ = _dit(L_p, cfg.dit_steps, seed)
    dit_g, _ = _dit(L_g, cfg.dit_steps, seed)
    log["models_s"] = time.time() - t0

    designs = {}
    g = torch.Generator().manual_seed(seed)
    lo, hi = L_p.zn.min(0).values, L_p.zn.max(0).values
    cem = CEMLatent(head_p, lo, hi, pop=max(16, cfg.n_pool), iters=10)
    designs["CEM-latent"] = L_p.decode(cem.run(torch.zeros_like(lo), torch.ones_like(lo), cfg.k, generator=g))
    starts = L_p.zn[torch.randint(len(L_p.zn), (cfg.n_pool,), generator=g)]
    designs["GD-latent"] = L_p.decode(_top(GDLatent(head_p, lo, hi, steps=100, lr=0.05).run(starts), head_p, cfg.k))
    gp = GPBOVoxelPCA(n_components=16, seed=seed).fit(data["occ"], y)
    designs["GP-BO voxel PCA"], _ = gp.propose(cfg.k)
    designs["GP-BO voxel PCA"] = designs["GP-BO voxel PCA"] * space.envelope_mask
    designs["unguided diffusion"] = L_p.decode(_diffusion(dit_p, head_p, 0.0, cfg.n_pool, cfg.k, seed,
                                                          cfg.infer_steps))
    designs["3DID guided"] = L_p.decode(_diffusion(dit_p, head_p, cfg.guidance, cfg.n_pool, cfg.k, seed,
                                                   cfg.infer_steps))
    designs["3DID full"], topo = _refine_all(designs["3DID guided"], gnn, space, cfg)
    designs["3DID full (voxel-CNN refine)"], topo_cnn = _refine_all(designs["3DID guided"], cnn, space, cfg)
    designs["control: guided + shuffled-label GNN refine"], _ = _refine_all(designs["3DID guided"], gnn_shuf, space,
                                                                           cfg)
    guided_g = L_g.decode(_diffusion(dit_g, head_g, cfg.guidance, cfg.n_pool, cfg.k, seed, cfg.infer_steps))
    designs["3DID full (geometry-only VAE)"], _ = _refine_all(guided_g, gnn, space, cfg)
    guided_s = L_p.decode(_diffusion(dit_p, head_shuf, cfg.guidance, cfg.n_pool, cfg.k, seed, cfg.infer_steps))
    designs["control: shuffled-drag 3DID"], _ = _refine_all(guided_s, gnn_shuf, space, cfg)
    log["design_s"] = time.time() - t0

    res = {}
    for name, occs in progress(list(designs.items()), desc=f"Sim-Drag seed {seed}"):
        cdv, valid, inside = _evaluate(occs, solver, space, cache)
        res[name] = dict(cdv=cdv, valid=valid, inside=inside, novelty=novelty(occs, data["occ"]),
                         coverage=coverage(occs, data["occ"]))
    log["total_s"] = time.time() - t0
    return designs, res, dict(gnn=topo, cnn=topo_cnn), dict(r2_physics=r2_p, r2_geometry=r2_g, r2_shuffled=r2_shuf,
                                                          r2_gnn=r2_gnn, r2_cnn=r2_cnn)


def _sim(r):
    """Mean Sim-Drag of a method; any design without a drag (empty or diverged) makes it inf (fails every test)."""
    c = r["cdv"]
    return float(np.mean(c)) if np.all(np.isfinite(c)) else float("inf")


# ---------------------------------------------------------------- figures
def _figures(designs, res, data, pressure_body, out: Path):
    from matplotlib.figure import Figure

    fig_dir = out / "figures"
    fig_dir.mkdir(parents=True, exist_ok=True)
    names = list(designs)
    fig = Figure(figsize=(2.4 * len(names), 4.4))
    for i, name in enumerate(names):
        c = res[name]["cdv"]
        j = int(np.nanargmin(c)) if np.isfinite(c).any() else 0
        occ = designs[name][j]
        for row, axis, lab in ((0, 1, "side (x-z)"), (1, 2, "top (x-y)")):
            ax = fig.add_subplot(2, len(names), row * len(names) + i + 1)
            ax.imshow(occ.max(axis=axis).T, origin="lower", cmap="Greys", vmin=0, vmax=1)
            ax.set_xticks([]), ax.set_yticks([])
            if row == 0:
                ax.set_title(f"{name}\nC_DV {c[j]:.3f}", fontsize=7)
            if i == 0:
                ax.set_ylabel(lab, fontsize=7)
    fig.tight_layout()
    fig.savefig(fig_dir / "best_designs.png", dpi=80)

    fig = Figure(figsize=(8, 4))
    ax = fig.add_subplot(1, 1, 1)
    finite = [v for v in data["cdv"] if np.isfinite(v)]
    bins = np.linspace(min(finite) * 0.8, max(finite) * 1.1, 30)
    ax.hist(data["cdv"], bins=bins, alpha=0.4, color="grey", label="training bodies")
    for name in names:
        c = res[name]["cdv"]
        ax.hist(c[np.isfinite(c)], bins=bins, histtype="step", lw=1.5, label=name)
    ax.set_xlabel("Sim-Drag C_DV (real solver)"), ax.set_ylabel("count"), ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(fig_dir / "drag_histograms.png", dpi=80)

    fig = Figure(figsize=(8, 3.5))
    xyz, p = pressure_body
    for i, (a, b, lab) in enumerate(((0, 2, "side x-z"), (0, 1, "top x-y"))):
        ax = fig.add_subplot(1, 2, i + 1)
        sc = ax.scatter(xyz[:, a], xyz[:, b], c=p, s=4, cmap="coolwarm")
        ax.set_aspect("equal"), ax.set_title(f"surface pressure, training body 0 ({lab})", fontsize=8)
    fig.colorbar(sc, ax=fig.axes, shrink=0.8, label="p (standardised)")
    fig.savefig(fig_dir / "surface_pressure.png", dpi=80)


@register("inverse3d")
def run(scale: Scale, seed: int, out: Path, cache_dir: Path | None = None) -> Outcome:
    cfg = _config(scale)
    out = Path(out)
    t_start = time.time()
    claims = [
        Claim("c1_solver", "the in-package Navier-Stokes solver gives physical drag (stand-in for the paper's CFD)",
              criterion="sphere C_D(Re 50) within 30% of 1.54; prolate < sphere < cube (equal volume) on two grids; "
                        "Spearman >= 0.9 between two grids over random bodies; drift < 1%",
              paper_value="OpenFOAM RANS on DrivAerNet++ (not available)", kind="check"),
        Claim("c2_sim_drag", "3DID's designs have lower re-simulated drag than every baseline",
              criterion="mean Sim-Drag of 3DID-full <= 0.95 x best of {CEM-latent, GD-latent, GP-BO voxel PCA, "
                        "unguided diffusion}, every seed below the best baseline, all designs valid and inside",
              paper_value="Sim-Drag 0.3536 vs best baseline 0.4161 (-15.0%; '13.6%' in the summary)",
              kind="headline"),
        Claim("c3_ablation", "guidance then refinement each lower Sim-Drag; refinement raises novelty, lowers "
              "coverage, keeps topology",
              criterion="Sim-Drag unguided > guided > full; novelty(full) > novelty(guided); coverage(full) < "
                        "coverage(guided); 100% of FFD meshes watertight, Euler unchanged, det J > 0",
              paper_value="0.3944 -> 0.3766 -> 0.3536; novelty 0.920 -> 1.171, coverage 0.695 -> 0.430",
              kind="supporting"),
        Claim("c4_physics_branch", "the physics branch of the PG-VAE helps",
              criterion="latent drag-surrogate R^2 (5-fold) PG-VAE >= geometry-only + 0.05 and lower final Sim-Drag",
              paper_value="Sim-Drag PG-VAE 0.3536 vs geometry-only triplane 0.4066", kind="supporting"),
        Claim("c5_mesh_surrogate", "FFD refinement against the paper's MeshGraphNet surrogate lowers the real drag "
              "(compared with the voxel-CNN stand-in)",
              criterion="mean Sim-Drag of the GNN-refined designs <= 0.99 x the same guided designs, every refined "
                        "mesh watertight; the shuffled-label GNN (control) must not reach 0.99",
              paper_value="guided 0.3766 -> guided + refine 0.3536 (-6.1%)", kind="supporting"),
    ]
    solver = BrinkmanSpectralNS(grid=cfg.grid, steps=cfg.steps)
    space = DesignSpace(solver.grid, solver.h)
    # solved shapes go to the runner's cache folder (<run>/inverse3d/cache: shared by the seeds of a run, kept
    # when a run is killed); NEURIPS25_INVERSE3D_CACHE names a folder that outlives runs; called without the
    # runner, the output folder holds them
    cache = SolveCache(os.environ.get("NEURIPS25_INVERSE3D_CACHE") or cache_dir or out / "cache")
    data_seed = 1234  # the data set is shared by every seed (and cached)
    data = build_dataset(cfg.n_shapes, solver, space, cache, data_seed, n_points=cfg.n_points, n_occ=cfg.n_occ,
                         progress=progress)
    graphs = _graphs(data["occ"], space)  # the training bodies' meshes, for the mesh GNN
    t_data = time.time() - t_start
    bodies = CarBodyFamily(seed=data_seed).samples(cfg.n_shapes)[: cfg.n_rank]
    sv = solver_validity(cfg, cache, data, bodies)

    ok1 = (abs(sv["sphere_cd"] / CD_SPHERE_RE50 - 1) <= 0.30 and all(sv["ranking"].values())
           and sv["spearman"] >= 0.9 and sv["max_drift"] < 0.01)
    ctrl1 = abs(sv["control_weak_penalisation_cd"] / CD_SPHERE_RE50 - 1) <= 0.30
    claims[0].judge(bool(ok1) and not ctrl1, sv, summary=(
        f"sphere C_D {sv['sphere_cd']:.2f} vs 1.54 ({sv['sphere_cd'] / CD_SPHERE_RE50 - 1:+.0%}; needs within 30%), "
        f"ranking {sv['ranking']}, Spearman {sv['spearman']:.2f} (>= 0.9), drift {sv['max_drift']:.2%} (< 1%); "
        f"control (weak penalisation) C_D {sv['control_weak_penalisation_cd']:.2f}"),
        note=f"grids {cfg.grid} ({cfg.steps} steps) and {cfg.coarse_grid} ({cfg.coarse_steps} steps); "
             f"Spearman over {cfg.n_rank} car bodies")

    seeds = [seed + i for i in range(cfg.n_seeds)]
    per_seed, logs, last = {}, {}, None
    for s in seeds:
        logs[s] = {}
        designs, res, topo, r2 = run_seed(s, cfg, data, graphs, solver, space, cache, logs[s])
        per_seed[s] = dict(res=res, topo=topo, r2=r2)
        last = designs, res

    methods = list(per_seed[seeds[0]]["res"])
    sim = {m: [_sim(per_seed[s]["res"][m]) for s in seeds] for m in methods}
    mean = {m: float(np.mean(v)) for m, v in sim.items()}
    allc = {m: np.concatenate([per_seed[s]["res"][m]["cdv"] for s in seeds]) for m in methods}
    ci = {m: bootstrap_ci(c[np.isfinite(c)], seed=seed) if np.isfinite(c).sum() > 1 else (math.nan, math.nan)
          for m, c in allc.items()}
    nov = {m: float(np.mean([per_seed[s]["res"][m]["novelty"].mean() for s in seeds])) for m in methods}
    cov = {m: float(np.mean([per_seed[s]["res"][m]["coverage"] for s in seeds])) for m in methods}
    valid = {m: float(np.mean([per_seed[s]["res"][m]["valid"].mean() for s in seeds])) for m in methods}
    inside = {m: float(np.mean([per_seed[s]["res"][m]["inside"].mean() for s in seeds])) for m in methods}

    best_base = min(BASELINES, key=lambda m: mean[m])
    full, ctrl = "3DID full", "control: shuffled-drag 3DID"

    def beats(m):
        per = all(sim[m][i] < sim[best_base_s][i] for i, best_base_s in enumerate(
            [min(BASELINES, key=lambda b: sim[b][j]) for j in range(len(seeds))]))
        return mean[m] <= 0.95 * mean[best_base] and per

    ok2 = beats(full) and valid[full] == 1.0 and inside[full] == 1.0
    gap = 1 - mean[full] / mean[best_base]
    claims[1].judge(ok2 and not beats(ctrl), dict(mean_sim_drag=mean, ci95=ci, per_seed=sim, valid=valid,
                                                  inside=inside, best_baseline=best_base, reduction=gap,
                                                  control_reduction=1 - mean[ctrl] / mean[best_base]),
                    summary=(f"3DID-full C_DV {mean[full]:.3f} vs best baseline {best_base} {mean[best_base]:.3f}: "
                             f"{abs(gap):.1%} {'below' if gap >= 0 else 'above'} (needs >= 5% below), valid "
                             f"{valid[full]:.0%}; control (shuffled drag) "
                             f"{mean[ctrl]:.3f} ({1 - mean[ctrl] / mean[best_base]:+.1%})"),
                    note=f"{len(seeds)} seed(s), top {cfg.k} of {cfg.n_pool} designs per method, {cfg.n_shapes} "
                         f"training bodies")

    topo = [t for s in seeds for t in per_seed[s]["topo"]["gnn"]]
    topo_ok = all(t["watertight_before"] and t["watertight_after"] and t["euler_before"] == t["euler_after"]
                  and t["jacobian_min"] > 0 for t in topo)
    ug, gd = "unguided diffusion", "3DID guided"
    mono = mean[ug] > mean[gd] > mean[full]
    ok3 = mono and nov[full] > nov[gd] and cov[full] < cov[gd] and topo_ok
    claims[2].judge(ok3, dict(sim_drag={m: mean[m] for m in (ug, gd, full)}, novelty=nov, coverage=cov,
                              topology=topo, topology_ok=topo_ok),
                    summary=(f"Sim-Drag {mean[ug]:.3f} -> {mean[gd]:.3f} -> {mean[full]:.3f} (must fall), novelty "
                             f"{nov[gd]:.3f} -> {nov[full]:.3f} (must rise), coverage {cov[gd]:.3f} -> {cov[full]:.3f} "
                             f"(must fall), FFD topology kept {sum(1 for t in topo if t['watertight_after'] and t['euler_before'] == t['euler_after'])}/{len(topo)}; "  # noqa: E501
                             f"control chain (shuffled drag) ends at {mean[ctrl]:.3f}"))

    r2p = float(np.mean([per_seed[s]["r2"]["r2_physics"] for s in seeds]))
    r2g = float(np.mean([per_seed[s]["r2"]["r2_geometry"] for s in seeds]))
    r2s = float(np.mean([per_seed[s]["r2"]["r2_shuffled"] for s in seeds]))
    geo = "3DID full (geometry-only VAE)"
    ok4 = r2p >= r2g + 0.05 and mean[full] < mean[geo]
    claims[3].judge(ok4, dict(r2_physics=r2p, r2_geometry=r2g, r2_shuffled_control=r2s, sim_drag_physics=mean[full],
                              sim_drag_geometry=mean[geo]),
                    summary=(f"R^2 PG-VAE {r2p:.3f} vs geometry-only {r2g:.3f} (needs +0.05), Sim-Drag "
                             f"{mean[full]:.3f} vs {mean[geo]:.3f} (needs lower); control (shuffled labels) "
                             f"R^2 {r2s:.3f}"))

    cnn_full, gctrl = "3DID full (voxel-CNN refine)", "control: guided + shuffled-label GNN refine"
    topo_c = [t for s in seeds for t in per_seed[s]["topo"]["cnn"]]
    r2n = float(np.mean([per_seed[s]["r2"]["r2_gnn"] for s in seeds]))
    r2c = float(np.mean([per_seed[s]["r2"]["r2_cnn"] for s in seeds]))
    water = all(t["watertight_after"] for t in topo)
    ok5 = mean[full] <= 0.99 * mean[gd] and water
    ctrl5 = mean[gctrl] <= 0.99 * mean[gd]
    ratio = {m: mean[m] / mean[gd] for m in (full, cnn_full, gctrl)}
    claims[4].judge(ok5 and not ctrl5, dict(
        sim_drag={m: mean[m] for m in (gd, full, cnn_full, gctrl)}, ratio_to_guided=ratio, r2_gnn=r2n, r2_cnn=r2c,
        watertight_gnn=water, watertight_cnn=all(t["watertight_after"] for t in topo_c),
        predicted_gnn=[(t["predicted_before"], t["predicted_after"]) for t in topo],
        predicted_cnn=[(t["predicted_before"], t["predicted_after"]) for t in topo_c]),
        summary=(f"GNN refine {mean[gd]:.3f} -> {mean[full]:.3f} (x{ratio[full]:.3f}; needs <= 0.99), voxel CNN "
                 f"-> {mean[cnn_full]:.3f} (x{ratio[cnn_full]:.3f}); 5-fold R^2 GNN {r2n:.3f} vs CNN {r2c:.3f}; "
                 f"control (shuffled-label GNN) x{ratio[gctrl]:.3f}"))

    designs, res = last
    xyz = data["p_phy"][0][:, :3]
    _figures(designs, res, data, (xyz, data["p_phy"][0][:, 3]), out)
    j = int(np.nanargmin(res[full]["cdv"])) if np.isfinite(res[full]["cdv"]).any() else 0
    try:
        mesh = occupancy_to_mesh(largest_component(designs[full][j]), space.h)
        mesh.vertices = mesh.vertices + space.crop_lo - space.h / 2
        export_mesh(mesh, out / "designs" / "3did_full_best.stl")
    except ValueError:
        pass
    metrics = dict(config=dataclasses.asdict(cfg), sim_drag_mean=mean, sim_drag_per_seed=sim, ci95=ci,
                   novelty=nov, coverage=cov, valid=valid, inside=inside, paper_table_from_summary=PAPER_TABLE,
                   train_cdv=dict(mean=float(np.mean(data["cdv"])), min=float(np.min(data["cdv"])),
                                  converged=float(np.mean(data["converged"]))),
                   timings=dict(dataset_s=t_data, total_s=time.time() - t_start, per_seed=logs),
                   cache=dict(hits=cache.hits, misses=cache.misses))
    return Outcome(claims, metrics=metrics, notes=(
        "Reconstructed stand-in for DrivAerNet++ / OpenFOAM: a parametric car-body family at Re 50 in an in-package "
        "pseudo-spectral Brinkman solver; objective = volumetric drag coefficient C_DV inside a fixed envelope. "
        "The paper's table comes from a third-party summary. "
        f"scale={scale}: grid {cfg.grid}, {cfg.n_shapes} bodies, {len(seeds)} seed(s), top {cfg.k} of {cfg.n_pool}."))
