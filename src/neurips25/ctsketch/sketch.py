"""A sub-program as a differentiable module: tabulate once, sketch once, contract per batch."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch import nn

from neurips25.ctsketch.contract import check_distributions
from neurips25.ctsketch.decompose import CPSketch, Sketch, TTSketch, TuckerSketch, decompose
from neurips25.ctsketch.program import as_domain, program_image, tensorize


class SketchedProgram(nn.Module):
    """A fixed sub-program summarised by a low-rank sketch of its tensor (CTSketch steps 1-2).

    The summary tensor is tabulated and decomposed in ``__init__`` and then frozen: its factors are
    buffers, not parameters, because the program never changes during training.

    Parameters
    ----------
    program : callable
        The sub-program ``c(r_1, ..., r_k)``.
    input_domains : sequence
        One domain per input (an int size or a sequence of values), see :func:`tensorize`.
    rank : int or sequence
        Sketch rank (TT-ranks for ``"tt"``, CP rank, or Tucker ranks).
    method : {"tt", "cp", "tucker"}
        Decomposition; ``"tt"`` is the paper's default.
    output : {"value", "onehot"}
        ``"value"``: forward returns the expected output ``[B]``; ``"onehot"``: the (sketched) output
        distribution ``[B, d_out]`` over :attr:`output_values`.
    vectorized : bool
        Tabulate by calling ``program`` once on numpy grids.
    n_trials : int
        Randomized TT-SVD runs, keeping the most accurate (the official code keeps the better of two).
    seed : int, optional
        Seed of the randomized decomposition.
    dtype : torch.dtype
        Dtype of the stored factors (the decomposition itself runs in float64).
    tensor : Tensor, optional
        The already tabulated summary tensor (skips tabulation; must match the domains).

    Attributes
    ----------
    rel_error, frob_error : float
        ``||T - T_hat||_F / ||T||_F`` and ``||T - T_hat||_F``, reported for every rank choice.
    input_values : list of ndarray
        Domain values per input.
    output_values : ndarray or None
        Output domain of the one-hot mode.

    Examples
    --------
    >>> import torch
    >>> add = SketchedProgram(lambda a, b: a + b, [10, 10], rank=2, seed=0)
    >>> p = torch.nn.functional.one_hot(torch.tensor([3, 9]), 10).float()
    >>> add(p, p).round().tolist()
    [6.0, 18.0]
    """

    def __init__(
        self,
        program: Callable,
        input_domains: Sequence,
        *,
        rank=2,
        method: str = "tt",
        output: str = "value",
        output_domain=None,
        vectorized: bool = False,
        n_trials: int = 2,
        seed: int | None = None,
        dtype: torch.dtype = torch.float32,
        tensor: torch.Tensor | None = None,
    ):
        super().__init__()
        if method not in ("tt", "cp", "tucker"):
            raise ValueError(f"`method` must be 'tt', 'cp' or 'tucker'; got {method!r}")
        self.program = program
        self.method = method
        self.output = output
        self.input_values = [as_domain(d, f"input_domains[{i}]") for i, d in enumerate(input_domains)]
        if output == "onehot" and output_domain is None:
            output_domain = program_image(program, self.input_values, vectorized=vectorized)
        self.output_values = None if output != "onehot" else as_domain(output_domain, "output_domain")
        if tensor is None:
            tensor = tensorize(
                program,
                self.input_values,
                output=output,
                output_domain=self.output_values,
                vectorized=vectorized,
            )
        expected = tuple(v.size for v in self.input_values) + (
            () if output == "value" else (self.output_values.size,)
        )
        if tuple(tensor.shape) != expected:
            raise ValueError(f"`tensor` must have shape {expected}; got {tuple(tensor.shape)}")
        k = len(self.input_values)
        kwargs = {"n_inputs": k, "seed": seed}
        if method == "tt":
            kwargs["n_trials"] = n_trials
        sketch = decompose(tensor, rank, method, **kwargs)
        self.tensor_norm = float(torch.linalg.vector_norm(tensor.double()))
        if tensor.numel() <= 2_000_000:
            self.frob_error = sketch.error(tensor, relative=False)
        else:  # large level tensors: the cheap TT-SVD identity (see TTSketch.projection_error)
            self.frob_error = (
                sketch.projection_error(self.tensor_norm)
                if isinstance(sketch, TTSketch)
                else sketch.error(tensor, relative=False)
            )
        self.rel_error = self.frob_error / self.tensor_norm if self.tensor_norm > 0 else self.frob_error
        self.n_inputs = k
        self._set_sketch(sketch.to(dtype))

    def _set_sketch(self, sketch: Sketch) -> None:
        self._kind = type(sketch)
        self._n_factors = len(sketch.tensors())
        self.tail = list(getattr(sketch, "tail", []))
        for i, t in enumerate(sketch.tensors()):
            self.register_buffer(f"factor_{i}", t.contiguous())

    @property
    def sketch(self) -> Sketch:
        """The sketch rebuilt from the (possibly moved) buffers."""
        ts = [getattr(self, f"factor_{i}") for i in range(self._n_factors)]
        if self._kind is TTSketch:
            return TTSketch(ts, self.n_inputs, self.tail)
        if self._kind is CPSketch:
            return CPSketch(ts[0], ts[1:], self.n_inputs)
        return TuckerSketch(ts[0], ts[1:], self.n_inputs)

    @property
    def input_sizes(self) -> list[int]:
        return [v.size for v in self.input_values]

    def error_bound(self) -> float:
        """Worst-case error of any sketched expectation, ``||T - T_hat||_F`` (see :func:`error_bound`)."""
        return self.frob_error

    def forward(self, *distributions: torch.Tensor) -> torch.Tensor:
        """Expected output ``[B]`` (or output distribution ``[B, d_out]``), ``distributions[i]: [B, d_i]``."""
        if (
            len(distributions) == 1
            and isinstance(distributions[0], torch.Tensor)
            and distributions[0].ndim == 3
        ):
            distributions = distributions[0]
        ps, batched = check_distributions(distributions, self.input_sizes)
        out = self.sketch.contract([p.to(self.factor_0.dtype) for p in ps])
        return out if batched else out[0]

    def extra_repr(self) -> str:
        return (
            f"inputs={self.input_sizes}, method={self.method!r}, output={self.output!r}, "
            f"rel_error={self.rel_error:.3g}"
        )
