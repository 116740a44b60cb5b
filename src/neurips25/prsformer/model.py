"""PRSformer: SNP-token embedding, neighborhood-attention encoder, flatten multitask head.

Dibaeinia et al., "PRSformer: Disease Prediction from Million-Scale Individual Genotypes",
NeurIPS 2025. Written from the paper's abstract and the semantics of the authors' code (read for
meaning only); the trained configuration is not published, so the defaults here are choices.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
from torch import nn

from neurips25.prsformer.neighborhood_attention import NeighborhoodAttention1D

__all__ = [
    "check_dosages",
    "TokenEmbedding",
    "PRSformerBlock",
    "FlattenHead",
    "MultiTaskBCE",
    "PRSformer",
    "LinearDosageModel",
]

MISSING = -1


def check_dosages(dosages, n_snps: int | None = None, name: str = "dosages") -> torch.Tensor:
    """Validate genotype dosages and return them as a long tensor ``[B, L]``.

    Dosages are allele counts in {0, 1, 2}; missing genotypes are coded ``-1``.
    """
    if not isinstance(dosages, torch.Tensor):
        raise TypeError(f"`{name}` must be a torch.Tensor, got {type(dosages).__name__}")
    if dosages.dim() != 2:
        raise ValueError(f"`{name}` must have shape [B, L], got {tuple(dosages.shape)}")
    if n_snps is not None and dosages.shape[1] != n_snps:
        raise ValueError(f"`{name}` has L={dosages.shape[1]} SNPs but the model was built for "
                         f"n_snps={n_snps}")
    if dosages.is_floating_point():
        if torch.isnan(dosages).any():
            raise ValueError(f"`{name}` contains NaN; code missing genotypes as -1")
        if (dosages != dosages.round()).any():
            raise ValueError(f"`{name}` must hold integer allele counts in {{-1, 0, 1, 2}}")
    d = dosages.long()
    if d.numel() and (d.min() < MISSING or d.max() > 2):
        raise ValueError(f"`{name}` must hold values in {{-1 (missing), 0, 1, 2}}, found range "
                         f"[{int(d.min())}, {int(d.max())}]")
    return d


def _init_linear(layer: nn.Linear) -> None:
    # Xavier-normal with gain 1/sqrt(2) and zero bias, as in the authors' FC layers.
    nn.init.xavier_normal_(layer.weight, gain=1 / math.sqrt(2))
    if layer.bias is not None:
        nn.init.zeros_(layer.bias)


class TokenEmbedding(nn.Module):
    """Dosage-scaled SNP-specific embedding with a separate missing-genotype vector.

    ``token_j = e_j^miss`` if ``d_j`` is missing, else ``d_j * e_j^obs``. Each SNP owns its two
    vectors, so the vector is also the SNP's positional identity; homozygous-reference tokens
    (``d_j = 0``) are exactly zero.

    Parameters
    ----------
    n_snps : int
        Number of SNPs L.
    d_model : int
        Token width E.

    Notes
    -----
    Shapes: ``[B, L]`` long dosages in {-1, 0, 1, 2} -> ``[B, L, E]``.
    """

    def __init__(self, n_snps: int, d_model: int):
        super().__init__()
        self.observed = nn.Parameter(torch.randn(n_snps, d_model) * d_model ** -0.5)
        self.missing = nn.Parameter(torch.randn(n_snps, d_model) * d_model ** -0.5)

    def forward(self, dosages: torch.Tensor) -> torch.Tensor:
        miss = (dosages == MISSING).unsqueeze(-1)
        dose = dosages.clamp(min=0).to(self.observed.dtype).unsqueeze(-1)
        return torch.where(miss, self.missing, dose * self.observed)


class PRSformerBlock(nn.Module):
    """Pre-LN block: ``x += NA(LN(x)); x += W2 GELU(W1 LN(x))``.

    Parameters
    ----------
    d_model, n_heads, d_ff : int
        Width E, heads H and feed-forward width.
    kernel_size, dilation : int
        Neighborhood attention window k and dilation d.
    backend : str
        Passed to :class:`NeighborhoodAttention1D`.
    """

    def __init__(self, d_model: int, n_heads: int, d_ff: int, kernel_size: int, dilation: int,
                 backend: str = "auto"):
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.attn = NeighborhoodAttention1D(d_model, n_heads, kernel_size, dilation, backend=backend)
        self.norm2 = nn.LayerNorm(d_model)
        self.ff1, self.ff2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)
        for layer in (self.attn.qkv, self.attn.proj, self.ff1, self.ff2):
            _init_linear(layer)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.norm1(x))
        return x + self.ff2(nn.functional.gelu(self.ff1(self.norm2(x))))


class FlattenHead(nn.Module):
    """Per-token LayerNorm, flatten all L tokens, one shared Linear to T logits (plus covariates).

    Shapes: ``[B, L, E]`` (and covariates ``[B, C]``) -> ``[B, T]``.
    """

    def __init__(self, n_snps: int, d_model: int, n_tasks: int, n_covariates: int = 0):
        super().__init__()
        self.norm = nn.LayerNorm(d_model)
        self.fc = nn.Linear(n_snps * d_model + n_covariates, n_tasks)
        _init_linear(self.fc)

    def forward(self, x: torch.Tensor, covariates: torch.Tensor | None = None) -> torch.Tensor:
        z = self.norm(x).flatten(1)  # [B, L*E]
        if covariates is not None:
            z = torch.cat([z, covariates.to(z.dtype)], dim=1)
        return self.fc(z)


class MultiTaskBCE(nn.Module):
    """Multitask binary cross-entropy, optionally with learned task weights.

    With ``learn_weights``: ``sum_t exp(-s_t) * BCE_t + s_t`` with ``s_t = log sigma_t^2`` learned
    (Kendall, Gal & Cipolla, CVPR 2018); otherwise the mean of the per-task BCEs.

    Parameters
    ----------
    n_tasks : int
        T.
    learn_weights : bool, default=False
        Learn ``s_t`` (initialised at 0, i.e. equal weights).
    """

    def __init__(self, n_tasks: int, learn_weights: bool = False):
        super().__init__()
        self.n_tasks, self.learn_weights = n_tasks, learn_weights
        self.log_vars = nn.Parameter(torch.zeros(n_tasks)) if learn_weights else None

    def forward(self, logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        if logits.shape != labels.shape:
            raise ValueError(f"`logits` {tuple(logits.shape)} and `labels` {tuple(labels.shape)} differ")
        per_task = nn.functional.binary_cross_entropy_with_logits(
            logits, labels.to(logits.dtype), reduction="none").mean(0)  # [T]
        if self.log_vars is None:
            return per_task.mean()
        return (torch.exp(-self.log_vars) * per_task + self.log_vars).sum() / self.n_tasks


def _positive_int(value, name: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"`{name}` must be an int >= {minimum}, got {value!r}")
    return value


class PRSformer(nn.Module):
    """PRSformer: multitask disease logits from individual genotypes.

    ``tokens = TokenEmbedding(dosages)`` -> ``n_layers`` pre-LN neighborhood-attention blocks, the
    layer-``l`` block with dilation ``dilations[l]`` (the receptive field grows with depth: local LD
    first, wider regions later) -> :class:`FlattenHead` (or a mean-pool head) -> ``[B, T]`` logits.
    Cost per layer is O(L k E).

    Parameters
    ----------
    n_snps : int
        Number of SNPs L.
    n_tasks : int
        Number of diseases T (one shared head gives all T logits).
    d_model : int, default=32
        Token width E.
    n_heads : int, default=4
        Attention heads.
    d_ff : int, default=64
        Feed-forward width.
    n_layers : int, default=4
        Blocks; 0 gives the "embedding + flatten head" linear-in-tokens baseline.
    kernel_size : int, default=33
        Odd neighborhood size k.
    dilations : int or sequence of int, default=(1, 2, 8, 32)
        One dilation per layer (an int is used for every layer). Each needs ``n_snps // d >= k``.
    n_covariates : int, default=0
        Covariates (sex, PCs) concatenated before the head.
    head : {"flatten", "mean"}, default="flatten"
        "flatten" is the paper's main head; "mean" averages tokens (an ablation).
    task_weighting : bool, default=True
        Learned uncertainty task weights in :attr:`criterion`.
    backend : {"auto", "torch", "natten"}, default="auto"
        Neighborhood attention backend.

    Examples
    --------
    >>> model = PRSformer(n_snps=64, n_tasks=3, d_model=8, n_heads=2, d_ff=16, n_layers=2,
    ...                   kernel_size=5, dilations=[1, 4])
    >>> model(torch.randint(-1, 3, (4, 64))).shape
    torch.Size([4, 3])
    """

    def __init__(self, n_snps: int, n_tasks: int, d_model: int = 32, n_heads: int = 4, d_ff: int = 64,
                 n_layers: int = 4, kernel_size: int = 33, dilations: int | Sequence[int] = (1, 2, 8, 32),
                 n_covariates: int = 0, head: str = "flatten", task_weighting: bool = True,
                 backend: str = "auto"):
        super().__init__()
        self.n_snps = _positive_int(n_snps, "n_snps")
        self.n_tasks = _positive_int(n_tasks, "n_tasks")
        _positive_int(d_model, "d_model")
        _positive_int(d_ff, "d_ff")
        self.n_covariates = _positive_int(n_covariates, "n_covariates", 0)
        n_layers = _positive_int(n_layers, "n_layers", 0)
        if isinstance(dilations, int):
            dilations = [dilations] * n_layers
        dilations = list(dilations)
        if len(dilations) != n_layers:
            raise ValueError(f"`dilations` needs one entry per layer ({n_layers}), got {dilations}")
        if n_layers and (kernel_size < 1 or kernel_size % 2 == 0):
            raise ValueError(f"`kernel_size` must be a positive odd int, got {kernel_size}")
        for d in dilations:
            if _positive_int(d, "dilations") and n_snps // d < kernel_size:
                raise ValueError(f"dilation {d} with kernel_size={kernel_size} needs n_snps >= "
                                 f"{kernel_size * d} (each dilation group must hold kernel_size SNPs), "
                                 f"got n_snps={n_snps}")
        if head not in ("flatten", "mean"):
            raise ValueError(f"`head` must be 'flatten' or 'mean', got {head!r}")
        self.dilations, self.kernel_size, self.head_type = dilations, kernel_size, head
        self.embed = TokenEmbedding(n_snps, d_model)
        self.blocks = nn.ModuleList(
            PRSformerBlock(d_model, n_heads, d_ff, kernel_size, d, backend=backend) for d in dilations)
        if head == "flatten":
            self.head = FlattenHead(n_snps, d_model, n_tasks, n_covariates)
        else:
            self.head = nn.Sequential(nn.LayerNorm(d_model))
            self.head_fc = nn.Linear(d_model + n_covariates, n_tasks)
            _init_linear(self.head_fc)
        self.criterion = MultiTaskBCE(n_tasks, learn_weights=task_weighting)

    def forward(self, dosages: torch.Tensor, covariates: torch.Tensor | None = None) -> torch.Tensor:
        """``dosages`` ``[B, L]`` in {-1, 0, 1, 2}, ``covariates`` ``[B, C]`` -> logits ``[B, T]``."""
        d = check_dosages(dosages, self.n_snps)
        covariates = _check_covariates(covariates, d.shape[0], self.n_covariates)
        x = self.embed(d)  # [B, L, E]
        for block in self.blocks:
            x = block(x)
        if self.head_type == "flatten":
            return self.head(x, covariates)
        z = self.head(x).mean(1)
        if covariates is not None:
            z = torch.cat([z, covariates.to(z.dtype)], dim=1)
        return self.head_fc(z)


def _check_covariates(covariates, batch: int, n_covariates: int):
    if n_covariates == 0:
        if covariates is not None and covariates.shape[-1] != 0:
            raise ValueError("`covariates` given but the model was built with n_covariates=0")
        return None
    if covariates is None:
        raise ValueError(f"the model was built with n_covariates={n_covariates}; pass `covariates`")
    if not isinstance(covariates, torch.Tensor):
        raise TypeError(f"`covariates` must be a torch.Tensor, got {type(covariates).__name__}")
    if covariates.shape != (batch, n_covariates):
        raise ValueError(f"`covariates` must have shape [{batch}, {n_covariates}], "
                         f"got {tuple(covariates.shape)}")
    if not torch.isfinite(covariates).all():
        raise ValueError("`covariates` contains NaN or infinite values; impute or drop those individuals")
    # the caller casts to the model's dtype (float64 / bfloat16 models get their own dtype, not float32)
    return covariates if covariates.is_floating_point() else covariates.float()


class LinearDosageModel(nn.Module):
    """Individual-level linear baseline: one Linear over [missing indicator, dosage] per SNP.

    ``logit_t = b_t + sum_j (w_jt^miss 1[d_j missing] + w_jt^dose d_j) + c_t . covariates``; trained
    with the same loss and loop as :class:`PRSformer`.

    Examples
    --------
    >>> LinearDosageModel(10, 2)(torch.randint(0, 3, (5, 10))).shape
    torch.Size([5, 2])
    """

    def __init__(self, n_snps: int, n_tasks: int, n_covariates: int = 0, task_weighting: bool = False):
        super().__init__()
        self.n_snps = _positive_int(n_snps, "n_snps")
        self.n_tasks = _positive_int(n_tasks, "n_tasks")
        self.n_covariates = _positive_int(n_covariates, "n_covariates", 0)
        self.fc = nn.Linear(2 * n_snps + n_covariates, n_tasks)
        nn.init.zeros_(self.fc.weight)
        nn.init.zeros_(self.fc.bias)
        self.criterion = MultiTaskBCE(n_tasks, learn_weights=task_weighting)

    def forward(self, dosages: torch.Tensor, covariates: torch.Tensor | None = None) -> torch.Tensor:
        d = check_dosages(dosages, self.n_snps)
        covariates = _check_covariates(covariates, d.shape[0], self.n_covariates)
        dtype = self.fc.weight.dtype
        feats = [(d == MISSING).to(dtype), d.clamp(min=0).to(dtype)]
        if covariates is not None:
            feats.append(covariates.to(dtype))
        return self.fc(torch.cat(feats, dim=1))
