"""Decomposing a program into a tree of sketched sub-programs (CTSketch steps 3-4).

An ``n``-input program that folds a small ``arity``-input sub-program (sum, max, sum modulo 10, ...)
is evaluated as a tree: level 0 combines the ``n`` input symbols in groups of ``arity``, level 1
combines the results, and so on. Every node of a level applies the same sub-program to inputs over
the same domain, so each level holds ONE sketched tensor shared by all its nodes. Level domains are
the images of the level below (for sum of digits: 10, 19, 37, ... = ``9 * 2^l + 1`` values), so no
level ever tabulates more than ``|R_l|^arity`` entries instead of ``10^n`` for the flat program.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable

import numpy as np
import torch
from torch import nn

from neurips25.ctsketch.program import as_domain, tensorize
from neurips25.ctsketch.sketch import SketchedProgram

MOMENTS_SIGMA_FLOOR = 0.2  # rebin="moments": the smallest kernel width, in the exp(-(v - mu)^2 / sigma) form


def auto_sigma(p: torch.Tensor, floor: float = 4.0) -> torch.Tensor:
    """Kernel width of the official code: ``sigma = max(1 / max(p), floor)`` per row of ``p: [..., d]``.

    A flat (uncertain) input gives a wider kernel; the result is treated as a constant (detached).
    """
    return torch.clamp(1.0 / p.detach().amax(-1).clamp_min(1e-12), min=floor)


def to_distribution(value: torch.Tensor, support, sigma=4.0) -> torch.Tensor:
    """Turn expected values back into distributions over a level's domain (Gaussian re-binning, step 4).

    ``q(v) \\propto exp(-(v - y_hat)^2 / sigma)`` over the support values ``v``, normalised.

    Parameters
    ----------
    value : Tensor ``[...]``
        Expected outputs ``y_hat`` of child nodes.
    support : int, sequence or Tensor ``[d]``
        Values of the parent's input domain.
    sigma : float or Tensor broadcastable to ``value``
        Kernel width (``> 0``).

    Returns
    -------
    Tensor ``[..., d]``
        Differentiable in ``value``.

    Examples
    --------
    >>> import torch
    >>> q = to_distribution(torch.tensor([2.0]), 5, sigma=0.01)
    >>> q.argmax(-1).item(), round(q.sum().item(), 6)
    (2, 1.0)
    """
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"`value` must be a torch.Tensor; got {type(value).__name__}")
    if not isinstance(support, torch.Tensor):
        support = torch.as_tensor(as_domain(support, "support"))
    support = support.to(value.dtype if value.is_floating_point() else torch.float32)
    sigma = torch.as_tensor(sigma, dtype=support.dtype)
    if (sigma <= 0).any() or not torch.isfinite(sigma).all():
        raise ValueError(f"`sigma` must be positive and finite; got {sigma}")
    if sigma.ndim:
        sigma = sigma.unsqueeze(-1)  # one width per value, broadcast over the support
    return torch.softmax(-(support - value.unsqueeze(-1)).square() / sigma, dim=-1)


class ProgramTree(nn.Module):
    """An ``n``-input program as a tree of one sketched ``arity``-input sub-program per level.

    Parameters
    ----------
    program : callable
        The sub-program folded up the tree, ``c(r_1, ..., r_arity)`` (e.g. ``lambda a, b: a + b``).
        The whole program is ``c`` applied level by level to groups of ``arity`` neighbours.
    n_inputs : int
        ``n``, the number of leaf symbols (>= 2).
    input_domain : int or sequence
        Domain of every leaf symbol (``10`` for digits).
    arity : int
        Inputs per node (the paper's sum-N uses 2).
    rank : int
        Sketch rank of every level.
    method : {"tt", "cp", "tucker"}
        Decomposition of every level tensor.
    output : {"value", "onehot"}
        ``"value"``: nodes return expected values, re-binned into distributions between levels with
        :func:`to_distribution`; the root returns the expected output ``[B]`` (sum, max; L1 loss).
        ``"onehot"``: nodes return output distributions that feed the parent directly; the root returns
        a distribution ``[B, d_out]`` (categorical programs such as sum modulo 10; NLL loss).
    sigma : float or "auto"
        Re-binning width; ``"auto"`` is the official code's ``max(1 / max(p_first_child), 4)`` per node.
    rebin : {"official", "moments"}
        Value trees only. ``"official"``: the kernel width is ``sigma``. ``"moments"`` (NOT in the paper):
        each level also sketches the squared sub-program, so every node carries a variance
        ``E[c^2] - E[c]^2`` and is re-binned into a Gaussian of that variance; :meth:`moments` then gives
        the root's mean and variance for a Gaussian likelihood loss.
    moment_rank : int, optional
        Sketch rank of the squared sub-program (default ``rank + 1``; ``(a + b)^2`` has TT-rank 3).
    identity : number, optional
        Value padding incomplete groups when ``n`` is not a power of ``arity`` (``0`` for sum and max).
    vectorized : bool
        Tabulate and evaluate ``program`` on numpy arrays (needed for large level domains).
    seed : int, optional
        Seed of the randomized decompositions.
    dtype : torch.dtype
        Dtype of the stored sketches.

    Attributes
    ----------
    levels : nn.ModuleList of SketchedProgram
        One per level, leaves first.
    domains : list of ndarray
        Domain values of each level's inputs, then the root's output domain.

    Examples
    --------
    >>> import torch
    >>> tree = ProgramTree(lambda a, b: a + b, n_inputs=8, input_domain=10, vectorized=True, seed=0)
    >>> [len(d) for d in tree.domains]
    [10, 19, 37, 73]
    >>> digits = torch.tensor([[1, 2, 3, 4, 5, 6, 7, 8]])
    >>> tree(torch.nn.functional.one_hot(digits, 10).float()).round().item(), tree.evaluate(digits).item()
    (36.0, 36.0)
    """

    def __init__(
        self,
        program: Callable,
        n_inputs: int,
        input_domain=10,
        *,
        arity: int = 2,
        rank=2,
        method: str = "tt",
        output: str = "value",
        sigma="auto",
        rebin: str = "official",
        moment_rank=None,
        identity=None,
        vectorized: bool = False,
        n_trials: int = 2,
        seed: int | None = None,
        dtype: torch.dtype = torch.float32,
    ):
        super().__init__()
        for name, v, lo in (("n_inputs", n_inputs, 2), ("arity", arity, 2)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise TypeError(f"`{name}` must be an int; got {type(v).__name__}")
            if v < lo:
                raise ValueError(f"`{name}` must be >= {lo}; got {v}")
        if output not in ("value", "onehot"):
            raise ValueError(f"`output` must be 'value' or 'onehot'; got {output!r}")
        if not (sigma == "auto" or (isinstance(sigma, numbers.Real) and sigma > 0)):
            raise ValueError(f"`sigma` must be 'auto' or a positive number; got {sigma!r}")
        if rebin not in ("official", "moments"):
            raise ValueError(f"`rebin` must be 'official' or 'moments'; got {rebin!r}")
        if rebin == "moments" and output != "value":
            raise ValueError("`rebin`='moments' needs `output`='value'")
        self.rebin = rebin
        self.program, self.n_inputs, self.arity = program, int(n_inputs), int(arity)
        self.output, self.sigma, self.vectorized = output, sigma, vectorized
        self.identity = identity
        domains = [as_domain(input_domain, "input_domain")]
        sizes, self.pads = [self.n_inputs], []
        levels, squares = [], []
        seeds = np.random.SeedSequence(seed).generate_state(64) if seed is not None else [None] * 64
        while sizes[-1] > 1:
            n_l = sizes[-1]
            m = math.ceil(n_l / self.arity)
            pad = m * self.arity - n_l
            if pad and (identity is None or identity not in domains[-1]):
                raise ValueError(
                    f"`n_inputs`={self.n_inputs} is not a power of `arity`={self.arity}: pass an "
                    f"`identity` value from the level domain to pad incomplete groups"
                )
            in_domains = [domains[-1]] * self.arity
            values = tensorize(program, in_domains, vectorized=vectorized)  # tabulated once per level
            out_domain = _image(values)
            level_seed = None if seeds[len(levels)] is None else int(seeds[len(levels)])
            table = (
                values
                if output == "value"
                else tensorize(
                    program, in_domains, output="onehot", output_domain=out_domain, vectorized=vectorized
                )
            )
            levels.append(
                SketchedProgram(
                    program,
                    in_domains,
                    rank=rank,
                    method=method,
                    output=output,
                    output_domain=out_domain,
                    n_trials=n_trials,
                    seed=level_seed,
                    dtype=dtype,
                    tensor=table,
                )
            )
            if rebin == "moments":
                squares.append(
                    SketchedProgram(
                        _Squared(program),
                        in_domains,
                        rank=rank + 1 if moment_rank is None else moment_rank,
                        method=method,
                        n_trials=n_trials,
                        seed=None if level_seed is None else level_seed + 1,
                        dtype=dtype,
                        tensor=values.square(),
                    )
                )
            del values, table
            self.pads.append(pad)
            domains.append(out_domain)
            sizes.append(m)
        self.levels = nn.ModuleList(levels)
        self.squares = nn.ModuleList(squares)
        self.domains = domains
        for i, d in enumerate(domains):
            self.register_buffer(f"support_{i}", torch.as_tensor(d, dtype=dtype), persistent=False)

    @property
    def rel_errors(self) -> list[float]:
        """Relative reconstruction error of each level's sketch."""
        return [lvl.rel_error for lvl in self.levels]

    def error_bounds(self) -> list[float]:
        """Per level, the worst-case error ``||T_l - T_hat_l||_F`` of one node's sketched expectation."""
        return [lvl.error_bound() for lvl in self.levels]

    def _pad(self, x: torch.Tensor, level: int) -> torch.Tensor:
        pad = self.pads[level]
        if not pad:
            return x
        support = getattr(self, f"support_{level}")
        delta = (support == float(self.identity)).to(x.dtype)
        return torch.cat([x, delta.expand(x.shape[0], pad, -1)], dim=1)

    def forward(self, ps: torch.Tensor) -> torch.Tensor:
        """Expected output ``[B]`` (value) or output distribution ``[B, d_out]`` (onehot).

        ``ps: [B, n, d_0]``, one distribution over the leaf domain per input symbol.
        """
        return self._run(ps)[0]

    def moments(self, ps: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Mean and variance ``[B]`` of the root output (needs ``rebin="moments"``)."""
        if self.rebin != "moments":
            raise ValueError("`moments` needs a tree built with rebin='moments'")
        return self._run(ps)

    def _check(self, ps) -> torch.Tensor:
        if not isinstance(ps, torch.Tensor):
            raise TypeError(f"`ps` must be a torch.Tensor [B, n, d]; got {type(ps).__name__}")
        d0 = len(self.domains[0])
        if ps.ndim != 3 or ps.shape[1] != self.n_inputs or ps.shape[2] != d0:
            raise ValueError(f"`ps` must have shape [B, {self.n_inputs}, {d0}]; got {tuple(ps.shape)}")
        if not torch.isfinite(ps).all():
            raise ValueError("`ps` holds NaN or infinite entries")
        worst = (ps.detach().sum(-1) - 1).abs().max().item()
        if worst > 1e-3 or (ps.detach() < -1e-3).any():
            raise ValueError(
                f"`ps` rows must be distributions (non-negative, summing to 1); worst row sum "
                f"is off by {worst:.3g}"
            )
        return ps.to(self.support_0.dtype)

    def _run(self, ps: torch.Tensor):
        x = self._check(ps)
        b = x.shape[0]
        for lvl, sk in enumerate(self.levels):
            x = self._pad(x, lvl)
            m = x.shape[1] // self.arity
            groups = list(x.reshape(b * m, self.arity, x.shape[-1]).unbind(1))  # arity x [B*m, d_l]
            out = sk.sketch.contract(groups)
            last = lvl == len(self.levels) - 1
            if self.output == "onehot":
                # a low-rank sketch may give slightly negative mass: clip and renormalise
                out = out.clamp_min(1e-6)
                x = (out / out.sum(-1, keepdim=True)).reshape(b, m, -1)
                if last:
                    return x[:, 0], None
                continue
            var = None
            if self.rebin == "moments":
                var = (self.squares[lvl].sketch.contract(groups) - out.square()).clamp_min(0.0)
            if last:
                return out.reshape(b), None if var is None else var.reshape(b)
            if var is not None:
                # exp(-(v - mu)^2 / (2 Var + floor)). The floor keeps the kernel at least about one grid step
                # wide: with a tiny floor (v2 used 1e-2) a confident network's nodes re-bin to one-hot
                # softmaxes whose Jacobians (~exp(-1 / floor)) multiply to exactly 0 in float32 over the
                # levels, so training froze at N >= 256 (issue 44). Measured on a confident-but-wrong network
                # (gradient L1 at N = 1,024) and the quick N = 16 moments cell (accuracy): floor 0.01: 0, 95.5%;
                # 0.1: 1e-8, 96.2%; 0.2: 6.5, 96.1%; 0.5: 0.09, 78.4% (the wider kernel blurs every level)
                sigma = 2.0 * var + MOMENTS_SIGMA_FLOOR
            elif self.sigma == "auto":
                sigma = auto_sigma(groups[0])
            else:
                sigma = self.sigma
            x = to_distribution(out, getattr(self, f"support_{lvl + 1}"), sigma).reshape(b, m, -1)
        raise AssertionError("unreachable: a tree has at least one level")

    def evaluate(self, symbols: torch.Tensor) -> torch.Tensor:
        """Run the TRUE program on symbol indices ``[B, n]`` (inference: argmax symbols, exact program).

        Returns the output values ``[B]`` (float64).
        """
        if not isinstance(symbols, torch.Tensor) or symbols.dtype not in (torch.int64, torch.int32):
            raise TypeError("`symbols` must be an integer torch.Tensor [B, n] of domain indices")
        d0 = len(self.domains[0])
        if symbols.ndim != 2 or symbols.shape[1] != self.n_inputs:
            raise ValueError(f"`symbols` must have shape [B, {self.n_inputs}]; got {tuple(symbols.shape)}")
        if symbols.min() < 0 or symbols.max() >= d0:
            raise ValueError(
                f"`symbols` must be indices in [0, {d0}); got range "
                f"[{symbols.min().item()}, {symbols.max().item()}]"
            )
        vals = self.domains[0][symbols.cpu().numpy()]  # [B, n]
        for lvl in range(len(self.levels)):
            if self.pads[lvl]:
                vals = np.concatenate(
                    [vals, np.full((vals.shape[0], self.pads[lvl]), float(self.identity))], 1
                )
            groups = vals.reshape(vals.shape[0], -1, self.arity)
            if self.vectorized:
                vals = np.asarray(self.program(*np.moveaxis(groups, -1, 0)), dtype=np.float64)
            else:
                vals = np.array(
                    [
                        [
                            float(self.program(*(int(v) if float(v).is_integer() else v for v in g)))
                            for g in row
                        ]
                        for row in groups
                    ]
                )
        return torch.as_tensor(vals[:, 0])


def sum_tree(
    n_inputs: int,
    input_domain=10,
    *,
    arity: int = 2,
    rank: int = 2,
    method: str = "tt",
    sigma="auto",
    rebin: str = "official",
    n_trials: int = 2,
    seed: int | None = None,
    dtype: torch.dtype = torch.float32,
) -> ProgramTree:
    """The paper's sum-of-``n`` tree: a shared two-input sum per level, padded with 0 when needed.

    Arguments are those of :class:`ProgramTree` (the sub-program is ``a + b``, evaluated on numpy
    arrays, with identity 0 for padding).

    Examples
    --------
    >>> tree = sum_tree(16, seed=0)
    >>> len(tree.levels), max(tree.rel_errors) < 1e-5
    (4, True)
    """
    return ProgramTree(
        _add,
        n_inputs,
        input_domain,
        arity=arity,
        rank=rank,
        method=method,
        output="value",
        sigma=sigma,
        rebin=rebin,
        identity=0,
        vectorized=True,
        n_trials=n_trials,
        seed=seed,
        dtype=dtype,
    )


def mod_sum_tree(
    n_inputs: int,
    modulus: int = 10,
    *,
    arity: int = 2,
    rank: int = 2,
    method: str = "tt",
    seed: int | None = None,
    dtype: torch.dtype = torch.float32,
) -> ProgramTree:
    """Sum modulo ``modulus`` of ``n`` digits, as a tree of categorical (one-hot output) nodes.

    Unlike sum, its node tensor has full rank (``modulus``), so the sketch rank trades accuracy for cost.
    """
    if isinstance(modulus, bool) or not isinstance(modulus, int) or modulus < 2:
        raise ValueError(f"`modulus` must be an int >= 2; got {modulus!r}")
    return ProgramTree(
        _ModAdd(modulus),
        n_inputs,
        modulus,
        arity=arity,
        rank=rank,
        method=method,
        output="onehot",
        identity=0,
        vectorized=True,
        seed=seed,
        dtype=dtype,
    )


def _add(*xs):
    out = xs[0]
    for x in xs[1:]:
        out = out + x
    return out


class _ModAdd:
    """Picklable ``(r_1 + ... + r_k) mod m`` (works on numbers and numpy arrays)."""

    def __init__(self, modulus: int):
        self.modulus = modulus

    def __call__(self, *xs):
        return _add(*xs) % self.modulus


class _Squared:
    """``c(r)^2``: the second-moment tensor of a sub-program (picklable)."""

    def __init__(self, program: Callable):
        self.program = program

    def __call__(self, *xs):
        return self.program(*xs) ** 2


def _image(values: torch.Tensor) -> np.ndarray:
    """Sorted distinct entries of a value tensor; a counting pass when they are small integers."""
    flat = values.reshape(-1)
    lo, hi = flat.min().item(), flat.max().item()
    if hi - lo < 10_000_000 and torch.equal(flat, flat.round()):
        counts = torch.bincount((flat - lo).long(), minlength=int(hi - lo) + 1)
        return (torch.nonzero(counts)[:, 0].double() + lo).numpy()
    return torch.unique(flat).double().numpy()
