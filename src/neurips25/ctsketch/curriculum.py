"""Curriculum over the number of inputs: train ONE perception network on growing trees (NOT in the paper).

The official CTSketch recipe trains every sum-N task from scratch. From a cold start at N = 1,024 the
signal per image is weak (the gradient reaching a leaf is shared by 1,024 others), and learning starts
only after thousands of steps; a network that already knows digits keeps improving at N = 1,024 (review
of issue 8: 69% -> 72.5% in 600 steps). A curriculum trains the same network at N = 16, then 64, 256,
1,024, each stage through its own sketched tree. This is an optimisation schedule, not a change of the
method: every stage is plain CTSketch training.
"""

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Callable, Sequence
from pathlib import Path

import torch
from torch import nn

from neurips25.ctsketch.learner import CTSketchLearner
from neurips25.ctsketch.tree import ProgramTree


@dataclasses.dataclass
class CurriculumStage:
    """One stage: a tree, its training tuples and how long to train.

    Parameters
    ----------
    tree : ProgramTree
        The sketched program of this stage (e.g. ``sum_tree(64)``).
    x : Tensor
        Image bank ``[M, *in]`` (with ``index``) or tuples ``[T, n, *in]``.
    y : Tensor ``[T]``
        Labels (program outputs) of the tuples.
    index : Tensor ``[T, n]``, optional
        Rows of the bank ``x`` per tuple.
    epochs : int
        Epochs over this stage's tuples.
    """

    tree: ProgramTree
    x: torch.Tensor
    y: torch.Tensor
    index: torch.Tensor | None = None
    epochs: int = 1

    def __post_init__(self):
        if not isinstance(self.tree, ProgramTree):
            raise TypeError(f"`tree` must be a ProgramTree; got {type(self.tree).__name__}")
        if isinstance(self.epochs, bool) or not isinstance(self.epochs, numbers.Integral) or self.epochs < 1:
            raise ValueError(f"`epochs` must be a positive int; got {self.epochs!r}")


def fit_curriculum(
    perception: nn.Module,
    stages: Sequence[CurriculumStage],
    *,
    loss: str = "auto",
    batch_size: int = 16,
    lr: float = 1e-3,
    seed: int | None = None,
    checkpoint_dir: str | Path | None = None,
    callback: Callable[[int, CTSketchLearner, dict], None] | None = None,
) -> list[dict]:
    """Train ``perception`` through each stage's tree in turn (the same network object throughout).

    Every stage is :meth:`CTSketchLearner.fit` with a fresh Adam optimiser; ``loss`` applies to every
    stage (``"gaussian_nll"`` needs trees built with ``rebin="moments"``). All stages' trees must share
    the input domain.

    Parameters
    ----------
    perception : nn.Module
        Maps raw inputs to symbol logits; trained in place.
    stages : sequence of CurriculumStage
        In training order (usually growing ``n_inputs``).
    loss, batch_size, lr, seed
        As for :class:`CTSketchLearner` and its ``fit``; stage ``i`` shuffles with ``seed + i``.
    checkpoint_dir : path, optional
        One checkpoint per stage (``stage{i}.pt``); an interrupted curriculum resumes inside the stage it
        was in, and finished stages are restored from their final checkpoint.
    callback : callable, optional
        ``callback(stage_index, learner, history)`` after each stage (e.g. to evaluate accuracy).

    Returns
    -------
    list of dict
        The history of each stage (see :meth:`TupleLearner.fit`).

    Examples
    --------
    >>> import torch
    >>> from neurips25.ctsketch import sum_tree
    >>> net = torch.nn.Linear(4, 10)
    >>> stages = [CurriculumStage(sum_tree(n, seed=0), torch.randn(8, n, 4),
    ...                           torch.randint(0, 9 * n + 1, (8,)).float()) for n in (2, 4)]
    >>> [h["steps"] for h in fit_curriculum(net, stages, batch_size=4, seed=0)]
    [2, 2]
    """
    if not isinstance(perception, nn.Module):
        raise TypeError(f"`perception` must be a torch.nn.Module; got {type(perception).__name__}")
    stages = list(stages)
    if not stages or not all(isinstance(s, CurriculumStage) for s in stages):
        raise ValueError("`stages` must be a non-empty sequence of CurriculumStage")
    d0 = [len(s.tree.domains[0]) for s in stages]
    if len(set(d0)) != 1:
        raise ValueError(f"every stage's tree must have the same input domain size; got {d0}")
    histories = []
    for i, stage in enumerate(stages):
        learner = CTSketchLearner(perception, stage.tree, loss=loss)
        ckpt = None if checkpoint_dir is None else Path(checkpoint_dir) / f"stage{i}.pt"
        hist = learner.fit(
            stage.x,
            stage.y,
            index=stage.index,
            epochs=int(stage.epochs),
            batch_size=batch_size,
            lr=lr,
            seed=None if seed is None else int(seed) + i,
            checkpoint=ckpt,
        )
        histories.append(hist)
        if callback is not None:
            callback(i, learner, hist)
    return histories
