"""Digit tuples from scikit-learn's digits, and the IDX reader on files the test writes."""

import gzip
import struct

import numpy as np
import pytest
import torch

from neurips25.ctsketch import DigitTupleDataset, load_digits_split, load_mnist_idx, make_tuples


def _write_idx(path, array, code=0x08, compress=False):
    raw = struct.pack(">HBB", 0, code, array.ndim) + struct.pack(f">{array.ndim}I", *array.shape)
    raw += array.astype(array.dtype.newbyteorder(">")).tobytes()
    path.write_bytes(gzip.compress(raw) if compress else raw)


@pytest.mark.parametrize("compress", [False, True])
def test_idx_round_trip(tmp_path, compress):
    images = np.arange(2 * 3 * 4, dtype=np.uint8).reshape(2, 3, 4)
    _write_idx(tmp_path / "img.idx", images, compress=compress)
    assert np.array_equal(load_mnist_idx(tmp_path / "img.idx"), images)
    floats = np.array([1.5, -2.0], dtype=np.float32)
    _write_idx(tmp_path / "f.idx", floats, code=0x0D)
    assert np.array_equal(load_mnist_idx(tmp_path / "f.idx"), floats)


def test_idx_errors(tmp_path):
    (tmp_path / "bad").write_bytes(b"\x01\x02\x08\x01" + b"\x00" * 8)
    with pytest.raises(ValueError, match="not an IDX file"):
        load_mnist_idx(tmp_path / "bad")
    _write_idx(tmp_path / "short", np.zeros(4, dtype=np.uint8))
    (tmp_path / "short").write_bytes((tmp_path / "short").read_bytes()[:-1])
    with pytest.raises(ValueError, match="header promises shape"):
        load_mnist_idx(tmp_path / "short")
    with pytest.raises(ValueError, match="existing IDX file"):
        load_mnist_idx(tmp_path / "missing")


def test_split_and_tuples():
    x_tr, y_tr, x_te, y_te = load_digits_split(1000, seed=0)
    assert x_tr.shape == (1000, 64) and x_te.shape == (797, 64)
    assert 0.0 <= x_tr.min() and x_tr.max() <= 1.0
    index, sums = make_tuples(y_tr, 16, 50, seed=1)
    assert torch.equal(sums, y_tr[index].sum(-1).float())
    ds = DigitTupleDataset(4, "test", n_tuples=5)
    x, s, d = ds[3]
    assert x.shape == (4, 64) and float(s) == float(d.sum())
    with pytest.raises(ValueError, match="`split`"):
        DigitTupleDataset(4, "val")
