"""PreferenceGuidedDiffusion: PGD-MOO's estimator (fit on an offline dataset, sample new designs).

``fit(X, Y)`` (1) min-max normalises the designs to [-1, 1] with the data's per-column range,
(2) trains a DDPM prior eps_theta on them (Section 3.1), (3) trains a time-conditioned Bradley-Terry
preference model s_phi on pairs whose members are noised to the same step t (Section 3.2), with
diversity-aware labels by default. ``sample(n)`` runs the preference-guided reverse chain (Section 3.3)
and maps the designs back to the original units, clipped to the design bounds.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import logging
import numbers
from typing import Any

import numpy as np
import torch
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

from neurips25.pref_diffusion.diffusion import DDPM
from neurips25.pref_diffusion.guidance import PreferenceGuidance
from neurips25.pref_diffusion.nets import EpsMLP, PreferenceNet
from neurips25.pref_diffusion.preferences import PairSampler, diversity_ranks
from neurips25.pref_diffusion.validation import (
    check_designs,
    check_pair,
    check_positive_int,
    check_violation,
)

__all__ = ["PreferenceGuidedDiffusion", "Result", "minimize_offline"]

log = logging.getLogger(__name__)


def _seeded(seed: int | None):
    """A torch RNG context seeded with ``seed`` that leaves the global torch RNG as it was."""
    ctx = torch.random.fork_rng()
    ctx.__enter__()
    if seed is not None:
        torch.manual_seed(int(seed))
    return ctx


class PreferenceGuidedDiffusion(BaseEstimator):
    """Preference-guided diffusion for offline multi-objective optimisation (Annadani et al., NeurIPS 2025).

    A DDPM prior over the offline designs is steered at sampling time by the gradient of a learned
    dominance preference: x_{t-1} = mu_theta(x_t, t) + sqrt(beta_t) z + w beta_t grad_x log P(x_t > r | t)
    (Eq. 6), with the reference r the particle's previous iterate.

    Parameters
    ----------
    n_steps : int, default=1000
        Training diffusion steps T (linear betas 1e-4 .. 0.02).
    sample_steps : int, optional
        Reverse-chain length; a strided, respaced sub-sequence of the T steps when smaller than T - 1
        (default: all T - 1 steps, as in the paper).
    guidance_scale : float, default=10.0
        w in Eq. 6 (the paper also reports 20). 0 disables guidance.
    diversity : bool, default=True
        Diversity-aware labels (front, then crowding distance); False -> plain dominance labels.
    subset_ratio : float, optional
        Train the preference model only on the best share of the data ("SubCrowding", 0.3 in the paper).
    threshold : float, default=0.0
        Minimum crowding of a same-front partner (diversity labels).
    metric : {"crowding", "hv_contrib"}, default="crowding"
        Within-front diversity score of the labels: crowding distance (the official default) or the
        exclusive hypervolume contribution (the paper's alternative; more informative with 3+ objectives).
    reuse_reference : bool, default=True
        Reuse the previous iterate's utility as the reference utility s(r) (one preference pass fewer per
        step, see :mod:`~neurips25.pref_diffusion.guidance`); False recomputes it, as the official code.
    hidden : int, default=512
        Hidden width of both networks.
    preference_hidden : int, optional
        Hidden width of the preference network when it should differ from ``hidden`` (a narrower one
        makes guided sampling cheaper; the paper uses 512 for both).
    epochs : int, default=200
        Epochs of the diffusion prior (AdamW, lr ``lr``, batch ``batch_size``, gradient clipping 1).
    preference_epochs : int, default=200
        Maximum epochs of the preference model (Adam, lr ``preference_lr``), early-stopped on a 10 %
        validation split after ``patience`` epochs without improvement.
    batch_size : int, default=256
    lr : float, default=5e-4
    preference_lr : float, default=1e-3
        Reconstructed for CPU budgets: the official code uses 1e-5 for up to 2000 epochs.
    patience : int, default=10
    bounds : tuple of array-like, optional
        (xl, xu) design bounds. ``fit`` rejects designs outside them; ``sample`` clips to them. Needed
        when a design column is constant in the data: its range is then taken from the bounds.
    random_state : int, optional
        Seeds network initialisation, pair draws, noise and sampling.

    Attributes
    ----------
    eps_model_ : EpsMLP
    preference_model_ : PreferenceNet or None
    ddpm_ : DDPM
    x_min_, x_max_ : ndarray of shape (d,)
        Per-column normalisation range to [-1, 1]: the training designs' range (the bounds for a column
        that is constant in the data).
    reference_ : ndarray of shape (d,)
        Initial guidance reference: the best feasible non-dominated training design, normalised.
    history_ : dict
        Training losses per epoch (``"prior"``, ``"preference"``, ``"preference_val"``).
    guidance_weights_ : ndarray of shape (K, 3)
        Of the last guided :meth:`sample` call, per reverse step: (t, mean, sd) of the Bradley-Terry
        weight sigma(s(r) - s(x)) (about 0.5 throughout: the moving reference makes guidance near-plain
        utility ascent).

    Notes
    -----
    Samples live in the data's bounding box (the chain is clamped to [-1, 1]), then are clipped to
    ``bounds``. All ``n`` samples are returned: PGD-MOO scores every generated design, no filtering.

    Constraints: pass the constraint violation of every training design as ``fit(X, Y, cv=...)``
    (pymoo's CV, 0 = feasible). Labels then follow Deb's constrained dominance (a feasible design is
    preferred to an infeasible one, and of two infeasible designs the one with the smaller violation),
    and the initial reference is feasible. Generated designs can still be infeasible: score them with the
    oracle's constraints (:func:`minimize_offline` returns ``Result.CV``).

    A scikit-learn estimator in its parameter protocol (``get_params`` / ``set_params``,
    ``sklearn.base.clone``); parameters are validated in :meth:`fit`.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((300, 2)); Y = np.column_stack([X[:, 0], 1 - np.sqrt(X[:, 0]) + X[:, 1]])
    >>> m = PreferenceGuidedDiffusion(hidden=32, epochs=2, preference_epochs=2, sample_steps=20,
    ...                               random_state=0).fit(X, Y)
    >>> m.sample(16).shape
    (16, 2)
    """

    def __init__(
        self,
        n_steps: int = 1000,
        sample_steps: int | None = None,
        guidance_scale: float = 10.0,
        diversity: bool = True,
        subset_ratio: float | None = None,
        threshold: float = 0.0,
        metric: str = "crowding",
        reuse_reference: bool = True,
        hidden: int = 512,
        preference_hidden: int | None = None,
        epochs: int = 200,
        preference_epochs: int = 200,
        batch_size: int = 256,
        lr: float = 5e-4,
        preference_lr: float = 1e-3,
        patience: int = 10,
        bounds: tuple[Any, Any] | None = None,
        random_state: int | None = None,
    ):
        self.n_steps = n_steps
        self.sample_steps = sample_steps
        self.guidance_scale = guidance_scale
        self.diversity = diversity
        self.subset_ratio = subset_ratio
        self.threshold = threshold
        self.metric = metric
        self.reuse_reference = reuse_reference
        self.hidden = hidden
        self.preference_hidden = preference_hidden
        self.epochs = epochs
        self.preference_epochs = preference_epochs
        self.batch_size = batch_size
        self.lr = lr
        self.preference_lr = preference_lr
        self.patience = patience
        self.bounds = bounds
        self.random_state = random_state

    # ------------------------------------------------------------------ validation
    def _check_params(self) -> None:
        name = type(self).__name__
        for p in ("n_steps", "hidden", "epochs", "preference_epochs", "batch_size", "patience"):
            v = getattr(self, p)
            if (
                isinstance(v, bool)
                or not isinstance(v, numbers.Integral)
                or v < (2 if p == "n_steps" else 1)
            ):
                raise ValueError(f"{name}: `{p}` must be a positive integer, got {v!r}")
        if self.sample_steps is not None:
            check_positive_int(self.sample_steps, "sample_steps")
        if self.preference_hidden is not None:
            check_positive_int(self.preference_hidden, "preference_hidden")
        for p, lo in (("guidance_scale", 0.0), ("threshold", -np.inf)):
            v = getattr(self, p)
            if isinstance(v, bool) or not isinstance(v, numbers.Real) or not np.isfinite(v) or v < lo:
                what = "a finite number >= 0" if lo == 0 else "a finite number"
                raise ValueError(f"{name}: `{p}` must be {what}, got {v!r}")
        for p in ("lr", "preference_lr"):
            v = getattr(self, p)
            if isinstance(v, bool) or not isinstance(v, numbers.Real) or not v > 0:
                raise ValueError(f"{name}: `{p}` must be > 0, got {v!r}")
        if self.subset_ratio is not None and not (
            isinstance(self.subset_ratio, numbers.Real) and 0 < self.subset_ratio <= 1
        ):
            raise ValueError(f"{name}: `subset_ratio` must be in (0, 1] or None, got {self.subset_ratio!r}")
        if self.metric not in ("crowding", "hv_contrib"):
            raise ValueError(f"{name}: `metric` must be 'crowding' or 'hv_contrib', got {self.metric!r}")
        if not isinstance(self.reuse_reference, (bool, np.bool_)):
            raise ValueError(f"{name}: `reuse_reference` must be True or False, got {self.reuse_reference!r}")

    def _bounds(self, d: int):
        if self.bounds is None:
            return None, None
        try:
            xl, xu = (np.broadcast_to(np.asarray(b, float), (d,)).copy() for b in self.bounds)
        except (TypeError, ValueError) as err:
            raise ValueError(f"`bounds` must be (xl, xu), each a scalar or of length {d}") from err
        if np.any(xl > xu):
            raise ValueError("`bounds`: every lower bound must be <= its upper bound")
        return xl, xu

    # ------------------------------------------------------------------ fitting
    def fit(
        self, X, Y, prior: PreferenceGuidedDiffusion | None = None, *, cv=None
    ) -> PreferenceGuidedDiffusion:
        """Fit the prior and the preference model on designs ``X`` (n, d) and objectives ``Y`` (n, m).

        Parameters
        ----------
        X : array-like of shape (n, d)
        Y : array-like of shape (n, m), m >= 2, minimised
        prior : PreferenceGuidedDiffusion, optional
            A fitted model trained on the same ``X`` whose diffusion prior is reused instead of training
            a new one (lets several guidance variants share one prior, as in the paper's ablations).
        cv : array-like of shape (n,), optional
            Constraint violation of each design (>= 0, 0 = feasible; pymoo's ``CV``). Labels and the
            reference then follow constrained dominance (see Notes).
        """
        self._check_params()
        X, Y = check_pair(X, Y)
        cv = None if cv is None else check_violation(cv, len(X))
        d = X.shape[1]
        xl, xu = self._bounds(d)
        if xl is not None:
            check_designs(X, "X", xl, xu)
        self.xl_, self.xu_ = xl, xu
        self.n_features_in_, self.n_objectives_ = d, Y.shape[1]
        self.x_min_, self.x_max_ = X.min(0), X.max(0)
        const = self.x_max_ <= self.x_min_
        if const.any():
            cols = np.flatnonzero(const).tolist()
            if xl is None:
                raise ValueError(
                    f"`X` column(s) {cols} are constant in the data, so their range is unknown; pass "
                    "`bounds=(xl, xu)` to say where designs may vary (or drop the column(s))"
                )
            # a column constant in the data varies within its bounds (fixed if xl == xu)
            self.x_min_[const], self.x_max_[const] = xl[const], xu[const]
        Xn = self._to_model(X)
        rng = np.random.default_rng(self.random_state)
        self.history_ = {"prior": [], "preference": [], "preference_val": []}
        ctx = _seeded(self.random_state)
        try:
            if prior is not None:
                self._reuse_prior(prior, X)
            else:
                self.ddpm_ = DDPM(self.n_steps)
                self.eps_model_ = self._train_prior(Xn, rng)
            self.preference_model_ = (
                self._train_preference(Xn, Y, rng, cv) if self._uses_guidance() else None
            )
        finally:
            ctx.__exit__(None, None, None)
        # the initial reference of the chain: the best (feasible) non-dominated training design (the
        # official code takes the last of the best 256)
        _, _, rank = diversity_ranks(Y, cv=cv)
        self.reference_ = Xn[np.argmin(rank)]
        return self

    def _uses_guidance(self) -> bool:
        return self.guidance_scale > 0

    def _reuse_prior(self, prior, X) -> None:
        if not hasattr(prior, "eps_model_"):
            raise NotFittedError(
                f"`prior` must be a fitted PreferenceGuidedDiffusion; this {type(prior).__name__} instance is "
                "not fitted yet (call prior.fit(X, Y) first)"
            )
        if prior.n_features_in_ != X.shape[1] or not (
            np.allclose(prior.x_min_, self.x_min_) and np.allclose(prior.x_max_, self.x_max_)
        ):
            raise ValueError("`prior` was fitted on designs with a different shape or range than `X`")
        self.ddpm_, self.eps_model_ = prior.ddpm_, prior.eps_model_
        self.history_["prior"] = list(prior.history_["prior"])

    def _span(self) -> np.ndarray:
        # zero only for a column fixed by its bounds (xl == xu): any span maps it back to that value
        return np.where(self.x_max_ > self.x_min_, self.x_max_ - self.x_min_, 1.0)

    def _to_model(self, X: np.ndarray) -> np.ndarray:
        return 2.0 * (X - self.x_min_) / self._span() - 1.0

    def _from_model(self, Z: np.ndarray) -> np.ndarray:
        X = (np.clip(Z, -1, 1) + 1.0) / 2.0 * self._span() + self.x_min_
        X = np.where(self.x_max_ > self.x_min_, X, self.x_min_)
        if self.xl_ is not None:
            X = np.clip(X, self.xl_, self.xu_)
        return X

    def _train_prior(self, Xn: np.ndarray, rng: np.random.Generator) -> EpsMLP:
        """Epsilon-prediction loss sum_dims (eps - eps_theta(x_t, t))^2 over uniform t in [1, T)."""
        model = EpsMLP(Xn.shape[1], hidden=self.hidden)
        opt = torch.optim.AdamW(model.parameters(), lr=self.lr)
        data = torch.as_tensor(Xn, dtype=torch.float32)
        n, bs = len(data), min(self.batch_size, len(data))
        model.train()
        for _ in range(self.epochs):
            perm = torch.as_tensor(rng.permutation(n))
            total = 0.0
            for s in range(0, n, bs):
                x0 = data[perm[s : s + bs]]
                t = self.ddpm_.sample_t(len(x0))
                xt, eps = self.ddpm_.q_sample(x0, t)
                loss = ((model(xt, t) - eps) ** 2).sum(-1).mean()
                opt.zero_grad(set_to_none=True)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                opt.step()
                total += float(loss.detach()) * len(x0)
            self.history_["prior"].append(total / n)
        model.eval()
        return model

    def _pair_loss(self, model: PreferenceNet, data: torch.Tensor, i, j, lab, gen=None) -> torch.Tensor:
        # both members are noised to the SAME step t: the classifier must judge noisy designs at the noise
        # level it will see during guidance
        t = self.ddpm_.sample_t(len(i), generator=gen)
        x1, _ = self.ddpm_.q_sample(data[i], t, generator=gen)
        x2, _ = self.ddpm_.q_sample(data[j], t, generator=gen)
        return torch.nn.functional.cross_entropy(model(x1, x2, t), torch.as_tensor(lab))

    def _train_preference(
        self, Xn: np.ndarray, Y: np.ndarray, rng: np.random.Generator, cv: np.ndarray | None = None
    ) -> PreferenceNet:
        mode = "diversity" if self.diversity else "dominance"
        sampler = PairSampler(
            Xn,
            Y,
            mode=mode,
            threshold=self.threshold,
            subset_ratio=self.subset_ratio,
            metric=self.metric,
            cv=cv,
            seed=int(rng.integers(2**31)),
        )
        n = len(sampler)
        perm = rng.permutation(n)
        n_val = max(1, int(round(0.1 * n)))
        val_idx, tr_idx = perm[:n_val], perm[n_val:]
        model = PreferenceNet(Xn.shape[1], hidden=self.preference_hidden or self.hidden)
        opt = torch.optim.Adam(model.parameters(), lr=self.preference_lr)
        data = torch.as_tensor(sampler.X, dtype=torch.float32)
        # a fixed validation draw (pairs, steps and noise) so epochs are compared on the same question
        vi, vj, vlab = sampler.draw(val_idx, pool=val_idx if n_val >= 2 else None)
        val_gen = torch.Generator().manual_seed(int(rng.integers(2**31)))
        best, best_state, bad = np.inf, None, 0
        bs = min(self.batch_size, len(tr_idx))
        for _ in range(self.preference_epochs):
            model.train()
            i, j, lab = sampler.draw(tr_idx, pool=tr_idx)
            order = rng.permutation(len(i))
            total = 0.0
            for s in range(0, len(i), bs):
                b = order[s : s + bs]
                loss = self._pair_loss(model, data, i[b], j[b], lab[b])
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                total += float(loss.detach()) * len(b)
            self.history_["preference"].append(total / max(1, len(i)))
            if len(vi) == 0:
                continue
            model.eval()
            with torch.no_grad():
                val_gen.manual_seed(12345)
                v = float(self._pair_loss(model, data, vi, vj, vlab, gen=val_gen))
            self.history_["preference_val"].append(v)
            if v < best - 1e-6:
                best, best_state, bad = v, copy.deepcopy(model.state_dict()), 0
            else:
                bad += 1
                if bad >= self.patience:
                    break
        if best_state is not None:
            model.load_state_dict(best_state)
        model.eval()
        return model

    # ------------------------------------------------------------------ sampling
    def _guidance(self, reuse_reference: bool | None = None) -> PreferenceGuidance:
        """A fresh guidance term for one reverse chain (its reference cache and weight trace are per chain)."""
        reuse = self.reuse_reference if reuse_reference is None else reuse_reference
        return PreferenceGuidance(self.preference_model_, reuse_reference=reuse)

    def sample(
        self, n: int = 256, guidance_scale: float | None = None, random_state: int | None = None
    ) -> np.ndarray:
        """Generate ``n`` designs, shape (n, d), in the original units (clipped to ``bounds``).

        ``guidance_scale`` overrides w for this call (0 samples the unguided prior).
        """
        check_is_fitted(self, "eps_model_")
        n = check_positive_int(n, "n")
        if guidance_scale is not None and (
            isinstance(guidance_scale, bool) or not isinstance(guidance_scale, numbers.Real)
        ):
            raise ValueError(f"`guidance_scale` must be a finite number >= 0, got {guidance_scale!r}")
        w = self.guidance_scale if guidance_scale is None else float(guidance_scale)
        if w < 0 or not np.isfinite(w):
            raise ValueError(f"`guidance_scale` must be a finite number >= 0, got {guidance_scale!r}")
        if w > 0 and self.preference_model_ is None:
            raise ValueError(
                "this model has no preference model (fitted with guidance_scale=0); "
                "refit with guidance_scale > 0 to sample with guidance"
            )
        seed = self.random_state if random_state is None else random_state
        gen = torch.Generator().manual_seed(int(seed) + 1) if seed is not None else None
        ref = torch.as_tensor(self.reference_, dtype=torch.float32)[None]
        guidance = self._guidance() if w > 0 else None
        steps = self.sample_steps if self.sample_steps is not None else self.n_steps - 1
        # only input gradients are needed: switch weight gradients off for the chain, then restore
        pref = self.preference_model_
        saved = [p.requires_grad for p in pref.parameters()] if guidance is not None else []
        try:
            for p in pref.parameters() if guidance is not None else ():
                p.requires_grad_(False)
            Z = self.ddpm_.p_sample_guided(
                self.eps_model_,
                n,
                self.n_features_in_,
                guidance_fn=guidance,
                w=w,
                ref=ref,
                n_steps=steps,
                generator=gen,
            )
        finally:
            for p, r in zip(pref.parameters() if guidance is not None else (), saved):
                p.requires_grad_(r)
        if guidance is not None:
            self.guidance_weights_ = np.asarray(guidance.weights, dtype=float)
        return self._from_model(Z.numpy().astype(float))


@dataclasses.dataclass
class Result:
    """What :func:`minimize_offline` returns, like pymoo's ``Result``.

    Designs ``X`` of shape (n, d), their exact objectives ``F`` of shape (n, m) and, for a constrained
    problem, their constraint violation ``CV`` of shape (n,) (0 = feasible; None when unconstrained).
    """

    X: np.ndarray
    F: np.ndarray
    algorithm: Any = None
    CV: np.ndarray | None = None

    @property
    def feasible(self) -> np.ndarray:
        """Boolean mask (n,) of the feasible designs (all True for an unconstrained problem)."""
        return np.ones(len(self.X), bool) if self.CV is None else self.CV <= 0


def _accepts_cv(algorithm) -> bool:
    try:
        return "cv" in inspect.signature(algorithm.fit).parameters
    except (TypeError, ValueError):
        return False


def minimize_offline(task, algorithm, n: int = 256) -> Result:
    """Fit ``algorithm`` on an :class:`~neurips25.pref_diffusion.data.OfflineTask`, sample ``n`` designs and
    score all of them with the task's exact oracle (the only oracle call; PGD-MOO Section 4).

    On a constrained task the data's constraint violation is passed as ``fit(..., cv=task.CV)``; an
    algorithm whose ``fit`` takes no ``cv`` is refused (ValueError) rather than silently optimising the
    unconstrained problem. ``algorithm`` is fitted in place (``sklearn.base.clone`` it to keep a copy).

    Examples
    --------
    >>> from neurips25.pref_diffusion.data import make_offline_task
    >>> task = make_offline_task("zdt1", n=400, n_var=4, seed=0)
    >>> res = minimize_offline(task, PreferenceGuidedDiffusion(hidden=16, epochs=1, preference_epochs=1,
    ...                                                         sample_steps=10, random_state=0), n=8)
    >>> res.X.shape, res.F.shape, res.CV
    ((8, 4), (8, 2), None)
    """
    n = check_positive_int(n, "n")
    if not (hasattr(algorithm, "fit") and hasattr(algorithm, "sample")):
        raise TypeError(f"`algorithm` must have fit(X, Y) and sample(n), got {type(algorithm).__name__}")
    if getattr(algorithm, "bounds", None) is None and hasattr(algorithm, "bounds"):
        algorithm.bounds = (task.xl, task.xu)
    if task.CV is not None:
        if not _accepts_cv(algorithm):
            raise ValueError(
                f"task {task.name!r} has constraints, but `algorithm` {type(algorithm).__name__} takes no "
                "`cv` in fit() and would ignore them; use an algorithm that handles constraints "
                "(PreferenceGuidedDiffusion, DataBest)"
            )
        algorithm.fit(task.X, task.Y, cv=task.CV)
    else:
        algorithm.fit(task.X, task.Y)
    X = check_designs(algorithm.sample(n), "sampled designs")
    return Result(X=X, F=task.evaluate(X), algorithm=algorithm, CV=task.violation(X))
