"""Reproduction of CTSketch's claims on scikit-learn's 8x8 digits (offline MNIST stand-in), verdicts v4 (issue 58).

Claims (abstract of arXiv 2503.24123), declared in :func:`declare_claims`. Criteria of c2 and c5 from issue 29,
c2b, c1 and c4 from issue 8, c3 from issues 29 and 44; controls of c2, c3 and c5 replaced in issue 58:

c2 (headline) scale: perception learns from sum-only supervision at N = 1,024 (the paper's loss, >= 10k Adam
   steps at batch 16), >= 80%. Judged at ``--scale paper`` only, method AND controls at N = 1,024 (quick and
   smoke leave it unmeasured). Controls: shuffled sums (must fail), the moments variant (must pass).
c2b small N: the same at N = 16 (>= 90%); the same controls at N = 16.
c5 sampling: REINFORCE under the same wall clock stays >= 30 points below CTSketch wherever CTSketch learns.
   Controls: REINFORCE itself from a fresh seed in CTSketch's place (must fail), a supervised MLP (must pass).
c1 exactness (check): the sketch approximates the program with bounded error. Control: rank-1 sketches.
c3 cost: contraction cost per example grows as N log N (the tree's structure): the slope of cost / (N log2 N)
   within +-0.1, both curriculum networks timed; control: the exact sum distribution by sequential dense
   convolution (polynomial, ~N^2).
c4 rank: on a non-linear (full-rank) program, digit-wise max, the rank trades accuracy for cost. Control: the
   same sweep on a max table with its entries permuted (exact, unlearnable).

Variants reported beside the paper's from-scratch recipe (not judged): ``moments`` (this package's
propagated-variance re-binning with a Gaussian likelihood), ``curriculum`` (the paper's loss, one network
trained at N = 16 -> 64 -> 256 -> 1,024) and ``curriculum+moments``. At paper scale every training cell is
checkpointed under ``$NEURIPS25_CTSKETCH_CACHE`` (default ``~/.cache/neurips25/ctsketch``), keyed by the
configuration and the package's source, so an interrupted run resumes where it stopped.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import math
import os
import time
from functools import partial
from pathlib import Path

import numpy as np
import torch
from torch import nn

from neurips25.ctsketch import (
    CTSketchLearner,
    CurriculumStage,
    ExactEnumeration,
    ProgramTree,
    ReinforceLearner,
    contract,
    dense_contract,
    fit_curriculum,
    load_digits_split,
    make_tuples,
    sum_tree,
    tensorize,
    tt_decompose,
)
from neurips25.extras import require
from neurips25.repro import Claim, Control, Criterion, Outcome, Precondition, Scale, measure, progress, register

LEARNS = 0.50  # "CTSketch learns" (c5) and the accuracy floor of c3: 5x chance


@dataclasses.dataclass(frozen=True)
class Config:
    """All knobs of the experiment; ``smoke``, ``quick`` and ``paper`` are three instances."""

    bound_programs: int  # random programs in the error-bound check (c1)
    ns: tuple[int, ...]  # N of the from-scratch c2 cells; ns[0] is c2b's N = 16
    headline_n: int | None  # the cell c2 judges (1,024); None: not measured at this scale
    n_seeds: int  # seeds of the paper's loss and of REINFORCE
    variant_seeds: int  # seeds of moments, curriculum, curriculum+moments
    n_tuples: int  # training tuples per N (the official code: 5,000)
    steps: int  # Adam steps per from-scratch cell (official sum-1024: about 31,000)
    batch: int
    lr: float
    curriculum_ns: tuple[int, ...]
    curriculum_steps: tuple[int, ...]  # per stage
    timing_leaves: int  # leaves per timed contraction call (c3)
    rank_ranks: tuple[int, ...]  # c4: ranks swept on max(a, b) with a one-hot output mode
    rank_tuples: int
    rank_epochs: int
    checkpoint: bool  # resumable cells under the cache
    n_train_images: int = 1000

    def epochs(self, steps: int) -> int:
        """Epochs over ``n_tuples`` that give at least ``steps`` optimiser steps."""
        return max(1, math.ceil(steps / math.ceil(self.n_tuples / self.batch)))


CONFIGS = {
    Scale.SMOKE: Config(
        bound_programs=100,
        ns=(4, 16),
        headline_n=None,
        n_seeds=1,
        variant_seeds=1,
        n_tuples=128,
        steps=8,
        batch=16,
        lr=1e-3,
        curriculum_ns=(4, 16),
        curriculum_steps=(8, 8),
        timing_leaves=1024,
        rank_ranks=(1, 10),
        rank_tuples=200,
        rank_epochs=1,
        checkpoint=False,
    ),
    Scale.QUICK: Config(
        bound_programs=1000,
        ns=(16, 64),
        headline_n=None,
        n_seeds=2,
        variant_seeds=1,
        n_tuples=1500,
        steps=1500,
        batch=16,
        lr=1e-3,
        curriculum_ns=(16, 64, 256, 1024),
        curriculum_steps=(1000, 300, 150, 150),
        timing_leaves=65536,
        rank_ranks=(1, 2, 4, 7, 10),
        rank_tuples=1500,
        rank_epochs=6,
        checkpoint=False,
    ),
    Scale.PAPER: Config(
        bound_programs=1000,
        ns=(16, 1024),
        headline_n=1024,
        n_seeds=2,
        variant_seeds=1,
        n_tuples=5000,
        steps=10_000,
        batch=16,
        lr=1e-3,
        curriculum_ns=(16, 64, 256, 1024),
        curriculum_steps=(2500, 2500, 2500, 2500),
        timing_leaves=65536,
        rank_ranks=(1, 2, 4, 7, 10),
        rank_tuples=3000,
        rank_epochs=15,
        checkpoint=True,
    ),
}


@functools.cache
def _sum_tree(n: int, rebin: str, seed: int) -> ProgramTree:
    """Sketched sum trees are fixed (frozen buffers): build each once per process (N = 1,024 takes seconds)."""
    return sum_tree(n, rebin=rebin, seed=seed)


def perception(seed: int) -> nn.Module:
    """A small MLP on flattened 8x8 images (about 17k parameters)."""
    torch.manual_seed(seed)
    return nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10))


@torch.no_grad()
def digit_accuracy(net: nn.Module, x_test: torch.Tensor, y_test: torch.Tensor) -> float:
    return float((net(x_test).argmax(-1) == y_test).float().mean())


class Cells:
    """Results of training cells, kept as JSON (and checkpoints) under a cache folder when enabled.

    The folder is keyed by the scale, the seed, the configuration and a hash of this package's source,
    so a changed experiment never reuses stale cells; without a folder every cell is computed fresh.
    """

    def __init__(self, scale: Scale, seed: int, cfg: Config):
        self.root = None
        if cfg.checkpoint:
            src = Path(__file__).parent
            h = hashlib.sha1(repr(cfg).encode())
            for f in sorted(src.glob("*.py")):
                h.update(f.read_bytes())
            base = Path(os.environ.get("NEURIPS25_CTSKETCH_CACHE", Path.home() / ".cache/neurips25/ctsketch"))
            self.root = base / f"{scale}-seed{seed}-{h.hexdigest()[:12]}"
            self.root.mkdir(parents=True, exist_ok=True)

    def ckpt(self, name: str) -> Path | None:
        return None if self.root is None else self.root / f"{name}.pt"

    def get(self, name: str, fn):
        """``fn(checkpoint_path)`` once; its JSON result is reused on a resumed run."""
        path = None if self.root is None else self.root / f"{name}.json"
        if path is not None and path.is_file():
            return json.loads(path.read_text())
        result = fn(self.ckpt(name))
        if path is not None:
            tmp = path.with_name(path.name + ".tmp")
            tmp.write_text(json.dumps(result))
            os.replace(tmp, path)
        return result


# ---------------------------------------------------------------------------------------------- c1
def check_exactness(cfg: Config, seed: int) -> dict:
    """Sum-tensor reconstruction, contraction vs brute force, and the error bound on random programs."""
    tl = require("tensorly", "tensor")
    tensor_train = require("tensorly.decomposition", "tensor").tensor_train
    rng = np.random.default_rng(seed)
    recon, contr, tl_gap = {}, {}, {}

    for k in (2, 3, 4):
        T = tensorize(lambda *r: sum(r), [10] * k)
        sk = tt_decompose(T, 2, seed=seed)
        recon[k] = sk.error(T)
        ps = [
            torch.distributions.Dirichlet(torch.ones(10, dtype=torch.float64)).sample((32,)) for _ in range(k)
        ]
        exact = ExactEnumeration(lambda *r: sum(r), [10] * k)(*ps)  # brute force over 10^k worlds
        contr[k] = float((contract(sk, ps) - exact).abs().max())
        tl_full = tl.tt_to_tensor(tensor_train(T.numpy(), [1] + [2] * (k - 1) + [1]))
        tl_gap[k] = float(np.abs(sk.full().numpy() - tl_full).max())
    # bound: |<T - T_hat, p_1 o ... o p_k>| <= ||T - T_hat||_F prod ||p_i||_2, random lookup programs
    violations, worst_ratio = 0, 0.0
    for _ in progress(range(cfg.bound_programs), desc="bound", total=cfg.bound_programs):
        k = int(rng.integers(2, 5))
        d = int(rng.integers(2, 7))
        T = torch.as_tensor(rng.normal(size=(d,) * k))
        r = int(rng.integers(1, 4))
        sk = tt_decompose(T, r, randomized=bool(rng.integers(0, 2)), seed=int(rng.integers(2**31)))
        ps = [
            torch.distributions.Dirichlet(
                torch.ones(d, dtype=torch.float64) * float(rng.uniform(0.1, 2))
            ).sample(
                (8,),
            )
            for _ in range(k)
        ]
        err = (contract(sk, ps) - dense_contract(T, ps)).abs()
        bound = sk.error(T, relative=False) * torch.stack([p.norm(dim=-1) for p in ps]).prod(0)
        violations += int((err > bound + 1e-10).sum())
        real = bound > 1e-9  # exact sketches (bound ~ 1e-16) make the ratio meaningless
        if real.any():
            worst_ratio = max(worst_ratio, float((err[real] / bound[real]).max()))
    # error shrinks as rank grows: one fixed random 10x10x10 program at ranks 1..10
    T = torch.as_tensor(rng.normal(size=(10, 10, 10)))
    rank_curve = [tt_decompose(T, r, randomized=False).error(T) for r in range(1, 11)]
    return {
        "recon_rel_err": recon,
        "contract_max_abs_err": contr,
        "tensorly_max_gap": tl_gap,
        "bound_violations": violations,
        "bound_checks": cfg.bound_programs * 8,
        "worst_err_over_bound": worst_ratio,  # among checks with a bound > 1e-9
        "rank_curve_rel_err": rank_curve,
    }


def rank1_sum_errors(seed: int) -> dict:
    """c1's negative control: the k-input sum tensors sketched at TT-rank 1 (one short of exact)."""
    recon, contr = {}, {}
    for k in (2, 3, 4):
        T = tensorize(lambda *r: sum(r), [10] * k)
        sk = tt_decompose(T, 1, seed=seed)
        recon[k] = sk.error(T)
        ps = [torch.distributions.Dirichlet(torch.ones(10, dtype=torch.float64)).sample((32,)) for _ in range(k)]
        exact = ExactEnumeration(lambda *r: sum(r), [10] * k)(*ps)
        contr[k] = float((contract(sk, ps) - exact).abs().max())
    return {"recon_rel_err": recon, "contract_max_abs_err": contr}


def supervised_gap(seed: int, cfg: Config, data, reinforce_acc: float) -> dict:
    """c5's positive control: the same MLP trained on the digit labels themselves, ``cfg.steps`` Adam steps;
    its accuracy minus REINFORCE's."""
    x_tr, y_tr, x_te, y_te = data
    net = perception(seed)
    opt = torch.optim.Adam(net.parameters(), lr=cfg.lr)
    gen = torch.Generator().manual_seed(seed)
    for _ in range(cfg.steps):
        i = torch.randint(0, len(y_tr), (cfg.batch,), generator=gen)
        loss = nn.functional.cross_entropy(net(x_tr[i]), y_tr[i])
        opt.zero_grad()
        loss.backward()
        opt.step()
    acc = digit_accuracy(net, x_te, y_te)
    return {"gap": acc - reinforce_acc, "acc": acc}


def reinforce_gap(cells, n: int, seed: int, cfg: Config, data, budget_s: float, reinforce_acc: float) -> dict:
    """c5's negative control: REINFORCE itself from a fresh seed (its own tuples and weights) in CTSketch's place,
    under the same wall clock; its accuracy minus the REINFORCE baseline's. It passes only if a sampling learner
    can beat sampling by 30 points, i.e. if the gap criterion measures seed noise."""
    r = cells.get(f"reinforce-control-n{n}-s{seed}", partial(train_reinforce, n, seed, cfg, data, budget_s))
    return {"gap": r["acc"] - reinforce_acc, "acc": r["acc"]}


# ---------------------------------------------------------------------------------------------- c2
def train_sum(n: int, seed: int, cfg: Config, data, variant: str, ckpt, shuffle_labels: bool = False) -> dict:
    """Train the MLP from scratch through the sketched sum tree on ``n``-tuples; per-digit test accuracy.

    ``variant``: "paper" (L1 on the expected sum, official re-binning) or "moments". ``shuffle_labels``
    permutes the sums across tuples (the control: the labels then carry no information on the digits).
    """
    x_tr, y_tr, x_te, y_te = data
    index, sums = make_tuples(y_tr, n, cfg.n_tuples, seed)
    if shuffle_labels:
        sums = sums[torch.randperm(len(sums), generator=torch.Generator().manual_seed(seed + 7))]
    rebin, loss = ("official", "l1") if variant == "paper" else ("moments", "gaussian_nll")
    net = perception(seed)
    learner = CTSketchLearner(net, _sum_tree(n, rebin, seed), loss=loss)
    init_acc = digit_accuracy(net, x_te, y_te)
    hist = learner.fit(
        x_tr, sums, index=index, epochs=cfg.epochs(cfg.steps), batch_size=cfg.batch, lr=cfg.lr, seed=seed,
        checkpoint=ckpt,
    )
    return {
        "acc": digit_accuracy(net, x_te, y_te),
        "init_acc": init_acc,
        "train_s": hist["train_s"],
        "train_cpu_s": hist["train_cpu_s"],
        "steps": hist["steps"],
        "final_loss": hist["loss"][-1],
        "resumed_from_epoch": hist["resumed_from"],
    }


def train_reinforce(n: int, seed: int, cfg: Config, data, budget_s: float, ckpt) -> dict:
    """REINFORCE (8 samples, leave-one-out baseline) on the same tuples for ``budget_s`` seconds."""
    x_tr, y_tr, x_te, y_te = data
    index, sums = make_tuples(y_tr, n, cfg.n_tuples, seed)
    net = perception(seed)
    learner = ReinforceLearner(net, _sum_program, 10, n_samples=8)
    hist = learner.fit(
        x_tr, sums, index=index, epochs=10_000, batch_size=cfg.batch, lr=cfg.lr, seed=seed,
        time_budget=budget_s, checkpoint=ckpt,
    )
    return {"acc": digit_accuracy(net, x_te, y_te), "steps": hist["steps"], "train_s": hist["train_s"],
            "train_cpu_s": hist["train_cpu_s"], "budget_s": budget_s}


def _sum_program(symbols: torch.Tensor) -> torch.Tensor:
    return symbols.sum(-1).float()


def train_curriculum(seed: int, cfg: Config, data, loss_variant: str, ckpt_dir, time_cost: bool) -> dict:
    """One network through N = 16 -> 64 -> 256 -> 1,024; accuracy (and, for c3, contraction cost) per stage."""
    x_tr, y_tr, x_te, y_te = data
    rebin, loss = ("official", "l1") if loss_variant == "paper" else ("moments", "gaussian_nll")
    stages = []
    for i, (n, steps) in enumerate(zip(cfg.curriculum_ns, cfg.curriculum_steps)):
        index, sums = make_tuples(y_tr, n, cfg.n_tuples, seed + 1000 * i)
        stages.append(CurriculumStage(_sum_tree(n, rebin, seed), x_tr, sums, index, cfg.epochs(steps)))
    net = perception(seed)
    per_stage: dict = {}

    def after(i: int, learner, hist: dict) -> None:
        n = cfg.curriculum_ns[i]
        row = {"acc": digit_accuracy(net, x_te, y_te), "steps": hist["steps"], "train_s": hist["train_s"],
               "train_cpu_s": hist["train_cpu_s"]}
        if time_cost:
            row["contract_s_per_example"] = contraction_cost(net, n, cfg, data, seed)
        per_stage[str(n)] = row

    fit_curriculum(
        net, stages, loss=loss, batch_size=cfg.batch, lr=cfg.lr, seed=seed, checkpoint_dir=ckpt_dir,
        callback=after,
    )
    return {"stages": per_stage, "total_steps": sum(r["steps"] for r in per_stage.values())}


# ---------------------------------------------------------------------------------------------- c3
def _best_cpu_s(fn, repeat: int = 5) -> float:
    """Best CPU seconds of one call over ``repeat`` calls (CPU time: robust to other jobs' load)."""
    fn()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.thread_time()
        fn()
        best = min(best, time.thread_time() - t0)
    return best


def contraction_cost(net: nn.Module, n: int, cfg: Config, data, seed: int) -> float:
    """CPU seconds per example of the sum-``n`` tree's contraction, forward and backward.

    The inputs are the trained network's own digit distributions on held-out tuples; every call holds
    ``cfg.timing_leaves`` leaves, so per-call overhead is amortised the same way at every ``n``.
    """
    _, _, x_te, y_te = data
    b = max(1, cfg.timing_leaves // n)
    index, _ = make_tuples(y_te, n, b, seed)
    with torch.no_grad():
        ps0 = torch.softmax(net(x_te), -1)[index]  # [b, n, 10]
    tree = _sum_tree(n, "official", seed)

    def once():
        ps = ps0.clone().requires_grad_(True)
        tree(ps).sum().backward()

    return _best_cpu_s(once) / b


def dense_sum_cost(ns, cfg: Config, seed: int) -> dict:
    """The control of c3: CPU seconds per example of the EXACT sum distribution by sequential dense convolution
    (p_1 * p_2 * ... * p_N, forward), the same leaves per call as the tree. Polynomial (~N^2: the partial-sum
    domain grows by 9 per digit), so only its slope can fail the N log N criterion."""
    gen = torch.Generator().manual_seed(seed)
    costs = {}
    for n in ns:
        b = max(1, cfg.timing_leaves // n)
        ps = torch.softmax(torch.randn(b, n, 10, generator=gen), -1)
        kernels = ps.flip(-1)[:, :, None, :]  # [b, n, 1, 10]: conv1d correlates, so flip for a convolution

        def once(ps=ps, kernels=kernels, b=b, n=n):
            with torch.no_grad():
                dp = ps[:, 0]
                for i in range(1, n):
                    dp = nn.functional.conv1d(nn.functional.pad(dp, (9, 9))[None], kernels[:, i], groups=b)[0]
            return dp

        costs[n] = _best_cpu_s(once, repeat=3) / b
    return {"excess_slope": excess_slope(list(costs), list(costs.values())), "contract_s_per_example": costs,
            "loglog_slope": loglog_slope(list(costs), list(costs.values()))}


def loglog_slope(xs, ys) -> float:
    return float(np.polyfit(np.log(np.asarray(xs, float)), np.log(np.asarray(ys, float)), 1)[0])


# ---------------------------------------------------------------------------------------------- c4
def digit_max(a, b):
    """The non-linear sub-program of c4 (works on numbers and numpy arrays)."""
    return np.maximum(a, b)


def _best_ms(fn, repeat: int = 5, number: int = 10) -> float:
    """Best mean milliseconds per call over ``repeat`` rounds of ``number`` calls."""
    fn()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t0) / number * 1e3)
    return best


def shuffled_max_table(seed: int):
    """c4's negative control: the max table with its 100 entries permuted (exact at rank 10, but its outputs
    no longer follow the digits, so the max labels cannot teach the perception through it)."""
    table = np.maximum.outer(np.arange(10), np.arange(10)).ravel()
    table = np.random.default_rng([seed, 44]).permutation(table).reshape(10, 10)

    def program(a, b):
        return table[np.asarray(a, dtype=int), np.asarray(b, dtype=int)]

    return program


def rank_sweep(cfg: Config, data, seed: int, program=digit_max, ranks=None) -> dict:
    """``program`` (default max(a, b)) of two digits with a one-hot output mode (full TT-rank 10), trained on
    max labels: accuracy, error, time vs rank."""
    x_tr, y_tr, x_te, y_te = data
    ranks = cfg.rank_ranks if ranks is None else ranks
    index, _ = make_tuples(y_tr, 2, cfg.rank_tuples, seed)
    labels = y_tr[index].max(-1).values.float()
    gen = torch.Generator().manual_seed(seed)
    # the same peaked input distributions for every rank: TV of the sketched output to the exact one
    probe = torch.softmax(3.0 * torch.randn(512, 2, 10, generator=gen), -1)
    # a batch large enough that the contraction's arithmetic, not call overhead, is timed
    big = list(torch.softmax(torch.randn(32768, 2, 10, generator=gen), -1).unbind(1))
    exact_tree = ProgramTree(program, 2, 10, rank=100, output="onehot", vectorized=True, seed=seed)
    rows = {}
    for r in progress(ranks, desc="rank sweep"):
        tree = ProgramTree(program, 2, 10, rank=r, output="onehot", vectorized=True, seed=seed)
        learner = CTSketchLearner(perception(seed), tree)
        t0 = time.perf_counter()
        learner.fit(x_tr, labels, index=index, epochs=cfg.rank_epochs, batch_size=16, lr=cfg.lr, seed=seed)
        train_s = time.perf_counter() - t0
        with torch.no_grad():
            tv = 0.5 * (tree(probe) - exact_tree(probe)).abs().sum(-1).mean().item()
            contract_ms = _best_ms(lambda: tree.levels[0].sketch.contract(big))  # noqa: B023
        rows[r] = {
            "acc": digit_accuracy(learner.perception, x_te, y_te),
            "rel_error": tree.rel_errors[0],
            "tv": tv,
            "train_s": train_s,
            "contract_ms": contract_ms,
            "n_params": tree.levels[0].sketch.n_params,
        }
    return rows


C3_BAND = 0.1  # c3 (v3): the log-log slope of cost / (N log2 N) within +-0.1 of 0 (the review's band)


def excess_slope(ns, costs) -> float:
    """Log-log slope of ``cost / (N log2 N)`` against N: 0 for cost exactly proportional to N log N."""
    ns = np.asarray(ns, float)
    return loglog_slope(ns, np.asarray(costs, float) / (ns * np.log2(ns)))


def _exactness_figures(ex: dict) -> dict:
    curve = ex["rank_curve_rel_err"]
    return {
        "recon_rel_err_max": max(ex["recon_rel_err"].values()),
        "contract_err_max": max(ex["contract_max_abs_err"].values()),
        "tensorly_gap_max": max(ex["tensorly_max_gap"].values()),
        "bound_violations": ex["bound_violations"],
        "rank_curve_monotone": all(b <= a + 1e-12 for a, b in zip(curve, curve[1:])),
        "rank_curve_last": curve[-1],
    }


def _exact_rule(m) -> bool:
    return (m["recon_rel_err_max"] < 1e-6 and m["contract_err_max"] < 1e-5 and m["tensorly_gap_max"] < 1e-5
            and m["bound_violations"] == 0 and m["rank_curve_monotone"] and m["rank_curve_last"] < 1e-10)


def _rank_figures(rows: dict, ranks: list) -> dict:
    errs = [rows[r]["rel_error"] for r in ranks]
    return {
        "acc_gain": rows[ranks[-1]]["acc"] - rows[ranks[0]]["acc"],
        "err_top": errs[-1],
        "err_monotone": all(b <= a + 1e-9 for a, b in zip(errs, errs[1:])),
        "time_ratio": rows[ranks[-1]]["contract_ms"] / max(rows[ranks[0]]["contract_ms"], 1e-12),
    }


def shuffled_table_figures(cfg: Config, data, seed: int, ranks: tuple) -> dict:
    """c4's negative control, run here: the rank sweep on the permuted max table, judged on the same figures."""
    rows = rank_sweep(cfg, data, seed, program=shuffled_max_table(seed), ranks=ranks)
    return {**_rank_figures(rows, list(ranks)), "sweep": rows}


def _rank_rule(m) -> bool:
    return m["err_monotone"] and m["err_top"] < 1e-6 and m["time_ratio"] > 1 and m["acc_gain"] >= 0.10


INSTANCE = dict(instance="reduced", instance_note=(
    "scikit-learn's 8x8 handwritten digits (1,000 training images) and a small MLP, in place of MNIST and the "
    "paper's perception network; the same sum-N / program tasks"))


def declare_claims(scale: Scale) -> list[Claim]:
    """The six claims with their criteria and controls, declared before anything is measured."""
    cfg = CONFIGS[Scale.parse(scale)]
    n0 = cfg.ns[0]
    return [
        Claim(
            "c2_scale",
            statement="Perception networks learn to high accuracy from supervision on the final output only, "
            "on tasks with one thousand inputs (sum of 1,024 digits).",
            paper_value="'high accuracy on tasks with one thousand inputs' (sum-1024 MNIST); exact table "
            "values not known here",
            criterion=Criterion.at_least(
                "acc", 0.80, "paper's recipe (L1 on the expected sum, official re-binning, from scratch, >= 10k Adam "
                f"steps at batch 16): per-digit test accuracy >= 80% at N = 1,024, mean of {cfg.n_seeds} seeds; "
                "judged at --scale paper only (method and controls at N = 1,024)"),
            controls=[
                Control.negative("shuffled_sums", "the same training at N = 1,024 on sums permuted across tuples"),
                Control.positive("moments", "the moments re-binning with a Gaussian likelihood (this package's "
                                 "variant) at N = 1,024, same budget and network: the instance lets sum-only "
                                 "supervision reach it"),
            ],
            kind="headline", **INSTANCE,
        ),
        Claim(
            "c2b_small_n",
            statement="The same learning from the sum only works at small N.",
            paper_value="not given separately; sum-N tasks with N = 4 ... 1,024",
            criterion=Criterion.at_least(
                "acc", 0.90, f"paper's recipe: per-digit accuracy >= 90% at N = {n0} (mean of {cfg.n_seeds} seeds; "
                "issue 8's threshold)"),
            controls=[Control.negative("shuffled_sums", "the same training on shuffled sums"),
                      Control.positive("moments", "the moments variant at the same N and budget")],
            kind="supporting", **INSTANCE,
        ),
        Claim(
            "c5_sampling",
            statement="Sampling-based learning (REINFORCE) fails where CTSketch learns.",
            paper_value="baselines time out or stay low on large sum-N; exact values not known here",
            criterion=Criterion.at_least(
                "gap", 0.30, f"at every N of {list(cfg.ns)} where a from-scratch CTSketch run (paper's loss or "
                f"moments) reaches >= {LEARNS:.0%}, its accuracy minus REINFORCE's under the same wall clock "
                "(means over seeds) is >= 30 points (the smallest such gap)"),
            controls=[
                Control.negative("reinforce_fresh_seed", f"REINFORCE itself, from a fresh seed (its own tuples and "
                                 f"weights), in CTSketch's place at N = {n0} under the same wall clock: a sampling "
                                 "learner must not clear the gap over sampling"),
                Control.positive("supervised", "the same MLP trained on the digit labels themselves, as many steps "
                                 f"(N = {n0}'s REINFORCE): a learner that works must clear the gap"),
            ],
            preconditions=[Precondition(f"CTSketch reaches >= {LEARNS:.0%} at some N", lambda m: m["n_learns"] >= 1)],
            kind="supporting", **INSTANCE,
        ),
        Claim(
            "c1_exactness",
            statement="The sketched tensor approximates the (sub-)program with bounded error; the sum "
            "tensor is reproduced exactly at TT-rank 2.",
            paper_value="theoretical error bound; no figure known here",
            criterion=Criterion(
                "rank-2 TT of the k-input sum tensor (k=2..4) reconstructs to rel. error < 1e-6; TT contraction = "
                "brute-force enumeration to 1e-5; reconstruction = tensorly tensor_train to 1e-5; |contraction "
                "error| <= ||T - T_hat||_F prod||p_i||_2 on every random program (1,000 at quick scale); error "
                "decreases with rank", "recon_rel_err_max", _exact_rule, "< 1e-6 (and the rest)"),
            controls=[Control.negative("rank1", "the sum tensors sketched at TT-rank 1 (one short of exact)")],
            kind="check",
        ),
        Claim(
            "c3_cost",
            statement="Cost grows linearly with the number of inputs, while the flat program tensor is "
            "infeasible beyond a handful of inputs.",
            paper_value="O(k |R| r^2) per example; no figure known here",
            criterion=Criterion(
                f"v3 (issue 44): judged against the structure's N log N (level domains 9 * 2^l + 1): the log-log "
                f"slope of contraction CPU time per example / (N log2 N) vs N over {list(cfg.curriculum_ns)} (fwd + "
                f"bwd, best of 5, {cfg.timing_leaves} leaves per call) is within +-{C3_BAND:g} of 0, on both "
                "curriculum networks (the worse one)",
                "excess_slope", lambda m: abs(m["excess_slope"]) <= C3_BAND, f"|.| <= {C3_BAND:g}"),
            controls=[Control.negative("dense_convolution", "v4 (issue 58): the exact sum distribution by "
                                       "sequential dense convolution of the N digit distributions, timed at the same "
                                       "N and leaves per call: polynomial (~N^2), so only its slope can fail")],
            no_positive_control="the N log N count is the tree's structure itself; no other timing is known to "
            "follow it exactly",
            preconditions=[Precondition(f"the timed curriculum+moments network reaches >= {LEARNS:.0%} at every "
                                        "timed N", lambda m: m["min_acc_timed"] >= LEARNS)],
            kind="supporting", **INSTANCE,
        ),
        Claim(
            "c4_rank",
            statement="For a non-linear program the sketch rank trades approximation accuracy for cost.",
            paper_value="rank/decomposition guidance; no figure known here",
            criterion=Criterion(
                "max(a, b) of two digits with a one-hot output mode (TT-rank 10), trained with NLL: reconstruction "
                "error decreases with rank and is < 1e-6 at rank 10; contraction time at rank 10 > rank 1; "
                "per-digit accuracy at rank 10 >= rank-1 accuracy + 10 points", "acc_gain", _rank_rule,
                ">= 0.10 (and the rest)"),
            controls=[Control.negative("shuffled_table", "the same sweep (ranks 1 and 10) on the max table with its "
                                       "entries permuted: exact at rank 10 but unlearnable from max labels")],
            no_positive_control="max itself is the only full-rank program here whose labels teach the digits; no "
            "planted rank/accuracy trade-off is known",
            kind="supporting", **INSTANCE,
        ),
    ]


@register("ctsketch")
def run(scale: Scale, seed: int, out: Path) -> Outcome:
    return _run(scale, seed, out)  # threads: capped at 1 by the runner (repro.thread_cap)


def _mean_acc(rows: list[dict]) -> dict:
    """A variant's figures: its per-digit accuracy, mean over the seeds it ran."""
    return {"acc": float(np.mean([r["acc"] for r in rows])), "per_seed": [r["acc"] for r in rows]}


def _c1_control(seed: int) -> dict:
    """c1's control, its own figures only (the rule reads the reconstruction error first)."""
    r1 = rank1_sum_errors(seed)
    return {"recon_rel_err_max": max(r1["recon_rel_err"].values()),
            "contract_err_max": max(r1["contract_max_abs_err"].values()), "rank1": r1}


def _run(scale: Scale, seed: int, out: Path) -> Outcome:
    cfg = CONFIGS[scale]
    claims = {c.id: c for c in declare_claims(scale)}
    torch.manual_seed(seed)
    data = load_digits_split(cfg.n_train_images, seed)
    seeds = [seed + i for i in range(cfg.n_seeds)]
    vseeds = seeds[: cfg.variant_seeds]
    cells = Cells(scale, seed, cfg)
    big = cfg.headline_n
    n0, n_top = cfg.ns[0], cfg.ns[-1]

    ex = check_exactness(cfg, seed)
    claims["c1_exactness"].record(
        measure(_exactness_figures, ex), controls={"rank1": measure(_c1_control, seed)}, details=ex,
        note="bound checked on 8 random input distributions per random program")

    # c2, c2b, c5: training cells, the largest N first (the headline cell is what a resumed run needs)
    runs: dict = {"paper": {}, "moments": {}, "reinforce": {}}
    curr: dict = {"curriculum": {}, "curriculum+moments": {}}
    for s in progress(seeds, desc="c2 seeds"):
        for n in sorted(cfg.ns, reverse=True):
            runs["paper"].setdefault(n, []).append(
                cells.get(f"paper-n{n}-s{s}", partial(train_sum, n, s, cfg, data, "paper")))
            if n == n_top and s in vseeds:
                for name, lv in (("curriculum", "paper"), ("curriculum+moments", "moments")):
                    curr[name][s] = cells.get(
                        f"{name}-s{s}",
                        lambda c, lv=lv, s=s: train_curriculum(
                            s, cfg, data, lv, None if c is None else c.with_suffix(""), s == seed))
            if s in vseeds:
                runs["moments"].setdefault(n, []).append(
                    cells.get(f"moments-n{n}-s{s}", partial(train_sum, n, s, cfg, data, "moments")))
            # REINFORCE gets the wall clock of the slowest CTSketch run it is compared with
            budget = max(runs[v][n][-1]["train_s"] for v in ("paper", "moments") if n in runs[v]
                         and (v == "paper" or s in vseeds))
            runs["reinforce"].setdefault(n, []).append(
                cells.get(f"reinforce-n{n}-s{s}", partial(train_reinforce, n, s, cfg, data, budget)))
    mean = {v: {n: float(np.mean([r["acc"] for r in rs])) for n, rs in runs[v].items()} for v in runs}
    curr_acc = {name: {n: float(np.mean([c["stages"][str(n)]["acc"] for c in byseed.values()]))
                       for n in cfg.curriculum_ns} for name, byseed in curr.items()}
    c2_note = (
        f"8x8 sklearn digits, MLP; {cfg.n_tuples} tuples per N drawn from {cfg.n_train_images} images; "
        f"{runs['paper'][n_top][0]['steps']} Adam steps at batch {cfg.batch} per from-scratch cell "
        f"(official sum-1024: 100 epochs x 5,000 tuples / 16 = 31k). Variants ({cfg.variant_seeds} seed(s)): "
        f"moments (c2's positive control); curriculum {list(cfg.curriculum_ns)} with "
        f"{list(cfg.curriculum_steps)} steps per stage, the paper's loss or moments (reported, not judged)."
    )
    measured2 = {"digit_acc_mean": mean, "curriculum_acc_mean": curr_acc, "runs": runs, "curriculum": curr}
    if big is None:
        claims["c2_scale"].record(
            None, controls={"shuffled_sums": None, "moments": None}, note=c2_note, details=measured2,
            unmeasured=f"N = 1,024 at the paper's budget (method and controls) runs at --scale paper only; this "
            f"scale trains N in {list(cfg.ns)}")
    else:
        claims["c2_scale"].record(
            measure(_mean_acc, runs["paper"][big]),
            controls={"shuffled_sums": measure(cells.get, f"control-n{big}-s{seed}", partial(
                train_sum, big, seed, cfg, data, "paper", shuffle_labels=True)),
                "moments": measure(_mean_acc, runs["moments"][big])},
            note=c2_note, details=measured2)
    claims["c2b_small_n"].record(
        measure(_mean_acc, runs["paper"][n0]),
        controls={"shuffled_sums": measure(cells.get, f"control-n{n0}-s{seed}", partial(
            train_sum, n0, seed, cfg, data, "paper", shuffle_labels=True)),
            "moments": measure(_mean_acc, runs["moments"][n0])})

    gaps, where = {}, []
    for n in cfg.ns:
        best = max(mean["paper"][n], mean["moments"][n])
        gaps[n] = {"ctsketch_best": best, "reinforce": mean["reinforce"][n], "gap": best - mean["reinforce"][n]}
        if best >= LEARNS:
            where.append(n)
    rf0 = mean["reinforce"][n0]
    claims["c5_sampling"].record(
        {"gap": min(gaps[n]["gap"] for n in where) if where else None, "n_learns": len(where)},
        controls={"reinforce_fresh_seed": measure(reinforce_gap, cells, n0, seed + 101, cfg, data,
                                                  runs["reinforce"][n0][0]["budget_s"], rf0),
                  "supervised": measure(supervised_gap, seed, cfg, data, rf0)},
        details={"by_n": gaps, "learns_at": where})

    ns_t = list(cfg.curriculum_ns)
    timed = {name: curr[name][seed]["stages"] for name in curr}
    costs = {name: [st[str(n)]["contract_s_per_example"] for n in ns_t] for name, st in timed.items()}
    accs = {name: [st[str(n)]["acc"] for n in ns_t] for name, st in timed.items()}
    excess = {name: excess_slope(ns_t, c) for name, c in costs.items()}
    worst = max(excess, key=lambda k: abs(excess[k]))
    cost = costs["curriculum+moments"]
    claims["c3_cost"].record(
        {"excess_slope": excess[worst], "min_acc_timed": min(accs["curriculum+moments"])},
        controls={"dense_convolution": measure(dense_sum_cost, ns_t, cfg, seed)},
        details={"contract_s_per_example": {k: dict(zip(ns_t, v)) for k, v in costs.items()},
                 "acc": {k: dict(zip(ns_t, v)) for k, v in accs.items()},
                 "loglog_slope": {k: loglog_slope(ns_t, v) for k, v in costs.items()},
                 "nlogn_slope": loglog_slope(ns_t, [n * math.log2(n) for n in ns_t]), "excess_slope": excess,
                 "flat_tensor_log10_bytes": {n: n + float(np.log10(4)) for n in (6, *ns_t)}},
        note="CPU time (time.thread_time) of the sketched tree, inputs = each curriculum network's own "
        "distributions on held-out tuples; both curriculum networks timed, the worse one judged")

    rows = rank_sweep(cfg, data, seed)
    ranks = list(cfg.rank_ranks)
    claims["c4_rank"].record(
        measure(_rank_figures, rows, ranks),
        controls={"shuffled_table": measure(shuffled_table_figures, cfg, data, seed, (ranks[0], ranks[-1]))},
        details={"sweep": rows},
        note=f"{cfg.rank_epochs} epochs, {cfg.rank_tuples} pairs, NLL on the sketched "
        f"output distribution; tv = mean total variation to the exact output distribution on test pairs")

    _figures(out, mean, curr_acc, ns_t, cost, rows)
    metrics = {"c1": ex, "c2": measured2, "c3": claims["c3_cost"].measured, "c4": rows,
               "cache": None if cells.root is None else str(cells.root)}
    return Outcome(
        list(claims.values()), metrics=metrics,
        notes="scikit-learn 8x8 digits stand in for MNIST (offline; no package here ships MNIST); small "
        "MLP perception; see claim notes for budgets.")


def _figures(out: Path, mean, curr_acc, ns_t, cost, rows) -> None:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5.5, 3.5))
    ax = fig.subplots()
    for variant, marker in (("paper", "o"), ("moments", "s"), ("reinforce", "x")):
        ns = sorted(mean[variant])
        ax.plot(ns, [100 * mean[variant][n] for n in ns], marker=marker, label=f"{variant} (scratch)")
    for name, marker in (("curriculum", "^"), ("curriculum+moments", "v")):
        ax.plot(ns_t, [100 * curr_acc[name][n] for n in ns_t], marker=marker, ls="--", label=name)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("N (digits per sum)")
    ax.set_ylabel("per-digit test accuracy (%)")
    ax.axhline(10, color="grey", lw=0.5, ls=":")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "figures" / "accuracy_vs_n.png", dpi=120)

    fig = Figure(figsize=(8, 3.2))
    a1, a2 = fig.subplots(1, 2)
    ranks = sorted(rows)
    a1.plot(ranks, [100 * rows[r]["acc"] for r in ranks], marker="o")
    a1.set_xlabel("TT rank")
    a1.set_ylabel("per-digit accuracy (%)")
    a1.set_title("max(a, b), one-hot output")
    a2.plot(ranks, [rows[r]["contract_ms"] for r in ranks], marker="o", label="contraction (ms)")
    a2.plot(ranks, [rows[r]["rel_error"] for r in ranks], marker="s", label="rel. error")
    a2.set_xlabel("TT rank")
    a2.legend()
    fig.tight_layout()
    fig.savefig(out / "figures" / "rank_tradeoff.png", dpi=120)

    fig = Figure(figsize=(5, 3.5))
    ax = fig.subplots()
    ax.loglog(ns_t, [1e6 * c for c in cost], marker="o")
    ax.set_xlabel("N")
    ax.set_ylabel("contraction CPU us per example (fwd + bwd)")
    ax.set_title(f"slope {loglog_slope(ns_t, cost):.2f}")
    fig.tight_layout()
    fig.savefig(out / "figures" / "contraction_cost_vs_n.png", dpi=120)
