"""EVA initialisation of the LoRA layers of a PEFT model (EVA steps 1-6).

:func:`eva_state_dict` streams batches through the frozen model, runs an incremental PCA of every
target layer's input, stops each layer once its allocated components are stable and redistributes the
rank budget; :func:`load_eva_state_dict` writes the components into ``lora_A``, zeros ``lora_B``,
rescales alpha, removes rank-0 adapters and records ``rank_pattern`` / ``alpha_pattern`` so the adapter
saves and reloads; :func:`eva_init` does both.
"""

from __future__ import annotations

import copy
import dataclasses
import numbers
import re
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping

import torch
from torch import nn

from neurips25.eva.activations import InputRecorder, adapters_disabled, find_equal_inputs, token_mask
from neurips25.eva.incremental_pca import IncrementalPCA
from neurips25.eva.rank import rank_distribution
from neurips25.extras import require

_PEFT_PREFIX = "base_model.model."


@dataclasses.dataclass
class EvaStatistics:
    """What the EVA data pass found, per layer (for reports and plots).

    Attributes
    ----------
    ranks : dict of str to int
        Rank given to each layer by the redistribution (``r_i``).
    max_components : dict of str to int
        Components computed per layer (``round(rho * r)``).
    explained_variance_ratio : dict of str to Tensor, shape (max_components,)
        ``lambda_{i,j}``, share of layer ``i``'s input variance along its ``j``-th direction.
    converged : dict of str to bool
        Whether the layer's allocated components were stable (cosine >= tau) when the pass ended.
    groups : dict of str to str
        Layers sharing another layer's input: ``{member: representative}``.
    n_batches : int
        Batches forwarded for the decomposition.
    budget : int
        Total rank budget ``R``.
    converged_per_batch : list of int
        Number of layer groups marked converged after each batch.
    singular_values : dict of str to Tensor, shape (max_components,)
        ``sigma_{i,j}`` of the centred input matrix (used by whitening).
    """

    ranks: dict[str, int]
    max_components: dict[str, int]
    explained_variance_ratio: dict[str, torch.Tensor]
    converged: dict[str, bool]
    groups: dict[str, str]
    n_batches: int
    budget: int
    converged_per_batch: list[int]
    singular_values: dict[str, torch.Tensor] = dataclasses.field(default_factory=dict)

    def captured_ratio(self) -> dict[str, float]:
        """Share of each layer's input variance captured by its allocated rank: ``sum_{j<=r_i} lambda_ij``."""
        return {n: float(self.explained_variance_ratio[n][: r].sum()) for n, r in self.ranks.items()}


def _check_positive_int(value, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"`{name}` must be a positive int, got {value!r}")


def _validate(rank, rho, tau, max_batches) -> None:
    if rank is not None:
        _check_positive_int(rank, "rank")
    if not isinstance(rho, numbers.Real) or not rho >= 1:
        raise ValueError(f"`rho` must be a number >= 1, got {rho!r}")
    if not isinstance(tau, numbers.Real) or not 0 < tau <= 1:
        raise ValueError(f"`tau` must be in (0, 1], got {tau!r}")
    if max_batches is not None:
        _check_positive_int(max_batches, "max_batches")


def lora_layers(model: nn.Module, adapter_name: str = "default", target_modules=None) -> dict[str, nn.Module]:
    """The LoRA-wrapped ``Linear`` / ``Conv1D`` layers of ``model`` that EVA initialises, by name.

    Parameters
    ----------
    target_modules : str, list of str or None
        None: every LoRA layer. A str: regular expression matched in full against the module name. A
        list: names, or name suffixes after a ``.`` (``["query", "value"]``).
    """
    lora = require("peft.tuners.lora", "lm")
    conv1d = require("transformers.pytorch_utils", "lm").Conv1D
    found = {}
    for name, module in model.named_modules():
        if not isinstance(module, lora.LoraLayer) or adapter_name not in getattr(module, "lora_A", {}):
            continue
        if not isinstance(module.get_base_layer(), (nn.Linear, conv1d)):
            continue  # embeddings / convolutions keep their own initialisation, as in PEFT
        found[name] = module
    if not found:
        raise ValueError(f"`model` has no LoRA Linear layers for adapter {adapter_name!r}; "
                         "wrap it with peft.get_peft_model(model, LoraConfig(...)) first")
    if target_modules is None:
        return found
    if isinstance(target_modules, str):
        pattern = re.compile(target_modules)
        keep = {n: m for n, m in found.items() if pattern.fullmatch(n.removeprefix(_PEFT_PREFIX))}
    elif isinstance(target_modules, Iterable):
        targets = list(target_modules)
        keep = {n: m for n, m in found.items() if any(n == t or n.endswith("." + t) for t in targets)}
    else:
        raise TypeError(f"`target_modules` must be a str, a list of str or None, got {type(target_modules)}")
    if not keep:
        raise ValueError(f"`target_modules`={target_modules!r} matches none of the LoRA layers "
                         f"(e.g. {list(found)[:3]})")
    return keep


def _batches(dataloader) -> Iterator:
    """Cycle over the dataloader (re-iterating it, so a shuffling loader reshuffles every epoch).

    A one-shot iterable (a generator, ``iter(loader)``: ``iter(x) is x``) cannot be re-iterated: its batches
    are kept from the first pass and replayed, as PEFT's ``itertools.cycle`` does.
    """
    if iter(dataloader) is dataloader:
        cache = []
        for batch in dataloader:
            cache.append(batch)
            yield batch
        if not cache:
            raise ValueError("`dataloader` is empty (a one-shot iterator that was already consumed?)")
        while True:
            yield from cache
    while True:
        empty = True
        for batch in dataloader:
            empty = False
            yield batch
        if empty:
            raise ValueError("`dataloader` is empty")


def _default_forward(model, batch):
    return model(**batch) if isinstance(batch, Mapping) else model(batch)


@torch.no_grad()
def eva_state_dict(
    model: nn.Module,
    dataloader: Iterable,
    *,
    rank: int | None = None,
    rho: float = 2.0,
    tau: float = 0.99,
    target_modules=None,
    use_label_mask: bool = True,
    label_mask_value: int = -100,
    whiten: bool = False,
    max_batches: int | None = None,
    svd: str = "lowrank",
    lowrank_seed: int = 42,
    forward_fn: Callable | None = None,
    adapter_name: str = "default",
    progress: bool = True,
) -> tuple[dict[str, torch.Tensor], EvaStatistics]:
    """Compute EVA's ``A`` matrices and rank allocation without changing the model.

    Parameters
    ----------
    model : PeftModel or LoraModel
        Model whose LoRA layers are to be initialised; its adapters are disabled during the pass.
    dataloader : iterable of dict
        Batches accepted by ``forward_fn`` (default ``model(**batch)``); ``attention_mask`` and per-token
        ``labels`` select the tokens (see :func:`neurips25.eva.activations.token_mask`).
    rank : int, optional
        Uniform rank ``r``; default: each layer's current LoRA rank. Budget ``R = sum_i r_i``.
    rho : float, default=2.0
        ``rho >= 1``: each layer computes ``round(rho r)`` components and may receive up to that rank.
    tau : float, default=0.99
        Cosine similarity between consecutive batches above which a component has converged.
    target_modules : see :func:`lora_layers`
    use_label_mask, label_mask_value : drop tokens whose per-token label equals the mask value.
    whiten : bool, default=False
        Divide each row of ``A`` by ``sqrt(sigma_j)``.
    max_batches : int, optional
        Stop after this many batches even if some layers have not converged (they keep their current
        estimate and a warning names them). PEFT has no such cap.
    svd : {"lowrank", "full"}, default="lowrank"
        PEFT's randomised ``svd_lowrank(q=2k, niter=4)`` seeded by ``lowrank_seed`` (fast, and the same
        procedure as the reference), or the exact SVD of every incremental update (about 2x slower here).
    forward_fn : callable(model, batch), optional
    progress : bool
        Print one line per 10 batches while not everything has converged.

    Returns
    -------
    state : dict of str to Tensor, shape (r_i, d_in)
        ``A_i``: the top ``r_i`` principal directions of layer ``i``'s centred input (rank 0 -> shape (0, d_in)).
        Same keys and shapes as ``peft.get_eva_state_dict``.
    statistics : EvaStatistics

    Examples
    --------
    >>> import torch, transformers, peft
    >>> base = transformers.BertModel(transformers.BertConfig(vocab_size=50, hidden_size=32,
    ...     num_hidden_layers=1, num_attention_heads=2, intermediate_size=32))
    >>> model = peft.get_peft_model(base, peft.LoraConfig(r=2, target_modules=["query", "value"]))
    >>> batches = [{"input_ids": torch.randint(0, 50, (4, 8))} for _ in range(5)]
    >>> state, stats = eva_state_dict(model, batches, rho=1.0, tau=0.5, progress=False)
    >>> sorted(v.shape[0] for v in state.values())
    [2, 2]
    """
    _validate(rank, rho, tau, max_batches)
    layers = lora_layers(model, adapter_name, target_modules)
    if hasattr(dataloader, "__len__") and len(dataloader) == 0:
        raise ValueError("`dataloader` is empty")
    ranks = {n: rank if rank is not None else int(m.r[adapter_name]) for n, m in layers.items()}
    budget = sum(ranks.values())
    forward = forward_fn or _default_forward

    training = model.training
    model.eval()
    try:
        with adapters_disabled(model), InputRecorder(layers) as rec:
            batches = _batches(dataloader)
            first = next(batches)
            rec.mask = token_mask(first, use_label_mask, label_mask_value)
            forward(model, first)
            # step 7 of the notes: one decomposition per distinct input (q/k/v of a block share theirs)
            groups = find_equal_inputs(rec.inputs)
            rep_of = {n: groups.get(n, n) for n in layers}
            reps = [n for n in layers if n not in groups]
            max_comp = {}
            for n in layers:
                k = round(ranks[n] * rho)
                d_in = rec.inputs[n].shape[1]
                if k > d_in:
                    warnings.warn(f"layer {n}: round(rho*r)={k} exceeds its input dimension {d_in}; "
                                  f"clamped to {d_in}", stacklevel=2)
                max_comp[n] = min(k, d_in)
            for n, rep in groups.items():  # a group computes as many components as its largest member needs
                max_comp[rep] = max_comp[n] = max(max_comp[rep], max_comp[n])
            for n, rep in groups.items():
                max_comp[n] = max_comp[rep]
            pcas = {r: IncrementalPCA(max_comp[r], svd=svd, lowrank_seed=lowrank_seed) for r in reps}
            converged = {r: torch.zeros(max_comp[r], dtype=torch.bool) for r in reps}
            done = dict.fromkeys(reps, False)
            rank_dist = dict(max_comp)
            history: list[int] = []
            max_rows: dict[str, int] = {}  # most input rows any batch gave a group (for the error below)

            def fold(inputs: Mapping[str, torch.Tensor]) -> None:
                nonlocal rank_dist
                for r in reps:
                    if done[r] or r not in inputs:
                        continue
                    x = inputs[r]
                    max_rows[r] = max(max_rows.get(r, 0), x.shape[0])
                    if x.shape[0] < max_comp[r]:
                        continue  # too few unmasked tokens in this batch for k components
                    if not torch.isfinite(x).all():
                        raise ValueError(f"layer {r}: its input activations contain NaN or inf (check the "
                                         "model's weights and the batch); EVA needs finite activations")
                    prev = pcas[r].components_
                    pcas[r].partial_fit(x)
                    if prev is not None:
                        converged[r] = nn.functional.cosine_similarity(pcas[r].components_, prev, dim=1) >= tau
                if all(p.fitted for p in pcas.values()):
                    # step 4: pooled explained-variance ratios -> ranks, every batch
                    evr = {n: pcas[rep_of[n]].explained_variance_ratio_[: max_comp[n]] for n in layers}
                    rank_dist = rank_distribution(evr, budget, groups)

            fold(rec.inputs)
            rec.active = set(reps)
            n_batches = 1
            while True:
                # step 3: a layer stops once the components of its CURRENT allocation are stable
                for r in reps:
                    ok = bool(converged[r][: rank_dist[r]].all())
                    if ok and not done[r]:
                        done[r] = True
                        rec.active.discard(r)
                    elif done[r] and not ok:
                        done[r] = False
                        rec.active.add(r)
                history.append(sum(done.values()))
                if all(done.values()) or (max_batches is not None and n_batches >= max_batches):
                    break
                batch = next(batches)
                rec.mask = token_mask(batch, use_label_mask, label_mask_value)
                rec.inputs = {}
                forward(model, batch)
                fold(rec.inputs)
                n_batches += 1
                if progress and n_batches % 10 == 0:
                    print(f"eva: batch {n_batches}, {sum(done.values())}/{len(reps)} layer groups converged")
    finally:
        model.train(training)

    not_fitted = [r for r in reps if not pcas[r].fitted]
    if not_fitted:
        detail = ", ".join(f"{r}: at most {max_rows.get(r, 0)} rows, needs {max_comp[r]}" for r in not_fitted[:4])
        raise ValueError(f"no batch gave enough input rows for {len(not_fitted)} layer group(s) ({detail}); a "
                         "batch must give a layer at least round(rho * r) rows (clamped to its input width): "
                         "unmasked tokens for per-token layers (check attention_mask / labels), one row per "
                         "sequence for per-sequence layers such as a pooler (use larger batches); or lower "
                         "rank * rho")
    unconverged = [r for r in reps if not done[r]]
    if unconverged:
        warnings.warn(f"EVA stopped after max_batches={max_batches} with {len(unconverged)} layer groups "
                      f"not converged (tau={tau}): {unconverged[:4]}", stacklevel=2)
    state = {}
    for n in layers:
        p = pcas[rep_of[n]]
        a = p.components_[: rank_dist[n]].clone()
        if whiten:
            a = a / p.singular_values_[: rank_dist[n]].sqrt()[:, None]
        weight = layers[n].lora_A[adapter_name].weight
        state[n] = a.to(dtype=weight.dtype, device=weight.device)
    stats = EvaStatistics(
        ranks=dict(rank_dist),
        max_components=max_comp,
        explained_variance_ratio={n: pcas[rep_of[n]].explained_variance_ratio_.float().clone() for n in layers},
        converged={n: done[rep_of[n]] for n in layers},
        groups=groups,
        n_batches=n_batches,
        budget=budget,
        converged_per_batch=history,
        singular_values={n: pcas[rep_of[n]].singular_values_.float().clone() for n in layers},
    )
    return state, stats


@torch.no_grad()
def load_eva_state_dict(
    model: nn.Module,
    state: Mapping[str, torch.Tensor],
    *,
    rank: int | None = None,
    adjust_scaling_factors: bool = True,
    adapter_name: str = "default",
) -> dict[str, int]:
    """Write EVA components into the LoRA layers and update the adapter config (EVA steps 5-6).

    ``lora_A <- A_i`` (resized to ``r_i`` when needed), ``lora_B <- 0`` so the model's output is
    unchanged; with ``adjust_scaling_factors`` the layer's alpha becomes ``alpha * r_i / r`` so that
    ``alpha_i / r_i = alpha / r``; rank-0 layers are replaced by their base layer. ``rank_pattern``,
    ``alpha_pattern`` and ``target_modules`` of ``model.peft_config[adapter_name]`` are rewritten so
    ``save_pretrained`` / ``PeftModel.from_pretrained`` rebuild the same shapes.

    Parameters
    ----------
    state : dict of str to Tensor, shape (r_i, d_in)
        From :func:`eva_state_dict` (or ``peft.get_eva_state_dict``); keys are module names of ``model``.
    rank : int, optional
        The uniform ``r`` the budget was computed with; default the config's ``r``.

    Returns
    -------
    dict of str to int
        Rank per initialised layer (keys without the ``base_model.model.`` prefix).
    """
    if not hasattr(model, "peft_config"):
        raise TypeError("`model` must be a PEFT model (PeftModel or LoraModel) with a `peft_config`")
    if adapter_name not in model.peft_config:
        raise ValueError(f"`adapter_name`={adapter_name!r} not in the model's adapters {list(model.peft_config)}")
    all_layers = lora_layers(model, adapter_name)
    missing = [n for n in state if n not in all_layers]
    if missing:
        raise ValueError(f"`state` names layers that are not LoRA layers of `model`: {missing[:3]}")
    bad = [n for n, a in state.items() if not torch.is_tensor(a) or not torch.isfinite(a).all()]
    if bad:
        raise ValueError(f"`state` holds non-finite (or non-tensor) A matrices for {bad[:3]}")
    config = model.peft_config[adapter_name]
    r_ref = rank if rank is not None else config.r
    eva_config = copy.copy(config)
    eva_config.init_lora_weights = "eva"  # update_layer then zeros lora_B and leaves A to us
    rank_pattern, alpha_pattern, kept, ranks = {}, {}, [], {}
    for name, module in all_layers.items():
        short = name.removeprefix(_PEFT_PREFIX)
        alpha = module.lora_alpha[adapter_name]
        r_old = module.r[adapter_name]
        if name not in state:
            kept.append(short)
            if r_old != r_ref:
                rank_pattern[short] = r_old
            if alpha != config.lora_alpha:
                alpha_pattern[short] = alpha
            continue
        a = state[name]
        r_new = int(a.shape[0])
        ranks[short] = r_new
        if r_new == 0:
            parent_name, _, child = name.rpartition(".")
            setattr(model.get_submodule(parent_name), child, module.get_base_layer())
            continue
        if adjust_scaling_factors and r_new != r_ref:
            alpha = alpha * r_new / r_ref
        if r_new != r_old or alpha != module.lora_alpha[adapter_name]:
            module.update_layer(adapter_name=adapter_name, r=r_new, lora_alpha=alpha, config=eva_config)
        weight = module.lora_A[adapter_name].weight
        if tuple(weight.shape) != tuple(a.shape):
            raise ValueError(f"`state[{name!r}]` has shape {tuple(a.shape)}, expected (r, {weight.shape[1]})")
        weight.copy_(a.to(weight.dtype))
        module.lora_B[adapter_name].weight.zero_()
        kept.append(short)
        if r_new != r_ref:
            rank_pattern[short] = r_new
        if alpha != config.lora_alpha:
            alpha_pattern[short] = alpha
    config.r = r_ref
    config.rank_pattern = rank_pattern
    config.alpha_pattern = alpha_pattern
    config.target_modules = set(kept)
    return ranks


def eva_init(
    model: nn.Module,
    dataloader: Iterable,
    *,
    rank: int | None = None,
    rho: float = 2.0,
    tau: float = 0.99,
    target_modules=None,
    use_label_mask: bool = True,
    label_mask_value: int = -100,
    whiten: bool = False,
    adjust_scaling_factors: bool = True,
    max_batches: int | None = None,
    svd: str = "lowrank",
    forward_fn: Callable | None = None,
    adapter_name: str = "default",
    progress: bool = True,
) -> dict[str, int]:
    """Initialise a PEFT LoRA model with EVA, in place; return the rank per layer.

    :func:`eva_state_dict` followed by :func:`load_eva_state_dict`; the parameters are theirs.

    Examples
    --------
    >>> import torch, transformers, peft
    >>> base = transformers.BertModel(transformers.BertConfig(vocab_size=50, hidden_size=32,
    ...     num_hidden_layers=2, num_attention_heads=2, intermediate_size=32))
    >>> model = peft.get_peft_model(base, peft.LoraConfig(r=2, target_modules=["query", "dense"]))
    >>> batches = [{"input_ids": torch.randint(0, 50, (4, 8))} for _ in range(6)]
    >>> ranks = eva_init(model, batches, rho=2.0, tau=0.5, max_batches=20, progress=False)
    >>> sum(ranks.values()) == 2 * len(ranks)
    True
    """
    state, _ = eva_state_dict(
        model, dataloader, rank=rank, rho=rho, tau=tau, target_modules=target_modules,
        use_label_mask=use_label_mask, label_mask_value=label_mask_value, whiten=whiten,
        max_batches=max_batches, svd=svd, forward_fn=forward_fn, adapter_name=adapter_name, progress=progress,
    )
    return load_eva_state_dict(model, state, rank=rank, adjust_scaling_factors=adjust_scaling_factors,
                               adapter_name=adapter_name)
