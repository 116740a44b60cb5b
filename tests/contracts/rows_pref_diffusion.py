"""pref_diffusion: offline multi-objective optimisation on pymoo problems, with constraints; sklearn clone."""

import numpy as np
from contract_table import not_applicable, row

C = "pref_diffusion"
TINY_PGD = dict(n_steps=50, sample_steps=10, hidden=16, epochs=2, preference_epochs=2, random_state=0)
TINY_SURR = dict(hidden=16, epochs=2, n_gen=3, random_state=0)


def _constrained_task():
    from pymoo.problems import get_problem

    from neurips25.pref_diffusion import make_offline_task

    # pymoo's BNH: 2 variables, 2 objectives, 2 inequality constraints
    return get_problem("bnh"), make_offline_task(get_problem("bnh"), n=200, seed=0)


def _algorithm(name):
    from neurips25 import pref_diffusion as pd

    return {"PreferenceGuidedDiffusion": lambda: pd.PreferenceGuidedDiffusion(**TINY_PGD),
            "UnguidedDiffusion": lambda: pd.UnguidedDiffusion(**{k: v for k, v in TINY_PGD.items()
                                                                 if k != "preference_epochs"}),
            "MultiHeadSurrogateNSGA2": lambda: pd.MultiHeadSurrogateNSGA2(**TINY_SURR),
            "EnsembleSurrogateNSGA2": lambda: pd.EnsembleSurrogateNSGA2(**TINY_SURR),
            "DataBest": lambda: pd.DataBest()}[name]()


def _constrained(name):
    def check(tmp_path):
        from pymoo.core.individual import calc_cv

        from neurips25.pref_diffusion import minimize_offline

        problem, task = _constrained_task()
        assert task.CV is not None and (task.CV > 0).any(), "the offline data should hold infeasible designs"
        res = minimize_offline(task, _algorithm(name), n=8)
        # the returned CV is pymoo's own, for the returned designs
        out = problem.evaluate(res.X, return_as_dictionary=True)
        np.testing.assert_allclose(res.CV, calc_cv(G=out.get("G"), H=out.get("H")), atol=1e-9)
        np.testing.assert_allclose(res.F, out["F"], rtol=1e-9)
        lo, hi = problem.bounds()
        assert ((res.X >= lo - 1e-9) & (res.X <= hi + 1e-9)).all()

    return check


for _name in ("PreferenceGuidedDiffusion", "UnguidedDiffusion", "DataBest"):
    row(C, "pymoo", f"{_name} on a constrained pymoo problem (BNH): runs with cv=, result CV is pymoo's")(
        _constrained(_name))


def _refuses(name):
    def check(tmp_path):
        import pytest

        from neurips25.pref_diffusion import minimize_offline

        _, task = _constrained_task()
        with pytest.raises(ValueError, match=f"{name} does not model constraints"):
            minimize_offline(task, _algorithm(name), n=8)

    return check


for _name in ("MultiHeadSurrogateNSGA2", "EnsembleSurrogateNSGA2"):
    row(C, "pymoo", f"{_name} on a constrained pymoo problem: a documented refusal (ValueError naming cv), "
        "not an unconstrained answer")(_refuses(_name))


@row(C, "pymoo", "RE21 / RE37 are pymoo Problems: pymoo's own NSGA-II minimises them")
def _re_problems(tmp_path):
    from pymoo.algorithms.moo.nsga2 import NSGA2
    from pymoo.optimize import minimize

    from neurips25.pref_diffusion import get_problem

    for name, m in (("re21", 2), ("re37", 3)):
        res = minimize(get_problem(name), NSGA2(pop_size=12), ("n_gen", 3), seed=0, verbose=False)
        assert res.F.ndim == 2 and res.F.shape[1] == m and np.isfinite(res.F).all()


@row(C, "sklearn", "clone / get_params of every algorithm: same parameters, unfitted")
def _clone(tmp_path):
    from sklearn.base import clone

    for name in ("PreferenceGuidedDiffusion", "UnguidedDiffusion", "MultiHeadSurrogateNSGA2", "DataBest"):
        est = _algorithm(name)
        again = clone(est)
        assert again.get_params() == est.get_params() and type(again) is type(est)


@row(C, "sklearn", "every post-fit method before fit (sample; the surrogates' predict; fit(prior=) with an unfitted "
    "prior) raises sklearn's NotFittedError naming the estimator, also after clone of a fitted one")
def _not_fitted(tmp_path):
    import pytest
    from sklearn.base import clone
    from sklearn.exceptions import NotFittedError

    X = np.random.default_rng(0).random((12, 2))
    Y = np.c_[X[:, 0], 1 - X[:, 0] + X[:, 1]]
    for name in ("PreferenceGuidedDiffusion", "UnguidedDiffusion", "MultiHeadSurrogateNSGA2",
                 "EnsembleSurrogateNSGA2", "DataBest"):
        est = _algorithm(name)
        calls = [lambda e=est: e.sample(4)]
        if hasattr(est, "predict"):
            calls.append(lambda e=est: e.predict(X))
        for call in calls:
            with pytest.raises(NotFittedError, match=f"This {name} instance is not fitted"):
                call()
    fitted = _algorithm("DataBest").fit(X, Y)
    with pytest.raises(NotFittedError, match="DataBest"):
        clone(fitted).sample(2)
    with pytest.raises(NotFittedError, match="`prior`"):
        _algorithm("PreferenceGuidedDiffusion").fit(X, Y, prior=_algorithm("PreferenceGuidedDiffusion"))


not_applicable(C, "sklearn", "check_estimator", "fit(X, Y) takes a multi-objective Y and sample(n) generates "
               "designs: not a predictor / transformer, so sklearn's checks do not describe it")
not_applicable(C, "torch", "dtype / bfloat16 / torch.compile",
               "the torch networks are internal; the public API takes and returns numpy arrays")
