"""Issue #59 probe: IncrementalPCA takes any integer type (numpy's too) and low-precision rows."""

import numpy as np
import pytest
import torch

from neurips25.eva import IncrementalPCA


def test_ipca_takes_numpy_integers_and_low_precision_rows():
    # IncrementalPCA(np.int64(2)) raised "`n_components` must be a positive int"
    x = torch.randn(40, 5, generator=torch.Generator().manual_seed(0))
    ref = IncrementalPCA(2).partial_fit(x)
    assert IncrementalPCA(np.int64(2)).partial_fit(x).components_.shape == (2, 5)
    for dt in (torch.bfloat16, torch.float16):
        got = IncrementalPCA(2).partial_fit(x.to(dt))
        assert got.components_.dtype == torch.float64
        assert (got.components_ @ ref.components_.T).abs().diagonal().min() > 0.99
    for bad in (0, 2.0, True):
        with pytest.raises(ValueError, match="`n_components` must be a positive int"):
            IncrementalPCA(bad)
