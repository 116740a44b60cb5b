"""Training loop and metrics for PRSformer and the models trained like it.

AdamW, linear warm-up then cosine decay, early stopping on validation AUROC, per-task AUROC / AUPRC.
Checkpoints are kept either for the best mean AUROC over tasks or, for a multitask model, per task
(each disease predicted by the epoch that was best for it on validation, as a single-task model
that early-stops on its own disease would be).
"""

from __future__ import annotations

import copy
import dataclasses
import math

import numpy as np
import torch
from sklearn.metrics import average_precision_score, roc_auc_score

from neurips25.prsformer.data import GenotypeDataset
from neurips25.repro.progress import progress

__all__ = ["FitResult", "PerTaskCheckpoints", "fit", "predict", "evaluate", "task_metrics"]


class PerTaskCheckpoints(torch.nn.Module):
    """Disease t predicted by the checkpoint that was best on validation for disease t.

    Holds one frozen copy of the model per distinct best epoch; ``forward`` returns ``[B, T]``.
    """

    def __init__(self, models: list, task_model: list):
        super().__init__()
        self.models = torch.nn.ModuleList(models)
        self.task_model = list(task_model)  # task t -> index into models
        self.n_tasks = len(task_model)
        self.n_covariates = getattr(models[0], "n_covariates", 0)

    def forward(self, dosages, covariates=None):
        outs = [m(dosages, covariates) for m in self.models]
        return torch.stack([outs[j][:, t] for t, j in enumerate(self.task_model)], dim=1)


@dataclasses.dataclass
class FitResult:
    """What :func:`fit` returns.

    ``best_epoch`` / ``best_val_auroc`` refer to the mean over tasks; ``best_epoch_per_task`` and
    ``best_val_auroc_per_task`` to each task; ``per_task`` is a :class:`PerTaskCheckpoints` when
    ``fit(checkpoint="per_task")``, else None.
    """

    best_epoch: int
    best_val_auroc: float
    history: list
    best_epoch_per_task: list = dataclasses.field(default_factory=list)
    best_val_auroc_per_task: list = dataclasses.field(default_factory=list)
    per_task: PerTaskCheckpoints | None = None


def _check_dataset(data, name: str) -> GenotypeDataset:
    if not isinstance(data, GenotypeDataset):
        raise TypeError(f"`{name}` must be a GenotypeDataset, got {type(data).__name__}")
    return data


def _covariates(model, cov: torch.Tensor):
    return cov if getattr(model, "n_covariates", 0) else None


@torch.no_grad()
def predict(model: torch.nn.Module, data: GenotypeDataset, batch_size: int = 512) -> np.ndarray:
    """Logits ``[N, T]`` of ``model`` on ``data`` (eval mode, no gradients); float64 for a float64 model, else
    float32 (numpy has no bfloat16: a bfloat16 or float16 model's logits are widened)."""
    data = _check_dataset(data, "data")
    was_training = model.training
    model.eval()
    out = [model(data.dosages[i:i + batch_size], _covariates(model, data.covariates[i:i + batch_size]))
           for i in range(0, len(data), batch_size)]
    model.train(was_training)
    out = torch.cat(out)
    return (out if out.dtype == torch.float64 else out.float()).numpy()


def task_metrics(labels: np.ndarray, scores: np.ndarray) -> dict:
    """Per-task AUROC and AUPRC (NaN for a task with one class) and their means over tasks."""
    labels, scores = np.asarray(labels), np.asarray(scores)
    if labels.ndim == 1:
        labels, scores = labels[:, None], scores[:, None]
    if labels.shape != scores.shape:
        raise ValueError(f"`labels` {labels.shape} and `scores` {scores.shape} must match")
    auroc, auprc = [], []
    for t in range(labels.shape[1]):
        y, s = labels[:, t], scores[:, t]
        both = 0 < y.sum() < len(y)
        auroc.append(roc_auc_score(y, s) if both else math.nan)
        auprc.append(average_precision_score(y, s) if both else math.nan)
    return {"auroc": auroc, "auprc": auprc, "mean_auroc": float(np.nanmean(auroc)),
            "mean_auprc": float(np.nanmean(auprc))}


def evaluate(model: torch.nn.Module, data: GenotypeDataset, batch_size: int = 512) -> dict:
    """:func:`task_metrics` of ``model`` on ``data``."""
    return task_metrics(data.labels.numpy(), predict(model, data, batch_size))


def fit(model: torch.nn.Module, train: GenotypeDataset, val: GenotypeDataset, epochs: int = 10,
        lr: float = 1e-3, weight_decay: float = 1e-2, batch_size: int = 128, warmup_frac: float = 0.1,
        patience: int = 3, seed: int = 0, desc: str = "train", checkpoint: str = "mean") -> FitResult:
    """Train ``model`` with its ``criterion`` (multitask BCE); keep the best validation epoch.

    Parameters
    ----------
    model : torch.nn.Module
        A :class:`~neurips25.prsformer.PRSformer` or :class:`~neurips25.prsformer.LinearDosageModel`
        (anything with ``forward(dosages, covariates)`` and a ``criterion`` attribute).
    train, val : GenotypeDataset
        Training data; validation data for early stopping (mean AUROC over tasks).
    epochs : int
        Maximum epochs.
    lr, weight_decay : float
        AdamW settings; the learning rate warms up linearly over ``warmup_frac`` of the steps, then
        follows a cosine to 0.
    batch_size : int
    patience : int
        Stop after this many epochs without a better validation AUROC (the mean over tasks; with
        ``checkpoint="per_task"``, without a better AUROC on any task).
    seed : int
        Shuffling seed.
    desc : str
        Progress-bar label.
    checkpoint : {"mean", "per_task"}
        "mean": keep the epoch with the best mean validation AUROC. "per_task": also keep, for each
        task, its own best epoch (``FitResult.per_task``), the fair multitask protocol.

    Returns
    -------
    FitResult
        The model is left holding the best-mean epoch's weights.

    Raises
    ------
    ValueError
        If a validation task has no cases or no controls (its AUROC, the early-stopping signal, is
        undefined); if the model has float16 parameters (AdamW cannot train them: train in float32 or
        bfloat16).

    Examples
    --------
    >>> from neurips25.prsformer import LinearDosageModel, GenotypeDataset
    >>> _ = torch.manual_seed(0)
    >>> g = torch.randint(0, 3, (64, 8)); y = (g[:, :1] > 1).float()
    >>> ds = GenotypeDataset(g.numpy(), y.numpy())
    >>> fit(LinearDosageModel(8, 1), ds, ds, epochs=10, lr=0.05, batch_size=16).best_val_auroc > 0.9
    True
    """
    train, val = _check_dataset(train, "train"), _check_dataset(val, "val")
    if epochs < 1 or batch_size < 1 or lr <= 0 or patience < 1:
        raise ValueError(f"need epochs, batch_size, patience >= 1 and lr > 0; got epochs={epochs}, "
                         f"batch_size={batch_size}, patience={patience}, lr={lr}")
    if not hasattr(model, "criterion"):
        raise TypeError("`model` needs a `criterion` attribute (e.g. MultiTaskBCE)")
    if any(p.dtype == torch.float16 for p in model.parameters()):  # AdamW's eps (1e-8) is 0 in float16
        raise ValueError("`model` has float16 parameters: AdamW's update divides by sqrt(v) + eps, both 0 in float16, "
                         "and the weights turn NaN; train in float32 or bfloat16 (cast to float16 afterwards)")
    n_tasks = getattr(model, "n_tasks", train.labels.shape[1])
    if train.labels.shape[1] != n_tasks:
        raise ValueError(f"`train` has {train.labels.shape[1]} tasks, the model {n_tasks}")
    if checkpoint not in ("mean", "per_task"):
        raise ValueError(f"`checkpoint` must be 'mean' or 'per_task', got {checkpoint!r}")
    if val.labels.shape[1] != n_tasks:
        raise ValueError(f"`val` has {val.labels.shape[1]} tasks, the model {n_tasks}")
    cases = val.labels.sum(0)
    for t in range(n_tasks):
        if not 0 < cases[t] < len(val):
            raise ValueError(f"`val` task {t} has {int(cases[t])} cases among {len(val)} individuals; "
                             "early stopping needs cases and controls in every validation task")
    gen = torch.Generator().manual_seed(seed)
    steps_per_epoch = math.ceil(len(train) / batch_size)
    total = epochs * steps_per_epoch
    warmup = max(1, int(warmup_frac * total))
    # No weight decay on LayerNorm / bias / learned task weights.
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}], lr=lr)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (s + 1) / warmup if s < warmup else 0.5 * (1 + math.cos(math.pi * (s - warmup) /
                                                                                 max(1, total - warmup))))
    best, best_state, best_epoch, history, bad = -math.inf, None, -1, [], 0
    task_best = [-math.inf] * n_tasks
    task_epoch, task_state = [-1] * n_tasks, [None] * n_tasks
    for epoch in progress(range(epochs), desc=desc, total=epochs):
        model.train()
        perm = torch.randperm(len(train), generator=gen)
        losses = []
        for i in range(0, len(train), batch_size):
            idx = perm[i:i + batch_size]
            logits = model(train.dosages[idx], _covariates(model, train.covariates[idx]))
            loss = model.criterion(logits, train.labels[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            losses.append(loss.item())
        metrics = evaluate(model, val)
        val_auroc = metrics["mean_auroc"]
        history.append({"epoch": epoch, "train_loss": float(np.mean(losses)), "val_auroc": val_auroc,
                        "val_auroc_per_task": metrics["auroc"]})
        improved = False
        if val_auroc > best:
            best, best_epoch, improved = val_auroc, epoch, True
            best_state = copy.deepcopy(model.state_dict())
        state = None
        for t, a in enumerate(metrics["auroc"]):
            if a > task_best[t]:
                task_best[t], task_epoch[t] = a, epoch
                if checkpoint == "per_task":
                    state = state or copy.deepcopy(model.state_dict())
                    task_state[t] = state
                improved = improved or checkpoint == "per_task"
        bad = 0 if improved else bad + 1
        if bad >= patience:
            break
    if best_state is None:
        raise RuntimeError(f"{desc}: the validation AUROC was NaN in every epoch (diverged training, or "
                           "constant predictions); lower `lr` or check the inputs")
    per_task = None
    if checkpoint == "per_task":
        if any(st is None for st in task_state):
            raise RuntimeError(f"{desc}: a task's validation AUROC was NaN in every epoch")
        states, task_model = [], []
        for st in task_state:
            j = next((i for i, s in enumerate(states) if s is st), None)
            if j is None:
                states.append(st)
                j = len(states) - 1
            task_model.append(j)
        copies = []
        for st in states:
            m = copy.deepcopy(model)
            m.load_state_dict(st)
            m.eval()
            copies.append(m)
        per_task = PerTaskCheckpoints(copies, task_model)
    model.load_state_dict(best_state)
    return FitResult(best_epoch, best, history, task_epoch, task_best, per_task)
