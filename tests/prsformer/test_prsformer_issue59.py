"""Issue #59 probes: predict / evaluate / fit with a bfloat16 or float16 model."""

import numpy as np
import pytest
import torch

from neurips25.prsformer import LinearDosageModel, PRSformer, evaluate, fit, predict, simulate_cohort


@pytest.fixture(scope="module")
def data():
    c = simulate_cohort(120, 16, n_tasks=2, seed=0)
    return c.subset(np.arange(80)).dataset(), c.subset(np.arange(80, 120)).dataset(), c.covariates.shape[1]


def _models(n_cov):
    torch.manual_seed(0)
    return [PRSformer(n_snps=16, n_tasks=2, d_model=8, n_heads=2, d_ff=16, n_layers=1, kernel_size=5, dilations=(1,),
                      n_covariates=n_cov), LinearDosageModel(16, 2, n_covariates=n_cov)]


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_predict_and_evaluate_a_low_precision_model(data, dtype):
    # bfloat16 failed with "TypeError: Got unsupported ScalarType BFloat16" (.numpy() on the logits)
    _, val, n_cov = data
    for model in _models(n_cov):
        ref = predict(model, val)
        logits = predict(model.to(dtype), val)
        assert logits.dtype == np.float32 and logits.shape == (len(val), 2)
        assert np.abs(logits - ref).max() < 0.1
        assert 0 <= evaluate(model, val)["mean_auroc"] <= 1


def test_fit_a_bfloat16_model_and_refuse_a_float16_one(data):
    train, val, n_cov = data
    for model in _models(n_cov):
        res = fit(model.to(torch.bfloat16), train, val, epochs=1, batch_size=40)
        assert np.isfinite(res.best_val_auroc)
        assert all(torch.isfinite(p.float()).all() for p in model.parameters())
    # float16 AdamW turned every weight NaN (its eps underflows), then sklearn raised "Input contains NaN"
    for model in _models(n_cov):
        with pytest.raises(ValueError, match=r"`model` has float16 parameters.*float32 or bfloat16"):
            fit(model.to(torch.float16), train, val, epochs=1, batch_size=40)
