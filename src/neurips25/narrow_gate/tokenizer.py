"""The native toy's image tokenizer: a k-means codebook over image patches (a stand-in for a VQ-GAN).

Chameleon / Emu3 quantise an image into discrete codes that share the vocabulary with text; here each
``patch x patch`` RGB patch is replaced by the index of its nearest k-means centroid.
"""

from __future__ import annotations

import numbers

import numpy as np

from neurips25.narrow_gate.data import patches


class PatchKMeansTokenizer:
    """K-means codebook on image patches.

    Parameters
    ----------
    patch : int
        Patch side in pixels.
    n_codes : int
        Codebook size K.
    """

    def __init__(self, patch: int = 3, n_codes: int = 64, seed: int = 0):
        if not isinstance(patch, numbers.Integral) or patch < 1:
            raise ValueError(f"patch must be a positive int; got {patch!r}")
        if not isinstance(n_codes, numbers.Integral) or n_codes < 2:
            raise ValueError(f"n_codes must be an int >= 2; got {n_codes!r}")
        self.patch, self.n_codes, self.seed = int(patch), int(n_codes), int(seed)
        self.codebook_ = None

    def fit(self, images: np.ndarray) -> PatchKMeansTokenizer:
        from sklearn.cluster import MiniBatchKMeans

        x = patches(images, self.patch).reshape(-1, self.patch * self.patch * 3)
        km = MiniBatchKMeans(self.n_codes, random_state=self.seed, n_init=3, batch_size=4096).fit(x)
        self.codebook_ = km.cluster_centers_.astype(np.float32)
        return self

    def encode(self, images: np.ndarray) -> np.ndarray:
        """(n, H, W, 3) -> (n, n_patches) int64 codes in [0, n_codes)."""
        if self.codebook_ is None:
            raise RuntimeError("PatchKMeansTokenizer is not fitted; call fit(images) first")
        x = patches(images, self.patch)
        d = (x ** 2).sum(-1, keepdims=True) - 2 * x @ self.codebook_.T + (self.codebook_ ** 2).sum(-1)
        return d.argmin(-1).astype(np.int64)

    def decode(self, codes: np.ndarray, image_size: int) -> np.ndarray:
        """(n, n_patches) codes -> (n, H, W, 3) images made of centroids."""
        g = image_size // self.patch
        p = self.codebook_[np.asarray(codes)].reshape(-1, g, g, self.patch, self.patch, 3)
        return p.transpose(0, 1, 3, 2, 4, 5).reshape(-1, image_size, image_size, 3)
