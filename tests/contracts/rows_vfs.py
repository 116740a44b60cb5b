"""vfs: the three screeners as scikit-learn feature selectors."""

import numpy as np
from contract_fixtures import pickle_round_trip, sklearn_checks_pass
from contract_table import not_applicable, row

C = "vfs"


def _screeners():
    from neurips25.vfs import CentralizedSIS, OneStageFederatedScreener, VerticalFederatedScreener

    return {"VerticalFederatedScreener": VerticalFederatedScreener(group_size=2),
            "OneStageFederatedScreener": OneStageFederatedScreener(),
            "CentralizedSIS": CentralizedSIS()}


def _data(seed=0):
    """Planted support: the first four of 40 features shift with the class."""
    rng = np.random.default_rng(seed)
    y = (rng.random(300) < 0.3).astype(int)
    X = rng.normal(size=(300, 40))
    X[:, :4] += 1.5 * y[:, None]
    return X, y


def _checks(name):
    def check(tmp_path):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the toy Paillier key size warning
            sklearn_checks_pass(_screeners()[name])

    return check


def _clone_pipeline_grid(name):
    def check(tmp_path):
        from sklearn.base import clone
        from sklearn.linear_model import LogisticRegression
        from sklearn.model_selection import GridSearchCV
        from sklearn.pipeline import Pipeline

        X, y = _data()
        est = _screeners()[name].set_params(n_features_keep=4)
        if name == "VerticalFederatedScreener":  # stage 1 keeps 4 of the 20 two-feature groups
            est.set_params(n_groups_keep=4)
        fitted = clone(est).fit(X, y)
        assert set(fitted.get_support(indices=True)) == {0, 1, 2, 3}
        assert pickle_round_trip(fitted).get_support().tolist() == fitted.get_support().tolist()
        pipe = Pipeline([("screen", est), ("clf", LogisticRegression())])
        grid = GridSearchCV(pipe, {"screen__n_features_keep": [2, 4, 8]}, cv=3).fit(X, y)
        assert grid.best_estimator_.named_steps["screen"].get_support()[:2].all()
        assert grid.score(X, y) > 0.75

    return check


for _name in ("VerticalFederatedScreener", "OneStageFederatedScreener", "CentralizedSIS"):
    row(C, "sklearn", f"{_name}: check_estimator, every sklearn check passes")(_checks(_name))
    row(C, "sklearn", f"{_name}: clone, pickle, Pipeline with a classifier, GridSearchCV over n_features_keep; "
        "planted support found")(_clone_pipeline_grid(_name))

not_applicable(C, "torch", "dtype / bfloat16 / torch.compile", "numpy / Paillier selectors; no torch module")
