"""Issue #59 probe: a float16 feature matrix (numpy) screens like the float32 one."""

import numpy as np

from neurips25.vfs import (
    CentralizedSIS,
    OneStageFederatedScreener,
    VerticalFederatedScreener,
    make_vertical_sparse_classification,
)


def test_float16_features_screen_like_float32():
    # VerticalFederatedScreener failed with "scipy.sparse does not support dtype float16"
    d = make_vertical_sparse_classification(n_samples=300, n_features=120, n_parties=2, group_size=20, density=0.05,
                                            random_state=0)
    X = d.X.toarray()
    for cls in (VerticalFederatedScreener, OneStageFederatedScreener, CentralizedSIS):
        ref = cls().fit(X.astype(np.float32), d.y).get_support()
        assert np.array_equal(cls().fit(X.astype(np.float16), d.y).get_support(), ref)
        half = X.astype(np.float16)
        parts = [half[:, :60], half[:, 60:]]
        if cls is not CentralizedSIS:
            assert np.array_equal(cls().fit(parts, d.y).get_support(), ref)
