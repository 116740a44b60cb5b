"""Tabulating a symbolic sub-program into its summary tensor (CTSketch, Sec. 3, step 1).

A sub-program ``c`` with ``k`` inputs over finite domains ``R_1 ... R_k`` is summarised by the tensor
``T[i_1, ..., i_k] = c(R_1[i_1], ..., R_k[i_k])``. Its multilinear contraction with the input
distributions is the expected output, ``E_{r ~ p_1 x ... x p_k}[c(r)] = T x_1 p_1 ... x_k p_k``.
For categorical outputs an extra trailing output mode holds the one-hot of ``c``'s value, so that the
contraction gives the output distribution instead.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from numbers import Number

import numpy as np
import torch

#: tabulating more entries than this is refused: it is exactly what decomposition is meant to avoid
MAX_ENTRIES = 50_000_000


def as_domain(domain, name: str = "domain") -> np.ndarray:
    """Return a 1-D float array of a domain's values; an int ``n`` means ``0, 1, ..., n - 1``."""
    if isinstance(domain, (int, np.integer)) and not isinstance(domain, bool):
        if domain < 1:
            raise ValueError(f"`{name}` must be a positive size or a sequence of values; got {domain}")
        return np.arange(int(domain), dtype=np.float64)
    try:
        values = np.asarray(domain, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise TypeError(
            f"`{name}` must be an int or a sequence of numbers; got {type(domain).__name__}"
        ) from err
    if values.ndim != 1 or values.size == 0:
        raise ValueError(f"`{name}` must be a non-empty 1-D sequence of values; got shape {values.shape}")
    if not np.all(np.isfinite(values)):
        raise ValueError(f"`{name}` holds non-finite values")
    if np.unique(values).size != values.size:
        raise ValueError(f"`{name}` holds repeated values")
    return values


def _check_domains(input_domains) -> list[np.ndarray]:
    if isinstance(input_domains, (int, np.integer)) or not isinstance(input_domains, Sequence):
        raise TypeError(
            "`input_domains` must be a sequence with one domain (an int size or a sequence of "
            f"values) per program input; got {type(input_domains).__name__}"
        )
    if len(input_domains) == 0:
        raise ValueError("`input_domains` must name at least one input domain")
    return [as_domain(d, f"input_domains[{i}]") for i, d in enumerate(input_domains)]


def _scalar(value, inputs) -> float:
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        value = value.item()
    if isinstance(value, np.ndarray) and value.size == 1:
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, Number):
        raise TypeError(f"`program` must return a number; it returned {value!r} at inputs {inputs}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"`program` returned a non-finite value {value} at inputs {inputs}")
    return value


def _evaluate(program: Callable, domains: list[np.ndarray], vectorized: bool) -> np.ndarray:
    """All outputs of ``program`` on the grid of its input domains, shape ``[d_1, ..., d_k]``."""
    shape = tuple(d.size for d in domains)
    n_entries = math.prod(shape)
    if n_entries > MAX_ENTRIES:
        raise ValueError(
            f"tabulating a program over domains of sizes {shape} needs {n_entries:.3g} entries "
            f"(> {MAX_ENTRIES:.0e}); decompose it into smaller sub-programs (see ProgramTree)"
        )
    if vectorized:
        grids = np.meshgrid(*domains, indexing="ij")
        try:
            out = program(*grids)
        except Exception as err:
            raise ValueError(
                f"`program` raised {type(err).__name__} on the vectorized input grid: {err}"
            ) from err
        out = np.broadcast_to(np.asarray(out, dtype=np.float64), shape)
        if not np.all(np.isfinite(out)):
            bad = tuple(int(i) for i in np.argwhere(~np.isfinite(out))[0])
            raise ValueError(f"`program` returned a non-finite value at input indices {bad}")
        return np.array(out)
    out = np.empty(shape, dtype=np.float64)
    for idx in itertools.product(*(range(s) for s in shape)):
        inputs = tuple(d[i].item() for d, i in zip(domains, idx))
        # integer-valued domains are passed as ints so that programs may use them as indices
        inputs = tuple(int(v) if float(v).is_integer() else v for v in inputs)
        try:
            value = program(*inputs)
        except Exception as err:
            raise ValueError(f"`program` raised {type(err).__name__} at inputs {inputs}: {err}") from err
        out[idx] = _scalar(value, inputs)
    return out


def program_image(program: Callable, input_domains: Sequence, *, vectorized: bool = False) -> np.ndarray:
    """Sorted distinct outputs of ``program`` over all input combinations (its output domain).

    Examples
    --------
    >>> program_image(lambda a, b: a + b, [3, 3]).tolist()
    [0.0, 1.0, 2.0, 3.0, 4.0]
    """
    if not callable(program):
        raise TypeError(f"`program` must be callable; got {type(program).__name__}")
    return np.unique(_evaluate(program, _check_domains(input_domains), vectorized))


def tensorize(
    program: Callable,
    input_domains: Sequence,
    *,
    output: str = "value",
    output_domain=None,
    vectorized: bool = False,
    dtype: torch.dtype = torch.float64,
) -> torch.Tensor:
    """Tabulate a sub-program over its input domains into its summary tensor (CTSketch step 1).

    Parameters
    ----------
    program : callable
        The symbolic sub-program ``c(r_1, ..., r_k)`` returning a number. Called once per input
        combination with python numbers, or once on broadcast numpy grids when ``vectorized``.
    input_domains : sequence
        One domain per input: an int ``n`` (values ``0..n-1``) or a sequence of distinct numbers.
    output : {"value", "onehot"}
        ``"value"``: ``T[i_1..i_k] = c(...)`` so the contraction is the expected output.
        ``"onehot"``: a trailing output mode with the one-hot of ``c(...)`` in ``output_domain``, so
        the contraction is the output distribution.
    output_domain : int or sequence, optional
        Output values for ``"onehot"``; defaults to the program's image (:func:`program_image`).
    vectorized : bool
        Evaluate the program once on numpy grids (``np.meshgrid(..., indexing="ij")``); much faster for
        arithmetic programs over large domains.
    dtype : torch.dtype
        Dtype of the returned tensor (float64 by default so that decompositions are exact to 1e-12).

    Returns
    -------
    Tensor
        Shape ``[d_1, ..., d_k]`` (value) or ``[d_1, ..., d_k, d_out]`` (onehot).

    Raises
    ------
    ValueError
        The program raises or returns a non-finite value on some input (the input is named), an output
        is missing from ``output_domain``, or the grid is too large to tabulate.

    Examples
    --------
    >>> T = tensorize(lambda a, b: a + b, [10, 10])
    >>> T.shape, float(T[3, 4])
    (torch.Size([10, 10]), 7.0)
    >>> tensorize(lambda a, b: (a + b) % 2, [2, 2], output="onehot")[1, 1].tolist()
    [1.0, 0.0]
    """
    if not callable(program):
        raise TypeError(f"`program` must be callable; got {type(program).__name__}")
    if output not in ("value", "onehot"):
        raise ValueError(f"`output` must be 'value' or 'onehot'; got {output!r}")
    domains = _check_domains(input_domains)
    values = _evaluate(program, domains, vectorized)
    if output == "value":
        return torch.as_tensor(values, dtype=dtype)
    out_values = np.unique(values) if output_domain is None else as_domain(output_domain, "output_domain")
    order = np.argsort(out_values)
    pos = np.searchsorted(out_values[order], values)
    pos = np.clip(pos, 0, out_values.size - 1)
    found = out_values[order][pos] == values
    if not np.all(found):
        bad = tuple(int(i) for i in np.argwhere(~found)[0])
        raise ValueError(f"`program` output {values[bad]} at input indices {bad} is not in `output_domain`")
    index = torch.as_tensor(order[pos], dtype=torch.long)
    return torch.nn.functional.one_hot(index, out_values.size).to(dtype)
