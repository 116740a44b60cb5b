"""Baselines of the paper's table: CEM and gradient descent in latent space, GP-BO on voxel PCA.

Each proposes candidates scored by its own surrogate (no solver in the loop), as in the paper; the
reproduction then re-simulates the top candidates with the real solver (Sim-Drag). Unguided diffusion is
:class:`~neurips25.inverse3d.diffusion.ObjectiveGuidedSampler` with ``objective=None``.
"""

from __future__ import annotations

import numbers

import numpy as np
import torch


def _check_n(name, v, lo=1):
    if not isinstance(v, numbers.Integral) or v < lo:
        raise ValueError(f"`{name}` must be an integer >= {lo}; got {v!r}")
    return int(v)


def _scores(objective, z, need_grad):
    """``objective(z)`` as a (B,) tensor; a clear error for numpy output or (``need_grad``) no gradient path."""
    s = objective(z)
    if not isinstance(s, torch.Tensor):
        if need_grad:
            raise ValueError(f"`objective` must return a torch tensor (B,) differentiable in z (gradient descent "
                             f"needs its gradient); got {type(s).__name__}")
        s = torch.as_tensor(np.asarray(s))
    if need_grad and not s.requires_grad:
        raise ValueError("`objective` must be differentiable in z: its output has no gradient path to z "
                         "(computed under no_grad, detached, or not a function of z)")
    if s.shape != (len(z),):
        raise ValueError(f"`objective` must return one score per latent, shape ({len(z)},); got {tuple(s.shape)}")
    return s


class CEMLatent:
    """Cross-entropy method over latents: sample a diagonal Gaussian, keep the elite, refit.

    The search is boxed to ``[lo, hi]`` (the training latents' range per coordinate), so it cannot wander
    where the decoder has never been trained.
    """

    def __init__(self, objective, lo, hi, pop=64, elite=0.125, iters=20):
        self.objective = objective
        self.lo, self.hi = torch.as_tensor(lo), torch.as_tensor(hi)
        self.pop, self.iters = _check_n("pop", pop, 4), _check_n("iters", iters)
        if not 0 < elite < 1:
            raise ValueError(f"`elite` must be a fraction in (0, 1); got {elite!r}")
        self.n_elite = max(2, int(round(elite * self.pop)))

    @torch.no_grad()
    def run(self, mean, std, n_out, generator=None):
        mu, sd = mean.clone(), std.clone()
        pool, scores = [], []
        for _ in range(self.iters):
            z = (mu + sd * torch.randn((self.pop, *mu.shape), generator=generator)).clamp(self.lo, self.hi)
            s = _scores(self.objective, z, need_grad=False)
            el = z[s.argsort()[: self.n_elite]]
            mu, sd = el.mean(0), el.std(0).clamp_min(1e-3)
            pool.append(z)
            scores.append(s)
        pool, scores = torch.cat(pool), torch.cat(scores)
        return pool[scores.argsort()[:n_out]]


class GDLatent:
    """Gradient descent on the surrogate from random training latents, boxed like :class:`CEMLatent`."""

    def __init__(self, objective, lo, hi, steps=100, lr=0.05):
        self.objective = objective
        self.lo, self.hi = torch.as_tensor(lo), torch.as_tensor(hi)
        self.steps, self.lr = _check_n("steps", steps), float(lr)

    def run(self, starts):
        z = starts.clone().requires_grad_(True)
        opt = torch.optim.Adam([z], lr=self.lr)
        for _ in range(self.steps):
            loss = _scores(self.objective, z, need_grad=True).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
            with torch.no_grad():
                z.copy_(torch.maximum(torch.minimum(z, self.hi), self.lo))
        return z.detach()


class GPBOVoxelPCA:
    """Bayesian optimisation with a Gaussian process on a PCA of voxel occupancies (expected improvement).

    Fits ``PCA(n_components)`` on training occupancies and a Matern GP from PCA coordinates to drag, then
    proposes the ``n_out`` candidates of highest expected improvement among ``n_candidates`` random
    points of the training codes' box, decoded back to voxels by the inverse PCA.
    """

    def __init__(self, n_components=16, n_candidates=4000, seed=0):
        self.n_components = _check_n("n_components", n_components)
        self.n_candidates = _check_n("n_candidates", n_candidates)
        self.seed = int(seed)

    def fit(self, occupancies, drag):
        from sklearn.decomposition import PCA
        from sklearn.gaussian_process import GaussianProcessRegressor
        from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel

        X = np.asarray(occupancies, dtype=float).reshape(len(occupancies), -1)
        y = np.asarray(drag, dtype=float)
        if len(X) != len(y):
            raise ValueError(f"`occupancies` and `drag` differ in length: {len(X)} vs {len(y)}")
        if len(X) < 2:
            raise ValueError(f"`occupancies` must hold at least 2 shapes (a PCA of one shape has no components "
                             f"for the GP to read); got {len(X)}")
        k = min(self.n_components, len(X) - 1)
        self.shape_ = np.asarray(occupancies).shape[1:]
        self.pca_ = PCA(k, random_state=self.seed).fit(X)
        self.codes_ = self.pca_.transform(X)
        kern = ConstantKernel() * Matern(length_scale=np.ones(k) * self.codes_.std(0).mean(), nu=2.5) + WhiteKernel()
        import warnings

        from sklearn.exceptions import ConvergenceWarning

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # length scales at their bounds are expected
            self.gp_ = GaussianProcessRegressor(kern, normalize_y=True, random_state=self.seed).fit(self.codes_, y)
        self.best_ = float(y.min())
        return self

    def propose(self, n_out):
        from scipy.stats import norm
        from sklearn.exceptions import NotFittedError

        if not hasattr(self, "gp_"):
            raise NotFittedError("This GPBOVoxelPCA instance is not fitted yet: call fit(occupancies, drag) before "
                                 "propose")
        n_out = _check_n("n_out", n_out)

        rng = np.random.default_rng(self.seed)
        lo, hi = self.codes_.min(0), self.codes_.max(0)
        cand = rng.uniform(lo, hi, size=(self.n_candidates, len(lo)))
        mu, sd = self.gp_.predict(cand, return_std=True)
        imp = self.best_ - mu
        zz = imp / np.maximum(sd, 1e-9)
        ei = imp * norm.cdf(zz) + sd * norm.pdf(zz)
        top = np.argsort(-ei)[:n_out]
        occ = self.pca_.inverse_transform(cand[top]).reshape(len(top), *self.shape_)
        return np.clip(occ, 0, 1).astype(np.float32), mu[top]
