"""Incremental, mean-centred PCA over streamed activation batches (EVA step 2).

The update follows Ross et al. (2008), "Incremental learning for robust visual tracking", in the form
scikit-learn's ``IncrementalPCA`` uses: the previous components scaled by their singular values, the new
centred batch and one mean-correction row are stacked and decomposed again, keeping the top ``k``.
"""

from __future__ import annotations

import numbers

import torch


class IncrementalPCA:
    """Streaming PCA of row vectors, in torch, accumulated in float64.

    Parameters
    ----------
    n_components : int
        ``k``, the number of principal directions kept (EVA: ``round(rho * r)``).
    svd : {"full", "lowrank"}, default="full"
        ``"full"`` decomposes the stacked matrix exactly (``torch.linalg.svd``); ``"lowrank"`` uses the
        randomised ``torch.svd_lowrank(q=2k, niter=4)``, which is what PEFT's EVA runs.
    lowrank_seed : int, default=42
        Seed of the randomised SVD (``"lowrank"`` only); the global torch RNG is left untouched.

    Attributes
    ----------
    components_ : Tensor, shape (k, d)
        Orthonormal rows, the top right-singular vectors of the centred data seen so far; each row's
        largest-magnitude entry is positive (a deterministic sign).
    singular_values_ : Tensor, shape (k,)
        Singular values of the centred data matrix.
    explained_variance_ratio_ : Tensor, shape (k,)
        ``sigma_j^2 / sum_i n * var_i``: the share of the total input variance each direction carries.
    mean_, var_ : Tensor, shape (d,)
        Running per-feature mean and (biased) variance.
    n_samples_seen_ : int

    Examples
    --------
    >>> import torch
    >>> x = torch.randn(500, 6) * torch.tensor([5.0, 1, 1, 1, 1, 0.1])
    >>> pca = IncrementalPCA(2)
    >>> for chunk in x.split(100):
    ...     _ = pca.partial_fit(chunk)
    >>> int(pca.components_[0].abs().argmax())
    0
    """

    def __init__(self, n_components: int, svd: str = "full", lowrank_seed: int = 42) -> None:
        if isinstance(n_components, bool) or not isinstance(n_components, numbers.Integral) or n_components < 1:
            raise ValueError(f"`n_components` must be a positive int, got {n_components!r}")
        if svd not in ("full", "lowrank"):
            raise ValueError(f"`svd` must be 'full' or 'lowrank', got {svd!r}")
        self.n_components = int(n_components)
        self.svd = svd
        self.lowrank_seed = lowrank_seed
        self.n_samples_seen_ = 0
        self.components_: torch.Tensor | None = None

    @property
    def fitted(self) -> bool:
        return self.components_ is not None

    def _decompose(self, m: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if self.svd == "lowrank":
            q = min(2 * self.n_components, *m.shape)
            # fork_rng: a fixed seed for the sketch without disturbing the caller's random stream
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(self.lowrank_seed)
                _, s, v = torch.svd_lowrank(m, q=q, niter=4)
            vt = v.T
        else:
            _, s, vt = torch.linalg.svd(m, full_matrices=False)
        # deterministic sign: the largest-magnitude entry of every row is made positive
        idx = vt.abs().argmax(dim=1)
        signs = torch.sign(vt[torch.arange(vt.shape[0]), idx])
        signs[signs == 0] = 1
        return s, vt * signs[:, None]

    @torch.no_grad()
    def partial_fit(self, x: torch.Tensor) -> IncrementalPCA:
        """Fold one batch into the running decomposition.

        Parameters
        ----------
        x : Tensor, shape (n, d)
            New rows; ``n >= n_components`` and ``d >= n_components`` are required.
        """
        if x.ndim != 2:
            raise ValueError(f"`x` must be 2-D (n, d), got shape {tuple(x.shape)}")
        n, d = x.shape
        if d < self.n_components:
            raise ValueError(f"`n_components`={self.n_components} exceeds the feature dimension d={d}")
        if n < self.n_components:
            raise ValueError(f"a batch needs at least n_components={self.n_components} rows, got {n}")
        x = x.detach().to(torch.float64)
        if self.fitted and d != self.mean_.shape[0]:
            raise ValueError(f"`x` has {d} features, earlier batches had {self.mean_.shape[0]}")

        batch_mean = x.mean(dim=0)
        batch_var_sum = (x - batch_mean).square().sum(dim=0)  # n * batch variance
        m_prev = self.n_samples_seen_
        m_tot = m_prev + n
        if not self.fitted:
            mean, var_sum = batch_mean, batch_var_sum
            stacked = x - batch_mean
        else:
            # Chan et al. pooled mean/variance; Ross et al. mean-correction row keeps the SVD centred
            delta = batch_mean - self.mean_
            mean = self.mean_ + delta * (n / m_tot)
            var_sum = self.var_ * m_prev + batch_var_sum + delta.square() * (m_prev * n / m_tot)
            correction = ((m_prev * n / m_tot) ** 0.5) * (self.mean_ - batch_mean)
            stacked = torch.cat([self.singular_values_[:, None] * self.components_, x - batch_mean,
                                 correction[None, :]])
        s, vt = self._decompose(stacked)
        k = self.n_components
        self.components_ = vt[:k].contiguous()
        self.singular_values_ = s[:k].clone()
        self.explained_variance_ratio_ = s[:k].square() / var_sum.sum()
        self.mean_ = mean
        self.var_ = var_sum / m_tot
        self.n_samples_seen_ = m_tot
        return self
