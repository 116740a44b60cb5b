"""eareranker (#49): EARerankerEstimator as a scikit-learn estimator with a pairwise fit(q, x, y)."""

import numpy as np
from contract_fixtures import pickle_round_trip
from contract_table import not_applicable, row

C, ISSUE = "eareranker", 49
TINY = dict(n_chunks=4, d_model=16, n_layers=1, n_heads=2, dim_feedforward=32, max_steps=40, early_stopping=False)


def _pairs(n=96, d=16, seed=0):
    rng = np.random.default_rng(seed)
    Q, D = rng.normal(size=(n, d)), rng.normal(size=(n, d))
    return Q, D, 100 / (1 + np.exp(-(Q * D).sum(1)))


@row(C, "sklearn", "clone: same parameters, unfitted; the same seed refits to the same scores")
def _clone(tmp_path):
    from sklearn.base import clone

    from neurips25.eareranker import EARerankerEstimator

    Q, D, s = _pairs()
    a = EARerankerEstimator(**TINY).fit(Q, D, s)
    b = clone(a)
    assert b.get_params().keys() == a.get_params().keys() and not hasattr(b, "model_")
    np.testing.assert_allclose(b.fit(Q, D, s).predict_score(Q, D), a.predict_score(Q, D), atol=1e-5)


@row(C, "sklearn", "get_params / set_params round trip, and pickle keeps a fitted estimator's scores")
def _params_pickle(tmp_path):
    from neurips25.eareranker import EARerankerEstimator

    Q, D, s = _pairs()
    est = EARerankerEstimator(**TINY)
    est.set_params(**est.get_params())
    assert est.get_params() == EARerankerEstimator(**TINY).get_params()
    est.fit(Q, D, s)
    np.testing.assert_array_equal(pickle_round_trip(est).predict_score(Q, D), est.predict_score(Q, D))


not_applicable(C, "sklearn", "check_estimator / Pipeline / GridSearchCV",
               "the API is pairwise, fit(query_emb, doc_emb, scores), not sklearn's fit(X, y): sklearn's checks, "
               "Pipeline and GridSearchCV pass one X")
not_applicable(C, "torch", "dtype / bfloat16 / torch.compile",
               "the torch model is internal (model_); the public API takes and returns numpy arrays")
