"""Offline multi-objective tasks generated here, Off-MOO-Bench style, with the best designs removed.

A task's dataset is what an optimisation campaign would have logged: every design evaluated by a
short NSGA-II run plus uniform random designs. The best ``prune_top`` share of that pool, by
non-dominated rank then crowding, is removed, so the true Pareto front is NOT in the data and an
offline optimiser has to extrapolate to beat the data's best points. (Off-MOO-Bench removes about the
top 40 %; the exact share used by the paper is reconstructed, hence a parameter.)

Constrained problems (``problem.has_constraints()``): the task keeps the data's constraint violation
``CV``; ranking (for pruning, ``best`` and the normalisation) follows constrained dominance, so the
best *feasible* designs are pruned (the top ``prune_top`` share of the feasible ones) and infeasible
ones stay in the data, ranked last.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from pymoo.core.problem import Problem

from neurips25.pref_diffusion.preferences import diversity_ranks
from neurips25.pref_diffusion.problems import constraint_violation, get_problem, true_front
from neurips25.pref_diffusion.validation import check_designs, check_positive_int

__all__ = ["OfflineTask", "make_offline_task", "make_task"]


@dataclasses.dataclass
class OfflineTask:
    """An offline dataset of a known problem.

    Attributes
    ----------
    name : str
    X : ndarray of shape (n, d)
        Designs the optimiser may see.
    Y : ndarray of shape (n, m)
        Their objective values (minimisation).
    problem : pymoo Problem
        The exact oracle, used only for the final evaluation.
    xl, xu : ndarray of shape (d,)
        Design bounds.
    ideal, nadir : ndarray of shape (m,)
        Per-objective min and max of ``Y`` (of its feasible rows on a constrained problem): the
        normalisation of every hypervolume here.
    pf : ndarray of shape (k, m) or None
        Analytic Pareto front where known (ZDT, DTLZ), else None.
    CV : ndarray of shape (n,) or None
        Constraint violation of each design (0 = feasible); None for an unconstrained problem.
    """

    name: str
    X: np.ndarray
    Y: np.ndarray
    problem: Problem
    xl: np.ndarray
    xu: np.ndarray
    ideal: np.ndarray
    nadir: np.ndarray
    pf: np.ndarray | None = None
    CV: np.ndarray | None = None

    @property
    def constrained(self) -> bool:
        """Whether the problem has constraints (then ``CV`` is set)."""
        return self.CV is not None

    def violation(self, X) -> np.ndarray | None:
        """Exact constraint violation of designs ``X`` (n, d) -> (n,), or None when unconstrained."""
        X = check_designs(X, "X", self.xl, self.xu)
        return constraint_violation(self.problem, X)

    def pareto_front(self) -> np.ndarray | None:
        """The analytic Pareto front (k, m), or None when unknown."""
        return self.pf

    def evaluate(self, X) -> np.ndarray:
        """Exact objectives of designs ``X`` (n, d) -> (n, m); designs must lie within the bounds."""
        X = check_designs(X, "X", self.xl, self.xu)
        if X.shape[1] != len(self.xl):
            raise ValueError(f"`X` must have {len(self.xl)} columns, got {X.shape[1]}")
        return np.asarray(self.problem.evaluate(X, return_values_of=["F"]), dtype=float)

    def best(self, n: int = 256) -> tuple[np.ndarray, np.ndarray]:
        """D(best): the ``n`` best data points by (non-dominated rank, crowding), as (X, Y); feasible
        designs first on a constrained problem."""
        n = check_positive_int(n, "n")
        _, _, rank = diversity_ranks(self.Y, cv=self.CV)
        idx = np.argsort(rank)[:n]
        return self.X[idx], self.Y[idx]


def _nsga2_history(problem: Problem, n_evals: int, pop_size: int, seed: int) -> np.ndarray:
    """Every design NSGA-II evaluates in a run of about ``n_evals`` evaluations."""
    from pymoo.algorithms.moo.nsga2 import NSGA2
    from pymoo.core.callback import Callback
    from pymoo.optimize import minimize

    class Collect(Callback):
        def __init__(self):
            super().__init__()
            self.X = []

        def notify(self, algorithm):
            off = algorithm.off if algorithm.off is not None else algorithm.pop
            self.X.append(off.get("X"))

    cb = Collect()
    n_gen = max(2, -(-n_evals // pop_size) + 1)  # the first call sees the initial population
    minimize(problem, NSGA2(pop_size=pop_size), ("n_gen", n_gen), seed=seed, callback=cb, verbose=False)
    return np.concatenate(cb.X)


def make_offline_task(
    problem: str | Problem,
    n: int = 5000,
    prune_top: float = 0.4,
    n_var: int | None = None,
    n_obj: int | None = None,
    random_fraction: float = 0.3,
    seed: int = 0,
    name: str | None = None,
) -> OfflineTask:
    """Build an offline dataset of ``n`` designs for a pymoo problem, with the best share removed.

    Parameters
    ----------
    problem : str or pymoo Problem
        A name understood by :func:`~neurips25.pref_diffusion.problems.get_problem` (``"zdt1"``,
        ``"dtlz2"``, ``"re21"``, ...) or any bounded pymoo ``Problem``.
    n : int
        Designs kept in the dataset.
    prune_top : float in [0, 1)
        Share of the generated pool removed from the top by (non-dominated rank, crowding); on a
        constrained problem, share of the pool's feasible designs (infeasible ones are all kept).
    n_var, n_obj : int, optional
        Sizes of scalable suites (only with a name).
    random_fraction : float in [0, 1]
        Share of the pool drawn uniformly in the bounds; the rest is NSGA-II's evaluation history.
    seed : int
        Drives the NSGA-II run, the random designs and the subsampling.

    Examples
    --------
    >>> task = make_offline_task("zdt1", n=300, n_var=5, seed=0)
    >>> task.X.shape, task.Y.shape, task.pf.shape
    ((300, 5), (300, 2), (100, 2))
    """
    if isinstance(problem, str):
        name = name or problem.lower()
        problem = get_problem(problem, n_var=n_var, n_obj=n_obj)
    elif isinstance(problem, Problem):
        if n_var is not None or n_obj is not None:
            raise ValueError("`n_var` / `n_obj` apply only when `problem` is a name")
        name = name or type(problem).__name__.lower()
    else:
        raise TypeError(f"`problem` must be a problem name or a pymoo Problem, got {type(problem).__name__}")
    n = check_positive_int(n, "n")
    if not 0 <= prune_top < 1:
        raise ValueError(f"`prune_top` must be in [0, 1), got {prune_top!r}")
    if not 0 <= random_fraction <= 1:
        raise ValueError(f"`random_fraction` must be in [0, 1], got {random_fraction!r}")
    if problem.n_obj < 2:
        raise ValueError(f"`problem` must have at least 2 objectives, got {problem.n_obj}")
    xl, xu = np.asarray(problem.xl, float), np.asarray(problem.xu, float)
    if not (np.all(np.isfinite(xl)) and np.all(np.isfinite(xu))):
        raise ValueError("`problem` must have finite bounds xl / xu")
    rng = np.random.default_rng(seed)
    # the pool is larger than n so that pruning still leaves n designs
    pool_size = int(np.ceil(n / (1 - prune_top) * 1.1))
    n_rand = int(round(random_fraction * pool_size))
    parts = [xl + rng.random((n_rand, len(xl))) * (xu - xl)]
    if pool_size - n_rand > 0:
        parts.append(_nsga2_history(problem, pool_size - n_rand, pop_size=100, seed=seed))
    pool = np.unique(np.clip(np.concatenate(parts), xl, xu), axis=0)
    F = np.asarray(problem.evaluate(pool, return_values_of=["F"]), dtype=float)
    CV = constraint_violation(problem, pool)
    ok = np.all(np.isfinite(F), axis=1) & (True if CV is None else np.isfinite(CV))
    pool, F = pool[ok], F[ok]
    CV = None if CV is None else CV[ok]
    _, _, rank = diversity_ranks(F, cv=CV)
    order = np.argsort(rank, kind="stable")
    if CV is None:
        keep = order[int(round(prune_top * len(pool))) :]
    else:
        # constrained: prune the top share of the FEASIBLE designs (ranked first by constrained dominance)
        # and keep every infeasible one; pruning the top share of the whole pool removed every feasible
        # design whenever fewer than `prune_top` of them were feasible (pymoo's tnk at the default 0.4)
        feasible = order[CV[order] <= 0]
        keep = np.concatenate([feasible[int(round(prune_top * len(feasible))) :], order[CV[order] > 0]])
    if len(keep) > n:
        keep = rng.choice(keep, size=n, replace=False)
    keep = np.sort(keep)
    X, Y = pool[keep], F[keep]
    CV = None if CV is None else CV[keep]
    feas = np.ones(len(Y), bool) if CV is None else CV <= 0
    if not feas.any():
        raise ValueError(
            f"no feasible design among the {len(Y)} kept for {name!r}; lower `prune_top` or raise `n`"
        )
    return OfflineTask(
        name=name,
        X=X,
        Y=Y,
        problem=problem,
        xl=xl,
        xu=xu,
        ideal=Y[feas].min(0),
        nadir=Y[feas].max(0),
        pf=true_front(problem),
        CV=CV,
    )


#: alias with the notes' name
make_task = make_offline_task
