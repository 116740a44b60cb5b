"""Training and evaluation of a dense graph classifier, as in the paper's scripts.

Adam (lr 1e-3), mini-batches of 32 graphs, cross-entropy, 101 epochs, and the parameters of the
LAST epoch with the best validation accuracy are kept (official ``train_function`` compares with
``>=``; with a small validation set the accuracy saturates early, and keeping the first best epoch
would attack a model from the first few epochs). Batches are padded dense tensors.
"""

from __future__ import annotations

import copy
import numbers

import torch
import torch.nn.functional as F
from torch import nn

from neurips25.rspool.data import GraphSet

__all__ = ["train_classifier", "predict", "accuracy"]


@torch.no_grad()
def predict(model: nn.Module, graphs: GraphSet, batch_size: int = 256) -> torch.Tensor:
    """Predicted classes ``[G]`` of a dense model (eval mode) on every graph of ``graphs``."""
    model.eval()
    out = []
    for lo in range(0, len(graphs), batch_size):
        x, adj, mask, _ = graphs.dense(range(lo, min(lo + batch_size, len(graphs))))
        out.append(model(x, adj, mask).argmax(-1))
    return torch.cat(out) if out else torch.zeros(0, dtype=torch.long)


def accuracy(model: nn.Module, graphs: GraphSet) -> float:
    """Fraction of graphs classified correctly."""
    if len(graphs) == 0:
        raise ValueError("accuracy: `graphs` is empty")
    return float((predict(model, graphs) == torch.from_numpy(graphs.ys)).float().mean())


def train_classifier(model: nn.Module, train: GraphSet, val: GraphSet | None = None, epochs: int = 101,
                     lr: float = 1e-3, batch_size: int = 32, seed: int = 0, keep: str = "last") -> dict:
    """Train ``model(x, adj, mask) -> logits`` in place; keep the best-validation parameters.

    Parameters
    ----------
    model : nn.Module
        A dense classifier such as :class:`~neurips25.rspool.DenseGCN`.
    train, val : GraphSet
        Training graphs; validation graphs pick the kept epoch (the last epoch when ``None``).
    epochs, lr, batch_size : int, float, int
        Adam settings (paper: 101 epochs, 1e-3, 32).
    seed : int
        Drives the batch order.
    keep : {"last", "first"}, default="last"
        Which epoch among ties for the best validation accuracy is kept: the last (official ``>=``)
        or the first (``>``).

    Returns
    -------
    dict
        ``{"best_epoch", "best_val_acc", "train_loss"}`` (loss per epoch).
    """
    for name, count in (("epochs", epochs), ("batch_size", batch_size)):
        if isinstance(count, bool) or not isinstance(count, numbers.Integral) or count < 1:
            raise ValueError(f"train_classifier: `{name}` must be an int >= 1, got {count!r}")
    if not isinstance(lr, numbers.Real) or not lr > 0:
        raise ValueError(f"train_classifier: `lr` must be a float > 0, got {lr!r}")
    if keep not in ("last", "first"):
        raise ValueError(f"train_classifier: `keep` must be 'last' or 'first', got {keep!r}")
    if len(train) == 0:
        raise ValueError("train_classifier: `train` is empty")
    gen = torch.Generator().manual_seed(seed)
    x_all, adj_all, mask_all, y_all = train.dense()
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    best = (-1.0, 0, copy.deepcopy(model.state_dict()))
    losses = []
    for epoch in range(epochs):
        model.train()
        perm = torch.randperm(len(train), generator=gen)
        total = 0.0
        for lo in range(0, len(train), batch_size):
            idx = perm[lo:lo + batch_size]
            n = int(mask_all[idx].sum(1).max())  # crop padding to this batch's largest graph
            logits = model(x_all[idx, :n], adj_all[idx, :n, :n], mask_all[idx, :n])
            loss = F.cross_entropy(logits, y_all[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(idx)
        losses.append(total / len(train))
        if val is not None:
            acc = accuracy(model, val)
            if acc > best[0] or (keep == "last" and acc == best[0]):
                best = (acc, epoch, copy.deepcopy(model.state_dict()))
    if val is not None:
        model.load_state_dict(best[2])
    model.eval()
    return {"best_epoch": best[1] if val is not None else epochs - 1,
            "best_val_acc": best[0] if val is not None else None, "train_loss": losses}
