"""Baselines PRSformer is compared with, all fit on the same training individuals.

- Individual-level: L1 / L2 / elastic-net logistic regression on standardised dosages, one model per
  disease, the penalty strength tuned on a validation set (:func:`fit_penalized_logistic`).
- Summary-statistic: marginal GWAS effects (:func:`gwas_sumstats`) with an LD reference from the
  training genotypes in fixed blocks (:func:`ld_blocks`), then LDpred-inf (:func:`ldpred_inf`) and
  an LDpred2-grid style Gibbs sampler (:func:`ldpred_gibbs`, :func:`fit_ldpred_grid`). Both are this
  project's numpy re-implementations of Vilhjalmsson et al. (AJHG 2015) and Prive et al.
  (Bioinformatics 2020); the R package bigsnpr is not used.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
from sklearn.metrics import roc_auc_score

from neurips25.prsformer.data import standardize_genotypes

__all__ = [
    "LinearScore",
    "logistic_path",
    "fit_penalized_logistic",
    "gwas_sumstats",
    "ld_blocks",
    "ldpred_inf",
    "ldpred_gibbs",
    "fit_ldpred_grid",
    "PairScore",
    "fit_pair_ridge",
]

PENALTY_L1_RATIO = {"l2": 0.0, "l1": 1.0, "elasticnet": 0.5}


@dataclasses.dataclass
class LinearScore:
    """A per-disease linear risk score ``Z w_t + c_t . covariates + b_t`` on standardised dosages.

    Attributes
    ----------
    weights : np.ndarray
        ``[L, T]`` effects per standard deviation of dosage.
    intercept : np.ndarray
        ``[T]``.
    cov_weights : np.ndarray
        ``[C, T]``.
    freq : np.ndarray
        ``[L]`` training allele frequencies used to standardise (missing -> mean).
    chosen : list
        The tuned hyper-parameters, one entry per disease.
    """

    weights: np.ndarray
    intercept: np.ndarray
    cov_weights: np.ndarray
    freq: np.ndarray
    chosen: list

    def predict(self, dosages, covariates=None) -> np.ndarray:
        """Scores ``[N, T]`` (logits for the logistic fits; a rank score for LDpred)."""
        d = _check_dosages(dosages, "predict")
        if d.shape[1] != self.weights.shape[0]:
            raise ValueError(f"`dosages` has {d.shape[1]} SNPs, the score was fit on {self.weights.shape[0]}")
        z, _ = standardize_genotypes(d, self.freq)
        s = z @ self.weights + self.intercept
        return s + _covariate_term(self.cov_weights, covariates, len(d))


def _covariate_term(cov_weights, covariates, n: int):
    if not cov_weights.size:
        return 0.0
    c = _check_covariates(covariates, n, "covariates")
    if c is None or c.shape[1] != cov_weights.shape[0]:
        raise ValueError(f"the score was fit with {cov_weights.shape[0]} covariates; pass `covariates` "
                         f"[N, {cov_weights.shape[0]}]")
    return c @ cov_weights


@dataclasses.dataclass
class PairScore:
    """The oracle pair model: a logistic score on standardised SNPs plus the products of given pairs.

    ``logit_t = Z w_t + sum_p v_pt z_i(p) z_j(p) + c_t . covariates + b_t``; fit by
    :func:`fit_pair_ridge`. Given the *true* interacting pairs it shows how much non-linear signal
    a model could learn at this N (a positive control; not a method a user would have).
    """

    weights: np.ndarray  # [L + P, T]
    intercept: np.ndarray
    cov_weights: np.ndarray
    freq: np.ndarray
    pairs: np.ndarray  # [P, 2]
    chosen: list

    def predict(self, dosages, covariates=None) -> np.ndarray:
        d = _check_dosages(dosages, "predict")
        if d.shape[1] != len(self.freq):
            raise ValueError(f"`dosages` has {d.shape[1]} SNPs, the score was fit on {len(self.freq)}")
        X, _ = _pair_features(d, self.pairs, self.freq)
        return X @ self.weights + self.intercept + _covariate_term(self.cov_weights, covariates, len(d))


def _check_dosages(dosages, name: str) -> np.ndarray:
    """Hard calls in {-1 (missing), 0, 1, 2}, or imputed dosages in [0, 2] (floats, -1 = missing)."""
    d = np.asarray(dosages)
    if d.ndim != 2:
        raise ValueError(f"`{name}` dosages must be 2-D [N, L], got shape {d.shape}")
    if d.dtype.kind not in "iuf" and d.dtype != bool:
        raise TypeError(f"`{name}` dosages must be numeric, got dtype {d.dtype}")
    if d.dtype.kind == "f" and np.isnan(d).any():
        raise ValueError(f"`{name}` dosages contain NaN; code missing genotypes as -1")
    if d.size:
        obs = d[d != -1]
        if obs.size and (obs.min() < 0 or obs.max() > 2):
            raise ValueError(f"`{name}` dosages must be allele counts in {{0, 1, 2}} (or imputed values in "
                             f"[0, 2]; -1 = missing), found range [{obs.min()}, {obs.max()}]")
    return d


def _check_xy(dosages, labels, name: str):
    d = _check_dosages(dosages, name)
    y = np.asarray(labels, dtype=float)
    if y.ndim == 1:
        y = y[:, None]
    if y.ndim != 2 or d.shape[0] != y.shape[0]:
        raise ValueError(f"`{name}` dosages {d.shape} and labels {y.shape} must be [N, L] and [N, T]")
    if np.isnan(y).any():
        raise ValueError(f"`{name}` labels contain NaN phenotypes")
    if not np.isin(y, (0.0, 1.0)).all():
        raise ValueError(f"`{name}` labels must be 0/1 (controls/cases), found values "
                         f"{np.unique(y)[:5].tolist()}; recode PLINK-style 1/2 phenotypes as 0/1")
    return d, y


def _check_pair(d, y, dv, yv):
    if dv.shape[1] != d.shape[1]:
        raise ValueError(f"train dosages have {d.shape[1]} SNPs but val dosages have {dv.shape[1]}; "
                         "both must hold the same SNPs in the same order")
    if yv.shape[1] != y.shape[1]:
        raise ValueError(f"train labels have {y.shape[1]} tasks but val labels have {yv.shape[1]}")
    for t in range(yv.shape[1]):
        if not 0 < yv[:, t].sum() < len(yv):
            raise ValueError(f"val labels of task {t} hold a single class ({int(yv[:, t].sum())} cases in "
                             f"{len(yv)}); the validation AUROC that tunes the penalty needs cases and controls")


def _check_covariates(cov, n: int, name: str):
    if cov is None:
        return None
    c = np.asarray(cov, dtype=np.float64)
    if c.ndim != 2 or c.shape[0] != n or not np.isfinite(c).all():
        raise ValueError(f"`{name}` must be finite [N, C] with N={n}, got shape {c.shape}")
    return c


def _features(dosages, covariates, freq):
    z, freq = standardize_genotypes(dosages, freq)
    if covariates is not None:
        z = np.hstack([z, np.asarray(covariates, dtype=np.float32)])
    return z, freq


def logistic_path(X, Y, lambdas, l1_ratio: float = 0.0, n_unpenalized: int = 0, n_iter: int = 60,
                  n_sweeps: int = 2, tol: float = 1e-5):
    """Penalized logistic regression for many targets and penalties at once.

    Minimises, for each target column ``y_t`` and each ``lambda``::

        (1/N) sum_i logloss(y_it, x_i w + b) + lambda * (a ||w||_1 + (1 - a)/2 ||w||_2^2)

    with ``a = l1_ratio``; the intercept and the last ``n_unpenalized`` columns of ``X`` (covariates)
    are not penalised. Solver: Bohning's bound (the logistic Hessian is at most ``X^T X / 4N``) gives
    a fixed quadratic majoriser; ridge steps solve it exactly (one Cholesky per lambda), L1 and
    elastic-net steps minimise it by coordinate descent on the Gram matrix, vectorised over all
    ``T x len(lambdas)`` problems. Each outer step decreases the objective (MM algorithm).

    Parameters
    ----------
    X : np.ndarray
        ``[N, P]`` features (standardise them first).
    Y : np.ndarray
        ``[N, T]`` 0/1 targets.
    lambdas : sequence of float
        Penalty strengths; sklearn's ``C`` corresponds to ``lambda = 1 / (C N)``.
    l1_ratio : float
        0 = ridge (L2), 1 = lasso (L1), in between = elastic net.
    n_iter, n_sweeps : int
        Outer majorise-minimise steps; coordinate sweeps per step (L1 / elastic net).
    tol : float
        Stop when the largest weight change falls below ``tol``.

    Returns
    -------
    W : np.ndarray
        ``[P, T, K]`` coefficients, K = len(lambdas).
    b : np.ndarray
        ``[T, K]`` intercepts.
    """
    X = np.asarray(X, dtype=np.float64)
    Y = np.asarray(Y, dtype=np.float64)
    lam = np.asarray(lambdas, dtype=np.float64)
    if not 0 <= l1_ratio <= 1:
        raise ValueError(f"`l1_ratio` must be in [0, 1], got {l1_ratio}")
    N, P = X.shape
    T, K = Y.shape[1], lam.size
    Xa = np.hstack([X, np.ones((N, 1))])  # last column: intercept
    pen = np.ones(P + 1)
    pen[P - n_unpenalized:] = 0  # covariates and intercept are not penalised
    l1 = np.tile(l1_ratio * lam, T)[None, :] * pen[:, None]  # [P+1, T*K], column t*K + k
    l2 = np.tile((1 - l1_ratio) * lam, T)[None, :] * pen[:, None]
    B = Xa.T @ Xa / (4 * N)  # Bohning's bound on the Hessian of the mean logistic loss
    Yk = np.repeat(Y, K, axis=1)  # [N, T*K]
    w = np.zeros((P + 1, T * K))
    inverse = None
    if l1_ratio == 0:  # one (P+1)^2 inverse per lambda, reused by every step
        inverse = [np.linalg.inv(B + np.diag(lk * pen)) for lk in lam]
    diag = np.maximum(np.diag(B)[:, None] + l2, 1e-12)  # a constant column has B_jj = 0
    for _ in range(n_iter):
        grad = Xa.T @ (1 / (1 + np.exp(-(Xa @ w))) - Yk) / N  # gradient of the loss part
        if inverse is not None:
            # Exact minimiser of the ridge majoriser: (B + lam D) w_new = B w - grad.
            rhs = B @ w - grad
            w_new = np.empty_like(w)
            for k, inv in enumerate(inverse):
                w_new[:, k::K] = inv @ rhs[:, k::K]
        else:
            # Coordinate descent on 1/2 w'Bw - c'w + penalties, c = B w_old - grad.
            c = B @ w - grad
            w_new = w.copy()
            Bw = B @ w_new
            for _ in range(n_sweeps):
                for j in range(P + 1):
                    r = c[j] - Bw[j] + B[j, j] * w_new[j]
                    new_j = np.sign(r) * np.maximum(np.abs(r) - l1[j], 0) / diag[j]
                    delta = new_j - w_new[j]
                    if delta.any():
                        Bw += B[:, j:j + 1] * delta
                        w_new[j] = new_j
        change = np.abs(w_new - w).max()
        w = w_new
        if change < tol:
            break
    w = w.reshape(P + 1, T, K)
    return w[:P], w[P]


def fit_penalized_logistic(train_dosages, train_labels, val_dosages, val_labels, penalty: str = "l2",
                           lambdas: Sequence[float] | None = None, train_covariates=None,
                           val_covariates=None, n_iter: int = 60) -> LinearScore:
    """Per-disease penalized logistic regression, the penalty chosen by validation AUROC.

    Parameters
    ----------
    train_dosages, val_dosages : np.ndarray
        ``[N, L]`` in {-1, 0, 1, 2}.
    train_labels, val_labels : np.ndarray
        ``[N, T]`` 0/1.
    penalty : {"l2", "l1", "elasticnet"}
        Elastic net mixes L1 and L2 half and half.
    lambdas : sequence of float, optional
        Penalty strengths tried (see :func:`logistic_path`); default 6 values, geometric from 1 to
        1e-3 for L2 and from 0.03 to 3e-5 for L1 / elastic net (validation picks one per disease).
    train_covariates, val_covariates : np.ndarray, optional
        ``[N, C]`` covariates, entered unpenalised.

    Returns
    -------
    LinearScore
    """
    if penalty not in PENALTY_L1_RATIO:
        raise ValueError(f"`penalty` must be one of {sorted(PENALTY_L1_RATIO)}, got {penalty!r}")
    if lambdas is None:
        lambdas = np.geomspace(1.0, 1e-3, 6) if penalty == "l2" else np.geomspace(0.03, 3e-5, 6)
    if not len(lambdas) or min(lambdas) <= 0:
        raise ValueError(f"`lambdas` must hold positive floats, got {lambdas!r}")
    d, y = _check_xy(train_dosages, train_labels, "train")
    dv, yv = _check_xy(val_dosages, val_labels, "val")
    _check_pair(d, y, dv, yv)
    train_covariates = _check_covariates(train_covariates, len(d), "train_covariates")
    val_covariates = _check_covariates(val_covariates, len(dv), "val_covariates")
    if (train_covariates is None) != (val_covariates is None) or (
            train_covariates is not None and train_covariates.shape[1] != val_covariates.shape[1]):
        raise ValueError("`train_covariates` and `val_covariates` must both be given with the same columns, "
                         "or both be None")
    X, freq = _features(d, train_covariates, None)
    Xv, _ = _features(dv, val_covariates, freq)
    L = d.shape[1]
    n_cov = X.shape[1] - L
    W, b = logistic_path(X, y, lambdas, PENALTY_L1_RATIO[penalty], n_unpenalized=n_cov, n_iter=n_iter)
    best_w, best_b, chosen = _pick_per_task(W, b, Xv, yv, lambdas)
    return LinearScore(best_w[:L], best_b, best_w[L:], freq, chosen)


def _pair_features(dosages, pairs, freq):
    z, freq = standardize_genotypes(dosages, freq)
    if len(pairs):
        z = np.hstack([z, z[:, pairs[:, 0]] * z[:, pairs[:, 1]]])
    return z, freq


def fit_pair_ridge(train_dosages, train_labels, val_dosages, val_labels, pairs,
                   lambdas: Sequence[float] | None = None, train_covariates=None, val_covariates=None,
                   n_iter: int = 60) -> PairScore:
    """Ridge logistic on SNPs plus the products of ``pairs``, the penalty chosen per disease on validation.

    With the simulation's true pairs (``cohort.truth["pairs"]``) this is the *oracle pair model*: the
    learnable ceiling of the non-linear signal at this sample size (it knows which pairs interact).

    Parameters
    ----------
    train_dosages, val_dosages : np.ndarray
        ``[N, L]`` in {-1, 0, 1, 2} (or imputed values in [0, 2]).
    train_labels, val_labels : np.ndarray
        ``[N, T]`` 0/1.
    pairs : array-like of int
        ``[P, 2]`` SNP indices whose product enters the model (P may be 0: plain ridge).
    lambdas : sequence of float, optional
        Default 6 values geometric from 1 to 1e-3.
    train_covariates, val_covariates : np.ndarray, optional
        ``[N, C]``, unpenalised.

    Returns
    -------
    PairScore
    """
    d, y = _check_xy(train_dosages, train_labels, "train")
    dv, yv = _check_xy(val_dosages, val_labels, "val")
    _check_pair(d, y, dv, yv)
    pr = np.asarray(pairs)
    if pr.size == 0:
        pr = np.zeros((0, 2), dtype=int)
    if pr.ndim != 2 or pr.shape[1] != 2 or pr.dtype.kind not in "iu":
        raise ValueError(f"`pairs` must be an int array [P, 2], got shape {pr.shape}, dtype {pr.dtype}")
    if pr.size and (pr.min() < 0 or pr.max() >= d.shape[1]):
        raise ValueError(f"`pairs` must index SNPs in [0, {d.shape[1]}), found range [{pr.min()}, {pr.max()}]")
    lambdas = np.geomspace(1.0, 1e-3, 6) if lambdas is None else np.asarray(lambdas, dtype=float)
    if not lambdas.size or lambdas.min() <= 0:
        raise ValueError(f"`lambdas` must hold positive floats, got {lambdas!r}")
    tc = _check_covariates(train_covariates, len(d), "train_covariates")
    vc = _check_covariates(val_covariates, len(dv), "val_covariates")
    if (tc is None) != (vc is None):
        raise ValueError("`train_covariates` and `val_covariates` must both be given or both be None")
    X, freq = _pair_features(d, pr, None)
    Xv, _ = _pair_features(dv, pr, freq)
    n_feat = X.shape[1]
    if tc is not None:
        X, Xv = np.hstack([X, tc]), np.hstack([Xv, vc])
    W, b = logistic_path(X, y, lambdas, 0.0, n_unpenalized=X.shape[1] - n_feat, n_iter=n_iter)
    best_w, best_b, chosen = _pick_per_task(W, b, Xv, yv, lambdas)
    return PairScore(best_w[:n_feat], best_b, best_w[n_feat:], freq, pr, chosen)


def gwas_sumstats(dosages, labels, freq=None):
    """Marginal effects on standardised genotypes and standardised phenotypes.

    ``beta_hat_j = z_j^T y~ / N`` (the marginal correlation), with standard error ``1 / sqrt(N)``.

    Returns
    -------
    beta_hat : np.ndarray
        ``[L, T]``.
    n : int
        Sample size N.
    freq : np.ndarray
        ``[L]`` allele frequencies used.
    """
    d, y = _check_xy(dosages, labels, "gwas")
    z, freq = standardize_genotypes(d, freq)
    z = (z - z.mean(0)) / np.maximum(z.std(0), 1e-8)
    ys = (y - y.mean(0)) / np.maximum(y.std(0), 1e-8)
    return z.T @ ys / len(y), len(y), freq


def ld_blocks(dosages, block_size: int = 256, chromosome=None, freq=None):
    """LD (correlation) matrices in fixed windows of ``block_size`` consecutive SNPs.

    Blocks never span chromosomes. Returns a list of ``(index [m], R [m, m])``.
    """
    if block_size < 1:
        raise ValueError(f"`block_size` must be >= 1, got {block_size}")
    z, _ = standardize_genotypes(np.asarray(dosages), freq)
    z = (z - z.mean(0)) / np.maximum(z.std(0), 1e-8)
    L = z.shape[1]
    chrom = np.ones(L, dtype=int) if chromosome is None else np.asarray(chromosome)
    blocks = []
    for c in np.unique(chrom):
        idx_c = np.flatnonzero(chrom == c)
        for start in range(0, len(idx_c), block_size):
            idx = idx_c[start:start + block_size]
            R = z[:, idx].T @ z[:, idx] / z.shape[0]
            np.fill_diagonal(R, 1.0)
            blocks.append((idx, R.astype(np.float64)))
    return blocks


def _check_ld(beta_hat, blocks):
    b = np.asarray(beta_hat, dtype=float)
    squeeze = b.ndim == 1
    b = b[:, None] if squeeze else b
    covered = np.concatenate([idx for idx, _ in blocks]) if blocks else np.zeros(0, int)
    if np.sort(covered).tolist() != list(range(b.shape[0])):
        raise ValueError(f"`R_blocks` must cover each of the {b.shape[0]} SNPs of `beta_hat` exactly once")
    return b, squeeze


def ldpred_inf(beta_hat, R_blocks, n: int, h2: float) -> np.ndarray:
    """LDpred-inf posterior mean: per block, ``(R + M / (N h2) I)^-1 beta_hat``.

    Parameters
    ----------
    beta_hat : np.ndarray
        ``[L]`` or ``[L, T]`` marginal standardised effects.
    R_blocks : list of (index, R)
        From :func:`ld_blocks`.
    n : int
        GWAS sample size N.
    h2 : float
        SNP heritability (M = L SNPs share it).

    Examples
    --------
    >>> R = np.array([[1.0, 0.5], [0.5, 1.0]])
    >>> ldpred_inf(np.array([0.2, 0.1]), [(np.array([0, 1]), R)], n=100, h2=0.5).round(4).tolist()
    [0.19, 0.0048]
    """
    if n < 1 or not 0 < h2 <= 1:
        raise ValueError(f"`n` must be >= 1 and `h2` in (0, 1], got n={n}, h2={h2}")
    b, squeeze = _check_ld(beta_hat, R_blocks)
    M = b.shape[0]
    out = np.zeros_like(b)
    for idx, R in R_blocks:
        out[idx] = np.linalg.solve(R + (M / (n * h2)) * np.eye(len(idx)), b[idx])
    return out[:, 0] if squeeze else out


def ldpred_gibbs(beta_hat, R_blocks, n: int, h2, p, n_iter: int = 100, burn_in: int = 30,
                 seed: int = 0) -> np.ndarray:
    """LDpred2-grid style Gibbs sampler (spike-and-slab prior), vectorised over settings.

    Prior ``beta_j ~ p N(0, h2 / (M p)) + (1 - p) delta_0``; likelihood of the residualised marginal
    effect ``beta~_j = beta_hat_j - sum_{k != j} R_jk beta_k ~ N(beta_j, 1 / N)``. Each sweep updates
    SNPs in order; the returned value is the Rao-Blackwellised posterior mean after ``burn_in``.

    Parameters
    ----------
    beta_hat : np.ndarray
        ``[L, K]`` marginal effects, one column per setting (repeat a disease's column to try
        several settings).
    R_blocks : list of (index, R)
    n : int
    h2, p : float or np.ndarray
        ``[K]`` heritability and causal fraction of each column.
    n_iter, burn_in : int
        Sweeps, of which the first ``burn_in`` are discarded.

    Returns
    -------
    np.ndarray
        ``[L, K]`` posterior mean effects.
    """
    b, squeeze = _check_ld(beta_hat, R_blocks)
    L, K = b.shape
    h2 = np.broadcast_to(np.asarray(h2, dtype=float), (K,))
    p = np.broadcast_to(np.asarray(p, dtype=float), (K,))
    if not ((h2 > 0).all() and (p > 0).all() and (p <= 1).all()):
        raise ValueError("`h2` must be > 0 and `p` in (0, 1]")
    if not 0 <= burn_in < n_iter:
        raise ValueError(f"need 0 <= burn_in < n_iter, got burn_in={burn_in}, n_iter={n_iter}")
    rng = np.random.default_rng(seed)
    sigma2 = h2 / (L * p)  # slab variance per causal SNP
    v = 1.0 / (n + 1.0 / sigma2)  # posterior variance given causal
    log_prior_odds = np.log(p) - np.log1p(-np.minimum(p, 1 - 1e-12)) + 0.5 * np.log(v / sigma2)
    always = p >= 1  # infinitesimal model: every SNP causal
    mean = np.zeros_like(b)
    for idx, R in R_blocks:
        bh = b[idx]
        beta = np.zeros((len(idx), K))
        r = np.zeros((len(idx), K))  # R @ beta for the block
        acc = np.zeros((len(idx), K))
        for it in range(n_iter):
            u = rng.random((len(idx), K))
            eps = rng.standard_normal((len(idx), K))
            for j in range(len(idx)):
                resid = bh[j] - (r[j] - beta[j])
                mu = v * n * resid
                logit = log_prior_odds + 0.5 * mu * mu / v
                prob = np.where(always, 1.0, 1.0 / (1.0 + np.exp(-np.clip(logit, -50, 50))))
                new = np.where(u[j] < prob, mu + np.sqrt(v) * eps[j], 0.0)
                delta = new - beta[j]
                if delta.any():
                    r += R[:, j:j + 1] * delta
                    beta[j] = new
                if it >= burn_in:
                    acc[j] += prob * mu
        mean[idx] = acc / (n_iter - burn_in)
    return mean[:, 0] if squeeze else mean


def _pick_per_task(W, b, Xv, yv, lambdas):
    """Per task, the path point with the best validation AUROC: weights ``[p, T]``, biases ``[T]``, choices."""
    best_w, best_b, chosen = np.zeros((W.shape[0], W.shape[1])), np.zeros(W.shape[1]), []
    for t in range(W.shape[1]):
        aucs = [_score_on_val(Xv, W[:, t, k], yv[:, t]) for k in range(len(lambdas))]
        k = int(np.argmax(aucs))
        best_w[:, t], best_b[t] = W[:, t, k], b[t, k]
        chosen.append({"lambda": float(lambdas[k]), "val_auroc": aucs[k]})
    return best_w, best_b, chosen


def _score_on_val(z, w, y):
    return roc_auc_score(y, z @ w) if 0 < y.sum() < len(y) else 0.5


def fit_ldpred_grid(train_dosages, train_labels, val_dosages, val_labels, chromosome=None,
                    h2_grid: Sequence[float] = (0.05, 0.1, 0.2, 0.4),
                    p_grid: Sequence[float] = (0.01, 0.03, 0.1, 0.3, 1.0), block_size: int = 256,
                    n_iter: int = 60, burn_in: int = 20, method: str = "grid", seed: int = 0,
                    train_covariates=None, val_covariates=None) -> LinearScore:
    """Summary statistics + LD from the training cohort, settings chosen by validation AUROC.

    ``method="grid"`` runs :func:`ldpred_gibbs` over ``h2_grid x p_grid``; ``method="inf"`` runs
    :func:`ldpred_inf` over ``h2_grid``. Without covariates the score is the polygenic score alone.
    With ``train_covariates`` (and ``val_covariates``), the chosen PRS and the covariates then enter
    an unpenalised logistic regression on the training individuals (the usual "PRS + covariates"
    model), so the score uses covariates as the individual-level models do.
    """
    if method not in ("grid", "inf"):
        raise ValueError(f"`method` must be 'grid' or 'inf', got {method!r}")
    d, y = _check_xy(train_dosages, train_labels, "train")
    dv, yv = _check_xy(val_dosages, val_labels, "val")
    _check_pair(d, y, dv, yv)
    beta_hat, n, freq = gwas_sumstats(d, y)
    blocks = ld_blocks(d, block_size, chromosome, freq)
    zv, _ = standardize_genotypes(dv, freq)
    T = y.shape[1]
    if method == "inf":
        settings = [{"h2": h} for h in h2_grid]
        cols = [ldpred_inf(beta_hat, blocks, n, h) for h in h2_grid]  # each [L, T]
        effects = np.stack(cols, axis=1)  # [L, S, T]
    else:
        settings = [{"h2": h, "p": q} for h in h2_grid for q in p_grid]
        S = len(settings)
        hs = np.array([s["h2"] for s in settings] * T)
        ps = np.array([s["p"] for s in settings] * T)
        bh = np.repeat(beta_hat, S, axis=1)  # column t*S + s
        post = ldpred_gibbs(bh, blocks, n, hs, ps, n_iter=n_iter, burn_in=burn_in, seed=seed)
        effects = post.reshape(-1, T, S).transpose(0, 2, 1)  # [L, S, T]
    W, chosen = np.zeros((d.shape[1], T)), []
    for t in range(T):
        aucs = [_score_on_val(zv, effects[:, s, t], yv[:, t]) for s in range(len(settings))]
        s = int(np.argmax(aucs))
        W[:, t] = effects[:, s, t]
        chosen.append({**settings[s], "val_auroc": aucs[s]})
    tc = _check_covariates(train_covariates, len(d), "train_covariates")
    vc = _check_covariates(val_covariates, len(dv), "val_covariates")
    if (tc is None) != (vc is None):
        raise ValueError("`train_covariates` and `val_covariates` must both be given or both be None")
    if tc is None:
        return LinearScore(W, np.zeros(T), np.zeros((0, T)), freq, chosen)
    z, _ = standardize_genotypes(d, freq)
    prs = z @ W  # [N, T]
    scale, cov_w, intercept = np.zeros(T), np.zeros((tc.shape[1], T)), np.zeros(T)
    for t in range(T):
        sd = max(prs[:, t].std(), 1e-12)
        Wt, bt = logistic_path(np.hstack([prs[:, [t]] / sd, tc]), y[:, [t]], [1e-6], n_iter=50)
        scale[t], cov_w[:, t], intercept[t] = Wt[0, 0, 0] / sd, Wt[1:, 0, 0], bt[0, 0]
    return LinearScore(W * scale, intercept, cov_w, freq, chosen)
