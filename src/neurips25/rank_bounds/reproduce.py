"""Reproduction of "Generalization Bounds for Rank-sparse Neural Networks" (Ledent et al., NeurIPS 2025).

Claims (from the abstract; c1/c2 criteria fixed in issue 10, c3-c5 in issue 34, before any run):
  c1 Schatten quasi-norms and effective ranks are computed exactly (numpy-SVD oracle, r_p -> rank).
  c2 Weight decay on a depth-L linear net equals L ||prod W||_{S_{2/L}}^{2/L} at convergence.
  c3 For weight-decayed nets trained to convergence, the (reconstructed) rank-sparse bound (better of the
     Schatten-p relaxation and the exact count) is below parameter counting and the norm-based rivals
     (Bartlett et al., the l2 path norm with its width factor, Golowich et al.) at width >= 256, and grows
     with width with log-log slope < 0.5. Control: the same cover with rank sparsity removed.
  c4 Weight decay makes hidden weights low rank (bottleneck rank): effective rank falls with weight decay,
     stays within 1.5x as the width grows, and on the rank-4 teacher the numerical rank of the
     hidden-to-hidden matrices is <= 8 (issue 44: no longer the input layer's, capped by d_in).
     Control: the nets without weight decay.
  c5 Without weight decay the lead shrinks; inconclusive where there is no lead at weight decay > 0.
Verdicts v4 (issue 58): :func:`declare_claims` declares every claim, criterion and control; the run hands the
figures of the method and of every control (computed through ``measure``) to ``Claim.record``.
Experiment: ReLU MLPs on sklearn digits and on a rank-4 teacher task, Adam on cross-entropy + lam * sum of
squared parameters, a weight-decay and width sweep, every bound of ``GeneralizationReport`` on each net.
"""

from __future__ import annotations

import dataclasses
import math
import time
from pathlib import Path

import numpy as np

from neurips25.repro import Claim, Control, Criterion, Outcome, Precondition, Scale, measure, progress, register

P_LIST = (0.1, 0.25, 0.5, 0.75, 1.0, 1.5)
MARGIN_QUANTILE = 0.05  # gamma = 5% quantile of training margins (fixed before the runs)
WD_HIGH = 1e-3  # the "weight decay >= 1e-3" threshold of c3 / c4


@dataclasses.dataclass(frozen=True)
class Config:
    """Every knob of the experiment; smoke / quick / paper are three instances."""

    depths: tuple
    widths: tuple
    wds: tuple
    n_seeds: int
    n_train_digits: int
    n_train_teacher: int
    epochs: int  # nets with weight decay (trained until the rank has converged)
    epochs_no_wd: int  # nets without weight decay (no rank to converge; fit to 100% train accuracy)
    batch: int = 128
    lr: float = 2e-3
    linear_depths: tuple = (2, 3, 4)


def config_for(scale: Scale) -> Config:
    return scale.pick(
        smoke=Config(
            depths=(3,),  # issue 44: c4's rank rule reads the hidden-to-hidden matrices, which depth 2 lacks
            widths=(32, 64),
            wds=(0.0, 1e-3),
            n_seeds=1,
            n_train_digits=200,
            n_train_teacher=200,
            epochs=100,  # 60 left some seeds' nets with a negative 5% margin quantile (no bound defined)
            epochs_no_wd=100,
            batch=32,
        ),
        # quick (issue 34): depth 3, widths 128/256/384, two weight decays, 3 seeds, both tasks; nets with
        # weight decay trained 400 epochs (the convergence rule), nets without 100 epochs. Widths 512
        # and 1024 are left to the paper scale: at 400 epochs they would cost ~4 and ~15 CPU-minutes.
        quick=Config(
            depths=(3,),
            widths=(128, 256, 384),
            wds=(0.0, 1e-3),
            n_seeds=3,
            n_train_digits=1400,
            n_train_teacher=1000,
            epochs=400,
            epochs_no_wd=100,
        ),
        paper=Config(
            depths=(3, 5),
            widths=(64, 128, 256, 512, 1024),
            wds=(0.0, 1e-4, 1e-3, 3e-3),
            n_seeds=3,
            n_train_digits=1400,
            n_train_teacher=1000,
            epochs=400,
            epochs_no_wd=400,
        ),
    )


# --------------------------------------------------------------------------------------------- training
def make_mlp(d_in: int, width: int, depth: int, n_out: int):
    import torch

    dims = [d_in] + [width] * (depth - 1) + [n_out]
    mods = []
    for i in range(depth):
        mods.append(torch.nn.Linear(dims[i], dims[i + 1]))
        if i < depth - 1:
            mods.append(torch.nn.ReLU())
    return torch.nn.Sequential(*mods)


def train_mlp(X, y, width, depth, lam, cfg: Config, seed: int):
    """Adam (one-cycle schedule, annealed to ~0) on cross-entropy + lam * sum of squared parameters.

    The penalty enters as its gradient: torch's Adam with ``weight_decay=w`` adds ``w * theta`` to the
    gradient before the moment estimates (coupled L2, not AdamW's decoupled decay), and the gradient of
    ``lam * ||theta||^2`` is ``2 lam theta``, so ``weight_decay=2 lam`` is the same optimisation as adding the
    penalty to the loss (checked in tests), without building it in the autograd graph. ``fused=True`` runs
    the whole Adam update in one kernel: together ~1.6x faster per step than the penalty in the loss with
    the for-loop Adam (issue 34: quick CPU time 364 s on an idle machine, ceiling 300 s).
    """
    import copy

    import torch

    torch.manual_seed(seed)
    Xt, yt = torch.from_numpy(X), torch.from_numpy(y)
    net = make_mlp(X.shape[1], width, depth, int(y.max()) + 1)
    init = copy.deepcopy(net)
    opt = torch.optim.Adam(net.parameters(), lr=cfg.lr, weight_decay=2.0 * lam, fused=True)
    n = len(X)
    epochs = cfg.epochs if lam > 0 else cfg.epochs_no_wd
    steps = epochs * math.ceil(n / cfg.batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=cfg.lr, total_steps=steps, pct_start=0.1)
    gen = torch.Generator().manual_seed(seed)
    for _ in range(epochs):
        perm = torch.randperm(n, generator=gen)
        for i in range(0, n, cfg.batch):
            b = perm[i : i + cfg.batch]
            # objective: cross-entropy + lam * sum ||theta||^2 (the penalty's gradient is added by Adam)
            loss = torch.nn.functional.cross_entropy(net(Xt[b]), yt[b])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
    return net, init


def accuracy(net, X, y) -> float:
    import torch

    with torch.no_grad():
        return float((net(torch.from_numpy(X)).argmax(1).numpy() == y).mean())


# --------------------------------------------------------------------------------------------- claims 1-2
def _naive_sp(A, p: float) -> float:
    """The broken implementation c1's control runs: float32 SVD, every singular value counted."""
    sv = np.linalg.svd(np.asarray(A, dtype=np.float32), compute_uv=False).astype(np.float64)
    return float(np.sum(sv**p) ** (1 / p))


def _naive_rp(A, p: float) -> float:
    sv = np.linalg.svd(np.asarray(A, dtype=np.float32), compute_uv=False).astype(np.float64)
    return float(np.sum((sv[sv > 0] / sv[0]) ** p))


def check_quasi_norms(rng) -> dict:
    """c1: S_p vs an independent oracle (eigenvalues of A^T A), r_p -> rank, p-th power subadditivity.

    Returns ``{"method": figures, "float32_no_floor": figures}``: the library's ``schatten_quasi_norm`` /
    ``effective_rank`` and the naive float32 SVD without a noise floor, on the same random matrices.
    """
    from neurips25.rank_bounds import effective_rank, schatten_quasi_norm

    impls = {"method": (schatten_quasi_norm, effective_rank), "float32_no_floor": (_naive_sp, _naive_rp)}
    mats = [rng.standard_normal((rng.integers(2, 30), rng.integers(2, 30))) for _ in range(20)]
    low = rng.standard_normal((40, 3)) @ rng.standard_normal((3, 25))
    pairs = []
    for _ in range(200):
        m, n = rng.integers(2, 12, size=2)
        r1, r2 = rng.integers(1, min(m, n) + 1, size=2)
        A = rng.standard_normal((m, r1)) @ rng.standard_normal((r1, n))
        B = rng.standard_normal((m, r2)) @ rng.standard_normal((r2, n))
        pairs.append((A, B, float(rng.uniform(0.05, 1.0))))
    out = {}
    for name, (sp, rp) in impls.items():
        max_rel = 0.0
        for A in mats:
            # the min(m, n) largest eigenvalues of A^T A are the squared singular values
            ev = np.sort(np.clip(np.linalg.eigvalsh(A.T @ A), 0, None))[::-1][: min(A.shape)]
            sv = np.sqrt(ev)
            for p in P_LIST + (2.0, 3.0):
                ref = np.sum(sv**p) ** (1 / p)
                max_rel = max(max_rel, abs(sp(A, p) - ref) / ref)
        ranks = {p: rp(low, p) for p in (0.5, 0.1, 1e-2, 1e-4, 1e-6)}
        viol = sum(int(sp(A + B, p) ** p > (sp(A, p) ** p + sp(B, p) ** p) * (1 + 1e-10)) for A, B, p in pairs)
        out[name] = {
            "max_rel_err_vs_oracle": float(max_rel),
            "r_p_rank3_abs_err": abs(ranks[1e-6] - 3.0),
            "subadditivity_violations_of_200": viol,
            "r_p_rank3": ranks,
        }
    return out


def fit_linear_net(L: int, X, Y, lam: float, seed: int, width: int = 10, adam_steps: int = 300):
    """Depth-L linear net trained on ||Y - X W_1^T ... W_L^T||^2 / n + lam sum ||W_l||_F^2 (float64).

    Adam from a small random init, then L-BFGS to a tight convergence tolerance.
    """
    import torch

    torch.manual_seed(seed)
    dims = [X.shape[1]] + [width] * (L - 1) + [Y.shape[1]]
    Ws = [
        torch.nn.Parameter(0.3 * torch.randn(dims[i + 1], dims[i], dtype=torch.float64) / math.sqrt(dims[i]))
        for i in range(L)
    ]
    Xt, Yt = torch.from_numpy(X), torch.from_numpy(Y)

    def objective():
        P = Ws[0]
        for W in Ws[1:]:
            P = W @ P
        return ((Xt @ P.T - Yt) ** 2).sum() / len(X) + lam * sum((W**2).sum() for W in Ws)

    opt = torch.optim.Adam(Ws, lr=1e-2)
    for _ in range(adam_steps):
        opt.zero_grad()
        loss = objective()
        loss.backward()
        opt.step()
    lbfgs = torch.optim.LBFGS(
        Ws,
        lr=1,
        max_iter=400,
        tolerance_grad=1e-12,
        tolerance_change=1e-15,
        history_size=30,
        line_search_fn="strong_wolfe",
    )

    def closure():
        lbfgs.zero_grad()
        loss = objective()
        loss.backward()
        return loss

    lbfgs.step(closure)
    return [W.detach().numpy() for W in Ws]


def _unbalance(Ws):
    """The same product with the first factor doubled and the last halved: not at the weight-decay optimum."""
    return [2.0 * Ws[0]] + list(Ws[1:-1]) + [0.5 * Ws[-1]]


def check_weight_decay(cfg: Config, seed: int) -> dict:
    """c2 per depth: the identity's relative gap on trained nets and on the balanced factorisation, and the
    same two factorisations unbalanced (c2's control, the same products off the optimum)."""
    from neurips25.rank_bounds import balanced_factorization, weight_decay_equals_schatten
    from neurips25.rank_bounds.data import make_matrix_regression

    X, Y, A = make_matrix_regression(seed=seed)
    out = {}
    for L in cfg.linear_depths:
        Ws = fit_linear_net(L, X, Y, lam=0.05, seed=seed + L)
        chk = weight_decay_equals_schatten(Ws)
        factors = balanced_factorization(A, L)
        out[L] = {
            "weight_decay": chk.weight_decay,
            "schatten": chk.schatten,
            "rel_gap": chk.relative_gap,
            "balanced_rel_gap": weight_decay_equals_schatten(factors).relative_gap,
            "control_unbalanced_rel_gap": weight_decay_equals_schatten(_unbalance(Ws)).relative_gap,
            "control_unbalanced_balanced_rel_gap": weight_decay_equals_schatten(_unbalance(factors)).relative_gap,
        }
    return out


# --------------------------------------------------------------------------------------------- the sweep
def hidden_effective_rank(net, p: float = 0.5) -> dict:
    """Effective and numerical ranks (rtol 1e-3) of a net's weight matrices.

    ``r05`` / ``nrank`` / ``nrank_max``: mean r_p, mean and max numerical rank of every matrix feeding a
    hidden layer (the input layer included); ``nrank_middle_max``: max numerical rank over the
    hidden-to-hidden matrices only (c4's rank rule since issue 44: the input layer's rank is capped by the
    input dimension and is reported apart as ``nrank_input``); NaN when the net has no such matrix.
    """
    import torch

    from neurips25.rank_bounds import effective_rank, numerical_rank

    Ws = [m.weight for m in net if isinstance(m, torch.nn.Linear)]
    feeding, middle = Ws[:-1], Ws[1:-1]
    ranks = [numerical_rank(W, 1e-3) for W in feeding]
    return {
        "r05": float(np.mean([effective_rank(W, p) for W in feeding])),
        "nrank": float(np.mean(ranks)),
        "nrank_max": float(np.max(ranks)),
        "nrank_input": float(ranks[0]),
        "nrank_middle_max": float(max(numerical_rank(W, 1e-3) for W in middle)) if middle else float("nan"),
    }


def run_sweep(cfg: Config, seed: int) -> list[dict]:
    from neurips25.rank_bounds import GeneralizationReport
    from neurips25.rank_bounds.data import load_digits_split, make_teacher_task

    rows = []
    grid = [
        (task, k, depth, width, lam)
        for task in ("digits", "teacher")
        for k in range(cfg.n_seeds)
        for depth in cfg.depths
        for width in cfg.widths
        for lam in cfg.wds
    ]
    data_cache = {}
    for task, k, depth, width, lam in progress(grid, desc="rank_bounds sweep", total=len(grid)):
        key = (task, k)
        if key not in data_cache:
            s = seed * 1000 + k
            data_cache[key] = (
                load_digits_split(cfg.n_train_digits, seed=s)
                if task == "digits"
                else make_teacher_task(cfg.n_train_teacher, 1000, seed=s)
            )
        Xtr, ytr, Xte, yte = data_cache[key]
        run_seed = seed * 1000 + k * 100 + width % 97 + int(lam * 1e5) + depth
        t0, c0 = time.perf_counter(), time.process_time()
        net, init = train_mlp(Xtr, ytr, width, depth, lam, cfg, run_seed)
        t_train, cpu_train = time.perf_counter() - t0, time.process_time() - c0
        rep = GeneralizationReport(net, Xtr, ytr, margin=MARGIN_QUANTILE, init_model=init)
        res = rep.compute()
        hr = hidden_effective_rank(net)
        r05, nrank = hr["r05"], hr["nrank"]
        row = {
            "task": task,
            "seed": k,
            "depth": depth,
            "width": width,
            "wd": lam,
            "train_acc": accuracy(net, Xtr, ytr),
            "test_acc": accuracy(net, Xte, yte),
            "gamma": rep.summary["gamma"],
            "r05_hidden": r05,
            "nrank_hidden": nrank,
            "nrank_hidden_max": hr["nrank_max"],
            "nrank_input": hr["nrank_input"],
            "nrank_middle_max": hr["nrank_middle_max"],
            "best_p": res["schatten"].terms["p"],
            "schatten_source": res["schatten"].terms["source"],
            "train_s": t_train,
            "train_cpu_s": cpu_train,
        }
        row.update({f"log10_{name}": r.log10_value for name, r in res.items()})
        rows.append(row)
        print(
            f"{task} seed={k} L={depth} w={width} wd={lam:g}: train {row['train_acc']:.3f} "
            f"test {row['test_acc']:.3f} r0.5 {r05:.1f} schatten {row['log10_schatten']:.2f} "
            f"exact {row['log10_exact_rank']:.2f} full-rank {row['log10_full_rank']:.2f} "
            f"param {row['log10_param_covering']:.2f} golowich {row['log10_golowich_frobenius']:.2f} "
            f"path {row['log10_path_norm']:.2f} nrank {nrank:.0f} "
            f"({t_train:.1f}s)"
        )
    return rows


def _select(rows, **kw):
    return [r for r in rows if all(r[k] == v for k, v in kw.items())]


#: the rivals of c3 (issue 34): parameter counting and the three norm-based bounds
C3_RIVALS = ("param_covering", "bartlett_spectral", "path_norm", "golowich_frobenius")


def _mean_over_seeds(rows, key, task, lam, depth, cfg) -> list[float]:
    sel = [_select(rows, task=task, width=w, wd=lam, depth=depth) for w in cfg.widths]
    return [float(np.mean([r[key] for r in rs])) for rs in sel]


def _slope(widths, values) -> float:
    return float(np.polyfit(np.log10(widths), values, 1)[0])


def _figures(rows, cfg: Config, out: Path) -> None:
    from matplotlib.figure import Figure

    names = [
        "schatten",
        "full_rank",
        "param_covering",
        "param_vc",
        "bartlett_spectral",
        "neyshabur_pacbayes",
        "golowich_frobenius",
        "path_norm",
        "path_norm_l1",
    ]
    depth = cfg.depths[0]
    hi = [w for w in cfg.wds if w >= WD_HIGH] or [max(cfg.wds)]
    fig = Figure(figsize=(11, 4.2))
    for j, task in enumerate(("digits", "teacher")):
        ax = fig.add_subplot(1, 2, j + 1)
        for name in names:
            ys = [
                np.mean(
                    [r[f"log10_{name}"] for r in _select(rows, task=task, width=w, wd=hi[0], depth=depth)]
                )
                for w in cfg.widths
            ]
            ax.plot(cfg.widths, ys, marker="o", label=name)
        ax.set_xscale("log")
        ax.set_xlabel("width")
        ax.set_ylabel("log10 bound")
        ax.set_title(f"{task}, depth {depth}, weight decay {hi[0]:g}")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "figures" / "bounds_vs_width.png", dpi=110)

    fig = Figure(figsize=(11, 4.2))
    for j, task in enumerate(("digits", "teacher")):
        ax = fig.add_subplot(1, 2, j + 1)
        xs = [max(w, 1e-5) for w in cfg.wds]
        for w in cfg.widths:
            ys = [
                np.mean([r["r05_hidden"] for r in _select(rows, task=task, width=w, wd=lam, depth=depth)])
                for lam in cfg.wds
            ]
            ax.plot(xs, ys, marker="o", label=f"width {w}")
        ax.set_xscale("log")
        ax.set_xlabel("weight decay (0 drawn at 1e-5)")
        ax.set_ylabel("mean r_0.5 of hidden weights")
        ax.set_title(task)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "figures" / "effective_rank_vs_weight_decay.png", dpi=110)


@register("rank_bounds")
def run(scale: Scale, seed: int, out: Path) -> Outcome:
    """One thread for torch and BLAS: on a shared 2-core machine OpenMP / OpenBLAS spin-waiting made the
    two-thread runs up to 10x slower than one thread (measured: a 3-layer linear fit, 86 s vs 7.5 s)."""
    return _run(scale, seed, out)  # threads: torch and BLAS capped at 1 by the runner (repro.thread_cap)


def _grid(cfg: Config) -> tuple[list, list, float]:
    """(c3's widths >= 256, c3's weight decays >= 1e-3, the decay c3 / c5 report slopes and leads at)."""
    big = [w for w in cfg.widths if w >= 256] or [max(cfg.widths)]
    hi = [w for w in cfg.wds if w >= WD_HIGH]
    return big, hi, (hi[0] if hi else cfg.wds[-1])


def _c3_figures(rows, cfg: Config, bound: str, depth) -> dict:
    """c3's figures for one bound: per cell (task x width >= 256 x decay >= 1e-3), whether it is below all four
    rivals in >= 2 of the seeds; its log-log slope against width on each task."""
    big, hi, lam = _grid(cfg)
    need = min(2, cfg.n_seeds)
    wins, binding = {}, {}
    for task in ("digits", "teacher"):
        for lam_c in hi:
            for w in big:
                sel = _select(rows, task=task, width=w, wd=lam_c, depth=depth)
                wins[f"{task}/w{w}/wd{lam_c:g}"] = sum(
                    r[f"log10_{bound}"] < min(r[f"log10_{x}"] for x in C3_RIVALS) for r in sel)
                # which rival is lowest most often: the one that decides the verdict
                best = [min(C3_RIVALS, key=lambda x, r=r: r[f"log10_{x}"]) for r in sel]
                binding[f"{task}/w{w}"] = max(set(best), key=best.count)
    slopes = {t: _slope(cfg.widths, _mean_over_seeds(rows, f"log10_{bound}", t, lam, depth, cfg))
              for t in ("digits", "teacher")}
    return {"cells": {c: v >= need for c, v in wins.items()}, "n_cells": len(wins), "n_seeds": cfg.n_seeds,
            "slope_digits": slopes["digits"], "slope_teacher": slopes["teacher"], "max_slope": max(slopes.values()),
            "seeds_winning": wins, "binding_rival": binding}


def _c4_figures(rows, cfg: Config, arm, others, depth) -> dict:
    """c4's figures for one arm of the sweep (a list of weight decays; the first is the arm's own)."""
    cells = [(t, w, lam, o) for t in ("digits", "teacher") for w in cfg.widths for lam in arm for o in others]

    def mean_r05(task, w, lam):
        return float(np.mean([r["r05_hidden"] for r in _select(rows, task=task, width=w, wd=lam, depth=depth)]))

    below = [mean_r05(t, w, lam) < mean_r05(t, w, o) for t, w, lam, o in cells]
    spread = {t: max(v) / min(v) for t in ("digits", "teacher")
              for v in [_mean_over_seeds(rows, "r05_hidden", t, arm[0], depth, cfg)]}

    def teacher_rank(key):
        return {f"w{w}": float(np.median([r[key] for r in _select(rows, task="teacher", width=w, wd=arm[0],
                                                                    depth=depth)])) for w in cfg.widths}

    middle, inp, old = teacher_rank("nrank_middle_max"), teacher_rank("nrank_input"), teacher_rank("nrank_hidden_max")
    return {"teacher_nrank_middle": max(middle.values()),
            "frac_cells_below_other_arm": float(np.mean(below)) if below else float("nan"),
            "spread_max": max(spread.values()), "spread_digits": spread["digits"], "spread_teacher": spread["teacher"],
            "teacher_nrank_middle_by_width": middle, "teacher_nrank_input_by_width (not judged)": inp,
            "teacher_nrank_max_incl_input (issue-34 rule, not judged)": max(old.values())}


def _c5_figures(rows, cfg: Config, bound: str, depth) -> dict:
    """c5's figures for one bound: its median lead over the best c3 rival at decay lam3 and at 0, per task."""
    big, _, lam3 = _grid(cfg)
    lead = {}
    for task in ("digits", "teacher"):
        for lam in (0.0, lam3):
            sel = [r for w in big for r in _select(rows, task=task, width=w, wd=lam, depth=depth)]
            lead[f"lead_{task}_wd{lam:g}"] = float(
                np.median([min(r[f"log10_{x}"] for x in C3_RIVALS) - r[f"log10_{bound}"] for r in sel]))
    with_lead = [t for t in ("digits", "teacher") if lead[f"lead_{t}_wd{lam3:g}"] > 0]
    # how much the lead shrinks without decay, on the tasks with a lead (> 0: it shrinks everywhere)
    shrink = min((lead[f"lead_{t}_wd{lam3:g}"] - lead[f"lead_{t}_wd0"] for t in with_lead), default=float("nan"))
    return {"min_shrink": shrink, "tasks_with_lead": len(with_lead), **lead}


def _c5_rule(m) -> bool | None:
    if m["tasks_with_lead"] == 0:
        return False  # no lead to shrink: the claim fails for this bound (the method is gated by a precondition)
    return bool(m["min_shrink"] > 0)


def _wd_figures(wd: dict, prefix: str = "") -> dict:
    """c2's figures from check_weight_decay: the trained and balanced gaps (``prefix`` "control_unbalanced_")."""
    return {"max_trained_rel_gap": max(abs(v[f"{prefix}rel_gap"]) for v in wd.values()),
            "max_balanced_rel_gap": max(abs(v[f"{prefix}balanced_rel_gap"]) for v in wd.values())}


INSTANCE = dict(instance="stand-in", instance_note=(
    "ReLU MLPs on scikit-learn 8x8 digits and a generated rank-4 teacher task stand in for the paper's setup "
    "(not known here; likely fully connected nets on MNIST / CIFAR-style data), and the bound is a reconstruction; "
    "a verdict says whether the reconstructed bound behaves as claimed on these nets"))


def declare_claims(scale: Scale) -> list[Claim]:
    """The five claims with their criteria and controls (nothing measured)."""
    cfg = config_for(Scale.parse(scale))
    big, hi, _ = _grid(cfg)
    cells = Criterion.count_at_least("cells", max(1, 2 * len(big) * len(hi)))

    c3_rule = Criterion.all_of(cells, Criterion.at_most("max_slope", 0.5, strict=True)).rule

    return [
        Claim("c1_quasi_norms",
              statement="Schatten-p quasi-norms ||W||_{S_p} = (sum sigma_i^p)^(1/p) and the effective rank "
              "r_p = (||W||_{S_p}/||W||_sigma)^p are the quantities the bound depends on; "
              "r_p tends to the rank as p -> 0.",
              paper_value="definitions (no figure)",
              criterion=Criterion(
                  "S_p matches an independent SVD oracle to 1e-10 relative; r_p of an exactly rank-3 matrix is "
                  "within 1e-3 of 3 at p=1e-6; p-th-power subadditivity holds on 200 random pairs for p <= 1",
                  "r_p_rank3_abs_err",
                  lambda m: m["max_rel_err_vs_oracle"] <= 1e-10 and m["r_p_rank3_abs_err"] <= 1e-3
                  and m["subadditivity_violations_of_200"] == 0,
                  "<= 1e-3 (and S_p err <= 1e-10, 0 violations)"),
              kind="check",
              controls=[Control.negative("float32_no_floor", "S_p and r_p from a float32 SVD with no noise floor "
                                         "(every rounding-noise singular value counted), on the same matrices")]),
        Claim("c2_weight_decay_is_schatten",
              statement="For a depth-L linear network, weight decay sum_l ||W_l||_F^2 at the optimum equals "
              "L ||prod W||_{S_{2/L}}^{2/L}, a Schatten quasi-norm penalty with p = 2/L.",
              paper_value="identity (no figure)",
              criterion=Criterion(
                  "trained depth-L linear nets (L = 2, 3, 4; weight decay to convergence) satisfy the identity "
                  "within 2%; the balanced factorisation to 1e-8", "max_trained_rel_gap",
                  lambda m: m["max_trained_rel_gap"] <= 0.02 and m["max_balanced_rel_gap"] <= 1e-8,
                  "<= 0.02 (balanced <= 1e-8)"),
              kind="check",
              controls=[Control.negative("unbalanced", "the same trained and balanced factorisations with the first "
                                         "factor doubled and the last halved (same product, off the optimum)")]),
        Claim("c3_headline_ordering",
              statement="In the overparametrised regime the rank-sparse (Schatten-p) bound is smaller than "
              "parameter-counting and norm-based bounds; its sample complexity grows like W r L^2 "
              "instead of W^2 L.",
              paper_value="qualitative (figure values not available)",
              criterion=Criterion(
                  "weight decay >= 1e-3, nets trained to convergence, width >= 256: the bound below parameter "
                  "counting (covering), Bartlett et al., the l2 path norm with its width factor and Golowich et al. "
                  "in >= 2 of 3 seeds at every such width, on both tasks (every cell); log-log slope vs width < 0.5 "
                  "on both", "cells_count", c3_rule, "every cell, max slope < 0.5"),
              kind="headline", **INSTANCE,
              controls=[Control.negative("full_rank", "the same cover with every layer charged its full rank "
                                         "(rank sparsity removed)")],
              no_positive_control="no network is known whose rank-sparse bound is below Golowich et al.'s at these "
              "n; a planted net would have to be built for the bound, not trained",
              preconditions=[Precondition("3 seeds per cell (the >= 2-of-3 rule)", lambda m: m["n_seeds"] >= 3),
                             Precondition("a weight decay >= 1e-3 in the grid", lambda m: m["n_cells"] > 0)]),
        Claim("c4_bottleneck_rank",
              statement="Weight decay drives the weights of deep nets to approximately low rank (the "
              "bottleneck rank), independent of the width.",
              paper_value="qualitative",
              criterion=Criterion(
                  "mean r_0.5 of the matrices feeding hidden layers is below the other arm's (decay >= 1e-3 vs none) "
                  "at every width on both tasks; its max/min over widths is <= 1.5 on both tasks; and on the rank-4 "
                  "teacher the numerical rank (rtol 1e-3) of the hidden-to-hidden matrices (max over them, median "
                  "over seeds) is <= 8 at every width. Issue 44: the rank rule reads the hidden-to-hidden matrices, "
                  "not the input layer (whose rank is capped by d_in = 32 and is reported apart)",
                  "teacher_nrank_middle",
                  lambda m: m["frac_cells_below_other_arm"] == 1.0 and m["spread_max"] <= 1.5
                  and m["teacher_nrank_middle"] <= 8,
                  "<= 8 (and spread <= 1.5, below the other arm everywhere)"),
              kind="supporting", **INSTANCE,
              controls=[Control.negative("no_decay", "the same nets trained without weight decay, judged the same "
                                         "way (r_0.5 below the decayed arm's, flat, rank <= 8)")],
              no_positive_control="the teacher's own rank-4 weights have one width, so no planted net spans the "
              "width sweep; a net truncated to rank 4 would pass the rank rule by construction"),
        Claim("c5_no_weight_decay",
              statement="The advantage comes from rank sparsity: without weight decay (full-rank weights) the "
              "Schatten bound's lead over the rivals shrinks.",
              paper_value="not stated (issue asks for an honest report)",
              criterion=Criterion(
                  "lead = median over seeds and widths >= 256 of log10(best c3 rival) - log10(bound); on every task "
                  "where the lead at weight decay 1e-3 is > 0 it is smaller at weight decay 0 (min_shrink > 0); a "
                  "bound with no lead anywhere fails; the method is inconclusive when it has no lead (precondition)",
                  "min_shrink", _c5_rule, "> 0"),
              kind="supporting", **INSTANCE,
              controls=[Control.negative("full_rank", "the full-rank cover's lead (a bound blind to rank sparsity)")],
              no_positive_control="no bound is known to lead the rivals here (c3); a positive control would need one",
              preconditions=[Precondition("the rank-sparse bound leads the rivals at weight decay > 0 on some task",
                                          lambda m: m["tasks_with_lead"] > 0)]),
    ]


def _pick(d: dict, key: str) -> dict:
    return d[key]


def _run(scale: Scale, seed: int, out: Path) -> Outcome:
    cfg = config_for(scale)
    claims = {c.id: c for c in declare_claims(scale)}
    rng = np.random.default_rng(seed)
    depth = cfg.depths[0]
    big, hi, lam3 = _grid(cfg)
    scale_note = (f"scale={scale}: depth(s) {cfg.depths}, widths {cfg.widths}, weight decay {cfg.wds}, "
                  f"{cfg.n_seeds} seed(s), {cfg.epochs} epochs; digits n_train={cfg.n_train_digits}, "
                  f"teacher n_train={cfg.n_train_teacher}")

    q = measure(check_quasi_norms, rng)
    claims["c1_quasi_norms"].record(measure(_pick, q, "method"),
                                    controls={"float32_no_floor": measure(_pick, q, "float32_no_floor")})
    wd = check_weight_decay(cfg, seed)
    claims["c2_weight_decay_is_schatten"].record(
        measure(_wd_figures, wd), controls={"unbalanced": measure(_wd_figures, wd, "control_unbalanced_")},
        details={f"L={L}": v for L, v in wd.items()})

    t0 = time.perf_counter()
    rows = run_sweep(cfg, seed)
    sweep_s = time.perf_counter() - t0
    _figures(rows, cfg, out)

    rival_means = {task: {name: [round(v, 2) for v in _mean_over_seeds(rows, f"log10_{name}", task, lam3, depth, cfg)]
                          for name in ("schatten", "exact_rank", "full_rank", *C3_RIVALS, "neyshabur_pacbayes",
                                       "path_norm_l1")} for task in ("digits", "teacher")}
    sel_big = [r for w in big for r in _select(rows, wd=lam3, width=w, depth=depth)]
    pac_below = sum(r["log10_neyshabur_pacbayes"] < r["log10_schatten"] for r in sel_big)
    claims["c3_headline_ordering"].record(
        measure(_c3_figures, rows, cfg, "schatten", depth),
        controls={"full_rank": measure(_c3_figures, rows, cfg, "full_rank", depth)},
        note=scale_note + ("" if cfg.n_seeds >= 3 else " (fewer than 3 seeds: inconclusive by design)"),
        details={"slope_param_covering": {t: _slope(cfg.widths, _mean_over_seeds(rows, "log10_param_covering", t,
                                                                                 lam3, depth, cfg))
                                          for t in ("digits", "teacher")},
                 "mean_log10_by_width": rival_means,
                 "pac_bayes_below_schatten (not judged)": f"{pac_below}/{len(sel_big)}"})

    falls = {f"{t}/w{w}": {f"wd{lam:g}": round(float(np.mean(
        [r["r05_hidden"] for r in _select(rows, task=t, width=w, wd=lam, depth=depth)])), 2) for lam in cfg.wds}
        for t in ("digits", "teacher") for w in cfg.widths}
    claims["c4_bottleneck_rank"].record(
        measure(_c4_figures, rows, cfg, hi or [lam3], [0.0], depth),
        controls={"no_decay": measure(_c4_figures, rows, cfg, [0.0], hi or [lam3], depth)}, note=scale_note,
        details={"r05_by_width_and_wd": falls})

    claims["c5_no_weight_decay"].record(
        measure(_c5_figures, rows, cfg, "schatten", depth),
        controls={"full_rank": measure(_c5_figures, rows, cfg, "full_rank", depth)},
        note=scale_note + " Nets without weight decay are trained for fewer epochs (cfg.epochs_no_wd).")

    notes = ("The Schatten-p bound is a reconstruction (the paper's theorem and constants were not available). "
             f"gamma = {MARGIN_QUANTILE} quantile of training margins for every bound. " + scale_note)
    return Outcome(list(claims.values()), metrics={"sweep_seconds": sweep_s, "runs": rows}, notes=notes)
