"""Reproduction of RS-Pool's claims (issue #35 criteria): exactness, clean accuracy, robustness to
structure attacks decided by paired per-seed intervals, and a gradient-masking check judged always.

Data: three generated graph-classification sets (BA-2Motifs, 2-vs-3 planted communities, ER-vs-BA
"IMDB-like"), stand-ins for the paper's TUDatasets, which cannot be downloaded here, and real
molecules (RDKit's bundled NCI set, label = matches a PAINS alert). Every seed draws its own graphs
(its own molecule subsample), split, initialisation and attack randomness, so seeds pool data too.
Model: the paper's 2-layer GCN (hidden 32, dropout 0.5, Adam 1e-3, batch 32, the LAST
best-validation epoch as the official ``>=``) with sum / mean / max / RS-Pool readouts (RS-Pool:
K = 2, alpha = 20 as in the paper's PGD script). Attacks on the correctly classified test graphs,
budget = 30% of each graph's edges (+1).

Criteria (fixed in issue #35 before this run; the paired difference d_s = RS - baseline over seeds s,
its 90% Student-t interval, "lower bound" = the interval's lower end):

- c1 (check): K = 50 equals the dense SVD's sigma_1 v_1 / alpha within 1e-4; batched = per-graph
  within 1e-6.
- c2 (supporting): on every dataset RS-Pool's clean accuracy is within 3 points of the best flat
  readout's (mean paired difference >= -3 points; interval reported). Control: the majority class.
- c3 (headline): under CE-PGD at 30%, the lower 90% bound of d_s is > 0 against each of sum, mean and
  max on >= 2/3 of the datasets (the old 5-point effect size reported beside it). Control: sum
  pooling at RS-Pool's output scale (sum / alpha) judged by the same rule.
- c4 (supporting, judged always): (a) the c3 rule with each model's strongest attack (per graph, the
  union of CE-PGD, CW-PGD, the genetic attack and, on a subset, PyG's PRBCD) in place of CE-PGD, and
  (b) under CE-PGD the lower 90% bound of RS - (baseline / alpha) is > 0 against each of
  sum/alpha, mean/alpha, max/alpha on >= 2/3 of the datasets. Control: a deliberately
  gradient-masked sum model (same weights, no gradient to the adjacency) judged by (a) and (b).

Verdicts (issue 44): each claim declares its Criterion and Controls; the figures of the method and of
every control go to ``Claim.record`` and the machinery judges them with the one criterion. c1's control
is the power iteration cut to one step; c2's the majority class; c3's negative control sum/alpha and
its positive control the gradient-masked sum model under CE-PGD (immune to it: the seeds and intervals
can register a gain); c4's negative control the gradient-masked sum model.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

from neurips25.repro import Claim, Control, Criterion, Outcome, Scale, progress, register
from neurips25.repro.intervals import mean_interval
from neurips25.rspool import attacks as atk
from neurips25.rspool.data import GraphSet, ba_2motifs, er_vs_ba, pains_molecules, sbm_communities
from neurips25.rspool.functional import rs_pool, rs_pool_dense
from neurips25.rspool.models import GCN, POOLINGS, DenseGCN
from neurips25.rspool.training import predict, train_classifier

BASELINES = ("sum", "mean", "max")
GENERATED = {"ba_2motifs": ba_2motifs, "sbm_communities": sbm_communities, "er_vs_ba": er_vs_ba}


@dataclasses.dataclass(frozen=True)
class Config:
    """Every knob of the experiment; smoke / quick / paper are three instances."""

    datasets: tuple = ("ba_2motifs", "sbm_communities", "er_vs_ba", "pains_molecules")
    num_graphs: int = 200
    num_seeds: int = 4
    epochs: int = 40
    keep: str = "last"
    hidden: int = 32
    alpha: float = 20.0
    num_iterations: int = 2
    pgd_steps: int = 100
    pgd_samples: int = 20
    budget: float = 0.3
    sweep: tuple = (0.3,)
    attacks: tuple = ("cw", "genetic")  # besides CE-PGD; "random" (black-box flips) is reported only
    random_queries: int = 20
    genetic_population: int = 30
    genetic_generations: int = 10
    prbcd_graphs: int = 4
    prbcd_epochs: int = 20
    prbcd_seeds: int = 1
    molecules_read: int | None = 3000


SCALES = {
    Scale.SMOKE: Config(datasets=("ba_2motifs", "er_vs_ba"), num_graphs=60, num_seeds=2, epochs=8,
                        pgd_steps=5, pgd_samples=3, sweep=(0.1, 0.3), random_queries=3,
                        genetic_population=6, genetic_generations=2, prbcd_graphs=1, prbcd_epochs=3),
    Scale.QUICK: Config(),
    # paper: the official training recipe on >= 1,000 graphs per generated set (all 462 balanced molecules,
    # first, so a cut run keeps the real data). Issue 35 fitted it to a 60-minute ceiling (a probe put the
    # earlier setting -- budget sweep, random flips, genetic 100 x 30, PRBCD on 50 graphs x 5 seeds -- at
    # ~200 CPU minutes): no sweep or random flips (no criterion uses them), PRBCD (PyG's 125 epochs) on the
    # first 4 attacked graphs of each model on the first seed. Issue 44 restores the genetic attack to
    # 100 x 30 (issue 35 had cut it to quick's 30 x 10): it is the only attack that can break c4's
    # gradient-masked control, which passed (a) on 2/4 datasets at 30 x 10. Every model gets the same attack.
    Scale.PAPER: Config(datasets=("pains_molecules", "ba_2motifs", "sbm_communities", "er_vs_ba"),
                        num_graphs=1000, num_seeds=5, epochs=101, prbcd_epochs=125, molecules_read=None,
                        genetic_population=100, genetic_generations=30),
}


def exactness(seed: int, num_iterations: int = 50) -> dict:
    """c1: K = 50 power steps vs a dense SVD (sign fixed nonnegative), and batched vs per-graph.

    ``num_iterations`` < 50 is c1's control: the power iteration cut short, on the same graphs.
    """
    g = torch.Generator().manual_seed(seed)
    sizes = torch.randint(3, 41, (64,), generator=g)
    x = torch.rand(int(sizes.sum()), 16, generator=g, dtype=torch.float64)
    batch = torch.repeat_interleave(torch.arange(64), sizes)
    out = rs_pool(x, batch, num_iterations=num_iterations, alpha=20.0)
    err_svd, err_loop = 0.0, 0.0
    for k in range(64):
        h = x[batch == k]
        _, s, vh = torch.linalg.svd(h, full_matrices=False)
        v1 = vh[0] * torch.sign(vh[0].sum())
        err_svd = max(err_svd, float((out[k] - s[0] * v1 / 20.0).abs().max()))
        dense = rs_pool_dense(h, num_iterations=num_iterations, alpha=20.0)
        err_loop = max(err_loop, float((out[k] - dense).abs().max()))
    return {"max_abs_err_vs_svd": err_svd, "max_abs_err_batched_vs_loop": err_loop, "graphs": 64}


def load(name: str, cfg: Config, seed: int, cache: dict) -> GraphSet:
    """Dataset ``name`` for one seed: generated afresh, or a seed-dependent molecule subsample."""
    if name in GENERATED:
        return GENERATED[name](cfg.num_graphs, seed=seed)
    if name != "pains_molecules":
        raise ValueError(f"unknown dataset {name!r}")
    if name not in cache:  # parsing + PAINS matching takes seconds: once per run
        cache[name] = pains_molecules(None, max_molecules=cfg.molecules_read, seed=0)
    pool = cache[name]
    rng = np.random.default_rng(seed)
    k = min(cfg.num_graphs // 2, int((pool.ys == 1).sum()), int((pool.ys == 0).sum()))
    pick = np.concatenate([rng.choice(np.nonzero(pool.ys == c)[0], k, replace=False) for c in (0, 1)])
    return pool.subset(rng.permutation(pick))


def split(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Random 70/10/20 train/validation/test split (the paper's random split)."""
    p = rng.permutation(n)
    a, b = int(0.7 * n), int(0.8 * n)
    return p[:a], p[a:b], p[b:]


class GradientMasked(nn.Module):
    """Control for c4: ``model`` with the gradient to the adjacency cut (same predictions).

    A gradient attack sees zero gradient and does nothing, so under gradient attacks alone this model
    looks perfectly robust: the classic gradient-masking artefact that c4 must not be fooled by.
    """

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, x, adj, mask=None):
        return self.model(x, adj.detach() + 0.0 * adj, mask)


def attack_all(model: nn.Module, test: GraphSet, cfg: Config, seed: int, kinds: tuple,
               sparse_twin: GCN | None = None, prbcd: bool = False) -> dict:
    """Clean accuracy and per-graph attack successes on the correctly classified test graphs."""
    correct = np.nonzero(predict(model, test).numpy() == test.ys)[0]
    n, c = len(test), len(correct)
    res = {"clean": c / n, "n_test": n, "n_attacked": c}
    succ: dict[str, np.ndarray] = {}
    if c:
        x, adj, mask, y = test.dense(correct)
        gen = torch.Generator().manual_seed(seed)
        for kind in kinds:
            if kind.startswith("pgd@"):
                r = atk.pgd_structure_attack(model, x, adj, y, mask, float(kind[4:]), cfg.pgd_steps,
                                             cfg.pgd_samples, generator=gen)
            elif kind == "cw":
                r = atk.pgd_structure_attack(model, x, adj, y, mask, cfg.budget, cfg.pgd_steps,
                                             cfg.pgd_samples, loss="cw", generator=gen)
            elif kind == "random":
                r = atk.random_flip_attack(model, x, adj, y, mask, cfg.budget, cfg.random_queries, generator=gen)
            else:
                r = atk.genetic_attack(model, x, adj, y, mask, cfg.budget, cfg.genetic_population,
                                       cfg.genetic_generations, generator=gen)
            succ[kind] = r.success.numpy()
        if prbcd and sparse_twin is not None:
            k = min(cfg.prbcd_graphs, c)
            budgets = atk.edge_budget(adj[:k], cfg.budget)
            extra = np.zeros(c, dtype=bool)
            for j, (d, bud) in enumerate(zip(test.subset(correct[:k]).to_pyg(), budgets)):
                if d.x.size(0) >= 2:
                    extra[j] = atk.prbcd_attack(sparse_twin, d.x, d.edge_index, int(d.y), int(bud),
                                                epochs=cfg.prbcd_epochs, seed=seed)[0]
            succ["prbcd"] = extra
            res["prbcd_graphs"] = k
    for kind in kinds:
        res[kind] = (c - int(succ[kind].sum())) / n if c else 0.0
    strong = [k for k in (f"pgd@{cfg.budget}", "cw", "genetic", "prbcd") if k in succ]
    if strong:
        union = np.any([succ[k] for k in strong], axis=0) if c else np.zeros(0, dtype=bool)
        res["strongest"] = (c - int(union.sum())) / n
        res["strongest_of"] = strong
    return res


def run_seed(name: str, cfg: Config, s: int, first: bool, cache: dict) -> dict:
    """Train every readout (and the controls) on one seed's data and attack them."""
    ds = load(name, cfg, s, cache)
    tr, va, te = split(len(ds), np.random.default_rng(s))
    train, val, test = ds.subset(tr), ds.subset(va), ds.subset(te)
    pgd = tuple(f"pgd@{b}" for b in dict.fromkeys((*cfg.sweep, cfg.budget)))
    full = pgd + cfg.attacks
    out = {}
    for pooling in POOLINGS + tuple(b + "/alpha" for b in BASELINES):
        base = pooling.split("/")[0]
        torch.manual_seed(s)
        model = DenseGCN(ds.num_features, ds.num_classes, cfg.hidden, base, num_iterations=cfg.num_iterations,
                         alpha=cfg.alpha, readout_scale=1.0 / cfg.alpha if "/" in pooling else 1.0)
        t0 = time.perf_counter()
        info = train_classifier(model, train, val, epochs=cfg.epochs, seed=s, keep=cfg.keep)
        if "/" in pooling:  # control: CE-PGD only
            res = attack_all(model, test, cfg, s, (f"pgd@{cfg.budget}",))
        else:
            twin = None
            if first:
                twin = GCN(ds.num_features, ds.num_classes, cfg.hidden, base, num_iterations=cfg.num_iterations,
                           alpha=cfg.alpha)
                twin.load_state_dict(model.state_dict())
                twin.eval()
            res = attack_all(model, test, cfg, s, full, twin, prbcd=first)
        res |= {"best_epoch": info["best_epoch"], "seconds": time.perf_counter() - t0}
        out[pooling] = res
        if pooling == "sum":  # control for c4: the same sum model, gradient-masked
            # (CW-PGD would see the same zero gradient as CE-PGD: not run)
            out["sum/masked"] = attack_all(GradientMasked(model).eval(), test, cfg, s,
                                           (f"pgd@{cfg.budget}", "genetic"))
    majority = int(np.bincount(train.ys, minlength=ds.num_classes).argmax())
    out["majority"] = {"clean": float(np.mean(test.ys == majority))}
    return out


def paired(a: list, b: list) -> dict:
    """Mean of the paired differences a_s - b_s with its 90% Student-t interval (accuracy units)."""
    iv = mean_interval(np.asarray(a, dtype=float) - np.asarray(b, dtype=float), 0.90)
    if iv.n < 2:
        return {"mean": iv.mean, "lo90": float("-inf"), "hi90": float("inf"), "sd": 0.0, "n": iv.n}
    return {"mean": iv.mean, "lo90": iv.lo, "hi90": iv.hi, "sd": iv.sd, "n": iv.n}


def beats_rule(raw: dict, ours: str, others: tuple, key: str) -> dict:
    """Per dataset: the paired intervals of ``ours`` - each of ``others`` on ``key``, and whether every
    lower bound is > 0."""
    out = {}
    for name, runs in raw.items():
        diffs = {b: paired([r[ours][key] for r in runs], [r[b][key] for r in runs]) for b in others}
        out[name] = {"diffs": diffs, "pass": all(d["lo90"] > 0 for d in diffs.values()),
                     "effect_5pts": all(d["mean"] >= 0.05 for d in diffs.values())}
    return out


def _fmt(rule: dict) -> str:
    """``"ba_2motifs: sum +1.2 [-3.0, +5.4], ..."`` in points."""
    return "; ".join(f"{n}: " + ", ".join(f"{b.split('/')[0]} {100 * d['mean']:+.1f} [{100 * d['lo90']:+.1f}, "
                                          f"{100 * d['hi90']:+.1f}]" for b, d in v["diffs"].items())
                     for n, v in rule.items())


@register("rspool")
def run(scale: Scale, seed: int, out: Path) -> Outcome:
    return _run(SCALES[Scale.parse(scale)], seed, Path(out))


def _c1_figures(ex: dict) -> dict:
    return {k: ex[k] for k in ("max_abs_err_vs_svd", "max_abs_err_batched_vs_loop")}


def _passing(rule: dict, need: int) -> dict:
    """The figures c3 / c4 judge: how many datasets pass a ``beats_rule``, against how many needed."""
    return {"datasets_passing": sum(v["pass"] for v in rule.values()), "need": need, "n_datasets": len(rule),
            "effect_5pts_datasets": sum(v["effect_5pts"] for v in rule.values())}


def _c4_rule(m) -> bool:
    return m["datasets_passing_strongest"] >= m["need"] and m["datasets_passing_scaled"] >= m["need"]


def _c4_figures(raw: dict, model: str, key: str, need: int) -> tuple[dict, dict, dict]:
    """c4's figures for one model against the baselines: (a) strongest attack, (b) vs the 1/alpha-scaled ones."""
    a = beats_rule(raw, model, BASELINES, "strongest")
    b = beats_rule(raw, model, tuple(x + "/alpha" for x in BASELINES), key)
    return ({"datasets_passing_strongest": sum(v["pass"] for v in a.values()),
             "datasets_passing_scaled": sum(v["pass"] for v in b.values()), "need": need, "n_datasets": len(raw)},
            a, b)


def claim_c3(need: int, n_data: int) -> Claim:
    """c3, declared: the headline, judged on the method, the sum/alpha control and the masked positive control."""
    return Claim(
        "c3_robust", statement="RS-Pool is more robust than sum/mean/max pooling under PGD structure attacks",
        paper_value="abstract: 'better robustness than the considered pooling methods' (table values not read)",
        criterion=Criterion.at_least(
            "datasets_passing", need,
            f"CE-PGD, budget 30% of each graph's edges: per dataset, the lower end of the 90% paired interval of "
            f"model - baseline attacked accuracy over seeds is > 0 against each of sum, mean and max, on >= {need} "
            f"of {n_data} datasets (2/3); the 5-point effect size reported beside"),
        kind="headline",
        controls=[Control.negative("sum_alpha", "sum pooling at RS-Pool's output scale (sum / alpha) in RS-Pool's "
                                   "place: the rescaling alone, no singular direction"),
                  Control.positive("masked_sum", "the sum model with the gradient to the adjacency cut: immune to "
                                   "CE-PGD by construction, so it shows the seeds and intervals can register a "
                                   "robustness gain")],
    )


def claim_c4(need: int, n_data: int) -> Claim:
    """c4, declared: the no-masking check, judged on the method and on the gradient-masked sum model."""
    return Claim(
        "c4_no_masking", statement="The robustness ordering is not gradient masking",
        paper_value="project check (not in the paper)",
        criterion=Criterion(
            f"(a) the c3 rule with each model's strongest attack (per graph: CE-PGD or CW-PGD or genetic or, on a "
            f"subset, PRBCD) on >= {need} of {n_data} datasets, and (b) under CE-PGD the lower 90% bound of model - "
            f"baseline/alpha is > 0 against sum/alpha, mean/alpha and max/alpha on >= {need} of {n_data}. Judged "
            "whatever c3's verdict",
            "datasets_passing_strongest", _c4_rule, f">= {need} (and (b) >= {need})"),
        kind="supporting",
        controls=[Control.negative("masked_sum", "the sum model with the gradient to the adjacency cut (same "
                                   "predictions): gradient attacks see nothing, only the genetic attack can break "
                                   "it; it must fail (a)")],
        no_positive_control="no model here is known to be robust to every attack; the masked model is robust only "
        "to gradient attacks, which is what the negative control tests",
    )


def _run(cfg: Config, seed: int, out: Path) -> Outcome:
    ex = exactness(seed)
    ex1 = exactness(seed, num_iterations=1)
    c1 = Claim("c1_exact", statement="RS-Pool (power iteration from the sum direction) computes sigma_1 v_1 / "
               "alpha of each graph's embedding matrix, batched over graphs exactly",
               paper_value="method definition (no figure)",
               criterion=Criterion(
                   "K=50 output equals dense-SVD sigma_1 v_1/alpha (sign fixed) within 1e-4, and the batched output "
                   "equals a per-graph computation within 1e-6, on 64 random graphs",
                   "max_abs_err_vs_svd",
                   lambda m: m["max_abs_err_vs_svd"] <= 1e-4 and m["max_abs_err_batched_vs_loop"] <= 1e-6,
                   "<= 1e-4 (batched <= 1e-6)"),
               kind="check",
               controls=[Control.negative("one_power_step", "the same computation with K = 1 power step (the "
                                          "power iteration cut short)")])
    c1.record(_c1_figures(ex), controls={"one_power_step": _c1_figures(ex1)}, details={"graphs": ex["graphs"]},
              summary=f"max error vs SVD {ex['max_abs_err_vs_svd']:.1e} (needs <= 1e-4); batched vs loop "
                      f"{ex['max_abs_err_batched_vs_loop']:.1e} (needs <= 1e-6); control K=1: "
                      f"{ex1['max_abs_err_vs_svd']:.1e}")

    seeds = [seed + k for k in range(cfg.num_seeds)]
    raw: dict = {name: [] for name in cfg.datasets}
    cache: dict = {}
    t_start = time.perf_counter()
    jobs = [(d, s) for d in cfg.datasets for s in seeds]
    for name, s in progress(jobs, desc="rspool runs", total=len(jobs)):
        res = run_seed(name, cfg, s, s - seed < cfg.prbcd_seeds, cache)
        raw[name].append(res)
        print(f"{name} seed={s}: " + "; ".join(
            f"{p} " + " ".join(f"{k}={v:.3f}" for k, v in r.items() if isinstance(v, float) and k != "seconds")
            for p, r in res.items()), flush=True)
    n_data = len(cfg.datasets)
    need = math.ceil(2 * n_data / 3)
    note = _scale_note(cfg)
    key = f"pgd@{cfg.budget}"

    # c2: clean accuracy within 3 points of the best flat readout, per dataset
    c2 = Claim("c2_clean", statement="RS-Pool keeps competitive clean accuracy",
               paper_value="abstract: 'maintaining competitive clean accuracy' (table values not read)",
               criterion=Criterion.at_least(
                   "worst_mean_diff_pts", -3.0,
                   "on every dataset, the mean over seeds of the model's clean accuracy minus the best flat "
                   "readout's (sum/mean/max, best by mean) is >= -3 points (worst dataset); 90% paired interval "
                   "reported"),
               kind="supporting",
               controls=[Control.negative("majority", "the majority class of the training split")],
               no_positive_control="the best flat readout is the bar itself; any other readout may be legitimately "
               "less accurate, so none is known to pass")
    clean, ctrl_clean = {}, {}
    for name, runs in raw.items():
        best = max(BASELINES, key=lambda b: np.mean([r[b]["clean"] for r in runs]))
        clean[name] = paired([r["rs"]["clean"] for r in runs], [r[best]["clean"] for r in runs]) | {"best": best}
        ctrl_clean[name] = paired([r["majority"]["clean"] for r in runs], [r[best]["clean"] for r in runs])

    def c2_figs(d):
        w = min(d, key=lambda n: d[n]["mean"])
        return {"worst_mean_diff_pts": 100 * d[w]["mean"], "worst_lo90_pts": 100 * d[w]["lo90"],
                "worst_dataset": w, "lowest_lo90_pts": 100 * min(v["lo90"] for v in d.values())}

    f2, f2c = c2_figs(clean), c2_figs(ctrl_clean)
    worst = f2["worst_dataset"]
    below = [n for n, v in clean.items() if v["lo90"] < -0.03]
    c2.record(f2, controls={"majority": f2c}, note=note,
              details={"rs_minus_best_flat": clean, "majority_minus_best_flat": ctrl_clean,
                       "clean": {n: {p: float(np.mean([r[p]["clean"] for r in runs])) for p in POOLINGS}
                                 for n, runs in raw.items()}},
              summary=f"worst dataset {worst}: RS - best flat ({clean[worst]['best']}) "
                      f"{f2['worst_mean_diff_pts']:+.1f} pts [90% {100 * clean[worst]['lo90']:+.1f}, "
                      f"{100 * clean[worst]['hi90']:+.1f}]; needs >= -3 "
                      f"on all {n_data} (by the mean); intervals reaching below -3: {', '.join(below) or 'none'}; "
                      f"control (majority) {f2c['worst_mean_diff_pts']:+.1f} pts")

    # c3: the headline, paired lower 90% bound > 0 against sum, mean and max
    c3 = claim_c3(need, n_data)
    rule3 = beats_rule(raw, "rs", BASELINES, key)
    ctrl3 = beats_rule(raw, "sum/alpha", BASELINES, key)
    pos3 = beats_rule(raw, "sum/masked", BASELINES, key)
    cw3 = beats_rule(raw, "rs", BASELINES, "cw")  # review v2: CW-PGD beside CE-PGD (reported, not judged)
    f3, f3c, f3p = _passing(rule3, need), _passing(ctrl3, need), _passing(pos3, need)
    c3.record(f3, controls={"sum_alpha": f3c, "masked_sum": f3p},
              details={"rs_minus_baseline": rule3, "sum_alpha_minus_baseline": ctrl3,
                       "masked_sum_minus_baseline": pos3,
                       "cw_pgd_rs_minus_baseline (not judged)": cw3,
                       "attacked_acc": {n: {p: float(np.mean([r[p][key] for r in runs]))
                                            for p in POOLINGS + ("sum/alpha", "mean/alpha", "max/alpha", "sum/masked")}
                                        for n, runs in raw.items()}},
              note=note + " Differences in points: mean [90% interval].",
              summary=f"{f3['datasets_passing']}/{n_data} datasets with every lower bound > 0 (needs >= {need}); "
                      f"{f3['effect_5pts_datasets']}/{n_data} with a >= 5-point mean gain over all three; control "
                      f"sum/alpha {f3c['datasets_passing']}/{n_data}; positive (masked sum, immune to CE-PGD) "
                      f"{f3p['datasets_passing']}/{n_data}; under CW-PGD (not judged) "
                      f"{sum(v['pass'] for v in cw3.values())}/{n_data}. RS - baseline: {_fmt(rule3)}")

    # c4: the ordering under each model's strongest attack, and against the 1/alpha-scaled baselines
    c4 = claim_c4(need, n_data)
    f4, rule4a, rule4b = _c4_figures(raw, "rs", key, need)
    f4c, ctrl4, _ = _c4_figures(raw, "sum/masked", key, need)
    c4.record(f4, controls={"masked_sum": f4c},
              details={"strongest": rule4a, "vs_scaled": rule4b, "masked_sum_strongest": ctrl4,
                       "masked_sum_ce_pgd_only": pos3,
                       "strongest_acc": {n: {p: float(np.mean([r[p]["strongest"] for r in runs]))
                                             for p in POOLINGS + ("sum/masked",)} for n, runs in raw.items()}},
              note=f"PRBCD (PyG, on the sparse twin) on the first {cfg.prbcd_graphs} attacked graphs of each model, "
                   f"{cfg.prbcd_seeds} seed(s), {cfg.prbcd_epochs} epochs; genetic population "
                   f"{cfg.genetic_population} x {cfg.genetic_generations} generations, the same for every model and "
                   "the masked control. " + note,
              summary=f"(a) strongest attack: {f4['datasets_passing_strongest']}/{n_data} datasets (needs >= {need}); "
                      f"(b) vs 1/alpha-scaled baselines: {f4['datasets_passing_scaled']}/{n_data}; control "
                      f"gradient-masked sum: (a) {f4c['datasets_passing_strongest']}/{n_data} under the strongest "
                      f"attack vs {f3p['datasets_passing']}/{n_data} under CE-PGD alone, (b) "
                      f"{f4c['datasets_passing_scaled']}/{n_data}. Strongest, RS - baseline: {_fmt(rule4a)}")

    _figure(rule3, rule4a, out)
    table = {n: {p: {k: float(np.mean([r[p][k] for r in runs if k in r[p]])) for k in runs[0][p]
                     if isinstance(runs[0][p][k], numbers.Real)}
                 for p in runs[0]} for n, runs in raw.items()}  # prbcd: mean over the seeds that ran it
    return Outcome([c1, c2, c3, c4],
                   metrics={"table": table, "per_seed": raw, "config": dataclasses.asdict(cfg), "seeds": seeds,
                            "experiment_seconds": time.perf_counter() - t_start},
                   notes="Generated stand-ins for the paper's TUDatasets plus RDKit's real NCI molecules; "
                         "see docs/rspool.md.")


def _scale_note(cfg: Config) -> str:
    return (f"{len(cfg.datasets)} dataset(s) x {cfg.num_seeds} seed(s), {cfg.num_graphs} graphs each "
            f"(70/10/20 split), {cfg.epochs} epochs keeping the {cfg.keep} best-validation epoch (paper: 101, "
            f"last), PGD {cfg.pgd_steps} steps.")


def _figure(rule3: dict, rule4a: dict, out: Path) -> None:
    """Paired differences RS - baseline (points) with 90% intervals, per dataset: CE-PGD and strongest."""
    from matplotlib.figure import Figure

    names = list(rule3)
    fig = Figure(figsize=(7.0, 1.0 + 0.9 * len(names)))
    ax = fig.subplots()
    for j, (rule, label, marker) in enumerate(((rule3, "CE-PGD 30%", "o"), (rule4a, "strongest attack", "s"))):
        for i, name in enumerate(names):
            for k, b in enumerate(BASELINES):
                d = rule[name]["diffs"][b]
                half = 100 * (d["mean"] - d["lo90"]) if math.isfinite(d["lo90"]) else 0.0
                ax.errorbar(100 * d["mean"], i + 0.25 * (k - 1) + 0.08 * j, xerr=half, fmt=marker, color=f"C{k}",
                            alpha=1.0 if j == 0 else 0.5,
                            label=f"vs {b} ({label})" if i == 0 else None)
    ax.axvline(0, color="k", lw=0.8)
    ax.set_yticks(range(len(names)), names)
    ax.set_xlabel("RS-Pool - baseline attacked accuracy (points), mean and 90% interval over seeds")
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    fig.savefig(Path(out) / "figures" / "paired_differences.png", dpi=110)
