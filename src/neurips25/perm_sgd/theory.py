"""The rates the unified analysis recovers per category, and a fit of its dependence recursion.

Reconstructed (the paper's full text was not available): the generalized assumption is taken as

    phi_q <= A * phi_{q-1} + B * ||x_q - x_{q-1}|| + C,      A < 1,

a contraction of the previous epoch's order error (dependent orders), a price for the stale
gradients (the iterate moved between the epochs) and a constant. Arbitrary and independent orders
are the case A = B = 0 with C = O(n) and O(sqrt(n)) respectively; GraB and PairGraB have A = 1/2
from the Harvey-Samadi reordering (Lu, Guo & De Sa 2022, Lemma 1; Cooper et al. 2023).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

__all__ = ["CATEGORIES", "rate", "DependenceFit", "fit_dependence"]

#: policy names accepted by :func:`rate`, by category
CATEGORIES = {
    "arbitrary": ("arbitrary", "incremental", "ig", "shuffle_once", "so"),
    "independent": ("independent", "random_reshuffling", "rr", "flipflop"),
    "dependent": ("dependent", "grab", "pairgrab", "herding"),
}

# exponents (of n, of K) of the leading term, log factors dropped; T = n K
_RATES = {
    # nonconvex, min_q E||grad F||^2: K^{-2/3}; n^{1/3} T^{-2/3}; T^{-2/3}
    ("nonconvex", "arbitrary"): (0.0, -2 / 3),
    ("nonconvex", "independent"): (-1 / 3, -2 / 3),
    ("nonconvex", "dependent"): (-2 / 3, -2 / 3),
    # PL / strongly convex, F - F*: 1/K^2; 1/(n K^2); 1/(n K)^2 (= the lower bound of Cha et al. 2023)
    ("pl", "arbitrary"): (0.0, -2.0),
    ("pl", "independent"): (-1.0, -2.0),
    ("pl", "dependent"): (-2.0, -2.0),
}


def _category(name: str) -> str:
    key = str(name).lower().replace("-", "_")
    for cat, names in CATEGORIES.items():
        if key in names:
            return cat
    allowed = sorted(n for names in CATEGORIES.values() for n in names)
    raise ValueError(f"category must be one of {allowed}, got {name!r}")


def rate(category: str, n: int, K: int, setting: str = "pl") -> float:
    """Leading-order convergence rate of permutation-based SGD (constants and logs dropped).

    Parameters
    ----------
    category : str
        ``"arbitrary"`` (or ``"ig"``, ``"so"``), ``"independent"`` (``"rr"``, ``"flipflop"``) or
        ``"dependent"`` (``"grab"``, ``"pairgrab"``).
    n, K : int
        Components per epoch and number of epochs (T = n K).
    setting : {"pl", "nonconvex"}
        ``"pl"``: F(x_K) - F* under PL / strong convexity; ``"nonconvex"``: min E||grad F||^2.

    Returns
    -------
    float
        n^a K^b for the category's exponents (a, b).

    Examples
    --------
    >>> round(rate("rr", 100, 10) / rate("grab", 100, 10))   # GraB gains a factor n over RR
    100
    """
    if setting not in ("pl", "nonconvex"):
        raise ValueError(f"setting must be 'pl' or 'nonconvex', got {setting!r}")
    for name, v in (("n", n), ("K", K)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name} must be an int >= 1, got {v!r}")
    a, b = _RATES[(setting, _category(category))]
    return float(n) ** a * float(K) ** b


class DependenceFit(NamedTuple):
    """Least-squares fit of phi_q ~ A phi_{q-1} + B drift_q + C (all coefficients >= 0)."""

    A: float
    B: float
    C: float
    r2: float
    n_points: int


def fit_dependence(phi: Any, drift: Any) -> DependenceFit:
    """Fit the (reconstructed) dependence recursion to logged order errors.

    Parameters
    ----------
    phi : array-like, shape (Q,) or (runs, Q)
        Order error phi_q of each epoch (or cycle, in federated learning).
    drift : array-like, same shape as ``phi``
        ``||x_q - x_{q-1}||``, how far the iterate moved between the start of epoch q-1 and of q;
        entry 0 is ignored.

    Returns
    -------
    DependenceFit
        Non-negative least squares (scipy ``nnls``) over the pairs (q-1, q) of every run; ``r2`` is
        the coefficient of determination of the fit.

    Examples
    --------
    >>> import numpy as np
    >>> phi = [8.0, 5.0, 3.5, 2.75, 2.375]             # phi_q = phi_{q-1} / 2 + 1
    >>> fit = fit_dependence(phi, np.zeros(5))
    >>> round(fit.A, 6), round(fit.C, 6)
    (0.5, 1.0)
    """
    from scipy.optimize import nnls

    P = np.atleast_2d(np.asarray(phi, dtype=np.float64))
    D = np.atleast_2d(np.asarray(drift, dtype=np.float64))
    if P.ndim != 2 or P.shape != D.shape:
        raise ValueError(f"phi and drift must have the same shape (Q,) or (runs, Q), got {np.shape(phi)} "
                         f"and {np.shape(drift)}")
    if P.shape[1] < 4:
        raise ValueError(f"phi needs at least 4 epochs per run to fit 3 coefficients, got {P.shape[1]}")
    if not (np.isfinite(P).all() and np.isfinite(D[:, 1:]).all()):
        raise ValueError("phi and drift must be finite")
    if (P < 0).any() or (D[:, 1:] < 0).any():
        raise ValueError("phi and drift are norms and must be >= 0")
    y = P[:, 1:].ravel()
    X = np.column_stack([P[:, :-1].ravel(), D[:, 1:].ravel(), np.ones(y.size)])
    coef, _ = nnls(X, y)
    resid = y - X @ coef
    ss_tot = float(((y - y.mean()) ** 2).sum())
    r2 = 1.0 - float(resid @ resid) / ss_tot if ss_tot > 0 else 1.0
    return DependenceFit(float(coef[0]), float(coef[1]), float(coef[2]), r2, int(y.size))
