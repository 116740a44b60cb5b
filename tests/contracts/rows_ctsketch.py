"""ctsketch: ProgramTree and sketched contraction as torch modules; DigitTupleDataset in a DataLoader."""

import functools

import torch
from contract_fixtures import (
    LOW_PRECISION,
    assert_close,
    compiled_matches_eager,
    forward_in_dtype,
    pickle_round_trip,
    worker_batches,
)
from contract_table import row

C = "ctsketch"


@functools.cache
def _tree_cached():
    from neurips25.ctsketch import sum_tree

    return sum_tree(4, 10, seed=0)


def _tree():
    import copy

    return copy.deepcopy(_tree_cached())


def _ps(dtype, device):
    g = torch.Generator().manual_seed(0)
    return (torch.randn(3, 4, 10, generator=g).softmax(-1).to(device, dtype),)


def _expected_sum(ps):
    return (ps.double() * torch.arange(10.0, dtype=torch.float64)).sum(-1).sum(-1)


@row(C, "torch", "ProgramTree float64 input: float64 expected sum, close to the exact E[sum]")
def _f64(tmp_path):
    out = forward_in_dtype(_tree(), _ps, torch.float64)
    # float32 sketches (the default dtype) and the Gaussian re-binning between levels: 2.5e-5 seen
    assert_close(out, _expected_sum(_ps(torch.float64, "cpu")[0]), atol=1e-4, what="sketched vs exact E[sum]")


@row(C, "torch", "ProgramTree bfloat16 input: runs, bfloat16 output near the exact E[sum]")
def _bf16(tmp_path):
    out = forward_in_dtype(_tree(), _ps, LOW_PRECISION)
    assert_close(out.double(), _expected_sum(_ps(torch.float32, "cpu")[0]), atol=0.3, what="bfloat16 E[sum]")


@row(C, "torch", "ProgramTree on cuda: output on cuda", device="cuda")
def _cuda(tmp_path):
    forward_in_dtype(_tree(), _ps, torch.float32, device="cuda")


@row(C, "torch", "ProgramTree torch.compile matches eager")
def _compile(tmp_path):
    compiled_matches_eager(_tree(), _ps(torch.float32, "cpu"), atol=1e-4)


@row(C, "torch", "contract() follows the distributions' dtype (float64) and equals dense_contract")
def _contract(tmp_path):
    from neurips25.ctsketch import contract, decompose, dense_contract, tensorize

    T = tensorize(lambda a, b: a * b, [10, 10])
    sk = decompose(T, rank=3, method="tt", seed=0)
    g = torch.Generator().manual_seed(2)
    ps = [torch.randn(2, 10, generator=g, dtype=torch.float64).softmax(-1) for _ in range(2)]
    out = contract(sk, ps)
    assert out.dtype == torch.float64
    assert_close(out, dense_contract(torch.as_tensor(T, dtype=torch.float64), ps), atol=1e-8,
                 what="sketched vs dense contraction")


@row(C, "torch", "ProgramTree state_dict through a file and pickle: equal outputs")
def _round_trip(tmp_path):
    a = _tree()
    torch.save(a.state_dict(), tmp_path / "tree.pt")
    b = _tree()
    b.load_state_dict(torch.load(tmp_path / "tree.pt", weights_only=True))
    x = _ps(torch.float32, "cpu")
    with torch.no_grad():
        assert_close(b(*x), a(*x), what="state_dict round trip")
        assert_close(pickle_round_trip(a)(*x), a(*x), what="pickle round trip")


@row(C, "torch-data", "DigitTupleDataset in a DataLoader with 2 workers: the same batches as in-process")
def _loader(tmp_path):
    from neurips25.ctsketch import DigitTupleDataset

    ds = DigitTupleDataset(3, n_tuples=12)
    for a, b in zip(worker_batches(ds, num_workers=2), worker_batches(ds, num_workers=0), strict=True):
        assert all(torch.equal(torch.as_tensor(x), torch.as_tensor(y)) for x, y in zip(a, b, strict=True))
