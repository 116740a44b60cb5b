"""Functional data analysis of multivariate distributions through Wasserstein slicing.

Paper: "Functional data analysis for multivariate distributions through Wasserstein slicing",
NeurIPS 2025 (poster; OpenReview ``myPtOTn3si``). Authors not confirmed here.

Idea. A distribution ``mu`` on R^d is cut into its one-dimensional slices ``theta # mu`` (the laws of
``<X, theta>``; for a density, its Radon transform). By Cramer-Wold the family of slices determines
``mu``, and ``mu -> Q_mu(theta, u)`` (the slice quantile functions) is an isometry from the sliced
Wasserstein space into ``L^2(S^{d-1} x [0, 1])``:

    SW_2^2(mu, nu) = int_{S^{d-1}} int_0^1 (Q_mu(theta, u) - Q_nu(theta, u))^2 du dtheta.

Applying a per-slice transform ``psi`` (log-quantile density by default) lands in a full Hilbert space
where functional PCA is done, and every element maps back to a valid distribution: the mean, the
principal components and the modes of variation ``psi^{-1}(mu_hat + alpha sqrt(lambda_k) phi_k)`` are
distributions again (densities by filtered back-projection in 2-D, point clouds in any d).

Reconstructed here (the paper's full text was not available): the choice of ``psi`` (pluggable:
``"lqd"`` or ``"quantile"``; LQD's location weighted unit-free, by ``1 / mean slice variance``), the
slice density estimator (a KDE with a robust bandwidth), the slice tails and window of the density
route, and the point-cloud inversion for d > 2;
they follow Sliced Wasserstein Regression (Chen, Zhou & Mueller, arXiv 2306.10601) and Petersen &
Mueller (Ann. Statist. 2016). See ``docs/sliced_wasserstein.md``.

Example
-------
>>> import numpy as np
>>> from neurips25.sliced_wasserstein import SlicedWassersteinFPCA
>>> rng = np.random.default_rng(0)
>>> X = [rng.normal(loc=[a, 0.0], size=(100, 2)) for a in np.linspace(-1, 1, 10)]
>>> SlicedWassersteinFPCA(n_components=2, n_directions=12, n_quantiles=21).fit_transform(X).shape
(10, 2)

Citation::

    @inproceedings{sliced_wasserstein_fda_2025,
      title     = {Functional data analysis for multivariate distributions through Wasserstein slicing},
      booktitle = {Advances in Neural Information Processing Systems (NeurIPS)},
      year      = {2025},
      url       = {https://openreview.net/forum?id=myPtOTn3si}
    }
"""

from neurips25.sliced_wasserstein.data import (
    GaussianMixture2D,
    gaussian_family,
    gaussian_slice_quantiles,
    load_nhanes_bp,
)
from neurips25.sliced_wasserstein.fpca import SlicedWassersteinFPCA
from neurips25.sliced_wasserstein.inversion import NegativeMassWarning, slices_to_density, slices_to_samples
from neurips25.sliced_wasserstein.radon import iradon_fbp, radon_density, ramp_filter
from neurips25.sliced_wasserstein.slicing import (
    DegenerateSliceWarning,
    TransposedSampleWarning,
    covariance_from_slices,
    directions,
    quantile_levels,
    sliced_quantiles,
    sliced_wasserstein,
)
from neurips25.sliced_wasserstein.transforms import LQDTransform, QuantileTransform, quantiles_to_densities

__all__ = [
    "SlicedWassersteinFPCA",
    "sliced_wasserstein",
    "directions",
    "quantile_levels",
    "sliced_quantiles",
    "LQDTransform",
    "QuantileTransform",
    "quantiles_to_densities",
    "radon_density",
    "iradon_fbp",
    "ramp_filter",
    "slices_to_samples",
    "slices_to_density",
    "covariance_from_slices",
    "NegativeMassWarning",
    "DegenerateSliceWarning",
    "TransposedSampleWarning",
    "load_nhanes_bp",
    "gaussian_family",
    "gaussian_slice_quantiles",
    "GaussianMixture2D",
]
