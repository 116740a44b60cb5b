"""Issue #59 probe: every public method of the estimator before fit raises sklearn's NotFittedError."""

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

from neurips25.sliced_wasserstein import SlicedWassersteinFPCA


@pytest.mark.parametrize("call", [
    lambda m, X: m.transform(X), lambda m, X: m.inverse_transform(np.zeros((2, 2))),
    lambda m, X: m.modes_of_variation(1), lambda m, X: m.embed(X), lambda m, X: m.get_feature_names_out(),
    lambda m, X: m.fpc_reconstruction_error(X), lambda m, X: m.fpc_reconstruction_error(X, n_components=1)])
def test_methods_before_fit_raise_not_fitted(call):
    # fpc_reconstruction_error raised AttributeError: no attribute 'n_components_'
    X = np.random.default_rng(0).normal(size=(5, 50, 2))
    with pytest.raises(NotFittedError):
        call(SlicedWassersteinFPCA(), X)
