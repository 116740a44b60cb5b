"""Baselines: exact enumeration of all input combinations, and a REINFORCE (sampling) learner.

* :class:`ExactEnumeration` computes ``sum_r c(r) prod_i p_i(r_i)`` over every combination ``r`` of
  inputs, like exact probabilistic-logic inference (DeepProbLog, Scallop without top-k): exact, but
  its memory and time grow as ``prod_i |R_i|`` (``10^n`` for ``n`` digits).
* :class:`ReinforceLearner` trains the perception network with the score-function estimator (REINFORCE
  with a leave-one-out baseline over samples): it only needs to run the program on sampled symbols, but
  its gradient variance grows with the number of inputs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import torch
from torch import nn

from neurips25.ctsketch.contract import check_distributions, enumeration_memory_bytes
from neurips25.ctsketch.learner import TupleLearner
from neurips25.ctsketch.program import MAX_ENTRIES, tensorize


class ExactEnumeration(nn.Module):
    """Exact expected output by enumerating every input combination (anchor for small ``k``).

    Parameters
    ----------
    program : callable
        The program ``c(r_1, ..., r_k)``.
    input_domains : sequence
        One domain per input, as for :func:`tensorize`.
    output : {"value", "onehot"}
        Expected value or output distribution.
    vectorized : bool
        Tabulate on numpy grids.

    Raises
    ------
    ValueError
        When the number of combinations exceeds the tabulation limit; the message gives the memory the
        dense table would need (see :func:`enumeration_memory_bytes`).

    Examples
    --------
    >>> import torch
    >>> exact = ExactEnumeration(lambda a, b: max(a, b), [3, 3])
    >>> p = torch.tensor([[0.5, 0.5, 0.0]])
    >>> exact(p, p).tolist()
    [0.75]
    """

    def __init__(
        self, program: Callable, input_domains: Sequence, *, output: str = "value", vectorized: bool = False
    ):
        super().__init__()
        sizes = [d if isinstance(d, int) else len(d) for d in input_domains]
        n = math.prod(sizes)
        if n > MAX_ENTRIES:
            raise ValueError(
                f"enumerating {n:.3g} input combinations is infeasible: the dense table needs "
                f"{enumeration_memory_bytes(sizes) / 2**30:.3g} GiB; decompose the program"
            )
        self.register_buffer("table", tensorize(program, input_domains, output=output, vectorized=vectorized))
        self.k = len(sizes)
        self.sizes = sizes

    def forward(self, *distributions: torch.Tensor) -> torch.Tensor:
        ps, batched = check_distributions(list(distributions), self.sizes)
        # probability of every world: outer product of the input distributions, [B, d_1 * ... * d_k]
        joint = ps[0].to(self.table.dtype)
        for p in ps[1:]:
            joint = (joint.unsqueeze(-1) * p.to(self.table.dtype).unsqueeze(1)).reshape(joint.shape[0], -1)
        table = self.table.reshape(joint.shape[1], -1)
        out = joint @ table
        out = out[:, 0] if self.table.ndim == self.k else out
        return out if batched else out[0]


class ReinforceLearner(TupleLearner):
    """Perception training with the score-function (REINFORCE) estimator on the final output only.

    For each tuple, ``n_samples`` symbol vectors ``s ~ prod_i p_i`` are drawn, the program is run on them,
    and the reward ``-|c(s) - y|`` minus the mean reward of the other samples weights
    ``grad log p(s)``.

    Parameters
    ----------
    perception : nn.Module
        Maps raw inputs ``[M, *in]`` to logits ``[M, n_symbols]``.
    program : callable
        Vectorized program on symbol indices: ``LongTensor [..., n] -> Tensor [...]``.
    n_symbols : int
        Size of the symbol domain.
    n_samples : int
        Samples per tuple (>= 2 for the leave-one-out baseline).

    Examples
    --------
    >>> import torch
    >>> learner = ReinforceLearner(torch.nn.Linear(4, 10), lambda s: s.sum(-1).float(), 10, n_samples=4)
    >>> learner.loss(torch.randn(2, 3, 4), torch.tensor([5.0, 9.0])).shape
    torch.Size([])
    """

    def __init__(
        self,
        perception: nn.Module,
        program: Callable[[torch.Tensor], torch.Tensor],
        n_symbols: int,
        *,
        n_samples: int = 8,
    ):
        if isinstance(n_samples, bool) or not isinstance(n_samples, int) or n_samples < 2:
            raise ValueError(f"`n_samples` must be an int >= 2; got {n_samples!r}")
        if not callable(program):
            raise TypeError(f"`program` must be callable; got {type(program).__name__}")
        super().__init__(perception, n_symbols)
        self.program = program
        self.n_samples = n_samples

    def loss(self, x: torch.Tensor, y: torch.Tensor, index: torch.Tensor | None = None) -> torch.Tensor:
        probs = self.symbol_probs(x, index)  # [B, n, d]
        dist = torch.distributions.Categorical(probs=probs)
        samples = dist.sample((self.n_samples,))  # [S, B, n]
        with torch.no_grad():
            reward = -(self.program(samples).to(probs.dtype) - y.to(probs.dtype)).abs()  # [S, B]
            baseline = (reward.sum(0, keepdim=True) - reward) / (self.n_samples - 1)
        log_p = dist.log_prob(samples).sum(-1)  # [S, B]
        return -((reward - baseline) * log_p).mean()

    @torch.no_grad()
    def predict(self, x: torch.Tensor, index: torch.Tensor | None = None) -> torch.Tensor:
        """The program on the argmax symbols."""
        return self.program(self.predict_symbols(x, index))
