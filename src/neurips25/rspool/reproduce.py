"""Reproduction of RS-Pool's claims: exactness, clean accuracy, robustness to structure attacks and
a check that the robustness is not gradient masking.

Data: three generated graph-classification sets (BA-2Motifs, 2-vs-3 planted communities, ER-vs-BA
"IMDB-like"), stand-ins for the paper's TUDatasets, which cannot be downloaded here. Model: the
paper's 2-layer GCN (hidden 32, dropout 0.5, Adam 1e-3, batch 32, best-validation epoch) with
sum / mean / max / RS-Pool readouts (RS-Pool: K = 2, alpha = 20 as in the paper's PGD script).
Attacks on the correctly classified test graphs, budget = 30% of each graph's edges (+1).
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import numpy as np
import torch

from neurips25.repro import Claim, Outcome, Scale, progress, register
from neurips25.rspool import attacks as atk
from neurips25.rspool.data import GraphSet, ba_2motifs, er_vs_ba, sbm_communities
from neurips25.rspool.functional import rs_pool, rs_pool_dense
from neurips25.rspool.models import GCN, POOLINGS, DenseGCN
from neurips25.rspool.training import predict, train_classifier

BASELINES = ("sum", "mean", "max")
DATASETS = {"ba_2motifs": ba_2motifs, "sbm_communities": sbm_communities, "er_vs_ba": er_vs_ba}


@dataclasses.dataclass(frozen=True)
class Config:
    """Every knob of the experiment; smoke / quick / paper are three instances."""

    datasets: tuple = ("ba_2motifs", "sbm_communities", "er_vs_ba")
    num_graphs: int = 300
    num_seeds: int = 5
    epochs: int = 50
    hidden: int = 32
    alpha: float = 20.0
    num_iterations: int = 2
    pgd_steps: int = 100
    pgd_samples: int = 20
    budget: float = 0.3
    sweep: tuple = (0.05, 0.1, 0.2, 0.3)
    random_queries: int = 20
    genetic_population: int = 30
    genetic_generations: int = 10
    prbcd_graphs: int = 10
    prbcd_epochs: int = 40
    prbcd_seeds: int = 2


SCALES = {
    Scale.SMOKE: Config(datasets=("ba_2motifs",), num_graphs=60, num_seeds=1, epochs=15, pgd_steps=10,
                        pgd_samples=5, sweep=(0.1, 0.3), random_queries=5, genetic_population=10,
                        genetic_generations=3, prbcd_graphs=2, prbcd_epochs=5, prbcd_seeds=1),
    Scale.QUICK: Config(),
    Scale.PAPER: Config(num_graphs=600, epochs=101, genetic_population=100, genetic_generations=30,
                        prbcd_graphs=50, prbcd_epochs=125, prbcd_seeds=5),
}


def exactness(seed: int) -> dict:
    """Claim 1: K = 50 power steps vs a dense SVD (sign fixed nonnegative), and batched vs per-graph."""
    g = torch.Generator().manual_seed(seed)
    sizes = torch.randint(3, 41, (64,), generator=g)
    x = torch.rand(int(sizes.sum()), 16, generator=g, dtype=torch.float64)
    batch = torch.repeat_interleave(torch.arange(64), sizes)
    out = rs_pool(x, batch, num_iterations=50, alpha=20.0)
    err_svd, err_loop = 0.0, 0.0
    for k in range(64):
        h = x[batch == k]
        _, s, vh = torch.linalg.svd(h, full_matrices=False)
        v1 = vh[0] * torch.sign(vh[0].sum())
        err_svd = max(err_svd, float((out[k] - s[0] * v1 / 20.0).abs().max()))
        single = rs_pool_dense(h, num_iterations=50, alpha=20.0)
        err_loop = max(err_loop, float((out[k] - single).abs().max()))
    return {"max_abs_err_vs_svd": err_svd, "max_abs_err_batched_vs_loop": err_loop, "graphs": 64}


def split(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Random 70/10/20 train/validation/test split (the paper's random split)."""
    p = rng.permutation(n)
    a, b = int(0.7 * n), int(0.8 * n)
    return p[:a], p[a:b], p[b:]


def attacked_acc(n_test: int, n_correct: int, success: torch.Tensor | np.ndarray) -> float:
    """Official metric: (#correct clean - #successful attacks) / #test graphs."""
    return (n_correct - int(np.asarray(success).sum())) / n_test


def run_model(ds: GraphSet, tr, va, te, pooling: str, readout_scale: float, cfg: Config, seed: int,
              full: bool) -> dict:
    """Train one model and attack its correctly classified test graphs; return accuracies."""
    torch.manual_seed(seed)
    model = DenseGCN(ds.num_features, ds.num_classes, cfg.hidden, pooling, num_iterations=cfg.num_iterations,
                     alpha=cfg.alpha, readout_scale=readout_scale)
    t0 = time.perf_counter()
    train_classifier(model, ds.subset(tr), ds.subset(va), epochs=cfg.epochs, seed=seed)
    test = ds.subset(te)
    correct = np.nonzero(predict(model, test).numpy() == test.ys)[0]
    n, c = len(test), len(correct)
    res = {"clean": c / n, "n_test": n, "n_attacked": c}
    if c == 0:
        return res | {"pgd": {str(b): 0.0 for b in cfg.sweep}, "cw": 0.0, "random": 0.0, "genetic": 0.0}
    x, adj, mask, y = test.dense(correct)
    gen = torch.Generator().manual_seed(seed)
    res["pgd"] = {}
    for b in cfg.sweep if full else (cfg.budget,):
        r = atk.pgd_structure_attack(model, x, adj, y, mask, budget_frac=b, steps=cfg.pgd_steps,
                                     samples=cfg.pgd_samples, generator=gen)
        res["pgd"][str(b)] = attacked_acc(n, c, r.success)
    if full:
        r = atk.pgd_structure_attack(model, x, adj, y, mask, budget_frac=cfg.budget, steps=cfg.pgd_steps,
                                     samples=cfg.pgd_samples, loss="cw", generator=gen)
        res["cw"] = attacked_acc(n, c, r.success)
        r = atk.random_flip_attack(model, x, adj, y, mask, cfg.budget, cfg.random_queries, generator=gen)
        res["random"] = attacked_acc(n, c, r.success)
        r = atk.genetic_attack(model, x, adj, y, mask, cfg.budget, cfg.genetic_population,
                               cfg.genetic_generations, generator=gen)
        res["genetic"] = attacked_acc(n, c, r.success)
        res["model"] = model
        res["test_correct"] = test.subset(correct)
    res["seconds"] = time.perf_counter() - t0
    return res


def prbcd_rate(model: DenseGCN, graphs: GraphSet, cfg: Config, seed: int) -> float:
    """Success rate of PyG's PRBCDAttack on up to ``prbcd_graphs`` correctly classified graphs."""
    sparse = GCN(graphs.num_features, model.lin.out_features, cfg.hidden, model.pooling,
                 num_iterations=cfg.num_iterations, alpha=cfg.alpha)
    sparse.load_state_dict(model.state_dict())
    sparse.eval()
    k = min(cfg.prbcd_graphs, len(graphs))
    budgets = atk.edge_budget(graphs.dense(range(k))[1], cfg.budget)
    wins = [atk.prbcd_attack(sparse, d.x, d.edge_index, int(d.y), int(bud), epochs=cfg.prbcd_epochs,
                             seed=seed)[0]
            for d, bud in zip(graphs.to_pyg(range(k)), budgets)]
    return float(np.mean(wins)) if wins else 0.0


def beats(table: dict, key: str, margin: float) -> dict:
    """Per dataset: does RS-Pool's mean beat each baseline's mean by >= margin (in accuracy)?"""
    out = {}
    for name, by_pool in table.items():
        rs = by_pool["rs"][key]
        out[name] = all(rs - by_pool[b][key] >= margin - 1e-12 for b in BASELINES)
    return out


@register("rspool")
def run(scale: Scale, seed: int, out: Path) -> Outcome:
    # Thousands of tiny tensor ops: the runner's one-thread cap (repro.thread_cap) is ~10x faster than two.
    return _run(SCALES[Scale.parse(scale)], seed, Path(out))


def _run(cfg: Config, seed: int, out: Path) -> Outcome:
    c1 = Claim("c1_exact", statement="RS-Pool (power iteration from the sum direction) computes sigma_1 "
                                     "v_1 / "
               "alpha of each graph's embedding matrix; batched over graphs without padding error",
               paper_value="method definition (no figure)",
               criterion="K=50 output equals dense-SVD sigma_1 v_1/alpha (sign fixed) within 1e-4, and the "
               "batched output equals a per-graph computation within 1e-6, on 64 random nonnegative graphs",
                   kind="check")
    c2 = Claim("c2_clean", statement="RS-Pool keeps competitive clean accuracy",
               paper_value="abstract: 'maintaining competitive clean accuracy' (table values not read)",
               criterion="on each dataset, RS-Pool's mean clean test accuracy over seeds >= best of "
               "sum/mean/max minus 3 points", kind="supporting")
    c3 = Claim("c3_robust", statement="RS-Pool is more robust than sum/mean/max pooling under PGD structure "
               "attacks", paper_value="abstract: 'better robustness than the considered pooling methods' "
               "(table values not read)",
               criterion="PGD, budget 30% of each graph's edges: RS-Pool's attacked accuracy (mean over "
                         "seeds) "
               "exceeds each of sum/mean/max by >= 5 points on >= 2 of 3 datasets", kind="headline")
    c4 = Claim("c4_no_masking", statement="The robustness ordering is not gradient masking",
               paper_value="project check (not in the paper)",
               criterion="under each of random flips, genetic, PyG PRBCDAttack, CW-margin PGD and "
                         "CE-PGD with "
               "sum/mean/max scaled by 1/alpha, RS-Pool's attacked accuracy >= each baseline's on >= 2 of 3 "
               "datasets; inconclusive when c3 is not reproduced (no gain to explain)", kind="supporting")

    ex = exactness(seed)
    c1.judge(ex["max_abs_err_vs_svd"] <= 1e-4 and ex["max_abs_err_batched_vs_loop"] <= 1e-6, measured=ex)

    seeds = [seed + k for k in range(cfg.num_seeds)]
    raw: dict = {}
    t_start = time.perf_counter()
    jobs = [(d, s) for d in cfg.datasets for s in seeds]
    for name, s in progress(jobs, desc="rspool runs", total=len(jobs)):
        ds = DATASETS[name](cfg.num_graphs, seed=seed)
        tr, va, te = split(len(ds), np.random.default_rng(s))
        for pooling in POOLINGS:
            res = run_model(ds, tr, va, te, pooling, 1.0, cfg, s, full=True)
            model, graphs = res.pop("model", None), res.pop("test_correct", None)
            if s - seed < cfg.prbcd_seeds and model is not None:
                rate = prbcd_rate(model, graphs, cfg, s)
                res["prbcd"] = res["clean"] * (1 - rate)  # attacked accuracy estimated on the subset
            raw.setdefault(name, {}).setdefault(pooling, []).append(res)
            print(f"{name} seed={s} {pooling}: " + ", ".join(f"{k}={v}" for k, v in res.items()), flush=True)
        for pooling in BASELINES:  # control: baselines at RS-Pool's output scale 1/alpha
            res = run_model(ds, tr, va, te, pooling, 1.0 / cfg.alpha, cfg, s, full=False)
            raw[name].setdefault(pooling + "/alpha", []).append(res)
            print(f"{name} seed={s} {pooling}/alpha: clean={res['clean']}, pgd={res['pgd']}", flush=True)

    # mean over seeds per dataset and pooling
    table: dict = {}
    for name, by_pool in raw.items():
        table[name] = {}
        for pooling, runs in by_pool.items():
            row = {"clean": float(np.mean([r["clean"] for r in runs]))}
            for b in runs[0]["pgd"]:
                row[f"pgd@{b}"] = float(np.mean([r["pgd"][b] for r in runs]))
            for key in ("cw", "random", "genetic", "prbcd"):
                vals = [r[key] for r in runs if key in r]
                if vals:
                    row[key] = float(np.mean(vals))
            row["rel_drop@pgd"] = (row["clean"] - row[f"pgd@{cfg.budget}"]) / max(row["clean"], 1e-12)
            table[name][pooling] = row
    n_data = len(table)
    need = min(2, n_data)

    clean_ok = {n: t["rs"]["clean"] >= max(t[b]["clean"] for b in BASELINES) - 0.03 for n, t in table.items()}
    c2.judge(all(clean_ok.values()),
             measured={n: {p: round(t[p]["clean"], 4) for p in POOLINGS} for n, t in table.items()},
             note=_scale_note(cfg))

    key = f"pgd@{cfg.budget}"
    robust = beats(table, key, 0.05)
    c3.judge(sum(robust.values()) >= need,
             measured={"attacked_acc": {n: {p: round(t[p][key], 4) for p in POOLINGS}
                                        for n, t in table.items()},
                       "rs_beats_all_by_5pts": robust,
                       "relative_drop": {n: {p: round(t[p]["rel_drop@pgd"], 3) for p in POOLINGS}
                                         for n, t in table.items()}},
             note=_scale_note(cfg) + " Relative drop reported, not part of the criterion.")

    checks = {}
    for k in ("random", "genetic", "prbcd", "cw"):
        if all(k in t["rs"] for t in table.values()):
            checks[k] = beats(table, k, 0.0)
    scaled = {}
    for n, t in table.items():
        scaled[n] = all(t["rs"][key] >= t[b + "/alpha"][key] - 1e-12 for b in BASELINES)
    checks["pgd_scaled_baselines"] = scaled
    holds = {k: sum(v.values()) >= need for k, v in checks.items()}
    verdict = None if c3.verdict.value != "reproduced" else all(holds.values())
    c4.judge(verdict, measured={"ordering_holds": holds,
                                "attacked_acc": {n: {k: {p: round(t[p][k], 4) for p in t if k in t[p]}
                                                     for k in ("random", "genetic", "prbcd", "cw", key)}
                                                 for n, t in table.items()}},
             note=f"PRBCD on up to {cfg.prbcd_graphs} graphs x {cfg.prbcd_seeds} seed(s), {cfg.prbcd_epochs} "
                  "epochs (attacked accuracy = clean x (1 - success rate)). " + _scale_note(cfg))

    _figure(table, cfg, out)
    return Outcome([c1, c2, c3, c4],
                   metrics={"table": table, "config": dataclasses.asdict(cfg), "seeds": seeds,
                            "experiment_seconds": time.perf_counter() - t_start},
                   notes="Generated stand-ins for the paper's TUDatasets; see docs/rspool.md.")


def _scale_note(cfg: Config) -> str:
    return (f"{len(cfg.datasets)} generated dataset(s) x {cfg.num_seeds} seed(s), {cfg.num_graphs} "
            f"graphs each "
            f"(20% test), {cfg.epochs} epochs (paper: 101), PGD {cfg.pgd_steps} steps.")


def _figure(table: dict, cfg: Config, out: Path) -> None:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(4.2 * len(table), 3.4))
    axes = fig.subplots(1, len(table), squeeze=False)[0]
    budgets = [str(b) for b in cfg.sweep]
    for ax, (name, t) in zip(axes, table.items()):
        for pooling in POOLINGS:
            ys = [t[pooling]["clean"]] + [t[pooling][f"pgd@{b}"] for b in budgets]
            ax.plot([0.0] + [float(b) for b in budgets], ys, marker="o", label=pooling)
        ax.set_title(name)
        ax.set_xlabel("budget (fraction of edges)")
        ax.set_ylabel("attacked accuracy (PGD)")
        ax.set_ylim(0, 1)
        ax.grid(alpha=0.3)
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(Path(out) / "figures" / "attacked_accuracy_vs_budget.png", dpi=110)
