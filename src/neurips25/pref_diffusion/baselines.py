"""Baselines of the PGD-MOO comparison: forward surrogates + NSGA-II, the unguided prior, the data's best.

Every baseline has the estimator interface of :class:`PreferenceGuidedDiffusion`: ``fit(X, Y)`` then
``sample(n) -> X_new`` (n, d), so :func:`~neurips25.pref_diffusion.algorithm.minimize_offline` runs any
of them.

- :class:`MultiHeadSurrogateNSGA2`: one MLP with a shared trunk and one output head per objective
  (Off-MOO-Bench "multi-head, vanilla"), then pymoo's NSGA-II on the surrogate.
- :class:`EnsembleSurrogateNSGA2`: one MLP per objective (Off-MOO-Bench "multiple models, vanilla").
- :class:`UnguidedDiffusion`: the same diffusion prior with w = 0 (what the prior alone produces).
- :class:`DataBest`: the best n designs of the data (D(best), the bar to beat).

NSGA-II (50 generations, population n) starts from the best n data designs, searches within the
design bounds (or the data's range), and all n designs of its final population are returned; the
surrogate, not the oracle, scores them during the search.
"""

from __future__ import annotations

import numpy as np
import torch
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted
from torch import nn

from neurips25.pref_diffusion.algorithm import PreferenceGuidedDiffusion, _seeded
from neurips25.pref_diffusion.preferences import diversity_ranks
from neurips25.pref_diffusion.validation import (
    check_designs,
    check_pair,
    check_positive_int,
    check_violation,
)

__all__ = ["MultiHeadSurrogateNSGA2", "EnsembleSurrogateNSGA2", "UnguidedDiffusion", "DataBest"]


class _MultiHeadMLP(nn.Module):
    def __init__(self, d: int, m: int, hidden: int):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(d, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU())
        self.heads = nn.Linear(hidden, m)  # m linear heads on the shared trunk, stored as one layer

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.heads(self.trunk(x))


class _Ensemble(nn.Module):
    def __init__(self, d: int, m: int, hidden: int):
        super().__init__()
        self.models = nn.ModuleList(_MultiHeadMLP(d, 1, hidden) for _ in range(m))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([net(x) for net in self.models], dim=-1)


class _SurrogateNSGA2(BaseEstimator):
    """Shared fit / search logic; subclasses choose the network."""

    def __init__(
        self,
        hidden: int = 256,
        epochs: int = 100,
        batch_size: int = 256,
        lr: float = 1e-3,
        n_gen: int = 50,
        bounds=None,
        random_state: int | None = None,
    ):
        self.hidden = hidden
        self.epochs = epochs
        self.batch_size = batch_size
        self.lr = lr
        self.n_gen = n_gen
        self.bounds = bounds
        self.random_state = random_state

    def _network(self, d: int, m: int) -> nn.Module:
        raise NotImplementedError

    def fit(self, X, Y, cv=None):
        """Train the surrogate on designs ``X`` (n, d) and objectives ``Y`` (n, m) (both min-max scaled).

        ``cv`` (n,), the data's constraint violation, is accepted only when every design is feasible:
        these baselines model no constraints, so a constrained dataset is refused rather than ignored.
        """
        for p in ("hidden", "epochs", "batch_size", "n_gen"):
            check_positive_int(getattr(self, p), p)
        X, Y = check_pair(X, Y)
        if cv is not None and np.any(check_violation(cv, len(X)) > 0):
            raise ValueError(
                f"{type(self).__name__} does not model constraints, but `cv` marks "
                f"{int(np.sum(np.asarray(cv) > 0))} infeasible design(s); use PreferenceGuidedDiffusion "
                "(fit(..., cv=...)) or DataBest on constrained problems"
            )
        d = X.shape[1]
        if self.bounds is not None:
            self.xl_, self.xu_ = (np.broadcast_to(np.asarray(b, float), (d,)).copy() for b in self.bounds)
            check_designs(X, "X", self.xl_, self.xu_)
        else:
            self.xl_, self.xu_ = X.min(0), X.max(0)
        self.x_min_, self.x_max_ = X.min(0), X.max(0)
        self.y_min_, self.y_max_ = Y.min(0), Y.max(0)
        self.X_, self.Y_ = X, Y
        Xn = torch.as_tensor(self._scale_x(X), dtype=torch.float32)
        Yn = torch.as_tensor(
            (Y - self.y_min_) / np.where(self.y_max_ > self.y_min_, self.y_max_ - self.y_min_, 1),
            dtype=torch.float32,
        )
        rng = np.random.default_rng(self.random_state)
        ctx = _seeded(self.random_state)
        try:
            model = self._network(d, Y.shape[1])
            opt = torch.optim.Adam(model.parameters(), lr=self.lr)
            n, bs = len(Xn), min(self.batch_size, len(Xn))
            for _ in range(self.epochs):
                perm = torch.as_tensor(rng.permutation(n))
                for s in range(0, n, bs):
                    b = perm[s : s + bs]
                    loss = ((model(Xn[b]) - Yn[b]) ** 2).mean()
                    opt.zero_grad(set_to_none=True)
                    loss.backward()
                    opt.step()
        finally:
            ctx.__exit__(None, None, None)
        self.model_ = model.eval()
        return self

    def _scale_x(self, X: np.ndarray) -> np.ndarray:
        return (X - self.x_min_) / np.where(self.x_max_ > self.x_min_, self.x_max_ - self.x_min_, 1.0)

    def predict(self, X) -> np.ndarray:
        """Surrogate objectives (n, m) in the scaled objective space of the training data."""
        check_is_fitted(self, "model_")
        X = check_designs(X, "X")
        with torch.no_grad():
            return self.model_(torch.as_tensor(self._scale_x(X), dtype=torch.float32)).numpy().astype(float)

    def sample(self, n: int = 256) -> np.ndarray:
        """NSGA-II on the surrogate from the best ``n`` data designs; the final population, shape (n, d)."""
        from pymoo.algorithms.moo.nsga2 import NSGA2
        from pymoo.core.problem import Problem
        from pymoo.optimize import minimize

        check_is_fitted(self, "model_")
        n = check_positive_int(n, "n")
        predict = self.predict

        class Surrogate(Problem):
            def _evaluate(self, x, out, *args, **kwargs):
                out["F"] = predict(x)

        problem = Surrogate(n_var=len(self.xl_), n_obj=self.Y_.shape[1], xl=self.xl_, xu=self.xu_)
        _, _, rank = diversity_ranks(self.Y_)
        init = self.X_[np.argsort(rank)[:n]]
        if len(init) < n:  # fewer data than requested: top up with uniform designs
            rng = np.random.default_rng(self.random_state)
            extra = self.xl_ + rng.random((n - len(init), len(self.xl_))) * (self.xu_ - self.xl_)
            init = np.vstack([init, extra])
        seed = None if self.random_state is None else int(self.random_state)
        res = minimize(
            problem, NSGA2(pop_size=n, sampling=init), ("n_gen", self.n_gen), seed=seed, verbose=False
        )
        return np.clip(res.pop.get("X"), self.xl_, self.xu_)


class MultiHeadSurrogateNSGA2(_SurrogateNSGA2):
    """Multi-head MLP surrogate (shared trunk, one head per objective) optimised by NSGA-II.

    Parameters
    ----------
    hidden : int, default=256
        Width of the two hidden layers.
    epochs : int, default=100
        Training epochs (Adam, lr ``lr``, MSE on min-max scaled objectives).
    batch_size : int, default=256
    lr : float, default=1e-3
    n_gen : int, default=50
        NSGA-II generations (Off-MOO-Bench's setting).
    bounds : tuple of array-like, optional
        (xl, xu) search bounds; default the data's range.
    random_state : int, optional

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((200, 3)); Y = np.column_stack([X[:, 0], 1 - X[:, 0] + X[:, 1]])
    >>> MultiHeadSurrogateNSGA2(hidden=16, epochs=2, n_gen=2, random_state=0).fit(X, Y).sample(8).shape
    (8, 3)
    """

    def _network(self, d: int, m: int) -> nn.Module:
        return _MultiHeadMLP(d, m, self.hidden)


class EnsembleSurrogateNSGA2(_SurrogateNSGA2):
    """One MLP per objective, optimised jointly by NSGA-II; parameters as :class:`MultiHeadSurrogateNSGA2`."""

    def _network(self, d: int, m: int) -> nn.Module:
        return _Ensemble(d, m, self.hidden)


class UnguidedDiffusion(PreferenceGuidedDiffusion):
    """The PGD-MOO diffusion prior sampled without guidance (w = 0); no preference model is trained.

    Takes the parameters of :class:`PreferenceGuidedDiffusion` except ``guidance_scale`` (fixed at 0).
    """

    def __init__(self, **kwargs):
        if "guidance_scale" in kwargs:
            raise TypeError("UnguidedDiffusion: `guidance_scale` is fixed at 0")
        unknown = set(kwargs) - set(self._get_param_names())
        if unknown:
            raise TypeError(f"UnguidedDiffusion: unexpected parameter(s) {sorted(unknown)}")
        super().__init__(guidance_scale=0.0, **kwargs)

    @classmethod
    def _get_param_names(cls) -> list[str]:
        # sklearn's parameter protocol: the parent's parameters without the fixed guidance scale
        return [p for p in PreferenceGuidedDiffusion._get_param_names() if p != "guidance_scale"]

    def set_params(self, **params):
        if "guidance_scale" in params:
            raise ValueError("UnguidedDiffusion: `guidance_scale` is fixed at 0")
        return super().set_params(**params)


class DataBest(BaseEstimator):
    """D(best): the ``n`` best designs of the data by (non-dominated rank, crowding distance).

    With ``fit(X, Y, cv=...)`` feasible designs rank first (constrained dominance).

    Examples
    --------
    >>> DataBest().fit(np.eye(3), np.array([[0, 1], [1, 0], [1, 1]])).sample(2).tolist()
    [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    """

    def fit(self, X, Y, cv=None) -> DataBest:
        self.X_, self.Y_ = check_pair(X, Y)
        cv = None if cv is None else check_violation(cv, len(self.X_))
        _, _, self.rank_ = diversity_ranks(self.Y_, cv=cv)
        return self

    def sample(self, n: int = 256) -> np.ndarray:
        check_is_fitted(self, "X_")
        return self.X_[np.argsort(self.rank_)[: check_positive_int(n, "n")]]
