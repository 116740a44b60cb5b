"""sliced_wasserstein: SlicedWassersteinFPCA as a scikit-learn transformer."""

import numpy as np
from contract_fixtures import pickle_round_trip, sklearn_checks_pass
from contract_table import not_applicable, row

C = "sliced_wasserstein"
SMALL = dict(n_directions=12, n_quantiles=21)


def _family(n=16, seed=0):
    """Bivariate Gaussians whose mean and spread move with a planted label ``y``."""
    rng = np.random.default_rng(seed)
    y = np.linspace(-1, 1, n)
    X = [rng.normal(size=(60, 2)) * (1 + 0.3 * v) + [v, -v] for v in y]
    return X, y


@row(C, "sklearn", "check_estimator: every sklearn check passes (table convention, no exceptions)")
def _checks(tmp_path):
    from neurips25.sliced_wasserstein import SlicedWassersteinFPCA

    sklearn_checks_pass(SlicedWassersteinFPCA(n_components=2, n_quantiles=11))


@row(C, "sklearn", "clone: same parameters, unfitted, refits to the same scores; pickle keeps a fitted model")
def _clone(tmp_path):
    from sklearn.base import clone

    from neurips25.sliced_wasserstein import SlicedWassersteinFPCA

    X, _ = _family()
    a = SlicedWassersteinFPCA(n_components=2, random_state=0, **SMALL).fit(X)
    b = clone(a)
    assert b.get_params() == a.get_params() and not hasattr(b, "components_")
    np.testing.assert_array_equal(b.fit(X).transform(X), a.transform(X))
    np.testing.assert_array_equal(pickle_round_trip(a).transform(X), a.transform(X))


@row(C, "sklearn", "Pipeline and GridSearchCV: FPCA scores feed a regressor; the grid picks n_components")
def _pipeline(tmp_path):
    from sklearn.linear_model import LinearRegression
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import Pipeline

    from neurips25.sliced_wasserstein import SlicedWassersteinFPCA

    X, y = _family(n=24)
    pipe = Pipeline([("fpca", SlicedWassersteinFPCA(random_state=0, **SMALL)), ("reg", LinearRegression())])
    grid = GridSearchCV(pipe, {"fpca__n_components": [1, 2]}, cv=3).fit(X, y)
    assert grid.best_params_["fpca__n_components"] in (1, 2)
    # the planted label is recoverable from the scores
    assert grid.score(X, y) > 0.8, grid.score(X, y)


not_applicable(C, "torch", "dtype / bfloat16 / torch.compile", "numpy / scipy estimator; no torch module")
