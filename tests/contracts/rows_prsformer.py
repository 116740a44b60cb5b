"""prsformer: PRSformer and neighborhood attention as torch modules / functions; GenotypeDataset in a DataLoader."""

import torch
from contract_fixtures import (
    LOW_PRECISION,
    assert_close,
    compiled_matches_eager,
    forward_in_dtype,
    pickle_round_trip,
    state_dict_round_trip,
    worker_batches,
)
from contract_table import row

C = "prsformer"


def _model(seed=0):
    from neurips25.prsformer import PRSformer

    torch.manual_seed(seed)
    return PRSformer(n_snps=32, n_tasks=2, d_model=8, n_heads=2, d_ff=16, n_layers=2, kernel_size=5,
                     dilations=(1, 2), n_covariates=1).eval()


def _inputs(dtype, device):
    g = torch.Generator().manual_seed(1)
    return (torch.randint(-1, 3, (3, 32), generator=g).to(device),
            torch.randn(3, 1, generator=g).to(device, dtype))


@row(C, "torch", "PRSformer float64: logits follow the model's dtype")
def _f64(tmp_path):
    forward_in_dtype(_model(), _inputs, torch.float64)


@row(C, "torch", "PRSformer bfloat16 forward: runs, bfloat16 logits close to float32")
def _bf16(tmp_path):
    ref = _model()(*_inputs(torch.float32, "cpu"))
    out = forward_in_dtype(_model(), _inputs, LOW_PRECISION)
    assert_close(out.float(), ref, atol=0.1, rtol=0.05, what="bfloat16 vs float32 logits")


@row(C, "torch", "PRSformer on cuda: logits on cuda", device="cuda")
def _cuda(tmp_path):
    forward_in_dtype(_model(), _inputs, torch.float32, device="cuda")


@row(C, "torch", "PRSformer torch.compile matches eager")
def _compile(tmp_path):
    compiled_matches_eager(_model(), _inputs(torch.float32, "cpu"))


def _qkv(dtype):
    g = torch.Generator().manual_seed(4)
    return [torch.randn(2, 2, 20, 4, generator=g).to(dtype) for _ in range(3)]


@row(C, "torch", "neighborhood_attention in float64 and bfloat16 follows the dtype and equals the reference")
def _na_dtypes(tmp_path):
    from neurips25.prsformer import neighborhood_attention, reference_neighborhood_attention

    for dtype, tol in ((torch.float64, 1e-12), (LOW_PRECISION, 3e-2)):
        q, k, v = _qkv(dtype)
        out = neighborhood_attention(q, k, v, kernel_size=5, dilation=2)
        assert out.dtype == dtype
        ref = reference_neighborhood_attention(*_qkv(torch.float64), kernel_size=5, dilation=2)
        assert_close(out.double(), ref, atol=tol, what=f"neighborhood attention in {dtype}")


@row(C, "torch", "state_dict through a file and pickle: equal logits")
def _round_trips(tmp_path):
    a = _model()
    b = state_dict_round_trip(a, _model(seed=9), tmp_path / "prs.pt")
    x = _inputs(torch.float32, "cpu")
    with torch.no_grad():
        assert_close(b(*x), a(*x), what="state_dict round trip")
        assert_close(pickle_round_trip(a)(*x), a(*x), what="pickle round trip")


@row(C, "torch-data", "GenotypeDataset in a DataLoader with 2 workers: the same batches as in-process")
def _loader(tmp_path):
    import numpy as np

    from neurips25.prsformer import GenotypeDataset

    rng = np.random.default_rng(0)
    ds = GenotypeDataset(rng.integers(-1, 3, (10, 32)), rng.integers(0, 2, (10, 2)), rng.normal(size=(10, 1)))
    for a, b in zip(worker_batches(ds, num_workers=2), worker_batches(ds, num_workers=0), strict=True):
        assert all(torch.equal(x, y) for x, y in zip(a, b, strict=True))


@row(C, "torch", "LinearDosageModel float64 and bfloat16: logits follow the model's dtype")
def _linear_dtypes(tmp_path):
    from neurips25.prsformer import LinearDosageModel

    for dtype in (torch.float64, LOW_PRECISION):
        torch.manual_seed(0)
        forward_in_dtype(LinearDosageModel(32, 2, n_covariates=1), _inputs, dtype)
