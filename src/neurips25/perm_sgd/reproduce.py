"""Reproduction of the unified analysis of permutation-based SGD (Li, Lyu & Liu, NeurIPS 2025).

The paper is theoretical; its framework must recover the known rates of each permutation category.
Four experiments check those rates and the mechanism (criteria fixed in issue 5 before any run; verdicts v4,
issue 58: every claim in :func:`declare_claims`, each control computed by its own runs):

(a) order error vs n on herding toy vectors (GraB's Fig. 1 analogue)           -> c1
(b) L2 logistic regression on digits, F - F* vs n at fixed epochs (PL rates)  -> c2
(c) a one-hidden-layer MLP on digits through the PyTorch sampler, lr tuned on held-out seeds (nonconvex) -> c3
(d) FedAvg on 20 label-skewed clients, 4 per round, client permutations       -> c4, c5
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import numpy as np

from neurips25.perm_sgd.data import (
    herding_vectors,
    label_skew_split,
    load_binary,
    load_digits_multiclass,
    sorted_order,
)
from neurips25.perm_sgd.federated import RegularizedParticipation, UniformParticipation, fedavg
from neurips25.perm_sgd.orderings import (
    FlipFlop,
    GraB,
    Incremental,
    PairGraB,
    RandomReshuffling,
    ShuffleOnce,
)
from neurips25.perm_sgd.problems import L2LogisticRegression, SoftmaxRegression
from neurips25.perm_sgd.sgd import order_error, permuted_sgd, prefix_deviation
from neurips25.perm_sgd.theory import fit_dependence
from neurips25.repro import Claim, Control, Criterion, Outcome, Scale, measure, progress, register
from neurips25.repro.intervals import mean_interval


@dataclasses.dataclass(frozen=True)
class Config:
    """All knobs of the experiments; ``smoke`` / ``quick`` / ``paper`` are three instances."""

    # (a) herding toy
    toy_ns: tuple[int, ...]
    toy_dim: int
    toy_seeds: int
    toy_epochs: int  # balancing epochs on the fixed vectors (each halves the old order's part)
    # (b) PL rates
    pl_datasets: tuple[str, ...]
    pl_ns: tuple[int, ...]
    pl_epochs: tuple[int, ...]
    pl_seeds: int
    pl_alpha: float
    pl_c: float  # eta = c * log(nK) / (mu n K), the theory's schedule
    # (c) nonconvex MLP
    mlp_epochs: int
    mlp_seeds: int  # judging seeds
    mlp_tune_seeds: int  # held-out seeds the lr is tuned on (c3, v4)
    mlp_lrs: tuple[float, ...]
    mlp_hidden: int
    mlp_batch: int
    mlp_n: int
    mlp_max_extend: int  # lr-grid extensions (x2 or /2) while a method's optimum sits on an edge
    mlp_tol: float  # c3 tolerance: mean paired relative loss difference must be below -mlp_tol
    # (d) federated
    fl_rounds: int
    fl_seeds: int
    fl_clients: int
    fl_per_round: int
    fl_local_steps: int
    fl_lr: float
    fl_alpha: float


SCALES = {
    Scale.SMOKE: Config(toy_ns=(128, 256, 512), toy_dim=64, toy_seeds=1, toy_epochs=6,
                        pl_datasets=("digits",), pl_ns=(64, 128), pl_epochs=(8,), pl_seeds=1, pl_alpha=0.1,
                        pl_c=2.0, mlp_epochs=1, mlp_seeds=1, mlp_tune_seeds=1, mlp_lrs=(0.1,), mlp_hidden=16,
                        mlp_batch=16, mlp_n=128, mlp_max_extend=0, mlp_tol=0.005,
                        fl_rounds=10, fl_seeds=1, fl_clients=20, fl_per_round=4, fl_local_steps=5,
                        fl_lr=0.1, fl_alpha=1e-3),
    Scale.QUICK: Config(toy_ns=tuple(2 ** k for k in range(8, 15)), toy_dim=128, toy_seeds=3, toy_epochs=12,
                        pl_datasets=("digits",), pl_ns=(128, 256, 512, 1024), pl_epochs=(16, 32), pl_seeds=5,
                        pl_alpha=0.1, pl_c=2.0, mlp_epochs=10, mlp_seeds=5, mlp_tune_seeds=2, mlp_lrs=(0.05, 0.1, 0.2),
                        mlp_hidden=32, mlp_batch=16, mlp_n=1797, mlp_max_extend=3, mlp_tol=0.005,
                        fl_rounds=60, fl_seeds=5, fl_clients=20,
                        fl_per_round=4, fl_local_steps=5, fl_lr=0.1, fl_alpha=1e-3),
    Scale.PAPER: Config(toy_ns=tuple(2 ** k for k in range(8, 15)), toy_dim=128, toy_seeds=5, toy_epochs=14,
                        pl_datasets=("digits", "breast_cancer"), pl_ns=(64, 128, 256, 512, 1024),
                        pl_epochs=(16, 32, 64), pl_seeds=5, pl_alpha=0.1, pl_c=2.0, mlp_epochs=30,
                        mlp_seeds=5, mlp_tune_seeds=3, mlp_lrs=(0.05, 0.1, 0.2, 0.4), mlp_hidden=32, mlp_batch=16,
                        mlp_n=1797,
                        mlp_max_extend=4, mlp_tol=0.005, fl_rounds=100, fl_seeds=5, fl_clients=20, fl_per_round=4,
                        fl_local_steps=5, fl_lr=0.1, fl_alpha=1e-3),
}


def loglog_slope(x, y) -> float:
    """Least-squares slope of log y against log x."""
    return float(np.polyfit(np.log(np.asarray(x, float)), np.log(np.asarray(y, float)), 1)[0])


# ---------------------------------------------------------------- (a) order error vs n

def balanced_order(policy, V: np.ndarray, epochs: int) -> tuple[np.ndarray, list[float]]:
    """Run a dependent policy on fixed vectors; return its final order and phi per epoch."""
    phis = []
    for _ in range(epochs):
        order = policy.next_epoch()
        phis.append(order_error(V, order))
        for start in range(0, len(order), 32):  # block observe: same walk, fewer Python calls
            block = order[start:start + 32]
            policy.observe_many(block, V[block])
    order = policy.next_epoch()
    phis.append(order_error(V, order))
    return order, phis


def _phi(kind: str, V: np.ndarray, sd: int, cfg: Config) -> tuple[float, list | None]:
    """The order error of one order ``kind`` on vectors ``V`` (and, for a balanced order, phi per epoch)."""
    n = len(V)
    if kind == "IG (sorted)":
        return order_error(V, sorted_order(V)), None
    if kind == "RR":
        return order_error(V, RandomReshuffling(n, seed=sd).next_epoch()), None
    if kind == "GraB on other vectors":  # balanced on an independent draw: its information is about other data
        order, _ = balanced_order(GraB(n, seed=sd), herding_vectors(n, cfg.toy_dim, seed=sd + 500), cfg.toy_epochs)
        return order_error(V, order), None
    order, trace = balanced_order((GraB if kind == "GraB" else PairGraB)(n, seed=sd), V, cfg.toy_epochs)
    return order_error(V, order), trace


def experiment_order_error(cfg: Config, seed: int, arbitrary: str = "IG (sorted)", independent: str = "RR",
                           dependent: tuple = ("GraB", "PairGraB"), offset: int = 0) -> dict:
    """c1's figures from its own runs: median phi over seeds of the order in each slot (arbitrary, independent,
    dependent) on herding vectors; a control puts another order in one slot and draws its own vectors
    (``offset``). The method's run also keeps GraB's phi per balancing epoch and RR's (c5's toy fits)."""
    kinds = tuple(dict.fromkeys((arbitrary, independent, *dependent)))
    phi = {k: np.zeros((cfg.toy_seeds, len(cfg.toy_ns))) for k in kinds}
    grab_trace, rr_trace = [], []
    for s in range(cfg.toy_seeds):
        sd = seed * 1000 + s + offset
        for j, n in enumerate(progress(cfg.toy_ns, desc=f"(a) order error, seed {s}")):
            V = herding_vectors(n, cfg.toy_dim, seed=sd)
            for k in kinds:
                phi[k][s, j], trace = _phi(k, V, sd, cfg)
                if k == "GraB" and j == len(cfg.toy_ns) - 1:
                    grab_trace.append(trace)
            if "GraB" in kinds and j == len(cfg.toy_ns) - 1:  # an independent order's phi over as many epochs
                rr = RandomReshuffling(n, seed=sd)
                rr_trace.append([order_error(V, rr.next_epoch()) for _ in range(cfg.toy_epochs + 1)])
    med = {k: np.median(v, axis=0) for k, v in phi.items()}
    slopes = {k: loglog_slope(cfg.toy_ns, v) for k, v in med.items()}
    ns = cfg.toy_ns
    out = {"IG_phi_over_n_ratio": float((med[arbitrary][-1] / ns[-1]) / (med[arbitrary][-2] / ns[-2])),
           "slope_RR": slopes[independent], "max_slope_dependent": max(slopes[k] for k in dependent),
           "ns": list(ns), "median_phi": {k: v.tolist() for k, v in med.items()}, "slopes": slopes}
    if grab_trace:  # the dependent recursion on fixed vectors (no drift): phi_q ~ A phi_{q-1} + C
        trace = np.array(grab_trace)
        out |= {"grab_trace": trace.tolist(), "grab_toy_fit": fit_dependence(trace, np.zeros_like(trace))._asdict(),
                "rr_toy_fit": fit_dependence(np.array(rr_trace), np.zeros_like(trace))._asdict()}
    return out


# ---------------------------------------------------------------- (b) PL rates

def make_policy(name: str, n: int, seed: int, prob=None):
    if name == "IG":
        # incremental gradient in an adversarial fixed order: all of one label, then the other
        return Incremental(n, order=np.argsort(prob.y, kind="stable"))
    return {"SO": ShuffleOnce, "RR": RandomReshuffling, "FlipFlop": FlipFlop, "GraB": GraB,
            "PairGraB": PairGraB}[name](n, seed=seed)


PL_METHODS = ("IG", "RR", "GraB", "SO")  # IG and SO are c2's negative controls
CURVE_ONLY = ("FlipFlop", "PairGraB")


def experiment_pl(cfg: Config, seed: int) -> dict:
    out = {}
    curves = {}
    for ds in cfg.pl_datasets:
        X, y = load_binary(ds)
        ns = [n for n in cfg.pl_ns if n <= len(y)]  # breast_cancer has 569 examples
        err = {m: np.full((len(cfg.pl_epochs), len(ns), cfg.pl_seeds), np.nan) for m in PL_METHODS}
        for s in progress(range(cfg.pl_seeds), desc=f"(b) PL rates on {ds}", total=cfg.pl_seeds):
            rng = np.random.default_rng(seed * 1000 + s)
            for j, n in enumerate(ns):
                idx = rng.choice(len(y), size=n, replace=False)
                prob = L2LogisticRegression(X[idx], y[idx], alpha=cfg.pl_alpha)
                f_star = prob.loss(prob.solve())
                for a, K in enumerate(cfg.pl_epochs):
                    eta = min(1.0 / prob.L, cfg.pl_c * np.log(n * K) / (prob.mu * n * K))
                    want_curve = s == 0 and j == len(ns) - 1 and a == len(cfg.pl_epochs) - 1
                    # the other policies run once, for the error-vs-epochs figure only (no claim)
                    for m in PL_METHODS + (CURVE_ONLY if want_curve else ()):
                        trace = []
                        cb = None
                        if want_curve:
                            def cb(q, x, _p=prob, _t=trace, _f=f_star):
                                _t.append(_p.loss(x) - _f)
                        x = permuted_sgd(prob.grad_i, np.zeros(prob.dim), n, K, eta,
                                         make_policy(m, n, seed * 1000 + s, prob), callback=cb)
                        if m in err:
                            err[m][a, j, s] = max(prob.loss(x) - f_star, 1e-16)
                        if want_curve:
                            curves[f"{ds}/{m}"] = trace
        med = {m: np.median(v, axis=2) for m, v in err.items()}  # (epochs, ns)
        K = cfg.pl_epochs[-1]
        logsq = np.log(np.asarray(ns, float) * K) ** 2
        out[ds] = {
            "median_err": {m: v.tolist() for m, v in med.items()},
            "ns": ns,
            "slopes_log_corrected": {m: loglog_slope(ns, med[m][-1] / logsq) for m in PL_METHODS},
            "slopes_raw": {m: loglog_slope(ns, med[m][-1]) for m in PL_METHODS},
            "ordered_every_setting": {dep: bool(np.all(med[dep] <= med["RR"]) and np.all(med["RR"] <= med["IG"]))
                                      for dep in ("GraB", "IG", "SO")},  # dependent slot: GraB or a control
        }
    return {"datasets": out, "curves": curves, "ns": list(cfg.pl_ns), "epochs": list(cfg.pl_epochs)}


# ---------------------------------------------------------------- (c) nonconvex MLP through the sampler

def train_mlp(cfg: Config, method: str, lr: float, seed: int, X, y,
              order_seed: int | None = None) -> tuple[float, int]:
    """Train the MLP with ``method``'s order; return the final full training loss and GraB's state bytes.

    ``seed`` fixes the initial weights (the same for every method: paired runs); ``order_seed``
    (default ``seed``) seeds the order policy."""
    import torch
    from torch.utils.data import BatchSampler

    from neurips25.perm_sgd.sampler import GradientBalancer, PermutationSampler

    torch.manual_seed(seed)
    n = X.shape[0]
    model = torch.nn.Sequential(torch.nn.Linear(X.shape[1], cfg.mlp_hidden), torch.nn.Tanh(),
                                torch.nn.Linear(cfg.mlp_hidden, 10))
    policy = make_policy(method, n, seed if order_seed is None else order_seed)
    batches = BatchSampler(PermutationSampler(policy, dataset=X), cfg.mlp_batch, drop_last=False)
    balancer = GradientBalancer(policy, model) if policy.uses_gradients else None
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    loss_fn = torch.nn.functional.cross_entropy
    for _ in range(cfg.mlp_epochs):
        for idx in batches:
            opt.zero_grad()
            if balancer is not None:
                balancer.backward(loss_fn, X[idx], y[idx])  # per-example gradients -> GraB, mean -> .grad
            else:
                loss_fn(model(X[idx]), y[idx]).backward()
            opt.step()
    with torch.no_grad():
        final = float(loss_fn(model(X), y))
    state = 0
    if method in ("GraB", "PairGraB"):
        vecs = (getattr(policy, a, None) for a in ("_s", "_m", "_acc", "_cache"))
        state = sum(np.asarray(v).nbytes for v in vecs if v is not None)
    return final if np.isfinite(final) else float("inf"), state


MLP_METHODS = ("SO", "RR", "GraB")


def paired(diff: np.ndarray) -> dict:
    """Mean of paired differences over seeds with its 95% Student-t interval (None if a run diverged)."""
    diff = np.asarray(diff, dtype=float)
    per_seed = [float(v) for v in diff]
    if len(diff) < 2 or not np.all(np.isfinite(diff)):
        return {"mean": float(np.mean(diff)), "lo": None, "hi": None, "per_seed": per_seed}
    iv = mean_interval(diff)
    return {"mean": iv.mean, "lo": iv.lo, "hi": iv.hi, "per_seed": per_seed}


def _digits_tensors(cfg: Config, seed: int):
    import torch
    from sklearn.datasets import load_digits

    Xn, yn = load_digits(return_X_y=True)
    Xn = (Xn - Xn.mean(0)) / np.where(Xn.std(0) > 0, Xn.std(0), 1.0)
    sub = np.random.default_rng(seed).permutation(len(yn))[: cfg.mlp_n]
    return torch.tensor(Xn[sub], dtype=torch.float32), torch.tensor(yn[sub], dtype=torch.long)


def tune_mlp_lr(cfg: Config, seed: int) -> dict:
    """Held-out lr tuning (c3): each order's lr is the best median final loss on the TUNING seeds (initial
    weights and order streams never used for judging), the grid extended x2 past an edge optimum."""
    X, y = _digits_tensors(cfg, seed)
    tune = [seed * 1000 + 100 + s for s in range(cfg.mlp_tune_seeds)]
    grid: dict = {m: {} for m in MLP_METHODS}

    def evaluate(m, lr):
        if lr not in grid[m]:
            grid[m][lr] = np.array([train_mlp(cfg, m, lr, s, X, y)[0]
                                    for s in progress(tune, desc=f"(c) tune {m} lr={lr:g}", total=len(tune))])

    best = {}
    for m in MLP_METHODS:
        for lr in cfg.mlp_lrs:
            evaluate(m, lr)
        for _ in range(cfg.mlp_max_extend):
            lrs = sorted(grid[m])
            k = int(np.argmin([np.median(grid[m][v]) for v in lrs]))
            if 0 < k < len(lrs) - 1:
                break
            evaluate(m, lrs[0] / 2 if k == 0 else lrs[-1] * 2)
        lrs = sorted(grid[m])
        best[m] = lrs[int(np.argmin([np.median(grid[m][v]) for v in lrs]))]
    return {"best_lr": best, "tuning_seeds": tune,
            "loss_grid": {m: {f"{k:g}": v.tolist() for k, v in sorted(g.items())} for m, g in grid.items()}}


def experiment_mlp(cfg: Config, seed: int, best_lr: dict, dependent: str = "GraB", offset: int = 0) -> dict:
    """c3's figures on the JUDGING seeds at the held-out-tuned lrs: paired relative loss differences
    dependent - RR and RR - SO (same initial weights per seed). A control passes ``dependent="RR'"`` (RR with
    an independent order stream, at RR's lr) and its own seeds (``offset``)."""
    X, y = _digits_tensors(cfg, seed)
    seeds = [seed * 1000 + s + offset for s in range(cfg.mlp_seeds)]
    L, state_bytes = {}, 0
    for m in ("SO", "RR", dependent):
        row = []
        for s in progress(seeds, desc=f"(c) MLP {m}", total=len(seeds)):
            if m == "RR'":
                loss, b = train_mlp(cfg, "RR", best_lr["RR"], s, X, y, order_seed=s + 500)
            else:
                loss, b = train_mlp(cfg, m, best_lr[m], s, X, y)
            row.append(loss)
            state_bytes = max(state_bytes, b)
        L[m] = np.array(row)
    dep, rs = paired((L[dependent] - L["RR"]) / L["RR"]), paired((L["RR"] - L["SO"]) / L["RR"])
    n_params = X.shape[1] * cfg.mlp_hidden + cfg.mlp_hidden + cfg.mlp_hidden * 10 + 10
    return {"dependent_minus_RR": dep["mean"], "dependent_minus_RR_lo": dep["lo"], "dependent_minus_RR_hi": dep["hi"],
            "RR_minus_SO": rs["mean"], "RR_minus_SO_lo": rs["lo"], "RR_minus_SO_hi": rs["hi"],
            "no_n_by_d_state": bool(state_bytes <= 4 * n_params * 8),
            "per_seed": {"dependent-RR": dep["per_seed"], "RR-SO": rs["per_seed"]},
            "median_loss": {m: float(np.median(v)) for m, v in L.items()}, "grab_state_bytes": state_bytes,
            "n_by_d_float32_bytes": int(X.shape[0]) * n_params * 4, "n": int(X.shape[0])}


# ---------------------------------------------------------------- (d) federated

FL_SCHEDULES = ("uniform", "RR", "GraB-seq", "GraB-round")


def round_order_error(V: np.ndarray, order: np.ndarray, S: int) -> float:
    """Order error of a cycle measured at round boundaries (the unit FedAvg permutes is the round)."""
    dev = prefix_deviation(V, order)
    return float(dev[S - 1::S].max())


def experiment_fl(cfg: Config, seed: int, per_round: int | None = None, schedules=FL_SCHEDULES,
                  rounds: int | None = None) -> dict:
    """FedAvg under each client schedule; ``per_round`` (default ``cfg.fl_per_round``) clients per round."""
    rounds = cfg.fl_rounds if rounds is None else rounds
    S = cfg.fl_per_round if per_round is None else per_round
    X, y = load_digits_multiclass()
    final = {k: np.zeros(cfg.fl_seeds) for k in schedules}
    curves = {k: [] for k in schedules}
    logs = {k: {"phi": [], "drift": []} for k in schedules if k != "uniform"}
    for s in progress(range(cfg.fl_seeds), desc=f"(d) federated, {S} per round", total=cfg.fl_seeds):
        sd = seed * 1000 + s
        parts = label_skew_split(y, cfg.fl_clients, classes_per_client=2, seed=sd)
        clients = [SoftmaxRegression(X[p], y[p], 10, cfg.fl_alpha) for p in parts]
        glob = SoftmaxRegression(X, y, 10, cfg.fl_alpha)
        for k in schedules:
            if k == "uniform":
                sched = UniformParticipation(cfg.fl_clients, S, seed=sd)
            elif k == "GraB-round":
                sched = RegularizedParticipation(cfg.fl_clients, S, seed=sd, balance="round")
            else:
                pol = (RandomReshuffling if k == "RR" else GraB)(cfg.fl_clients, seed=sd)
                sched = RegularizedParticipation(cfg.fl_clients, S, pol)
            trace, orders, starts = [], [], [np.zeros(glob.dim)]
            R = getattr(sched, "rounds_per_cycle", 0)

            def cb(r, x, _c, _sched=sched, _trace=trace, _orders=orders, _starts=starts, _R=R, _g=glob):
                _trace.append(_g.loss(x))
                if _R and r % _R == 0:
                    _orders.append(_sched.cycle_order)
                if _R and (r + 1) % _R == 0:
                    _starts.append(x.copy())

            x = fedavg(lambda c, w, rng, _cl=clients: _cl[c].grad(w), starts[0], sched, rounds,
                       cfg.fl_local_steps, cfg.fl_lr, seed=sd, callback=cb)
            if k != "uniform":
                # order error of each cycle's rounds, measured at the cycle-start model
                phi = [round_order_error(np.stack([cl.grad(starts[q]) for cl in clients]), o, S)
                       for q, o in enumerate(orders)]
                drift = [0.0] + [float(np.linalg.norm(starts[q] - starts[q - 1]))
                                 for q in range(1, len(orders))]
                logs[k]["phi"].append(phi)
                logs[k]["drift"].append(drift)
            final[k][s] = glob.loss(x)
            curves[k].append(trace)
    med = {k: float(np.median(v)) for k, v in final.items()}
    fits = {}
    for k in logs:
        P, D = np.array(logs[k]["phi"]), np.array(logs[k]["drift"])
        fits[k] = fit_dependence(P, D)._asdict() if P.shape[1] >= 4 else None
    return {"median_final_loss": med, "final_loss": {k: v.tolist() for k, v in final.items()},
            "curves_median": {k: np.median(np.array(v), axis=0).tolist() for k, v in curves.items()},
            "dependence_fit": fits, "phi_median": {k: np.median(np.array(v["phi"]), axis=0).tolist()
                                                   for k, v in logs.items()},
            "logs": {k: {"phi": np.array(v["phi"]).tolist(), "drift": np.array(v["drift"]).tolist()}
                     for k, v in logs.items()}}


# ---------------------------------------------------------------- figures

def figures(out: Path, a: dict, b: dict, d: dict) -> None:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11, 4))
    ax1, ax2 = fig.subplots(1, 2)
    for k, v in a["median_phi"].items():
        ax1.loglog(a["ns"], v, "o-", label=f"{k} (slope {a['slopes'][k]:.2f})")
    ax1.set_xlabel("n"), ax1.set_ylabel("order error phi"), ax1.set_title("(a) order error vs n, d = 128")
    ax1.legend(fontsize=8)
    tr = np.array(a["grab_trace"])
    ax2.semilogy(np.median(tr, axis=0), "o-")
    ax2.set_xlabel("epoch q"), ax2.set_ylabel("phi_q of GraB's order")
    ax2.set_title(f"(a) GraB, fixed vectors, n = {a['ns'][-1]}: A = {a['grab_toy_fit']['A']:.2f}")
    fig.tight_layout()
    fig.savefig(out / "figures" / "order_error_vs_n.png", dpi=110)

    fig = Figure(figsize=(11, 4))
    ax1, ax2 = fig.subplots(1, 2)
    ds = next(iter(b["datasets"]))
    for m, v in b["datasets"][ds]["median_err"].items():
        ax1.loglog(b["datasets"][ds]["ns"], v[-1], "o-",
                   label=f"{m} (raw slope {b['datasets'][ds]['slopes_raw'][m]:.2f})")
    ax1.set_xlabel("n"), ax1.set_ylabel("F(x_K) - F*")
    ax1.set_title(f"(b) {ds} logistic, K = {b['epochs'][-1]}, median over seeds")
    ax1.legend(fontsize=8)
    for name, tr in b["curves"].items():
        if name.startswith(f"{ds}/"):
            ax2.semilogy(np.arange(1, len(tr) + 1), np.maximum(tr, 1e-16), label=name.split("/")[1])
    ax2.set_xlabel("epoch"), ax2.set_ylabel("F - F*")
    ax2.set_title(f"(b) {ds}: error vs epochs per policy, largest n, K = {b['epochs'][-1]}, seed 0")
    ax2.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "figures" / "pl_error.png", dpi=110)

    fig = Figure(figsize=(6, 4))
    ax = fig.subplots()
    for k, v in d["curves_median"].items():
        ax.semilogy(np.arange(1, len(v) + 1), v, label=k)
    ax.set_xlabel("round"), ax.set_ylabel("global training loss")
    ax.set_title("(d) FedAvg on label-skewed clients")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "figures" / "federated.png", dpi=110)


# ---------------------------------------------------------------- the reproduction

def _c1_rule(m):
    """IG's phi/n flat (1 +/- 0.05), RR's slope 0.5 +/- 0.1, the dependent orders' slopes < 0.2."""
    return (abs(m["IG_phi_over_n_ratio"] - 1) <= 0.05 and abs(m["slope_RR"] - 0.5) <= 0.1
            and m["max_slope_dependent"] < 0.2)


def _all(*parts):
    """A conjunction over parts that may be undecided: False if any fails, None if any is undecided."""
    return False if any(p is False for p in parts) else (None if any(p is None for p in parts) else True)


def _c3_rule_for(tol: float):
    dep = Criterion.interval("dependent_minus_RR_lo", "dependent_minus_RR_hi", 0.0, "below")
    rs = Criterion.interval("RR_minus_SO_lo", "RR_minus_SO_hi", 0.0, "below")

    def rule(m):
        return _all(m["dependent_minus_RR"] < -tol, m["RR_minus_SO"] < -tol, dep.rule(m), rs.rule(m),
                    bool(m["no_n_by_d_state"]))
    return rule


def _c4_rule(m):
    """The balanced client order wins on >= 80 % of the seeds, and RR cycles beat uniform sampling."""
    return m["win_fraction"] >= 0.8 and bool(m["RR_beats_uniform"])


def _c5_rule(m):
    """A of the dependent order exceeds A of the independent one by >= 0.1, with A < 1."""
    return m["A_gap"] >= 0.1 and m["A"] < 1


def _shuffled_cycles(logs: dict, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The order errors of each run with its cycles in a random order: any dependence across cycles is gone."""
    P, D = np.array(logs["phi"], dtype=float), np.array(logs["drift"], dtype=float)
    rng = np.random.default_rng(seed)
    return np.stack([row[rng.permutation(len(row))] for row in P]), D


STAND_IN = "the paper is theoretical (no experiment of its own known here): "


def declare_claims(scale: Scale) -> list[Claim]:
    """The five claims with their criteria and controls (nothing measured)."""
    tol = SCALES[Scale.parse(scale)].mlp_tol
    return [
        Claim("c1", statement="Order error phi (largest prefix-sum deviation) grows like n for an "
              "adversarial fixed order, sqrt(n) for independent reshuffling and O~(1) for dependent "
              "GraB-type orders",
              paper_value="arbitrary O(n), independent O(sqrt n), dependent O~(1) (theory; no figure)",
              criterion=Criterion("median phi over seeds: the arbitrary slot (adversarial IG) has phi/n flat "
                                  "(ratio of phi/n at the last two sizes within 1 +/- 0.05); the independent slot "
                                  "(RR) log-log slope 0.5 +/- 0.1; the dependent slot (GraB and PairGraB) slope "
                                  "< 0.2 (polylog)", "max_slope_dependent", _c1_rule, "< 0.2"),
              controls=[Control.negative("rr_as_arbitrary", "RR in the arbitrary slot (its phi/n must not be flat), "
                                         "every slot run on its own vector draws"),
                        Control.negative("grab_other_vectors", "GraB balanced on an independent draw of vectors in "
                                         "the dependent slot (the balancing step fed the wrong information), every "
                                         "slot run on its own vector draws")],
              no_positive_control="the three growth rates are the claim itself: an order with a planted phi "
                                  "would test only order_error, which the unit tests check exactly",
              kind="supporting", instance="stand-in",
              instance_note=STAND_IN + "centred uniform herding vectors (GraB's Fig. 1 analogue) stand in for the "
              "gradients of the theorem; a verdict says whether the three growth rates show on them"),
        Claim("c2", statement="PL setting: with the theory's step size, F - F* after K epochs is "
              "O~(1/K^2) for IG, O~(1/(nK^2)) for RR, O~(1/(nK)^2) for GraB",
              paper_value="rates recovered by the unified theorem: 1/K^2, 1/(nK^2), 1/(n^2K^2) (no figure)",
              criterion=Criterion("median over seeds dependent <= RR <= IG at every (n, K); at the largest K the "
                                  "slope of median (F - F*) / log^2(nK) vs n is -1 +/- 0.3 for RR and -2 +/- 0.3 "
                                  "for the dependent order (GraB); band_miss is the larger distance from a band "
                                  "centre over datasets", "band_miss",
                                  lambda m: bool(m["ordered"]) and m["band_miss"] <= 0.3, "<= 0.3"),
              controls=[Control.negative("IG_as_dependent", "incremental gradient (label-sorted) in the "
                                                            "dependent slot"),
                        Control.negative("SO_as_dependent", "a single shuffle reused every epoch (SO) in the "
                                                            "dependent slot")],
              no_positive_control="no order is known to reach 1/(nK)^2 on this problem other than the one "
                                  "under test",
              kind="headline", instance="stand-in",
              instance_note=STAND_IN + "L2 logistic regression on scikit-learn digits subsamples is one instance of "
              "the PL class of the theorem; a verdict says whether the stated rates show on it, not whether the "
              "theorem holds"),
        Claim("c3", statement="Nonconvex: dependent orders train faster than independent, "
              "independent faster than a single shuffle (GraB < RR < SO), at O(d) extra memory",
              paper_value="rates T^-2/3 (GraB) < n^1/3 T^-2/3 (RR); SO arbitrary (no figure)",
              criterion=Criterion(f"each order at its lr tuned on held-out seeds (v4, issue 58: tuning seeds never "
                                  f"judged); on the judging seeds, paired (same initial weights): mean relative loss "
                                  f"difference dependent-RR and RR-SO both < -{tol:g} with the 95% t-interval below "
                                  "0 (an interval across 0 is undecided); the dependent order's state holds no "
                                  "n x d buffer", "dependent_minus_RR", _c3_rule_for(tol), f"< -{tol:g}"),
              controls=[Control.negative("rr_second_stream", "RR with an independent order stream in the "
                                         "dependent slot (RR's tuned lr), SO / RR / RR' run on the control's own "
                                         "initial weights")],
              no_positive_control="no order is known to beat RR on this MLP; the claim is that GraB does",
              kind="supporting", instance="stand-in",
              instance_note=STAND_IN + "a one-hidden-layer MLP on scikit-learn digits through the PyTorch sampler is "
              "one nonconvex instance; a verdict says whether GraB < RR < SO shows on it"),
        Claim("c4", statement="Federated: regularized participation (each client once per cycle) beats "
              "uniform client sampling, and a balanced (GraB) client order beats a reshuffled one "
              "(label-skewed clients)",
              paper_value="FL extension of the unified analysis (no figure)",
              criterion=Criterion("median final global loss RR-cycle < uniform, and the balanced client order's "
                                  "final loss <= RR's on >= 4/5 of the seeds (paired)", "win_fraction", _c4_rule,
                                  ">= 0.8"),
              controls=[Control.negative("grab_sequential", "client-level sequential GraB (balances clients as if "
                                                            "they ran one after another) as the balanced order"),
                        Control.positive("one_client_per_round", "the same comparison with 1 client per round, "
                                                                 "where rounds are sequential and GraB's setting "
                                                                 "holds exactly")],
              kind="supporting", instance="stand-in",
              instance_note=STAND_IN + "FedAvg of softmax regression on 20 label-skewed digit clients is one "
              "federated instance; a verdict says whether the orderings' benefit shows on it"),
        Claim("c5", statement="The generalized (dependent) assumption: the order error of a dependent order "
              "contracts across epochs, phi_q <= A phi_{q-1} + B drift_q + C, while an independent order has "
              "no dependence (reconstructed form)",
              paper_value="reconstructed; the paper's constants are not known here",
              criterion=Criterion("non-negative least-squares fit of the order errors per cycle: A of the "
                                  "dependent order exceeds A of the independent order (RR) by >= 0.1, with A < 1",
                                  "A_gap", _c5_rule, ">= 0.1"),
              controls=[Control.negative("cycles_shuffled", "the round-level GraB order errors with each run's "
                                                            "cycles put in a random order (any dependence "
                                                            "across cycles removed), against the same RR fit"),
                        Control.positive("one_client_per_round", "v4: on the same federated clients, GraB against "
                                         "RR client orders with 1 client per round (GraB's sequential setting), "
                                         "enough rounds for >= 5 cycles")],
              kind="supporting", instance="stand-in",
              instance_note=STAND_IN + "the client orders of the c4 federated run; a verdict says whether the "
              "reconstructed recursion shows there"),
    ]


@register("perm_sgd")
def run(scale: Scale, seed: int, out: Path) -> Outcome:
    return _run(scale, seed, out)  # threads: torch and BLAS capped at 1 by the runner (repro.thread_cap)


def _c2_figures(b: dict, slot: str) -> dict:
    miss, ordered = 0.0, True
    for r in b["datasets"].values():
        sl = r["slopes_log_corrected"]
        miss = max(miss, abs(sl["RR"] + 1), abs(sl[slot] + 2))
        ordered &= r["ordered_every_setting"][slot]
    first = next(iter(b["datasets"].values()))["slopes_log_corrected"]
    return {"band_miss": miss, "ordered": bool(ordered), "slope_dependent": first[slot], "slope_RR": first["RR"]}


def _c4_figures(res: dict, balanced: str, seeds: int) -> dict:
    losses = {k: np.array(v) for k, v in res["final_loss"].items()}
    wins = int(np.sum(losses[balanced] <= losses["RR"]))
    return {"win_fraction": wins / seeds, "wins": wins,
            "RR_beats_uniform": bool(res["median_final_loss"]["RR"] < res["median_final_loss"]["uniform"]),
            "median_rel_margin": float(np.median((losses["RR"] - losses[balanced]) / losses["RR"]))}


def _c5_figures(f: dict, f_indep: dict) -> dict:
    return {"A_gap": f["A"] - f_indep["A"], "A": f["A"], "A_independent": f_indep["A"], "r2": f["r2"]}


def _c5_one_per_round(cfg: Config, seed: int) -> dict:
    """c5's positive control: GraB vs RR client orders at 1 client per round, >= 5 cycles."""
    d = experiment_fl(cfg, seed, per_round=1, schedules=("RR", "GraB-seq"), rounds=max(cfg.fl_rounds,
                                                                                        5 * cfg.fl_clients))
    return _c5_figures(d["dependence_fit"]["GraB-seq"], d["dependence_fit"]["RR"])


def _c5_shuffled(d: dict, seed: int) -> dict:
    P_sh, D_sh = _shuffled_cycles(d["logs"]["GraB-round"], seed)
    return _c5_figures(fit_dependence(P_sh, D_sh)._asdict(), d["dependence_fit"]["RR"])


def _run(scale: Scale, seed: int, out: Path) -> Outcome:
    cfg = SCALES[scale]
    claims = {c.id: c for c in declare_claims(scale)}
    secs = {}

    t0 = time.perf_counter()
    a = measure(experiment_order_error, cfg, seed)
    claims["c1"].record(
        a, controls={"rr_as_arbitrary": measure(experiment_order_error, cfg, seed, arbitrary="RR",
                                                dependent=("GraB",), offset=7000),
                     "grab_other_vectors": measure(experiment_order_error, cfg, seed,
                                                   dependent=("GraB on other vectors",), offset=7000)},
        note=f"z ~ U[0,1]^{cfg.toy_dim} centred, n = {cfg.toy_ns[0]}..{cfg.toy_ns[-1]}, {cfg.toy_seeds} seed(s); "
        f"GraB/PairGraB after {cfg.toy_epochs} balancing epochs on the same vectors")
    a = a.raw()
    secs["a"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    b = experiment_pl(cfg, seed)
    claims["c2"].record(
        measure(_c2_figures, b, "GraB"),
        controls={"IG_as_dependent": measure(_c2_figures, b, "IG"), "SO_as_dependent": measure(_c2_figures, b, "SO")},
        details={ds: {"ordered": r["ordered_every_setting"], "slopes_log_corrected": r["slopes_log_corrected"],
                      "slopes_raw": r["slopes_raw"]} for ds, r in b["datasets"].items()},
        note=f"L2 logistic (alpha = {cfg.pl_alpha}), n in {cfg.pl_ns} subsampled, K in {cfg.pl_epochs}, "
        f"{cfg.pl_seeds} seed(s), eta = {cfg.pl_c} log(nK)/(mu n K); IG in label-sorted order; slopes "
        "divide out the log^2(nK) of the step-size schedule (the O~; chosen after v1 prototypes)")
    secs["b"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    tuned = tune_mlp_lr(cfg, seed)
    c = measure(experiment_mlp, cfg, seed, tuned["best_lr"])
    claims["c3"].record(
        c, controls={"rr_second_stream": measure(experiment_mlp, cfg, seed, tuned["best_lr"], dependent="RR'",
                                                 offset=500)},
        details=tuned,
        note=f"64-{cfg.mlp_hidden}-10 tanh MLP on {cfg.mlp_n} digits, batch {cfg.mlp_batch} with per-example "
        f"GraB, {cfg.mlp_epochs} epochs; lr tuned per order on {cfg.mlp_tune_seeds} held-out seed(s) over "
        f"{cfg.mlp_lrs} (extended x2 up to {cfg.mlp_max_extend} times), judged on {cfg.mlp_seeds} other seed(s); "
        f"tuned lrs {tuned['best_lr']}")
    secs["c"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    d = experiment_fl(cfg, seed)
    d1 = experiment_fl(cfg, seed, per_round=1, schedules=("uniform", "RR", "GraB-seq"))
    claims["c4"].record(
        measure(_c4_figures, d, "GraB-round", cfg.fl_seeds),
        controls={"grab_sequential": measure(_c4_figures, d, "GraB-seq", cfg.fl_seeds),
                  "one_client_per_round": measure(_c4_figures, d1, "GraB-seq", cfg.fl_seeds)},
        details={"median_final_loss": d["median_final_loss"], "one_per_round_losses": d1["final_loss"],
                 "phi_last_cycle": {k: v[-1] for k, v in d["phi_median"].items()}},
        note=f"softmax regression, digits split by label (2 labels per client) over {cfg.fl_clients} "
        f"clients, {cfg.fl_per_round} per round (positive control: 1), {cfg.fl_local_steps} local "
        f"full-gradient steps, {cfg.fl_rounds} rounds, {cfg.fl_seeds} seed(s)")

    fit, fit_rr = d["dependence_fit"]["GraB-round"], d["dependence_fit"]["RR"]
    if fit is None or fit_rr is None:
        claims["c5"].record(None, controls={"cycles_shuffled": None, "one_client_per_round": None},
                            unmeasured="fewer than 4 cycles at this scale")
    else:
        claims["c5"].record(
            measure(_c5_figures, fit, fit_rr),
            controls={"cycles_shuffled": measure(_c5_shuffled, d, seed),
                      "one_client_per_round": measure(_c5_one_per_round, cfg, seed)},
            details={"B": fit["B"], "C": fit["C"], "A_GraB_seq": d["dependence_fit"]["GraB-seq"]["A"],
                     "toy_fixed_vectors (v3's positive control, another instance)": _c5_figures(a["grab_toy_fit"],
                                                                                             a["rr_toy_fit"])},
            note="fit over the cycles of all seeds (round-boundary order errors at the cycle-start model)")
    secs["d"] = time.perf_counter() - t0

    figures(out, a, b, d)
    return Outcome(list(claims.values()),
                   metrics={"order_error": a, "pl": b, "mlp": c.raw(), "federated": d, "federated_one_per_round": d1,
                            "seconds": secs},
                   notes="Theoretical paper: the checks are the known rates its framework must recover and "
                   "the mechanism (order error, its contraction). The paper's own constants and any "
                   "experiments were not available.")
