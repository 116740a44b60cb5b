"""Reproduction of 3DID's claims (Hao, Zhu & Yang, NeurIPS 2025) with a real 3D flow solver in the loop.

Verdicts v3 (issue #52): every claim has a :class:`~neurips25.repro.Criterion` fixed here before any run, its
controls are measured in the same run and judged by the machinery with the same criterion. Verdicts v4 (issue #58):
the claims are declared in :func:`declare_claims`, every control's figures come through ``measure``, and every
empirical claim is a stand-in: generated car bodies at Re 50 in this package's own solver, not DrivAerNet++ /
OpenFOAM.

1. (check) The solver against known flows: sphere C_D within 5% of Schiller-Naumann at Re 20, 50 and 100 on
   ``sphere_cells`` cells a diameter (>= 12 at quick / paper), each a steady state (a warm-started
   continuation as long again moves C_D by < 1%); the same on a grid with fewer cells a diameter within 3%
   (grid convergence); the design-grid car bodies steady (a continuation moves C_DV by < 1%); equal-volume
   prolate < sphere < cube on the design and the second grid; Spearman >= 0.9 between the two grids over car
   bodies. Control (negative): the penalisation 1e5x too weak must miss the sphere band.
2. (headline) 3DID-full Sim-Drag >= 5% below the best of CEM-latent, GD-latent, GP-BO (one EI ranking of
   random voxel-PCA codes) and unguided diffusion; no seed above it; all designs valid and inside the envelope.
   Negative controls: the best-k training bodies (returning the data's best) and 3DID with drag surrogates
   trained on shuffled labels. Precondition: the unguided prior's mean Sim-Drag sits at or below the training
   labels' median (percentile <= 0.5); below that, guidance has nothing to work from and the verdict is
   inconclusive.
3. (supporting) Sim-Drag falls unguided -> guided -> guided + refine; refinement raises novelty and lowers
   coverage (K-NN coverage, no k/N cap); every FFD mesh keeps watertightness, Euler characteristic, det J > 0.
   Negative control: the same chain with shuffled-label surrogates.
4. (supporting) The physics branch helps: latent drag-head R^2 (5-fold) of the PG-VAE >= the geometry-only
   VAE's + 0.05 and a lower final Sim-Drag (undefined when either arm has a design without a drag).
   Negative control: the shuffled-label head / shuffled-drag pipeline in the PG-VAE's place.
5. (supporting) Mesh-surrogate refinement lowers the real drag of the same designs, paired per design:
   geometric-mean ratio after / before <= 0.99 with the 95% bootstrap upper end < 1, every refined mesh
   watertight. Negative control: a GNN trained on shuffled labels. Positive control: the same refiner
   following the solver's own gradient (:class:`~neurips25.inverse3d.oracle.SolverGradientOracle`).
"""

from __future__ import annotations

import dataclasses
import math
import os
import time
from pathlib import Path

import numpy as np
import torch
from scipy.stats import gmean, spearmanr

from neurips25.inverse3d.baselines import CEMLatent, GDLatent, GPBOVoxelPCA
from neurips25.inverse3d.cfd import BrinkmanSpectralNS, SolverDivergedError, resample_flow
from neurips25.inverse3d.data import DesignSpace, SolveCache, build_dataset
from neurips25.inverse3d.diffusion import LatentDiT, ObjectiveGuidedSampler, make_scheduler, train_dit
from neurips25.inverse3d.ffd import FFDLattice
from neurips25.inverse3d.mesh import export_mesh, largest_component, mesh_validity, occupancy_to_mesh, solid_mask
from neurips25.inverse3d.meshgnn import MeshDragGNN, MeshGraph, mirror_meshes
from neurips25.inverse3d.metrics import bootstrap_ci, knn_coverage, novelty
from neurips25.inverse3d.oracle import SolverGradientOracle
from neurips25.inverse3d.pgvae import PGVAE
from neurips25.inverse3d.refine import TopologyPreservingRefiner
from neurips25.inverse3d.shapes import CENTER, ENVELOPE, CarBodyFamily, box_sdf, ellipsoid_sdf, sphere_sdf, voxelize
from neurips25.inverse3d.surrogate import LatentDragHead, VoxelDragCNN, cross_val_r2, fit_regressor, mirror_yz
from neurips25.repro import (
    Claim,
    Control,
    Criterion,
    Figures,
    Outcome,
    Precondition,
    Scale,
    measure,
    progress,
    register,
)
from neurips25.repro.store import atomic_write_text


def schiller_naumann(re):
    """Sphere drag correlation ``24 / Re (1 + 0.15 Re^0.687)`` (valid for Re < 800)."""
    return 24 / re * (1 + 0.15 * re**0.687)


#: Schiller-Naumann sphere drag at Re 50
CD_SPHERE_RE50 = schiller_naumann(50)
SPHERE_RES = (20.0, 50.0, 100.0)
#: the paper's Sim-Drag table (from a third-party summary, not the paper's text)
PAPER_TABLE = {"GP on voxels": 0.4254, "CEM + TripNet latent": 0.4161, "Backprop + TripNet": 0.4170,
               "3DID without TopoRefine": 0.3766, "3DID full": 0.3536, "unguided diffusion (ablation)": 0.3944}
GNN_BATCH = 8  # meshes per GNN training step (the paper trains its MeshGraphNet with batch 8)
BASELINES = ("CEM-latent", "GD-latent", "GP-BO voxel PCA", "unguided diffusion")
BEST_K = "best-k training bodies"
FULL, GUIDED, UNGUIDED = "3DID full", "3DID guided", "unguided diffusion"
SHUF, SHUF_GUIDED = "control: shuffled-drag 3DID", "control: shuffled-drag 3DID guided"
GEO, CNN_FULL = "3DID full (geometry-only VAE)", "3DID full (voxel-CNN refine)"
SHUF_REFINE, ORACLE_REFINE = "control: guided + shuffled-label GNN refine", "control: guided + solver-gradient refine"

# criteria (fixed before the runs; issue #52)
SPHERE_TOL, GRID_TOL, STEADY_TOL, RHO_MIN = 0.05, 0.03, 0.01, 0.9
PHIFLOW_TOL = 0.25  # c1_phiflow (issue #61): PhiFlow at 6 cells a diameter against ours and Schiller-Naumann
C2_MARGIN, C5_RATIO = 0.05, 0.99


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
    cfl: float = 0.25          # 350 steps = 14.6 convective times on the design grid: steady to < 1%
    sphere_cells: int = 16     # c1: cells a diameter of the sphere grid (box 8 x 4 x 4 diameters)
    sphere_cells_coarse: int = 12
    sphere_time: float = 4.0   # convective times of the fine solve after the warm start (and of its continuation)
    n_steady: int = 3          # c1: car bodies re-solved by a continuation
    lam_smooth: float = 1.0
    lam_vol: float = 0.5
    oracle_steps: int = 10     # c5 positive control: refine steps with the solver's gradient
    oracle_unroll: int = 10
    phiflow_steps: int = 40    # c1_phiflow: PhiFlow on the design grid, 40 steps at CFL 1 = 6.7 convective times
    phiflow_cfl: float = 1.0


def _config(scale: Scale) -> Config:
    return scale.pick(
        smoke=Config(grid=(24, 12, 12), coarse_grid=(32, 16, 16), steps=60, coarse_steps=60, n_shapes=8, n_rank=4,
                     n_seeds=1, n_pool=4, k=2, vae_steps=15, dit_steps=15, head_steps=30, cnn_steps=15,
                     refine_steps=5, guidance=2.0, n_points=64, n_occ=256, infer_steps=5, n_query=256, gnn_steps=10,
                     sphere_cells=4, sphere_cells_coarse=3, sphere_time=0.5, n_steady=1, oracle_steps=2,
                     oracle_unroll=3, phiflow_steps=2),
        quick=Config(grid=(48, 24, 24), coarse_grid=(64, 32, 32), steps=350, coarse_steps=400, n_shapes=48,
                     n_rank=12, n_seeds=1, n_pool=24, k=6, vae_steps=300, dit_steps=600, head_steps=300,
                     cnn_steps=200, refine_steps=40, guidance=2.0, n_points=256, n_occ=2048),
        # one seed a run (as quick): `--seed S` runs seed S only, and `--seeds 0,1` (the runner) combines seeds;
        # with n_seeds=2 here `--seed 1` ran seeds 1 and 2, and one paper run cost two seeds (~60 CPU-min)
        paper=Config(grid=(48, 24, 24), coarse_grid=(64, 32, 32), steps=350, coarse_steps=400, n_shapes=160,
                     n_rank=20, n_seeds=1, n_pool=64, k=16, vae_steps=2000, dit_steps=4000, head_steps=600,
                     cnn_steps=600, refine_steps=120, guidance=2.0, gnn_steps=600),
    )


# ---------------------------------------------------------------- claim 1: the solver
def _reference_bodies(center, r=0.5):
    a = r / 2 ** (1 / 3)  # equal-volume 2:1 prolate spheroid
    side_half = r * (math.pi / 6) ** (1 / 3)  # equal-volume cube
    return {"prolate": ellipsoid_sdf(center, (2 * a, a, a)), "sphere": sphere_sdf(center, r),
            "cube": box_sdf(center, (side_half,) * 3)}


def _solid(sdf, ns):
    """The level-set solid (``sdf <= 0``) on a solver's grid: the convention of labels and designs."""
    return solid_mask(voxelize(sdf, ns.grid, ns.h))


def sphere_drag(re, cells, time_fine, cfl=0.25, continuation=True, eta_ratio=1e3):
    """Sphere (D = 1, box 8 x 4 x 4) C_D at ``re`` on ``cells`` cells a diameter, run to a steady state.

    A 6-cells-a-diameter solve of 12 convective times gives the start flow (Fourier-resampled); the fine grid
    then runs ``time_fine`` convective times, and (``continuation``) as long again from its own end flow.
    Returns ``(cd, cd_continued or None)``.
    """
    area = 0.5 * math.pi * 0.25
    c0 = min(6, cells)
    coarse = BrinkmanSpectralNS(grid=(8 * c0, 4 * c0, 4 * c0), re=re, cfl=cfl, eta_ratio=eta_ratio,
                                steps=max(10, int(round(12 / (cfl / c0)))))
    sph = sphere_sdf(CENTER, 0.5)
    r0 = coarse.solve(_solid(sph, coarse))
    fine = BrinkmanSpectralNS(grid=(8 * cells, 4 * cells, 4 * cells), re=re, cfl=cfl, eta_ratio=eta_ratio,
                              steps=max(10, int(round(time_fine / (cfl / cells)))))
    occ = _solid(sph, fine)
    r1 = fine.solve(occ, u0=resample_flow(r0.velocity, fine.grid))
    cd2 = None
    if continuation:
        cd2 = fine.solve(occ, u0=r1.velocity, return_fields=False).drag / area
    return r1.drag / area, cd2


def solver_validity(cfg, cache, data, space_bodies):
    """Everything c1 measures (a dict of figures and a dict of details)."""
    sph = {}
    for re in SPHERE_RES:
        cd, cd_cont = sphere_drag(re, cfg.sphere_cells, cfg.sphere_time, cfl=cfg.cfl)
        cd_c, _ = sphere_drag(re, cfg.sphere_cells_coarse, cfg.sphere_time, cfl=cfg.cfl, continuation=False)
        sph[re] = dict(cd=cd, cd_continued=cd_cont, cd_coarse=cd_c, reference=schiller_naumann(re))
    err = {re: abs(v["cd"] / v["reference"] - 1) for re, v in sph.items()}
    grid_change = {re: abs(v["cd"] / v["cd_coarse"] - 1) for re, v in sph.items()}
    steady = {f"sphere Re {re:g}": abs(v["cd_continued"] / v["cd"] - 1) for re, v in sph.items()}
    # the design grid's car bodies: the production solve against a continuation as long again
    ns = BrinkmanSpectralNS(grid=cfg.grid, steps=cfg.steps, cfl=cfg.cfl)
    for i, b in enumerate(space_bodies[: cfg.n_steady]):
        occ = _solid(b.sdf, ns)
        r1 = ns.solve(occ)
        r2 = ns.solve(occ, u0=r1.velocity, return_fields=False)
        steady[f"car body {i}"] = abs(r2.cdv / r1.cdv - 1)
    grids = {"design": (cfg.grid, cfg.steps), "second": (cfg.coarse_grid, cfg.coarse_steps)}
    drag = {}
    for name, (g, st) in grids.items():
        s = BrinkmanSpectralNS(grid=g, steps=st, cfl=cfg.cfl)
        drag[name] = {body: cache.solve(s, _solid(sdf, s)).drag for body, sdf in _reference_bodies(CENTER).items()}
    ranking = {n: bool(d["prolate"] < d["sphere"] < d["cube"]) for n, d in drag.items()}
    ns2 = BrinkmanSpectralNS(grid=cfg.coarse_grid, steps=cfg.coarse_steps, cfl=cfg.cfl)
    cdv2 = np.array([cache.solve(ns2, _solid(b.sdf, ns2)).cdv for b in space_bodies])
    rho = float(spearmanr(data["cdv"][: len(space_bodies)], cdv2).statistic)
    # control: a penalisation 1e5x too weak (dt / eta = 0.01) lets fluid through the body (Re 50)
    weak_cd, _ = sphere_drag(50.0, cfg.sphere_cells_coarse, cfg.sphere_time, cfl=cfg.cfl, continuation=False,
                             eta_ratio=1e-2)
    figures = dict(sphere_err_max=max(err.values()), grid_change_max=max(grid_change.values()),
                   steady_change_max=max(steady.values()), ranking_ok=all(ranking.values()), spearman=rho)
    control = dict(figures, sphere_err_max=abs(weak_cd / CD_SPHERE_RE50 - 1))
    details = dict(sphere={f"{re:g}": v for re, v in sph.items()}, steady_change=steady, drag=drag, ranking=ranking,
                   weak_penalisation_cd=weak_cd, sphere_cells=(cfg.sphere_cells, cfg.sphere_cells_coarse))
    return figures, control, details


def _c1_rule(m):
    return bool(m["sphere_err_max"] <= SPHERE_TOL and m["grid_change_max"] <= GRID_TOL
                and m["steady_change_max"] < STEADY_TOL and m["ranking_ok"] and m["spearman"] >= RHO_MIN)


def _c1_measured(cfg, cache, data, space_bodies) -> dict:
    """:func:`solver_validity` as one figures dict (for ``measure``): the method's, the control's, the details."""
    figures, control, details = solver_validity(cfg, cache, data, space_bodies)
    return {"figures": figures, "control": control, "details": details}


def phiflow_check(cfg, cache):
    """c1_phiflow: PhiFlow (an independent solver) against this package's solver and Schiller-Naumann.

    The same voxel bodies on the design grid: the sphere at Re 20, 50 and 100, the equal-volume prolate and cube
    at Re 50. Returns figures, the control's figures (each sphere judged at the neighbouring Reynolds number) and
    a per-solve table.
    """
    from neurips25.inverse3d.phiflow_solver import PhiFlowNS  # noqa: PLC0415 (phiflow is imported on use)

    area = 0.5 * math.pi * 0.25
    solves = [("sphere", re) for re in SPHERE_RES] + [("prolate", 50.0), ("cube", 50.0)]
    bodies = _reference_bodies(CENTER)
    rows = {}
    for body, re in solves:
        ours = BrinkmanSpectralNS(grid=cfg.grid, re=re, steps=cfg.steps, cfl=cfg.cfl)
        occ = _solid(bodies[body], ours)
        t0 = time.process_time()
        phi = PhiFlowNS(grid=cfg.grid, re=re, steps=cfg.phiflow_steps, cfl=cfg.phiflow_cfl).solve(occ)
        cpu = time.process_time() - t0
        r = cache.solve(ours, occ)
        rows[f"{body} Re {re:g}"] = dict(body=body, re=re, phiflow_drag=phi.drag, ours_drag=r.drag,
                                         ratio=phi.drag / r.drag, phiflow_pressure_share=phi.drag_pressure / phi.drag,
                                         phiflow_drift=phi.drift, phiflow_cpu_s=cpu, voxel_volume=phi.volume,
                                         phiflow_cd=phi.drag / area if body == "sphere" else None,
                                         ours_cd=r.drag / area if body == "sphere" else None,
                                         schiller_naumann=schiller_naumann(re) if body == "sphere" else None)

    def figures(shift):
        # shift = 1: every sphere judged at the next Reynolds number of SPHERE_RES (the control)
        nxt = {re: SPHERE_RES[(i + shift) % len(SPHERE_RES)] for i, re in enumerate(SPHERE_RES)}
        sph = {re: rows[f"sphere Re {re:g}"] for re in SPHERE_RES}
        sn_err = max(abs(sph[re]["phiflow_cd"] / schiller_naumann(nxt[re]) - 1) for re in SPHERE_RES)
        agree = [abs(sph[re]["phiflow_drag"] / sph[nxt[re]]["ours_drag"] - 1) for re in SPHERE_RES]
        agree += [abs(rows[f"{b} Re 50"]["ratio"] - 1) for b in ("prolate", "cube")]
        d = {b: rows[f"{b} Re 50"]["phiflow_drag"] for b in ("prolate", "sphere", "cube")}
        return dict(agreement_max=max(agree), sphere_sn_err_max=sn_err,
                    ranking_ok=bool(d["prolate"] < d["sphere"] < d["cube"]),
                    steady=bool(all(v["phiflow_drift"] < 0.02 for v in rows.values())))

    return {"figures": figures(0), "control": figures(1), "details": dict(
        table=rows, grid=cfg.grid, steps=cfg.phiflow_steps, cfl=cfg.phiflow_cfl,
        drag_formula="F_x = sum m u_x h^3 / dt (momentum PhiFlow's obstacle mask removes) + (h^2 / dt) sum "
                     "(p_up - p_down) over the body's x-faces; mean over the last 20% of steps")}


def _c1_phiflow_rule(m):
    return bool(m["agreement_max"] <= PHIFLOW_TOL and m["sphere_sn_err_max"] <= PHIFLOW_TOL and m["ranking_ok"]
                and m["steady"])


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


def _refine_all(occs, surrogate, space, cfg, steps=None, j_scale=None, reset=None):
    """FFD-refine each design against ``surrogate`` (voxel CNN, mesh GNN or the solver oracle); designs without
    a mesh stay as they are. Laplacian smoothness, objective divided by the label spread (``j_scale``)."""
    lat = FFDLattice(space.crop_lo, space.crop_hi, shape=cfg.lattice)
    ref = TopologyPreservingRefiner(surrogate, lat, space.crop_shape, space.envelope_mask, lam_smooth=cfg.lam_smooth,
                                    lam_vol=cfg.lam_vol, lam_env=5.0, steps=steps or cfg.refine_steps, lr=0.02,
                                    smoothness="laplacian", j_scale=j_scale)
    out, topo = [], []
    for occ in occs:
        if reset is not None:
            reset()
        try:
            m0 = _crop_mesh(occ, space)
        except ValueError:  # nothing above the 0.5 level: no mesh to refine
            out.append(np.asarray(occ, dtype=np.float32))
            topo.append(dict(jacobian_min=1.0, predicted_before=None, predicted_after=None, watertight_before=False,
                             watertight_after=False, euler_before=None, euler_after=None))
            continue
        try:
            r = ref.refine(occ, mesh=m0)
        except (SolverDivergedError, ValueError) as err:  # the oracle's solve of a broken design
            out.append(np.asarray(occ, dtype=np.float32))
            topo.append(dict(jacobian_min=1.0, predicted_before=None, predicted_after=None, watertight_before=False,
                             watertight_after=False, euler_before=None, euler_after=None, error=str(err)))
            continue
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


def _slower(solver):
    """The same solver at 0.4x the time step and 2.5x the steps (the same convective time): the fallback for a
    design whose flow diverges at the production CFL (thin or fragmented bodies accelerate the flow locally)."""
    return BrinkmanSpectralNS(grid=solver.grid, re=solver.re, extent=solver.extent, cfl=solver.cfl * 0.4,
                              steps=int(round(solver.steps * 2.5)), sponge=solver.sponge,
                              sponge_rate=solver.sponge_rate, eta_ratio=solver.eta_ratio, tol=solver.tol)


def _evaluate(occs, solver, space, cache, reasons=None):
    """Sim-Drag of each design (largest piece, real solver), validity and envelope check.

    ``reasons`` (a list), when given, receives one word per design: ``ok``, ``slower`` (solved by the
    smaller-time-step fallback after diverging), ``empty`` (nothing at the 0.5 level), ``diverged``, or the
    solver's refusal.
    """
    cdv, valid, inside = [], [], []
    reasons = [] if reasons is None else reasons
    for occ in occs:
        if not (occ >= 0.5).any():
            cdv.append(float("nan"))
            valid.append(False)
            inside.append(True)
            reasons.append("empty")
            continue
        v = mesh_validity(occupancy_to_mesh(occ, space.h))
        valid.append(bool(v.valid))
        inside.append(bool(((occ >= 0.5) <= (space.envelope_mask > 0)).all()))  # the solid the solver sees
        body = space.solver_body(occ)  # the marching-cubes-level solid, for every method and the labels alike
        try:
            cdv.append(cache.solve(solver, body).cdv)
            reasons.append("ok")
        except SolverDivergedError:
            try:
                cdv.append(cache.solve(_slower(solver), body).cdv)
                reasons.append("slower")
            except SolverDivergedError:
                cdv.append(float("nan"))
                valid[-1] = False
                reasons.append("diverged")
        except ValueError as err:
            cdv.append(float("nan"))
            valid[-1] = False
            reasons.append(f"refused: {err}")
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
    designs["GP-BO voxel PCA"], _ = gp.propose(cfg.k)  # one EI ranking of random PCA codes (not a BO loop)
    designs["GP-BO voxel PCA"] = designs["GP-BO voxel PCA"] * space.envelope_mask
    designs[UNGUIDED] = L_p.decode(_diffusion(dit_p, head_p, 0.0, cfg.n_pool, cfg.k, seed,
                                                          cfg.infer_steps))
    designs[GUIDED] = L_p.decode(_diffusion(dit_p, head_p, cfg.guidance, cfg.n_pool, cfg.k, seed,
                                                   cfg.infer_steps))
    designs[FULL], topo = _refine_all(designs[GUIDED], gnn, space, cfg)
    designs[CNN_FULL], topo_cnn = _refine_all(designs[GUIDED], cnn, space, cfg)
    designs[SHUF_REFINE], _ = _refine_all(designs[GUIDED], gnn_shuf, space, cfg)
    oracle = SolverGradientOracle(solver, space, unroll=cfg.oracle_unroll, average=min(5, cfg.oracle_unroll))
    designs[ORACLE_REFINE], topo_oracle = _refine_all(designs[GUIDED], oracle, space, cfg, steps=cfg.oracle_steps,
                                                      j_scale=float(np.std(y)), reset=oracle.reset)
    guided_g = L_g.decode(_diffusion(dit_g, head_g, cfg.guidance, cfg.n_pool, cfg.k, seed, cfg.infer_steps))
    designs[GEO], _ = _refine_all(guided_g, gnn, space, cfg)
    designs[SHUF_GUIDED] = L_p.decode(_diffusion(dit_p, head_shuf, cfg.guidance, cfg.n_pool, cfg.k, seed,
                                                 cfg.infer_steps))
    designs[SHUF], topo_shuf = _refine_all(designs[SHUF_GUIDED], gnn_shuf, space, cfg)
    designs[BEST_K] = data["occ"][np.argsort(y)[: cfg.k]]
    log["design_s"] = time.time() - t0

    res = {}
    for name, occs in progress(list(designs.items()), desc=f"Sim-Drag seed {seed}"):
        why = []
        cdv, valid, inside = _evaluate(occs, solver, space, cache, reasons=why)
        res[name] = dict(cdv=cdv, valid=valid, inside=inside, reasons=why, novelty=novelty(occs, data["occ"]),
                         coverage=knn_coverage(occs, data["occ"], k=min(5, len(data["occ"]) - 1)))
    log["total_s"] = time.time() - t0
    return designs, res, dict(gnn=topo, cnn=topo_cnn, oracle=topo_oracle, shuffled=topo_shuf), dict(
        r2_physics=r2_p, r2_geometry=r2_g, r2_shuffled=r2_shuf, r2_gnn=r2_gnn, r2_cnn=r2_cnn,
        vae_recon_iou=log["vae_recon_iou"])


def _sim(r):
    """Mean Sim-Drag of a method over its designs; NaN (undefined) when any design has no drag."""
    c = r["cdv"]
    return float(np.mean(c)) if len(c) and np.all(np.isfinite(c)) else float("nan")


def _finite_mean(r):
    c = r["cdv"][np.isfinite(r["cdv"])]
    return float(np.mean(c)) if len(c) else float("nan")


def _none(x):
    return None if x is None or not np.isfinite(x) else float(x)


def _paired(before, after, seed):
    """Paired per-design refinement effect: geometric-mean ratio after / before and its 95% bootstrap interval."""
    ok = np.isfinite(before) & np.isfinite(after) & (before > 0) & (after > 0)
    lr = np.log(after[ok] / before[ok])
    if len(lr) < 2:
        return dict(paired_ratio=None, ci_low=None, ci_high=None, n_pairs=int(len(lr)))
    lo, hi = bootstrap_ci(lr, seed=seed)
    return dict(paired_ratio=float(np.exp(lr.mean())), ci_low=float(np.exp(lo)), ci_high=float(np.exp(hi)),
                n_pairs=int(len(lr)))


def _topology_ok(topo):
    return bool(topo) and all(t["watertight_before"] and t["watertight_after"] and t["euler_before"] == t["euler_after"]
                              and t["jacobian_min"] > 0 for t in topo)


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


def _c2_rule(m):
    if m["valid"] < 1 or m["inside"] < 1:
        return False  # a design without a drag, broken or outside the envelope fails the headline
    return bool(m["reduction"] >= C2_MARGIN and m["worst_seed_reduction"] > 0)


STAND_IN = ("a parametric car-body family (generated) at Re 50 in this package's pseudo-spectral Brinkman solver on a "
            "small grid, with a PG-VAE / latent DiT / FFD pipeline trained here, standing in for DrivAerNet++ meshes "
            "and OpenFOAM RANS: a verdict says whether 3DID's pipeline lowers the drag of a small laminar design "
            "problem, not whether it beats the paper's baselines on car aerodynamics")


def _seed_run(seed, cfg, data, graphs, solver, space, cache, log) -> dict:
    """:func:`run_seed` as one figures dict (for ``measure``): every method and control of one seed."""
    designs, res, topo, r2 = run_seed(seed, cfg, data, graphs, solver, space, cache, log)
    return {"designs": designs, "res": res, "topo": topo, "r2": r2}


def declare_claims(scale: Scale = Scale.QUICK):
    """The five claims with their criteria and controls (issue #52)."""
    cfg = _config(Scale.parse(scale))
    where = dict(instance="stand-in", instance_note=STAND_IN)
    c1 = Claim("c1_solver", "the in-package Navier-Stokes solver gives physical drag (stand-in for the paper's CFD)",
               criterion=Criterion(
                   f"sphere C_D within {SPHERE_TOL:.0%} of Schiller-Naumann at Re 20, 50, 100 on {cfg.sphere_cells} "
                   f"cells a diameter; within {GRID_TOL:.0%} of the {cfg.sphere_cells_coarse}-cell grid; steady "
                   f"(a continuation as long again moves sphere C_D and {cfg.n_steady} car bodies' C_DV by < "
                   f"{STEADY_TOL:.0%}); prolate < sphere < cube on two grids; Spearman >= {RHO_MIN} between two "
                   "grids over car bodies", "sphere_err_max", _c1_rule, f"<= {SPHERE_TOL:g}"),
               paper_value="OpenFOAM RANS on DrivAerNet++ (not available)", kind="check",
               controls=[Control.negative("weak_penalisation", "the same solver with the body's penalisation 1e5x "
                                          "too weak (dt / eta = 0.01): fluid passes through the sphere")])
    c1p = Claim("c1_phiflow", "an independent solver (PhiFlow 3.4) confirms the in-package solver's drag",
                criterion=Criterion(
                    f"on the design grid {cfg.grid} with the same voxel bodies, PhiFlow's drag within "
                    f"{PHIFLOW_TOL:.0%} of ours (sphere at Re 20, 50, 100; prolate and cube at Re 50), its sphere "
                    f"C_D within {PHIFLOW_TOL:.0%} of Schiller-Naumann at Re 20, 50, 100, prolate < sphere < cube "
                    "at Re 50, every PhiFlow run steady (drift < 2% over its last 20% of steps)",
                    "agreement_max", _c1_phiflow_rule, f"<= {PHIFLOW_TOL:g}"),
                paper_value="OpenFOAM RANS on DrivAerNet++ (not available)", kind="check",
                controls=[Control.negative("re_mislabelled", "the same PhiFlow spheres judged at the neighbouring "
                                           "Reynolds number (20 -> 50 -> 100 -> 20), against Schiller-Naumann and "
                                           "our solver there: the comparison must resolve a 2-2.5x change in Re")])
    c2 = Claim("c2_sim_drag", "3DID's designs have lower re-simulated drag than every baseline",
               criterion=Criterion(
                   f"mean Sim-Drag of 3DID-full <= {1 - C2_MARGIN:g} x the best of CEM-latent, GD-latent, GP-BO voxel "
                   "PCA, unguided diffusion; no seed above its best baseline; all designs valid and inside",
                   "reduction", _c2_rule, f">= {C2_MARGIN:g}"),
               paper_value="Sim-Drag 0.3536 vs best baseline 0.4161 (-15.0%; '13.6%' in the summary)", kind="headline",
               controls=[Control.negative("best_k_training", f"the {cfg.k} training bodies with the lowest labels "
                                          "(a method that returns the data's best)"),
                         Control.negative("shuffled_drag",
                                          "3DID with every drag surrogate trained on shuffled labels")],
               no_positive_control="no design method is known to beat the best training bodies by 5% on this "
                                   "instance; the precondition checks that the prior leaves guidance room",
               preconditions=[Precondition("the unguided prior's mean Sim-Drag is at or below the training labels' "
                                           "median (percentile <= 0.5)",
                                           lambda m: m["prior_percentile"] <= 0.5)], **where)

    def c3_rule(m):
        return bool(all(m[k] > 0 for k in ("drop_guidance", "drop_refine", "novelty_rise", "coverage_fall"))
                    and m["topology_ok"])

    c3 = Claim("c3_ablation", "guidance then refinement each lower Sim-Drag; refinement raises novelty, lowers "
               "coverage, keeps topology",
               criterion=Criterion("Sim-Drag unguided > guided > full; novelty(full) > novelty(guided); K-NN coverage"
                                   "(full) < coverage(guided); every FFD mesh watertight, Euler unchanged, det J > 0",
                                   "drop_refine", c3_rule, "> 0 (and the rest)"),
               paper_value="0.3944 -> 0.3766 -> 0.3536; novelty 0.920 -> 1.171, coverage 0.695 -> 0.430",
               kind="supporting",
               controls=[Control.negative("shuffled_drag", "the same chain with shuffled-label head and GNN")],
               no_positive_control="no pipeline is known to show the whole pattern on this instance", **where)
    c4 = Claim("c4_physics_branch", "the physics branch of the PG-VAE helps",
               criterion=Criterion("latent drag-head R^2 (5-fold) PG-VAE >= geometry-only + 0.05 and a lower final "
                                   "Sim-Drag (ratio < 1)", "r2_gain",
                                   lambda m: bool(m["r2_gain"] >= 0.05 and m["sim_ratio"] < 1), ">= 0.05"),
               paper_value="Sim-Drag PG-VAE 0.3536 vs geometry-only triplane 0.4066", kind="supporting",
               controls=[Control.negative("shuffled_labels", "the PG-VAE arm with shuffled drag labels (head R^2 and "
                                          "the shuffled-drag pipeline's Sim-Drag) against the geometry-only arm")],
               no_positive_control="no arm with a known physics advantage exists on this instance", **where)
    c5 = Claim("c5_mesh_surrogate", "FFD refinement against the paper's MeshGraphNet surrogate lowers the real drag",
               criterion=Criterion(f"paired per design: geometric-mean Sim-Drag ratio refined / guided <= {C5_RATIO} "
                                   "with the 95% bootstrap upper end < 1 (>= 3 pairs), every refined mesh watertight",
                                   "paired_ratio",
                                   lambda m: None if m["n_pairs"] < 3
                                   else bool(m["paired_ratio"] <= C5_RATIO and m["ci_high"] < 1
                                             and m["watertight"]), f"<= {C5_RATIO}"),
               paper_value="guided 0.3766 -> guided + refine 0.3536 (-6.1%)", kind="supporting",
               controls=[Control.negative("shuffled_gnn", "the same designs refined by a GNN trained on shuffled "
                                          "labels"),
                         Control.positive("solver_gradient", "the same refiner following the solver's own gradient "
                                          f"({cfg.oracle_steps} steps, {cfg.oracle_unroll}-step unroll)")], **where)
    return [c1, c1p, c2, c3, c4, c5]


@register("inverse3d")
def run(scale: Scale, seed: int, out: Path, cache_dir: Path | None = None) -> Outcome:
    cfg = _config(scale)
    out = Path(out)
    t_start = time.time()
    c1, c1p, c2, c3, c4, c5 = claims = declare_claims(scale)
    solver = BrinkmanSpectralNS(grid=cfg.grid, steps=cfg.steps, cfl=cfg.cfl)
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
    t0 = time.time()
    c1m = measure(_c1_measured, cfg, cache, data, bodies)
    t_c1 = time.time() - t0
    c1.record(c1m.raw()["figures"], {"weak_penalisation": Figures(c1m.raw()["control"], c1m.provenance)},
              details=c1m.raw()["details"],
              note=f"design grid {cfg.grid} ({cfg.steps} steps, CFL {cfg.cfl}), second grid {cfg.coarse_grid}; "
                   f"Spearman over {cfg.n_rank} car bodies; bodies are level-set solids (sdf <= 0), the designs' "
                   "convention")

    t0 = time.time()
    c1pm = measure(phiflow_check, cfg, cache)
    t_c1p = time.time() - t0
    c1p.record(c1pm.raw()["figures"], {"re_mislabelled": Figures(c1pm.raw()["control"], c1pm.provenance)},
               details=c1pm.raw()["details"],
               note=f"PhiFlow 3.4 (MAC grid, semi-Lagrangian, CG projection, inflow / outflow box) on {cfg.grid}, "
                    f"{cfg.phiflow_steps} steps at CFL {cfg.phiflow_cfl}; ours {cfg.steps} steps at CFL {cfg.cfl}")

    seeds = [seed + i for i in range(cfg.n_seeds)]
    per_seed, logs, last, provs = {}, {}, None, []
    for s in seeds:
        logs[s] = {}
        sm = measure(_seed_run, s, cfg, data, graphs, solver, space, cache, logs[s])
        provs.append(sm.provenance)
        per_seed[s] = sm.raw()
        last = per_seed[s]["designs"], per_seed[s]["res"]

    methods = list(per_seed[seeds[0]]["res"])
    sim = {m: [_sim(per_seed[s]["res"][m]) for s in seeds] for m in methods}
    simf = {m: [_finite_mean(per_seed[s]["res"][m]) for s in seeds] for m in methods}
    mean = {m: float(np.mean(v)) for m, v in sim.items()}
    mean_f = {m: float(np.mean(v)) for m, v in simf.items()}
    allc = {m: np.concatenate([per_seed[s]["res"][m]["cdv"] for s in seeds]) for m in methods}
    ci = {m: bootstrap_ci(c[np.isfinite(c)], seed=seed) if np.isfinite(c).sum() > 1 else (math.nan, math.nan)
          for m, c in allc.items()}
    nov = {m: float(np.mean([per_seed[s]["res"][m]["novelty"].mean() for s in seeds])) for m in methods}
    cov = {m: float(np.mean([per_seed[s]["res"][m]["coverage"] for s in seeds])) for m in methods}
    valid = {m: float(np.mean([per_seed[s]["res"][m]["valid"].mean() for s in seeds])) for m in methods}
    inside = {m: float(np.mean([per_seed[s]["res"][m]["inside"].mean() for s in seeds])) for m in methods}
    y = data["cdv"]
    prior_pct = float(np.mean(y < mean_f[UNGUIDED])) if np.isfinite(mean_f[UNGUIDED]) else None

    # ---- c2: the comparators' Sim-Drag over their designs with a drag (a failed baseline design is not a win)
    best_base = min(BASELINES, key=lambda m: mean_f[m] if np.isfinite(mean_f[m]) else np.inf)
    best_per_seed = [min(simf[b][i] for b in BASELINES) for i in range(len(seeds))]

    def c2_figs(m):
        red = 1 - mean[m] / mean_f[best_base]
        worst = min(1 - sim[m][i] / best_per_seed[i] for i in range(len(seeds)))
        return dict(reduction=_none(red), worst_seed_reduction=_none(worst), valid=valid[m], inside=inside[m],
                    sim_drag=_none(mean[m]), best_baseline=best_base, best_baseline_sim_drag=mean_f[best_base],
                    prior_percentile=prior_pct)

    m2 = c2_figs(FULL)
    prov = "; ".join(provs)
    c2.record(m2, {"best_k_training": Figures(c2_figs(BEST_K), prov), "shuffled_drag": Figures(c2_figs(SHUF), prov)},
              details=dict(mean_sim_drag=mean, mean_sim_drag_finite=mean_f, ci95=ci, per_seed=sim, valid=valid,
                           inside=inside, train_labels=dict(median=float(np.median(y)), min=float(np.min(y)),
                                                            best_k_mean=mean[BEST_K])),
              summary=(f"best baseline {best_base}; unguided prior at the {_pct(prior_pct)} percentile of the "
                       "training labels (precondition <= 50%)"),
              note=f"{len(seeds)} seed(s), top {cfg.k} of {cfg.n_pool} designs per method, {cfg.n_shapes} training "
                   "bodies")

    # ---- c3: the ablation chain
    topo = [t for s in seeds for t in per_seed[s]["topo"]["gnn"]]
    topo_s = [t for s in seeds for t in per_seed[s]["topo"]["shuffled"]]

    def c3_figs(guided, full, tp):
        return dict(drop_guidance=_none(1 - mean[guided] / mean[UNGUIDED]),
                    drop_refine=_none(1 - mean[full] / mean[guided]), novelty_rise=nov[full] - nov[guided],
                    coverage_fall=cov[guided] - cov[full], topology_ok=_topology_ok(tp),
                    sim_drag=[_none(mean[UNGUIDED]), _none(mean[guided]), _none(mean[full])])

    m3 = c3_figs(GUIDED, FULL, topo)
    c3.record(m3, {"shuffled_drag": Figures(c3_figs(SHUF_GUIDED, SHUF, topo_s), prov)},
              details=dict(novelty=nov, coverage=cov, topology=topo))

    # ---- c4: the physics branch
    r2 = {k: float(np.mean([per_seed[s]["r2"][k] for s in seeds])) for k in per_seed[seeds[0]]["r2"]}

    def ratio(a, b):
        return _none(mean[a] / mean[b]) if np.isfinite(mean[a]) and np.isfinite(mean[b]) else None

    m4 = dict(r2_gain=r2["r2_physics"] - r2["r2_geometry"], sim_ratio=ratio(FULL, GEO))
    c4.record(m4, {"shuffled_labels": Figures(dict(r2_gain=r2["r2_shuffled"] - r2["r2_geometry"],
                                                   sim_ratio=ratio(SHUF, GEO)), prov)},
              details=dict(r2=r2, sim_drag={m: mean[m] for m in (FULL, GEO, SHUF)}))

    # ---- c5: refinement, paired per design
    def c5_figs(m, tp):
        before = np.concatenate([per_seed[s]["res"][GUIDED]["cdv"] for s in seeds])
        after = np.concatenate([per_seed[s]["res"][m]["cdv"] for s in seeds])
        f = _paired(before, after, seed)
        f["watertight"] = bool(tp) and all(t["watertight_after"] for t in tp if t["watertight_before"])
        return f

    topo_o = [t for s in seeds for t in per_seed[s]["topo"]["oracle"]]
    topo_c = [t for s in seeds for t in per_seed[s]["topo"]["cnn"]]
    m5, n5, p5 = c5_figs(FULL, topo), c5_figs(SHUF_REFINE, topo), c5_figs(ORACLE_REFINE, topo_o)
    cnn5 = c5_figs(CNN_FULL, topo_c)
    c5.record(m5, {"shuffled_gnn": Figures(n5, prov), "solver_gradient": Figures(p5, prov)}, details=dict(
        voxel_cnn=cnn5, r2_gnn=r2["r2_gnn"], r2_cnn=r2["r2_cnn"],
        predicted_gnn=[(t["predicted_before"], t["predicted_after"]) for t in topo],
        predicted_oracle=[(t["predicted_before"], t["predicted_after"]) for t in topo_o],
        jacobian_min_gnn=[t["jacobian_min"] for t in topo]))

    designs, res = last
    xyz = data["p_phy"][0][:, :3]
    _figures(designs, res, data, (xyz, data["p_phy"][0][:, 3]), out)
    j = int(np.nanargmin(res[FULL]["cdv"])) if np.isfinite(res[FULL]["cdv"]).any() else 0
    try:
        mesh = occupancy_to_mesh(largest_component(designs[FULL][j]), space.h)
        mesh.vertices = mesh.vertices + space.crop_lo - space.h / 2
        export_mesh(mesh, out / "designs" / "3did_full_best.stl")
    except ValueError:
        pass
    per_design = {str(s): {m: dict(cdv=per_seed[s]["res"][m]["cdv"], valid=per_seed[s]["res"][m]["valid"],
                                   reasons=per_seed[s]["res"][m]["reasons"]) for m in methods} for s in seeds}
    metrics = dict(config=dataclasses.asdict(cfg), per_design=per_design, sim_drag_mean=mean,
                   sim_drag_mean_finite=mean_f,
                   sim_drag_per_seed=sim, ci95=ci, novelty=nov, coverage_knn=cov, valid=valid, inside=inside,
                   prior_percentile=prior_pct, paper_table_from_summary=PAPER_TABLE,
                   train_cdv=dict(mean=float(np.mean(y)), median=float(np.median(y)), min=float(np.min(y)),
                                  converged=float(np.mean(data["converged"]))),
                   timings=dict(dataset_s=t_data, c1_s=t_c1, c1_phiflow_s=t_c1p, total_s=time.time() - t_start,
                                per_seed=logs),
                   cache=dict(hits=cache.hits, misses=cache.misses))
    return Outcome(claims, metrics=metrics, notes=(
        "Reconstructed stand-in for DrivAerNet++ / OpenFOAM: a parametric car-body family at Re 50 in an in-package "
        "pseudo-spectral Brinkman solver; objective = volumetric drag coefficient C_DV inside a fixed envelope; "
        "labels and designs solved as the same level-set solid. The paper's table comes from a third-party summary. "
        f"scale={scale}: grid {cfg.grid}, {cfg.n_shapes} bodies, {len(seeds)} seed(s), top {cfg.k} of {cfg.n_pool}."))


def _pct(x):
    return "undefined" if x is None else f"{x:.0%}"


# ---------------------------------------------------------------- diagnostic: λ / lattice sweep (issue #52)
#: the sweep's grid, fixed before it was run: λ_smooth a decade either side of the reproduction's 1, the
#: reproduction's lattice, an intermediate one and the paper's 20 x 6 x 6; c5's 10 oracle steps and 3x that
SWEEP_LAMBDAS = (0.1, 1.0, 10.0)
SWEEP_LATTICES = ((6, 3, 3), (10, 4, 4), (20, 6, 6))
SWEEP_STEPS = (10, 30)


def _geomean(x):
    x = [v for v in x if v is not None]
    return float(gmean(x)) if x else None


def refine_sweep(scale=Scale.QUICK, bodies=(0, 1, 2, 3), lambdas=SWEEP_LAMBDAS, lattices=SWEEP_LATTICES,
                 steps=SWEEP_STEPS, lr=0.02, data_seed=1234, cache_dir=None, out=None, log=None):
    """λ_smooth x lattice x steps sweep of the FFD refiner on the solver's own gradient (a diagnostic, not a claim).

    The fixed designs are training bodies ``bodies`` of the data set (index into ``CarBodyFamily(data_seed)``),
    i.e. smooth single-piece bodies in the designs' convention. Each is refined at every setting as c5's
    positive control refines the guided designs: :class:`SolverGradientOracle` (``cfg.oracle_unroll`` steps
    back-propagated, warm-started from the body's converged flow), AdamW at ``lr`` for each of ``steps``,
    ``λ_vol = cfg.lam_vol``, ``λ_env = 5``, Laplacian smoothness, ``Ĵ`` divided by the training labels'
    standard deviation. Every refined design is re-solved cold by the solver exactly as designs are judged
    (:func:`_evaluate`) and paired with the unrefined body's Sim-Drag. Control: the same body moved by the
    reversed map (control displacements ``-C``: the same size and smoothness, the other direction); if the
    oracle's gradient carries information the forward move should beat it.

    Returns a dict with ``rows`` (one per body and setting: Sim-Drag before / after / reversed and their
    ratios, the oracle's own value before / after, how far the body moved: max and mean displacement of its
    solid cells in cells, share of solid cells changed, solid-volume ratio, min det J) and ``settings`` (per
    setting: geometric-mean ratios over the bodies and how many fell). ``out`` (a path) receives it as JSON.

    Example (quick grid, 4 bodies x 18 settings; ~8 CPU-minutes)::

        from neurips25.inverse3d.reproduce import refine_sweep
        refine_sweep(out="sweep.json", cache_dir="/path/to/solve-cache")
    """
    import json

    cfg = _config(Scale(scale))
    log = log or (lambda *a: print(*a, flush=True))
    solver = BrinkmanSpectralNS(grid=cfg.grid, steps=cfg.steps, cfl=cfg.cfl)
    space = DesignSpace(solver.grid, solver.h)
    cache = SolveCache(os.environ.get("NEURIPS25_INVERSE3D_CACHE") or cache_dir)
    all_bodies = CarBodyFamily(seed=data_seed).samples(cfg.n_shapes)
    occs = [space.crop(voxelize(b.sdf, solver.grid, solver.h)) for b in all_bodies]
    t0 = time.time()
    y = np.array([cache.solve(solver, space.solver_body(o)).cdv for o in occs])  # the labels (cached at quick)
    j_scale = float(np.std(y))
    log(f"# labels of {len(y)} bodies: std {j_scale:.4f} ({time.time() - t0:.1f} s)")
    oracle = SolverGradientOracle(solver, space, unroll=cfg.oracle_unroll, average=min(5, cfg.oracle_unroll))
    mem = SolveCache(None)
    rows = []
    for b in bodies:
        occ = occs[b]
        t1 = time.process_time()
        base = solver.solve(space.solver_body(occ))  # Sim-Drag of the unrefined body, and the warm flow
        u0 = torch.from_numpy(np.asarray(base.velocity))
        solid0 = space.crop(space.solver_body(occ)) > 0.5
        pts = torch.as_tensor(space.crop_points()[solid0], dtype=torch.float32)
        log(f"# body {b}: Sim-Drag {base.cdv:.4f} (label {y[b]:.4f}), {time.process_time() - t1:.1f} s CPU")
        for n_steps in steps:
            for shape in lattices:
                lat = FFDLattice(space.crop_lo, space.crop_hi, shape=tuple(shape))
                for lam in lambdas:
                    t1 = time.process_time()
                    ref = TopologyPreservingRefiner(oracle, lat, space.crop_shape, space.envelope_mask,
                                                    lam_smooth=lam, lam_vol=cfg.lam_vol, lam_env=5.0,
                                                    steps=int(n_steps), lr=lr, smoothness="laplacian",
                                                    j_scale=j_scale)
                    oracle.u = u0.clone()
                    row = dict(body=int(b), lattice=list(shape), lam_smooth=float(lam), steps=int(n_steps),
                               sim_before=float(base.cdv))
                    try:
                        r = ref.refine(occ)
                    except (SolverDivergedError, ValueError) as err:
                        row.update(error=str(err), cpu_s=time.process_time() - t1)
                        rows.append(row)
                        log(f"  {n_steps} steps, lattice {shape}, lam {lam:g}: refine failed: {err}")
                        continue
                    with torch.no_grad():
                        back = (ref.warp(torch.as_tensor(occ, dtype=torch.float32), -r.control_disp)
                                * ref.mask).numpy()
                    why = []
                    cdv, valid, inside = _evaluate([r.occupancy, back], solver, space, mem, reasons=why)
                    solid1 = (space.crop(space.solver_body(r.occupancy)) > 0.5 if why[0] != "empty"
                              else np.zeros_like(solid0))
                    disp = lat.displacement(pts, r.control_disp).norm(dim=1) / solver.h
                    row.update(sim_after=_none(cdv[0]), ratio=_none(cdv[0] / base.cdv), reason=why[0],
                               sim_reversed=_none(cdv[1]), ratio_reversed=_none(cdv[1] / base.cdv),
                               valid=bool(valid[0]), inside=bool(inside[0]), oracle_before=r.predicted[0],
                               oracle_after=r.predicted[1], jacobian_min=r.jacobian_min,
                               move_max_cells=float(disp.max()), move_mean_cells=float(disp.mean()),
                               changed=float((solid0 ^ solid1).sum() / solid0.sum()),
                               volume_ratio=float(solid1.sum() / solid0.sum()), cpu_s=time.process_time() - t1)
                    rows.append(row)
                    log(f"  {n_steps} steps, lattice {shape}, lam {lam:g}: Sim-Drag {base.cdv:.4f} -> {cdv[0]:.4f} "
                        f"(x{cdv[0] / base.cdv:.4f}; reversed x{cdv[1] / base.cdv:.4f}); oracle "
                        f"{r.predicted[0]:.3f} -> {r.predicted[1]:.3f}; move max {row['move_max_cells']:.2f} mean "
                        f"{row['move_mean_cells']:.2f} cells; changed {row['changed']:.1%}; volume "
                        f"x{row['volume_ratio']:.3f}; det J >= {r.jacobian_min:.3f}; {row['cpu_s']:.1f} s CPU")
    settings = []
    for n_steps in steps:
        for shape in lattices:
            for lam in lambdas:
                rs = [r for r in rows if r["lattice"] == list(shape) and r["lam_smooth"] == float(lam)
                      and r["steps"] == int(n_steps) and "ratio" in r]
                ratios = [r["ratio"] for r in rs if r["ratio"] is not None]
                settings.append(dict(
                    steps=int(n_steps), lattice=list(shape), lam_smooth=float(lam), n_solved=len(ratios),
                    geomean_ratio=_geomean(ratios), n_fell=int(sum(x < 1 for x in ratios)),
                    best_ratio=min(ratios, default=None), worst_ratio=max(ratios, default=None),
                    geomean_ratio_reversed=_geomean([r["ratio_reversed"] for r in rs]),
                    oracle_ratio=_geomean([r["oracle_after"] / r["oracle_before"] for r in rs]),
                    move_max_cells=float(np.mean([r["move_max_cells"] for r in rs])) if rs else None,
                    changed=float(np.mean([r["changed"] for r in rs])) if rs else None,
                    volume_ratio=_geomean([r["volume_ratio"] for r in rs]),
                    jacobian_min=min((r["jacobian_min"] for r in rs), default=None)))
    result = dict(scale=str(Scale(scale)), grid=list(cfg.grid), bodies=list(bodies), steps=list(steps), lr=lr,
                  unroll=cfg.oracle_unroll, lam_vol=cfg.lam_vol, j_scale=j_scale, rows=rows, settings=settings,
                  cpu_s=time.process_time())
    if out is not None:
        atomic_write_text(Path(out), json.dumps(result, indent=1))
    return result
