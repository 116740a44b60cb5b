"""Data for sum-of-N-digits tasks: scikit-learn's bundled 8x8 digits (offline MNIST stand-in), IDX files.

scikit-learn ships 1,797 grey 8x8 digit images inside its wheel; they replace MNIST here because no
package ships MNIST for offline use. :func:`load_mnist_idx` reads real MNIST IDX files from a path the
user gives (tested on a small file the tests write).
"""

from __future__ import annotations

import gzip
import struct
from pathlib import Path

import numpy as np
import torch

# IDX type codes -> numpy big-endian dtypes (LeCun's MNIST format)
_IDX_TYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def load_digits_split(
    n_train: int = 1000, seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """scikit-learn's 8x8 digits split into train / held-out images.

    Returns
    -------
    x_train : Tensor ``[n_train, 64]`` float32 in [0, 1]
    y_train : Tensor ``[n_train]`` int64
    x_test : Tensor ``[1797 - n_train, 64]``
    y_test : Tensor ``[1797 - n_train]``
    """
    from sklearn.datasets import load_digits

    digits = load_digits()
    n = len(digits.target)
    if isinstance(n_train, bool) or not isinstance(n_train, int) or not 1 <= n_train < n:
        raise ValueError(f"`n_train` must be an int in [1, {n}); got {n_train!r}")
    perm = np.random.default_rng(seed).permutation(n)
    x = torch.as_tensor(digits.data[perm] / 16.0, dtype=torch.float32)
    y = torch.as_tensor(digits.target[perm], dtype=torch.long)
    return x[:n_train], y[:n_train], x[n_train:], y[n_train:]


def make_tuples(
    labels: torch.Tensor, n: int, n_tuples: int, seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor]:
    """Draw ``n_tuples`` tuples of ``n`` image indices with replacement: ``(index [T, n], sums [T])``."""
    if not isinstance(labels, torch.Tensor) or labels.ndim != 1:
        raise TypeError("`labels` must be a 1-D torch.Tensor of digit labels")
    for name, v in (("n", n), ("n_tuples", n_tuples)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"`{name}` must be a positive int; got {v!r}")
    gen = torch.Generator().manual_seed(seed)
    index = torch.randint(0, len(labels), (n_tuples, n), generator=gen)
    return index, labels[index].sum(-1).to(torch.float32)


class DigitTupleDataset(torch.utils.data.Dataset):
    """Tuples of ``n`` digit images labelled only by their sum (the sum-N task).

    Parameters
    ----------
    n : int
        Digits per tuple.
    split : {"train", "test"}
        Images of the training part or of the held-out part.
    n_tuples : int
        Tuples drawn with replacement from the split's images.
    source : {"sklearn_digits"}
        Image source (offline).
    n_train, seed : int
        Size of the training part and seed of the split and the draws.

    Notes
    -----
    Items are ``(images [n, 64], sum, digits [n])``; :attr:`images` and :attr:`index` expose the bank.

    Examples
    --------
    >>> ds = DigitTupleDataset(4, n_tuples=10)
    >>> x, s, d = ds[0]
    >>> x.shape, float(s) == float(d.sum())
    (torch.Size([4, 64]), True)
    """

    def __init__(
        self,
        n: int,
        split: str = "train",
        *,
        n_tuples: int = 1500,
        source: str = "sklearn_digits",
        n_train: int = 1000,
        seed: int = 0,
    ):
        if source != "sklearn_digits":
            raise ValueError(
                f"`source` must be 'sklearn_digits' (use load_mnist_idx for MNIST); got {source!r}"
            )
        if split not in ("train", "test"):
            raise ValueError(f"`split` must be 'train' or 'test'; got {split!r}")
        x_tr, y_tr, x_te, y_te = load_digits_split(n_train, seed)
        self.images, self.labels = (x_tr, y_tr) if split == "train" else (x_te, y_te)
        self.index, self.sums = make_tuples(self.labels, n, n_tuples, seed + (0 if split == "train" else 1))

    def __len__(self) -> int:
        return self.index.shape[0]

    def __getitem__(self, i):
        idx = self.index[i]
        return self.images[idx], self.sums[i], self.labels[idx]


def load_mnist_idx(path: str | Path) -> np.ndarray:
    """Read an IDX file (MNIST images or labels, optionally gzipped) into a numpy array.

    Raises
    ------
    ValueError
        Bad magic number, unknown type code, or a payload whose size does not match the header.

    Examples
    --------
    >>> import tempfile, os, struct
    >>> p = os.path.join(tempfile.mkdtemp(), "labels.idx1-ubyte")
    >>> _ = open(p, "wb").write(struct.pack(">HBBI", 0, 0x08, 1, 3) + bytes([7, 2, 1]))
    >>> load_mnist_idx(p).tolist()
    [7, 2, 1]
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"`path` must be an existing IDX file; got {str(path)!r}")
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    if len(raw) < 4:
        raise ValueError(f"`path` {str(path)!r} is too short to be an IDX file")
    zero, code, ndim = struct.unpack(">HBB", raw[:4])
    if zero != 0 or code not in _IDX_TYPES or ndim < 1:
        raise ValueError(f"`path` {str(path)!r} is not an IDX file (magic bytes {raw[:4].hex()})")
    header = 4 + 4 * ndim
    if len(raw) < header:
        raise ValueError(f"`path` {str(path)!r}: truncated IDX header")
    shape = struct.unpack(f">{ndim}I", raw[4:header])
    dtype = np.dtype(_IDX_TYPES[code])
    expected = int(np.prod(shape)) * dtype.itemsize
    if len(raw) - header != expected:
        raise ValueError(
            f"`path` {str(path)!r}: header promises shape {shape} ({expected} bytes) but the "
            f"payload has {len(raw) - header} bytes"
        )
    return np.frombuffer(raw, dtype=dtype, offset=header).reshape(shape).astype(dtype.newbyteorder("="))
