"""PRSformer model parts: embedding semantics, locality, loss, validation, and that it can learn."""

import numpy as np
import pytest
import torch

from neurips25.prsformer import (
    GenotypeDataset,
    LinearDosageModel,
    MultiTaskBCE,
    PRSformer,
    TokenEmbedding,
    evaluate,
    fit,
)


def small_model(**kw):
    args = dict(n_snps=32, n_tasks=2, d_model=8, n_heads=2, d_ff=16, n_layers=2, kernel_size=3,
                dilations=[1, 2])
    args.update(kw)
    torch.manual_seed(0)
    return PRSformer(**args)


def test_embedding_semantics():
    emb = TokenEmbedding(4, 3)
    out = emb(torch.tensor([[0, 1, 2, -1]]))[0]
    assert torch.equal(out[0], torch.zeros(3))  # hom-ref token is exactly zero
    assert torch.allclose(out[1], emb.observed[1])
    assert torch.allclose(out[2], 2 * emb.observed[2])  # dosage-scaled, SNP-specific
    assert torch.allclose(out[3], emb.missing[3])  # missing has its own vector


def test_forward_shapes_and_covariates():
    m = small_model(n_covariates=2)
    assert m(torch.randint(-1, 3, (5, 32)), torch.randn(5, 2)).shape == (5, 2)
    with pytest.raises(ValueError, match="pass `covariates`"):
        m(torch.randint(0, 3, (5, 32)))
    assert small_model(head="mean")(torch.randint(0, 3, (4, 32))).shape == (4, 2)


def test_encoder_is_local():
    # one block with k=3, d=1: token 20's output depends only on tokens 19..21
    m = small_model(n_layers=1, dilations=[1])
    x = torch.randn(1, 32, 8, requires_grad=True)
    m.blocks[0](x)[0, 20].sum().backward()
    touched = (x.grad[0].abs().sum(1) > 0).nonzero().flatten().tolist()
    assert touched == [19, 20, 21]


@pytest.mark.parametrize("bad,match", [
    (torch.full((2, 32), 3), r"\{-1 \(missing\), 0, 1, 2\}"),
    (torch.full((2, 32), -2), r"\{-1 \(missing\), 0, 1, 2\}"),
    (torch.full((2, 32), float("nan")), "NaN"),
    (torch.zeros(2, 31, dtype=torch.long), "n_snps=32"),
])
def test_bad_dosages(bad, match):
    with pytest.raises(ValueError, match=match):
        small_model()(bad)


def test_bad_configuration():
    with pytest.raises(ValueError, match="each dilation group"):
        small_model(dilations=[1, 16])
    with pytest.raises(ValueError, match="one entry per layer"):
        small_model(dilations=[1])
    with pytest.raises(ValueError, match="positive odd"):
        small_model(kernel_size=4)


def test_multitask_bce_uncertainty_weighting():
    logits, y = torch.randn(10, 3), (torch.rand(10, 3) < 0.3).float()
    per_task = torch.nn.functional.binary_cross_entropy_with_logits(logits, y, reduction="none").mean(0)
    plain = MultiTaskBCE(3)
    assert torch.allclose(plain(logits, y), per_task.mean())
    loss = MultiTaskBCE(3, learn_weights=True)
    with torch.no_grad():
        loss.log_vars.copy_(torch.tensor([0.0, 1.0, -1.0]))
    s = loss.log_vars.detach()
    assert torch.allclose(loss(logits, y), ((torch.exp(-s) * per_task + s).sum() / 3))


def test_linear_dosage_model_uses_missing_indicator():
    m = LinearDosageModel(3, 1)
    with torch.no_grad():
        m.fc.weight.zero_()
        m.fc.weight[0, 1] = 5.0  # missing indicator of SNP 1
    out = m(torch.tensor([[0, -1, 2], [0, 0, 2]]))
    assert out[:, 0].tolist() == [5.0, 0.0]


def test_tiny_prsformer_learns_an_interaction():
    # label = SNP 5 and SNP 6 both carry the alt allele: a pure interaction, learnable by attention
    rng = np.random.default_rng(0)
    g = rng.integers(0, 3, size=(256, 32))
    y = ((g[:, 5] > 0) & (g[:, 6] > 0)).astype(np.float32)[:, None]
    ds = GenotypeDataset(g, y)
    m = small_model(n_tasks=1, task_weighting=False)
    fit(m, ds, ds, epochs=6, lr=1e-2, weight_decay=0.0, batch_size=32, patience=6)
    assert evaluate(m, ds)["mean_auroc"] > 0.95


def test_fit_rejects_bad_input():
    ds = GenotypeDataset(np.zeros((4, 32), dtype=np.int8), np.zeros((4, 2)))
    with pytest.raises(TypeError, match="GenotypeDataset"):
        fit(small_model(), (ds.dosages, ds.labels), ds)
    with pytest.raises(ValueError, match="epochs"):
        fit(small_model(), ds, ds, epochs=0)
