"""Training a perception network from final-output labels only through a sketched program (CTSketch step 5).

The network maps each raw input ``x_i`` to a distribution ``p_i`` over symbols; the program tree turns
the ``p_i`` into the expected output (or output distribution) and a loss against the label ``y`` trains
the network end to end. At test time each symbol is the argmax of ``p_i`` and the TRUE program runs on
them: the sketch is a training device only.
"""

from __future__ import annotations

import numbers
import os
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from neurips25.ctsketch.tree import ProgramTree


class TupleLearner(nn.Module):
    """Shared machinery of learners over ``n``-tuples of raw inputs (batching, argmax inference, fit).

    Inputs are either ``x: [B, n, *in]`` or an image bank ``x: [M, *in]`` with ``index: [B, n]``
    (LongTensor into the bank). With a bank, each distinct image goes through the network once per
    batch and its output is gathered for every tuple using it; this gives the same outputs and
    gradients as running the network on every tuple position, at a cost bounded by the bank size.
    """

    def __init__(self, perception: nn.Module, n_symbols: int):
        super().__init__()
        if not isinstance(perception, nn.Module):
            raise TypeError(f"`perception` must be a torch.nn.Module; got {type(perception).__name__}")
        self.perception = perception
        self.n_symbols = n_symbols

    def _logits(self, x: torch.Tensor) -> torch.Tensor:
        first = _first_layer(self.perception)
        if isinstance(first, nn.Linear) and x.shape[-1] != first.in_features:
            raise ValueError(
                f"`x` has input width {x.shape[-1]} (inputs of shape {tuple(x.shape[1:])} each) but the "
                f"perception's first Linear layer expects {first.in_features} features"
            )
        try:
            logits = self.perception(x)
        except RuntimeError as err:  # a shape mismatch deep inside the network: name the user's input
            raise ValueError(
                f"`perception` failed on inputs of shape {tuple(x.shape[1:])} each (input width "
                f"{x.shape[-1]}): {err}"
            ) from err
        if logits.ndim != 2 or logits.shape[1] != self.n_symbols:
            raise ValueError(
                f"`perception` must map [M, ...] inputs to [M, {self.n_symbols}] logits; "
                f"got {tuple(logits.shape)}"
            )
        return logits

    def symbol_probs(self, x: torch.Tensor, index: torch.Tensor | None = None) -> torch.Tensor:
        """Per-input symbol distributions ``[B, n, d_0]``."""
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"`x` must be a torch.Tensor; got {type(x).__name__}")
        if index is None:
            if x.ndim < 3:
                raise ValueError(f"`x` must have shape [B, n, *input_shape]; got {tuple(x.shape)}")
            b, n = x.shape[:2]
            return torch.softmax(self._logits(x.reshape(b * n, *x.shape[2:])), -1).reshape(b, n, -1)
        if (
            not isinstance(index, torch.Tensor)
            or index.dtype not in (torch.int64, torch.int32)
            or index.ndim != 2
        ):
            raise TypeError("`index` must be an integer torch.Tensor [B, n] of rows of the bank `x`")
        if index.min() < 0 or index.max() >= x.shape[0]:
            raise ValueError(
                f"`index` must hold rows of `x` in [0, {x.shape[0]}); got range "
                f"[{index.min().item()}, {index.max().item()}]"
            )
        uniq, inverse = torch.unique(index, return_inverse=True)
        probs = torch.softmax(self._logits(x[uniq]), -1)  # [U, d]
        return probs[inverse]  # [B, n, d]

    @torch.no_grad()
    def predict_symbols(self, x: torch.Tensor, index: torch.Tensor | None = None) -> torch.Tensor:
        """Argmax symbol of every input: ``[B, n]`` (or ``[M]`` for a plain batch of single inputs)."""
        was = self.training
        self.eval()
        try:
            if index is None and x.ndim == 2:
                return self._logits(x).argmax(-1)
            return self.symbol_probs(x, index).argmax(-1)
        finally:
            self.train(was)

    def loss(self, x, y, index=None) -> torch.Tensor:
        raise NotImplementedError

    def fit(
        self,
        x: torch.Tensor,
        y: torch.Tensor,
        *,
        index: torch.Tensor | None = None,
        epochs: int = 1,
        batch_size: int = 16,
        lr: float = 1e-3,
        seed: int | None = None,
        time_budget: float | None = None,
        callback: Callable[[int, dict], None] | None = None,
        checkpoint: str | Path | None = None,
        checkpoint_every: int = 1,
    ) -> dict:
        """Train with Adam on tuples ``(x, y)`` (or a bank ``x`` with ``index``); returns the history.

        Parameters
        ----------
        x, y : Tensor
            ``x: [T, n, *in]`` and labels ``y: [T]``; or a bank ``x: [M, *in]`` with ``index: [T, n]``.
        epochs, batch_size, lr : int, int, float
            The official sum-N setting is batch 16, Adam 1e-3.
        seed : int, optional
            Seed of the shuffling.
        time_budget : float, optional
            Stop after this many seconds of training (checked after every batch).
        callback : callable, optional
            ``callback(epoch, history)`` after each epoch (e.g. to evaluate).
        checkpoint : path, optional
            File holding the training state (network, optimizer, shuffling generator, history), written
            atomically every ``checkpoint_every`` epochs. When it exists, training RESUMES from it, so
            an interrupted run loses at most ``checkpoint_every`` epochs and ends with the same
            parameters as an uninterrupted one. Delete it to start over.
        checkpoint_every : int
            Epochs between checkpoint writes.

        Returns
        -------
        dict
            ``loss`` (mean per epoch), ``epoch_time`` (seconds), ``steps``, ``stopped_early``,
            ``resumed_from`` (epochs restored from ``checkpoint``; 0 when it started fresh) and
            ``train_s`` / ``train_cpu_s`` (wall / CPU seconds of training, summed over interrupted and
            resumed parts).
        """
        n_tuples = index.shape[0] if index is not None else x.shape[0]
        if not isinstance(y, torch.Tensor) or y.ndim != 1 or y.shape[0] != n_tuples:
            raise ValueError(f"`y` must be a 1-D tensor with one label per tuple ({n_tuples})")
        self._check_labels(y)
        for name, v in (("epochs", epochs), ("batch_size", batch_size), ("checkpoint_every", checkpoint_every)):
            if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
                raise ValueError(f"`{name}` must be a positive int; got {v!r}")
        if not isinstance(lr, numbers.Real) or not lr > 0:
            raise ValueError(f"`lr` must be > 0; got {lr!r}")
        if any(p.dtype == torch.float16 for p in self.parameters()):  # Adam's eps (1e-8) is 0 in float16
            raise ValueError("the learner has float16 parameters: Adam's update divides by sqrt(v) + eps, both 0 "
                             "in float16, and the weights turn NaN (then \"`ps` holds NaN\"); train in float32 or "
                             "bfloat16 (cast to float16 afterwards)")
        epochs, batch_size, checkpoint_every = int(epochs), int(batch_size), int(checkpoint_every)
        opt = torch.optim.Adam(self.parameters(), lr=float(lr))
        gen = torch.Generator().manual_seed(int(seed) if seed is not None else 0)
        hist: dict = {
            "loss": [], "epoch_time": [], "steps": 0, "stopped_early": False, "resumed_from": 0, "train_s": 0.0,
            "train_cpu_s": 0.0,
        }
        start = 0
        if checkpoint is not None:
            checkpoint = Path(checkpoint)
            if checkpoint.is_file():
                state = torch.load(checkpoint, map_location="cpu", weights_only=True)  # tensors only
                self.load_state_dict(state["model"])
                opt.load_state_dict(state["optimizer"])
                gen.set_state(state["generator"])
                hist.update({k: state["history"][k] for k in _RESUMED})
                start = hist["resumed_from"] = len(hist["loss"])
        t_start = time.perf_counter() - hist["train_s"]
        cpu_start = time.process_time() - hist["train_cpu_s"]
        self.train()
        for epoch in range(start, epochs):
            t0 = time.perf_counter()
            losses = []
            for batch in torch.randperm(n_tuples, generator=gen).split(batch_size):
                opt.zero_grad()
                if index is None:
                    loss = self.loss(x[batch], y[batch])
                else:
                    loss = self.loss(x, y[batch], index=index[batch])
                loss.backward()
                opt.step()
                losses.append(loss.item())
                hist["steps"] += 1
                if time_budget is not None and time.perf_counter() - t_start > time_budget:
                    hist["stopped_early"] = True
                    break
            hist["loss"].append(float(np.mean(losses)))
            hist["epoch_time"].append(time.perf_counter() - t0)
            hist["train_s"] = time.perf_counter() - t_start
            hist["train_cpu_s"] = time.process_time() - cpu_start
            if checkpoint is not None and ((epoch + 1) % checkpoint_every == 0 or epoch + 1 == epochs):
                _save_checkpoint(checkpoint, self, opt, gen, hist)
            if callback is not None:
                callback(epoch, hist)
            if hist["stopped_early"]:
                break
        return hist

    def _check_labels(self, y: torch.Tensor) -> None:
        """Reject labels that no training signal can come from (NaN); subclasses add domain checks."""
        if y.is_floating_point() and not torch.isfinite(y).all():
            bad = int((~torch.isfinite(y)).nonzero()[0, 0])
            raise ValueError(f"`y` holds NaN or infinite labels (first at position {bad})")


_RESUMED = ("loss", "epoch_time", "steps", "train_s", "train_cpu_s")  # history kept in a checkpoint


def _first_layer(module: nn.Module) -> nn.Module | None:
    """The first leaf module of a (nested) ``nn.Sequential``; None for other containers."""
    while isinstance(module, nn.Sequential) and len(module):
        module = module[0]
    return module


def _save_checkpoint(path: Path, learner: nn.Module, opt, gen: torch.Generator, hist: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    history = {k: hist[k] for k in _RESUMED}
    torch.save(
        {"model": learner.state_dict(), "optimizer": opt.state_dict(), "generator": gen.get_state(),
         "history": history},
        tmp,
    )
    os.replace(tmp, path)  # atomic: a crash leaves the previous checkpoint intact


class CTSketchLearner(TupleLearner):
    """End-to-end training of a perception network through a sketched :class:`ProgramTree` (CTSketch).

    Parameters
    ----------
    perception : nn.Module
        Maps raw inputs ``[M, *in]`` to symbol logits ``[M, d_0]`` (softmax is applied here).
    tree : ProgramTree
        The decomposed, sketched program.
    loss : {"auto", "l1", "nll", "gaussian_nll"}
        ``"l1"`` on the expected output (value trees: the paper's sum and HWF), ``"nll"`` of the label in
        the output distribution (one-hot trees); ``"auto"`` picks by the tree's output mode, so on a
        value tree it IS the paper's L1.

        .. warning:: the L1 loss on an expected sum constrains only each symbol's MEAN, not its
           distribution: any ``p_i`` with the right mean (a "4" as half 0, half 8) minimises it. On the
           8x8 digits at N = 16 the expected digit was rounded right for 72% of digits while the argmax
           was right for only 20% (review of issue 8). Use ``rebin="moments"`` with
           ``loss="gaussian_nll"`` or ``entropy_weight`` when argmax accuracy matters.
        ``"gaussian_nll"`` (NOT in the paper; needs a tree with ``rebin="moments"``): negative log
        likelihood of the label under a Gaussian with the root's propagated mean and variance.
    entropy_weight : float
        Weight of the mean entropy of the symbol distributions added to the loss (NOT in the paper;
        default 0). An L1 loss on an expected value is minimised by any distribution with the right mean
        (e.g. half 0, half 8 for a 4), so argmax accuracy can stay low while the loss vanishes; a small
        entropy penalty selects the one-hot solution.

    Examples
    --------
    >>> import torch
    >>> from neurips25.ctsketch import sum_tree
    >>> torch.manual_seed(0)  # doctest: +ELLIPSIS
    <torch._C.Generator object at ...>
    >>> net = torch.nn.Sequential(torch.nn.Linear(4, 10))
    >>> learner = CTSketchLearner(net, sum_tree(4, seed=0))
    >>> x, y = torch.randn(8, 4, 4), torch.randint(0, 37, (8,)).float()
    >>> learner.loss(x, y).shape, learner.predict(x).shape
    (torch.Size([]), torch.Size([8]))
    """

    def __init__(
        self, perception: nn.Module, tree: ProgramTree, *, loss: str = "auto", entropy_weight: float = 0.0
    ):
        if not isinstance(tree, ProgramTree):
            raise TypeError(f"`tree` must be a ProgramTree; got {type(tree).__name__}")
        if loss not in ("auto", "l1", "nll", "gaussian_nll"):
            raise ValueError(f"`loss` must be 'auto', 'l1', 'nll' or 'gaussian_nll'; got {loss!r}")
        if loss == "gaussian_nll" and tree.rebin != "moments":
            raise ValueError("`loss`='gaussian_nll' needs a ProgramTree built with rebin='moments'")
        if loss == "auto":
            loss = "l1" if tree.output == "value" else "nll"
        if (loss == "nll") != (tree.output == "onehot"):
            raise ValueError(f"`loss`={loss!r} does not fit a tree with output={tree.output!r}")
        if not entropy_weight >= 0:
            raise ValueError(f"`entropy_weight` must be >= 0; got {entropy_weight!r}")
        super().__init__(perception, len(tree.domains[0]))
        self.tree = tree
        self.entropy_weight = float(entropy_weight)
        self.loss_kind = loss
        self.register_buffer("_out_values", torch.as_tensor(tree.domains[-1]), persistent=False)

    def _check_labels(self, y: torch.Tensor) -> None:
        """NaN labels, and labels outside the program's image (no symbol assignment produces them)."""
        super()._check_labels(y)
        values = self._out_values.to(torch.float64)
        yy = y.detach().to(torch.float64).reshape(-1)
        pos = torch.searchsorted(values, yy).clamp_max(len(values) - 1)
        outside = values[pos] != yy
        if outside.any():
            bad = yy[outside.nonzero()[0, 0]].item()
            raise ValueError(
                f"`y` holds labels outside the program's image (values in [{values[0].item():g}, "
                f"{values[-1].item():g}], {len(values)} possible outputs); first bad label: {bad:g}"
            )

    def forward(self, x: torch.Tensor, index: torch.Tensor | None = None) -> torch.Tensor:
        """Expected program output ``[B]`` (or output distribution ``[B, d_out]``)."""
        return self.tree(self.symbol_probs(x, index))

    def loss(self, x: torch.Tensor, y: torch.Tensor, index: torch.Tensor | None = None) -> torch.Tensor:
        """L1 between expected and true outputs, or NLL of the true output (mean over the batch)."""
        if not isinstance(y, torch.Tensor):
            raise TypeError(f"`y` must be a torch.Tensor of labels; got {type(y).__name__}")
        self._check_labels(y)
        ps = self.symbol_probs(x, index)
        reg = 0.0
        if self.entropy_weight:
            reg = self.entropy_weight * -(ps * ps.clamp_min(1e-12).log()).sum(-1).mean()
        if self.loss_kind == "gaussian_nll":
            mean, var = self.tree.moments(ps)
            return F.gaussian_nll_loss(mean, y.to(mean.dtype), var + 0.25) + reg
        out = self.tree(ps)
        if self.loss_kind == "l1":
            return F.l1_loss(out, y.to(out.dtype)) + reg
        target = torch.searchsorted(self._out_values, y.to(self._out_values.dtype))
        target = target.clamp_max(len(self._out_values) - 1)
        return F.nll_loss(out.clamp_min(1e-12).log(), target) + reg

    @torch.no_grad()
    def predict(self, x: torch.Tensor, index: torch.Tensor | None = None) -> torch.Tensor:
        """The TRUE program on the argmax symbols: ``[B]`` output values."""
        return self.tree.evaluate(self.predict_symbols(x, index))
