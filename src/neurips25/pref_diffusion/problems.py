"""Benchmark problems: two RE real-world problems written from their published formulas, plus pymoo's suites.

The RE suite (Tanabe & Ishibuchi, "An easy-to-use real-world multi-objective optimization problem suite",
Applied Soft Computing 89, 2020) is not shipped by pymoo. RE21 and RE37 are written here as vectorised
pymoo :class:`~pymoo.core.problem.Problem` subclasses from the formulas printed in that paper (Section 3
and its supplementary file). ZDT and DTLZ come from :func:`pymoo.problems.get_problem`.
"""

from __future__ import annotations

import numpy as np
from pymoo.core.problem import Problem

__all__ = ["RE21", "RE37", "get_problem", "true_front", "constraint_violation", "PROBLEMS"]


class RE21(Problem):
    """RE21, four-bar truss design: 4 variables, 2 objectives (structural volume, joint displacement).

    With F = 10 kN, sigma = 10 kN/cm^2, E = 2e5 kN/cm^2, L = 200 cm and a = F / sigma::

        f1 = L (2 x1 + sqrt(2) x2 + sqrt(x3) + x4)
        f2 = (F L / E) (2 / x1 + 2 sqrt(2) / x2 - 2 sqrt(2) / x3 + 2 / x4)

    with x1, x4 in [a, 3a] and x2, x3 in [sqrt(2) a, 3a]. (Some copies of the suite write ``2 / x2`` for
    the first term of f2, a known typo; the published formula uses ``2 / x1``.)

    Examples
    --------
    >>> p = RE21()
    >>> F = p.evaluate(np.array([[1.0, 2 ** 0.5, 2 ** 0.5, 1.0]]))
    >>> F.shape
    (1, 2)
    """

    F_LOAD, SIGMA, E, L = 10.0, 10.0, 2e5, 200.0

    def __init__(self):
        a = self.F_LOAD / self.SIGMA
        xl = np.array([a, np.sqrt(2.0) * a, np.sqrt(2.0) * a, a])
        super().__init__(n_var=4, n_obj=2, xl=xl, xu=np.full(4, 3.0 * a), vtype=float)

    def _evaluate(self, x, out, *args, **kwargs):
        x1, x2, x3, x4 = x[:, 0], x[:, 1], x[:, 2], x[:, 3]
        r2 = np.sqrt(2.0)
        f1 = self.L * (2.0 * x1 + r2 * x2 + np.sqrt(x3) + x4)
        f2 = (self.F_LOAD * self.L / self.E) * (2.0 / x1 + 2.0 * r2 / x2 - 2.0 * r2 / x3 + 2.0 / x4)
        out["F"] = np.column_stack([f1, f2])


class RE37(Problem):
    """RE37, rocket injector design: 4 variables in [0, 1], 3 objectives (response-surface polynomials).

    Variables are (alpha, dHA, dOA, OPTT); objectives are the face temperature, the distance of the
    peak temperature and the post-chamber tip temperature, each a quadratic / cubic response surface
    fitted by Vaidyanathan et al. (2003) and reprinted by Tanabe & Ishibuchi (2020).

    Examples
    --------
    >>> RE37().evaluate(np.zeros((2, 4))).round(3).tolist()
    [[0.692, 0.153, 0.37], [0.692, 0.153, 0.37]]
    """

    def __init__(self):
        super().__init__(n_var=4, n_obj=3, xl=np.zeros(4), xu=np.ones(4), vtype=float)

    def _evaluate(self, x, out, *args, **kwargs):
        a, ha, oa, tt = x[:, 0], x[:, 1], x[:, 2], x[:, 3]
        f1 = (
            0.692
            + 0.477 * a
            - 0.687 * ha
            - 0.080 * oa
            - 0.0650 * tt
            - 0.167 * a * a
            - 0.0129 * ha * a
            + 0.0796 * ha * ha
            - 0.0634 * oa * a
            - 0.0257 * oa * ha
            + 0.0877 * oa * oa
            - 0.0521 * tt * a
            + 0.00156 * tt * ha
            + 0.00198 * tt * oa
            + 0.0184 * tt * tt
        )
        f2 = (
            0.153
            - 0.322 * a
            + 0.396 * ha
            + 0.424 * oa
            + 0.0226 * tt
            + 0.175 * a * a
            + 0.0185 * ha * a
            - 0.0701 * ha * ha
            - 0.251 * oa * a
            + 0.179 * oa * ha
            + 0.0150 * oa * oa
            + 0.0134 * tt * a
            + 0.0296 * tt * ha
            + 0.0752 * tt * oa
            + 0.0192 * tt * tt
        )
        f3 = (
            0.370
            - 0.205 * a
            + 0.0307 * ha
            + 0.108 * oa
            + 1.019 * tt
            - 0.135 * a * a
            + 0.0141 * ha * a
            + 0.0998 * ha * ha
            + 0.208 * oa * a
            - 0.0301 * oa * ha
            - 0.226 * oa * oa
            + 0.353 * tt * a
            - 0.0497 * tt * oa
            - 0.423 * tt * tt
            + 0.202 * ha * a * a
            - 0.281 * oa * a * a
            - 0.342 * ha * ha * a
            - 0.245 * ha * ha * oa
            + 0.281 * oa * oa * ha
            - 0.184 * tt * tt * a
            - 0.281 * ha * a * oa
        )
        out["F"] = np.column_stack([f1, f2, f3])


#: problems this module knows by name, with their default sizes (n_var, n_obj); None = fixed by the problem
PROBLEMS: dict[str, tuple[int | None, int | None]] = {
    **{f"zdt{i}": (10, 2) for i in (1, 2, 3, 4, 6)},
    **{f"dtlz{i}": (7, 3) for i in range(1, 8)},
    "re21": (None, None),
    "re37": (None, None),
}


def get_problem(name: str, n_var: int | None = None, n_obj: int | None = None) -> Problem:
    """Return a pymoo problem by name: ``zdt1-4/6``, ``dtlz1-7`` (pymoo) or ``re21`` / ``re37`` (here).

    Parameters
    ----------
    name : str
        Case-insensitive problem name.
    n_var, n_obj : int, optional
        Sizes for the scalable suites (defaults: ZDT 10 variables; DTLZ 7 variables, 3 objectives).
        Ignored sizes raise, so a typo cannot silently run a different problem.

    Examples
    --------
    >>> get_problem("zdt1").n_var, get_problem("dtlz2").n_obj, get_problem("re21").n_obj
    (10, 3, 2)
    """
    if not isinstance(name, str):
        raise TypeError(f"`name` must be a problem name (str), got {type(name).__name__}")
    key = name.lower()
    if key not in PROBLEMS:
        raise ValueError(f"`name` must be one of {sorted(PROBLEMS)}, got {name!r}")
    if key.startswith("re"):
        if n_var is not None or n_obj is not None:
            raise ValueError(f"`n_var` / `n_obj` are fixed for {name!r}; pass neither")
        return RE21() if key == "re21" else RE37()
    from pymoo.problems import get_problem as pymoo_get_problem

    dv, dm = PROBLEMS[key]
    if key.startswith("zdt"):
        if n_obj not in (None, 2):
            raise ValueError(f"ZDT problems have 2 objectives; got `n_obj`={n_obj}")
        return pymoo_get_problem(key, n_var=n_var or dv)
    return pymoo_get_problem(key, n_var=n_var or dv, n_obj=n_obj or dm)


def true_front(problem: Problem, n_partitions: int = 12) -> np.ndarray | None:
    """The analytic Pareto front of a pymoo problem, or None when it is not known (the RE problems).

    DTLZ fronts are sampled on Das-Dennis reference directions with ``n_partitions``.
    """
    if isinstance(problem, (RE21, RE37)):
        return None
    name = type(problem).__name__.lower()
    try:
        if name.startswith("dtlz"):
            from pymoo.util.ref_dirs import get_reference_directions

            dirs = get_reference_directions("das-dennis", problem.n_obj, n_partitions=n_partitions)
            return np.asarray(problem.pareto_front(dirs), dtype=float)
        pf = problem.pareto_front()
    except Exception:  # pymoo raises different errors for problems without a known front
        return None
    return None if pf is None else np.asarray(pf, dtype=float)


def constraint_violation(problem: Problem, X: np.ndarray) -> np.ndarray | None:
    """pymoo's constraint violation of designs ``X`` (n, d) -> (n,) (0 = feasible), or None when
    ``problem`` has no constraints.

    CV = sum_j max(0, g_j(x)) + sum_k |h_k(x)| (inequalities g <= 0, equalities h = 0, pymoo's default
    scaling), via :func:`pymoo.core.individual.calc_cv`.

    Examples
    --------
    >>> from pymoo.problems import get_problem as pg
    >>> constraint_violation(pg("bnh"), np.array([[1.0, 1.0], [0.0, 3.0]])).round(3).tolist()
    [0.0, 0.36]
    """
    from pymoo.core.individual import calc_cv

    if not problem.has_constraints():
        return None
    X = np.asarray(X, float)
    G, H = problem.evaluate(X, return_values_of=["G", "H"])
    G = None if problem.n_ieq_constr == 0 else np.asarray(G, float).reshape(len(X), -1)
    H = None if problem.n_eq_constr == 0 else np.asarray(H, float).reshape(len(X), -1)
    return np.asarray(calc_cv(G=G, H=H), dtype=float).reshape(len(X))
