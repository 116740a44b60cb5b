"""Weight decay on a deep linear network is a Schatten quasi-norm penalty on its product.

For a depth-L linear network ``W_L ... W_1 = A``, the smallest total weight decay is

    min_{W_L ... W_1 = A} sum_l ||W_l||_F^2 = L ||A||_{S_{2/L}}^{2/L} = L sum_i sigma_i(A)^{2/L},

attained by the balanced factorisation ``W_l = R_l Sigma^{1/L} R_{l-1}^T`` (``A = U Sigma V^T``, ``R_0 = V``,
``R_L = U``, ``R_l`` any orthonormal frames in between). For L = 2 this is twice the nuclear norm
(Dai, Karzand & Srebro 2021); the abstract of Ledent et al. (NeurIPS 2025) uses it to motivate Schatten
quasi-norms with p = 2/L. By AM-GM on each singular value the balanced point is the minimiser, and every
stationary point of a weight-decayed linear net is balanced, so a net trained to convergence meets the
identity.
"""

from __future__ import annotations

import dataclasses
import numbers

import numpy as np

from neurips25.rank_bounds.spectra import _as_float64

__all__ = ["schatten_penalty", "balanced_factorization", "weight_decay_equals_schatten", "WeightDecayCheck"]


def _check_depth(L) -> int:
    if isinstance(L, bool) or not isinstance(L, numbers.Integral) or L < 1:
        raise ValueError(f"`L` must be an int >= 1, got {L!r}")
    return int(L)


def schatten_penalty(A, L: int) -> float:
    """``L ||A||_{S_{2/L}}^{2/L} = L sum_i sigma_i^{2/L}``: the least weight decay of a depth-L factorisation.

    Examples
    --------
    >>> import numpy as np
    >>> schatten_penalty(np.diag([4.0, 1.0]), 2)      # twice the nuclear norm
    10.0
    """
    L = _check_depth(L)
    A = _as_float64(A, "A")
    if A.ndim != 2:
        raise ValueError(f"`A` must be a 2-D matrix, got shape {A.shape}")
    s = np.linalg.svd(A, compute_uv=False)
    return float(L * np.sum(s ** (2.0 / L)))


def balanced_factorization(A, L: int, width: int | None = None) -> list[np.ndarray]:
    """Factors ``[W_1, ..., W_L]`` with ``W_L ... W_1 = A`` and ``sum ||W_l||_F^2 = L ||A||_{S_{2/L}}^{2/L}``.

    Parameters
    ----------
    A : array, shape (d_out, d_in)
    L : int >= 1
    width : int, optional
        Hidden width (>= min(d_out, d_in)); defaults to ``min(d_out, d_in)``. Extra units get zero weights.

    Returns
    -------
    list of ndarray
        ``W_1`` is ``(width, d_in)``, middle factors ``(width, width)``, ``W_L`` is ``(d_out, width)``.

    Examples
    --------
    >>> import numpy as np
    >>> A = np.arange(6.0).reshape(2, 3)
    >>> Ws = balanced_factorization(A, 3)
    >>> bool(np.allclose(Ws[2] @ Ws[1] @ Ws[0], A))
    True
    """
    L = _check_depth(L)
    A = _as_float64(A, "A")
    if A.ndim != 2:
        raise ValueError(f"`A` must be a 2-D matrix, got shape {A.shape}")
    U, s, Vt = np.linalg.svd(A, full_matrices=False)
    r = s.size
    h = r if width is None else int(width)
    if h < r:
        raise ValueError(f"`width` must be >= min(A.shape) = {r}, got {width}")
    root = s ** (1.0 / L)
    if L == 1:
        return [A.copy()]
    first = np.zeros((h, A.shape[1]))
    first[:r] = root[:, None] * Vt  # Sigma^{1/L} V^T
    last = np.zeros((A.shape[0], h))
    last[:, :r] = U * root[None, :]  # U Sigma^{1/L}
    middle = []
    for _ in range(L - 2):
        M = np.zeros((h, h))
        M[:r, :r] = np.diag(root)
        middle.append(M)
    return [first, *middle, last]


@dataclasses.dataclass(frozen=True)
class WeightDecayCheck:
    """``weight_decay = sum ||W_l||_F^2`` against ``schatten = L ||prod W||_{S_{2/L}}^{2/L}``."""

    weight_decay: float
    schatten: float

    @property
    def relative_gap(self) -> float:
        """``(weight_decay - schatten) / schatten``; >= 0 always, 0 exactly at a balanced factorisation."""
        return (self.weight_decay - self.schatten) / self.schatten


def weight_decay_equals_schatten(factors) -> WeightDecayCheck:
    """Compare the weight decay of factors ``[W_1, ..., W_L]`` with the Schatten penalty of their product.

    Parameters
    ----------
    factors : list of arrays or tensors
        ``W_1`` first (the one applied to the input); shapes must chain.

    Examples
    --------
    >>> import numpy as np
    >>> chk = weight_decay_equals_schatten(balanced_factorization(np.diag([3.0, 2.0]), 4))
    >>> abs(chk.relative_gap) < 1e-12
    True
    """
    if not isinstance(factors, (list, tuple)) or len(factors) == 0:
        raise ValueError("`factors` must be a non-empty list of matrices [W_1, ..., W_L]")
    Ws = [_as_float64(W, f"factors[{i}]") for i, W in enumerate(factors)]
    P = Ws[0]
    for i, W in enumerate(Ws[1:], start=1):
        if W.ndim != 2 or W.shape[1] != P.shape[0]:
            raise ValueError(f"`factors[{i}]` has shape {W.shape}; expected ({'*'}, {P.shape[0]}) to chain")
        P = W @ P
    wd = float(sum(np.sum(W**2) for W in Ws))
    return WeightDecayCheck(weight_decay=wd, schatten=schatten_penalty(P, len(Ws)))
