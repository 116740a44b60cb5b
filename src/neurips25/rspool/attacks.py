"""Evasion attacks on graph classifiers, batched over graphs: PGD on the structure, random flips,
a genetic attack, a feature PGD (a project addition), and PyG's PRBCD as an independent attacker.

Every structure attack flips at most ``budget = floor(budget_frac * |E_g|) + 1`` node pairs of
graph ``g`` (a per-graph budget, 30% of the graph's own edges in the paper), never a self loop and
never a pair involving padding. The dense attacks take a model ``model(x [B, N, F], adj [B, N, N],
mask [B, N]) -> logits [B, C]`` (e.g. :class:`~neurips25.rspool.DenseGCN`) and treat the graphs of a
batch independently: the loss is a sum of per-graph losses, so each graph's gradient is its own.
Attack only graphs the model classifies correctly (the paper's protocol); ``success`` then means
"the attack changed a correct prediction".

Sources: the PGD topology attack of Xu et al. (IJCAI 2019) as used in the official RS-Pool code
(``src/attacks/topological_attacks.py``: CE loss, step ``200 / sqrt(t + 1)``, projection by
bisection, 20 Bernoulli samples); the genetic attack of Dai et al. (ICML 2018); random flips.
"""

from __future__ import annotations

import dataclasses
import math
import numbers

import torch
import torch.nn.functional as F
from torch import Tensor, nn

__all__ = [
    "AttackResult",
    "edge_budget",
    "flip_edges",
    "pgd_structure_attack",
    "random_flip_attack",
    "genetic_attack",
    "pgd_feature_attack",
    "prbcd_attack",
]


@dataclasses.dataclass
class AttackResult:
    """Outcome of an attack on a batch of ``B`` graphs.

    Attributes
    ----------
    success : BoolTensor ``[B]``
        The perturbed graph is misclassified.
    flips : LongTensor ``[B]``
        Node pairs flipped (features perturbed, for the feature attack: 0).
    budget : LongTensor ``[B]``
        The per-graph budget the attack had.
    adj : Tensor ``[B, N, N]`` or None
        The perturbed adjacency (``None`` where the attack does not return one).
    """

    success: Tensor
    flips: Tensor
    budget: Tensor
    adj: Tensor | None = None


def _describe(t) -> str:
    return str(tuple(t.shape)) if isinstance(t, Tensor) else type(t).__name__


def _check_batch(x: Tensor, adj: Tensor, y: Tensor, mask: Tensor | None, owner: str) -> Tensor:
    for name, t in (("x", x), ("adj", adj), ("y", y), ("mask", mask)):
        if t is not None and not isinstance(t, Tensor):
            raise TypeError(f"{owner}: `{name}` must be a torch.Tensor, got {type(t).__name__}")
    if adj.dim() != 3 or adj.size(1) != adj.size(2):
        raise ValueError(f"{owner}: `adj` must be a tensor [B, N, N], got {_describe(adj)}")
    B, N = adj.shape[:2]
    if x.dim() != 3 or x.shape[:2] != (B, N):
        raise ValueError(f"{owner}: `x` must be a tensor [B, N, F] = [{B}, {N}, F], got {_describe(x)}")
    if not torch.is_floating_point(x) or not torch.is_floating_point(adj):
        raise TypeError(f"{owner}: `x` and `adj` must be floating-point, got {x.dtype} and {adj.dtype}")
    if not bool(torch.isfinite(x).all()):
        raise ValueError(f"{owner}: `x` contains NaN or infinite values")
    if y.shape != (B,):
        raise ValueError(f"{owner}: `y` must be a tensor [B] = [{B}], got {_describe(y)}")
    if torch.is_floating_point(y) or y.dtype == torch.bool or y.is_complex():
        raise TypeError(f"{owner}: `y` must hold integer class labels, got dtype {y.dtype}")
    if B and int(y.min()) < 0:
        raise ValueError(f"{owner}: `y` must be class labels >= 0, got min {int(y.min())}")
    if mask is None:
        mask = torch.ones(B, N, dtype=torch.bool, device=adj.device)
    elif mask.shape != (B, N):
        raise ValueError(f"{owner}: `mask` must be a tensor [B, N] = [{B}, {N}], got {_describe(mask)}")
    if bool(((adj != 0) & (adj != 1)).any()) or not torch.equal(adj, adj.transpose(1, 2)):
        raise ValueError(f"{owner}: `adj` must be a symmetric 0/1 adjacency")
    if bool(adj.diagonal(dim1=1, dim2=2).any()):
        raise ValueError(f"{owner}: `adj` has self loops (nonzero diagonal); pass the adjacency without "
                         "them (the GCN adds I itself, and a self loop would count in the edge budget)")
    mask = mask.bool()
    if bool((adj.bool() & ~(mask.unsqueeze(1) & mask.unsqueeze(2))).any()):
        raise ValueError(f"{owner}: `adj` has edges on padding nodes (where `mask` is False)")
    return mask


def _check_labels(model: nn.Module, x: Tensor, adj: Tensor, y: Tensor, mask: Tensor, owner: str) -> None:
    """``y < num_classes``, from one forward on the first graph (a model does not say its classes)."""
    if x.size(0) == 0:
        return
    with torch.no_grad():
        c = model(x[:1], adj[:1], mask[:1]).size(-1)
    if int(y.max()) >= c:
        raise ValueError(f"{owner}: `y` must be class labels in [0, {c}) for this model, got max {int(y.max())}")


def _check_int(owner: str, **values) -> None:
    for name, (val, low) in values.items():
        if isinstance(val, bool) or not isinstance(val, numbers.Integral) or val < low:
            raise ValueError(f"{owner}: `{name}` must be an int >= {low}, got {val!r}")


def _check_frac(budget_frac: float, owner: str) -> None:
    if not isinstance(budget_frac, numbers.Real) or not 0 <= budget_frac <= 1:
        raise ValueError(f"{owner}: `budget_frac` must be in [0, 1], got {budget_frac!r}")


def edge_budget(adj: Tensor, budget_frac: float) -> Tensor:
    """Per-graph flip budget ``floor(budget_frac * |E_g|) + 1`` as in the official script, ``[B]``."""
    edges = torch.div(adj.sum((1, 2)), 2, rounding_mode="floor")
    return torch.floor(edges * budget_frac + 1e-9).long() + 1


def _valid_pairs(mask: Tensor) -> Tensor:
    """Upper-triangle pairs of real nodes, ``[B, N, N]`` bool (what an attack may flip)."""
    N = mask.size(1)
    triu = torch.ones(N, N, dtype=torch.bool, device=mask.device).triu(1)
    return mask.unsqueeze(2) & mask.unsqueeze(1) & triu


def flip_edges(adj: Tensor, s: Tensor) -> Tensor:
    """``A + (1 - 2A) * (S + S^T)``: flip the upper-triangle pairs weighted by ``s`` in [0, 1].

    With binary ``s`` this is the perturbed graph; with relaxed ``s`` it is differentiable in ``s``.
    """
    sym = s.triu(1)
    sym = sym + sym.transpose(-1, -2)
    return adj + (1 - 2 * adj) * sym


def _loss(logits: Tensor, y: Tensor, kind: str) -> Tensor:
    """Per-graph attack loss ``[B]`` to maximise: cross-entropy, or the CW margin loss."""
    if kind == "ce":
        return F.cross_entropy(logits, y, reduction="none")
    true = logits.gather(1, y[:, None]).squeeze(1)
    other = logits.scatter(1, y[:, None], float("-inf")).amax(1)
    # Carlini-Wagner: -max(z_y - max_{c != y} z_c, 0); flat once the graph is misclassified
    return -(true - other).clamp_min(0.0)


def _project(s: Tensor, budget: Tensor, valid: Tensor, iters: int = 30) -> Tensor:
    """Euclidean projection of each graph's ``s`` onto ``{0 <= s <= 1, sum s <= budget}``.

    Bisection on a shift ``mu`` with ``sum clamp(s - mu, 0, 1) = budget`` (official code), vectorised
    over the batch; graphs already feasible after clipping are only clipped.
    """
    vf = valid.to(s.dtype)
    b = budget.to(s.dtype).view(-1, 1, 1)
    clipped = s.clamp(0, 1) * vf
    over = clipped.sum((1, 2)) > budget.to(s.dtype)
    if not bool(over.any()):
        return clipped
    big = torch.finfo(s.dtype).max
    lo = torch.where(valid, s - 1, torch.full_like(s, big)).amin((1, 2)).view(-1, 1, 1)
    hi = torch.where(valid, s, torch.full_like(s, -big)).amax((1, 2)).view(-1, 1, 1)
    for _ in range(iters):
        mid = (lo + hi) / 2
        too_big = ((s - mid).clamp(0, 1) * vf).sum((1, 2), keepdim=True) > b
        lo = torch.where(too_big, mid, lo)
        hi = torch.where(too_big, hi, mid)
    shifted = (s - hi).clamp(0, 1) * vf  # hi keeps the sum <= budget
    return torch.where(over.view(-1, 1, 1), shifted, clipped)


@torch.no_grad()
def _predict(model: nn.Module, x: Tensor, adj: Tensor, mask: Tensor, chunk: int = 4096) -> Tensor:
    return torch.cat([model(x[i:i + chunk], adj[i:i + chunk], mask[i:i + chunk])
                      for i in range(0, x.size(0), chunk)])


def _repeat(t: Tensor, k: int) -> Tensor:
    """``[B, ...] -> [k * B, ...]``, sample-major (row ``q * B + b`` is graph ``b``)."""
    return t.unsqueeze(0).expand(k, *t.shape).reshape(k * t.size(0), *t.shape[1:])


def pgd_structure_attack(model: nn.Module, x: Tensor, adj: Tensor, y: Tensor, mask: Tensor | None = None,
                         budget_frac: float = 0.3, steps: int = 100, samples: int = 20, loss: str = "ce",
                         step_size: float | None = None, generator: torch.Generator | None = None
                         ) -> AttackResult:
    r"""PGD topology attack (Xu et al. 2019; the paper's main attack), batched over graphs.

    Relaxes the flips to ``s in [0, 1]^{pairs}``, ascends the loss of ``model(x, A + (1 - 2A) * S)``
    with step ``eta / sqrt(t + 1)`` (``eta`` = 200 for CE, 0.1 for CW as in DeepRobust), projects on
    ``{sum s <= budget}`` after each step, then draws ``samples`` Bernoulli(``s``) flip sets and keeps
    the feasible one with the largest loss (the top-``budget`` entries of ``s`` if none is feasible).
    Gradients flow through the whole model, readout included.

    Parameters
    ----------
    model : nn.Module
        ``model(x, adj, mask) -> logits``; put in eval mode here.
    x, adj, y, mask : Tensor
        ``[B, N, F]``, ``[B, N, N]`` 0/1 symmetric, ``[B]``, ``[B, N]`` bool (optional).
    budget_frac : float, default=0.3
        Budget as a fraction of each graph's edges.
    steps, samples : int
        PGD steps (paper: 100) and final random samples (paper: 20).
    loss : {"ce", "cw"}
        Cross-entropy (paper) or the Carlini-Wagner margin loss.
    step_size : float, optional
        ``eta``; default by loss as above.
    generator : torch.Generator, optional
        Drives the sampling.

    Returns
    -------
    AttackResult
    """
    owner = "pgd_structure_attack"
    mask = _check_batch(x, adj, y, mask, owner)
    _check_frac(budget_frac, owner)
    if loss not in ("ce", "cw"):
        raise ValueError(f"{owner}: `loss` must be 'ce' or 'cw', got {loss!r}")
    _check_int(owner, steps=(steps, 0), samples=(samples, 1))
    if step_size is not None and (not isinstance(step_size, numbers.Real) or not step_size > 0):
        raise ValueError(f"{owner}: `step_size` must be a float > 0, got {step_size!r}")
    eta = step_size if step_size is not None else (200.0 if loss == "ce" else 0.1)
    model.eval()
    _check_labels(model, x, adj, y, mask, owner)
    budget = edge_budget(adj, budget_frac)
    valid = _valid_pairs(mask)
    s = torch.zeros_like(adj)
    for t in range(steps):
        s.requires_grad_(True)
        objective = _loss(model(x, flip_edges(adj, s), mask), y, loss).sum()
        (grad,) = torch.autograd.grad(objective, s)
        with torch.no_grad():
            s = _project(s + eta / math.sqrt(t + 1) * grad, budget, valid)
    s = s.detach()
    # random sampling: Bernoulli(s), keep the feasible draw with the largest loss per graph
    B = adj.size(0)
    draws = torch.bernoulli(_repeat(s, samples), generator=generator)  # [S*B, N, N]
    feasible = draws.sum((1, 2)) <= _repeat(budget, samples)
    with torch.no_grad():
        perturbed = flip_edges(_repeat(adj, samples), draws)
        logits = _predict(model, _repeat(x, samples), perturbed, _repeat(mask, samples))
        score = _loss(logits, _repeat(y, samples), loss)
    score = torch.where(feasible, score, torch.full_like(score, float("-inf"))).view(samples, B)
    best = score.argmax(0)
    chosen = draws.view(samples, B, *adj.shape[1:])[best, torch.arange(B)]
    none_ok = torch.isinf(score.amax(0))
    if bool(none_ok.any()):
        chosen[none_ok] = _top_budget(s[none_ok], budget[none_ok], valid[none_ok])
    return _result(model, x, adj, y, mask, chosen, budget)


def _top_budget(scores: Tensor, budget: Tensor, valid: Tensor) -> Tensor:
    """Binary ``[B, N, N]`` with the ``budget_g`` highest valid ``scores`` of each graph set to 1."""
    B, N, _ = scores.shape
    flat = torch.where(valid, scores, torch.full_like(scores, float("-inf"))).view(B, -1)
    rank = flat.argsort(1, descending=True).argsort(1)
    keep = (rank < budget.view(-1, 1)) & valid.view(B, -1)
    return keep.view(B, N, N).to(scores.dtype)


def _result(model, x, adj, y, mask, chosen, budget) -> AttackResult:
    perturbed = flip_edges(adj, chosen)
    pred = _predict(model, x, perturbed, mask).argmax(-1)
    return AttackResult(success=pred != y, flips=chosen.triu(1).sum((1, 2)).long(), budget=budget,
                        adj=perturbed)


def random_flip_attack(model: nn.Module, x: Tensor, adj: Tensor, y: Tensor, mask: Tensor | None = None,
                       budget_frac: float = 0.3, queries: int = 20, mode: str = "flip",
                       generator: torch.Generator | None = None) -> AttackResult:
    """Black-box random attack: ``queries`` random sets of exactly ``budget`` flips per graph.

    ``mode`` "flip" draws any node pairs, "add" only non-edges, "remove" only edges (capped at the
    number available). Succeeds on a graph if any query is misclassified; ``adj`` is the first
    successful query (the last one otherwise).
    """
    owner = "random_flip_attack"
    mask = _check_batch(x, adj, y, mask, owner)
    _check_frac(budget_frac, owner)
    if mode not in ("flip", "add", "remove"):
        raise ValueError(f"{owner}: `mode` must be 'flip', 'add' or 'remove', got {mode!r}")
    _check_int(owner, queries=(queries, 1))
    model.eval()
    _check_labels(model, x, adj, y, mask, owner)
    B = adj.size(0)
    budget = edge_budget(adj, budget_frac)
    valid = _valid_pairs(mask)
    if mode == "add":
        valid = valid & (adj == 0)
    elif mode == "remove":
        valid = valid & (adj == 1)
    keys = torch.rand((queries * B, *adj.shape[1:]), generator=generator)
    chosen = _top_budget(keys, _repeat(budget, queries), _repeat(valid, queries))
    perturbed = flip_edges(_repeat(adj, queries), chosen)
    pred = _predict(model, _repeat(x, queries), perturbed, _repeat(mask, queries))
    wrong = (pred.argmax(-1) != _repeat(y, queries)).view(queries, B)
    first = torch.where(wrong.any(0), wrong.float().argmax(0), torch.full((B,), queries - 1))
    pick = chosen.view(queries, B, *adj.shape[1:])[first, torch.arange(B)]
    return _result(model, x, adj, y, mask, pick, budget)


def genetic_attack(model: nn.Module, x: Tensor, adj: Tensor, y: Tensor, mask: Tensor | None = None,
                   budget_frac: float = 0.3, population: int = 100, generations: int = 20,
                   crossover: float = 0.1, mutation: float = 0.2, loss: str = "ce",
                   generator: torch.Generator | None = None) -> AttackResult:
    """Black-box genetic attack (Dai et al. 2018), batched over graphs.

    An individual is a list of ``budget`` node pairs to flip. Each generation keeps the fittest
    (largest loss) individual, draws parents in proportion to their loss, copies each gene from the
    second parent with probability ``crossover`` and redraws it with probability ``mutation``.
    A graph counts as broken as soon as any individual is misclassified (the official code stops
    there). Duplicate pairs in an individual are flipped once, so at most ``budget`` flips.
    (The official code also restricts added edges to one connected component; not done here.)
    """
    owner = "genetic_attack"
    mask = _check_batch(x, adj, y, mask, owner)
    _check_frac(budget_frac, owner)
    _check_int(owner, population=(population, 2), generations=(generations, 1))
    if not (0 <= crossover <= 1 and 0 <= mutation <= 1):
        raise ValueError(f"{owner}: need `crossover` and `mutation` rates in [0, 1]; got {crossover}, {mutation}")
    if loss not in ("ce", "cw"):
        raise ValueError(f"{owner}: `loss` must be 'ce' or 'cw', got {loss!r}")
    model.eval()
    _check_labels(model, x, adj, y, mask, owner)
    B, N = adj.shape[:2]
    P = population
    budget = edge_budget(adj, budget_frac)
    D = int(budget.max())
    n_nodes = mask.sum(1).view(B, 1, 1).float()  # [B, 1, 1]
    # a graph with < 2 real nodes has no pair to flip: its genes stay inactive (never a padding pair)
    active = (torch.arange(D).view(1, 1, D) < budget.view(B, 1, 1)) & (n_nodes >= 2)  # [B, 1, D]

    def random_genes(shape) -> Tensor:  # node pair codes i * N + j, i < j, of real nodes
        i = (torch.rand(shape, generator=generator) * n_nodes).long()
        j = (torch.rand(shape, generator=generator) * (n_nodes - 1)).long()
        j = j + (j >= i).long()
        lo, hi = torch.minimum(i, j), torch.maximum(i, j)
        return torch.where(n_nodes >= 2, lo * N + hi, torch.zeros_like(lo))  # inactive: code 0, weight 0

    def to_flips(genes: Tensor) -> Tensor:  # [B, P, D] -> [B*P, N, N] binary
        s = torch.zeros(B, P, N * N)
        s.scatter_add_(2, genes, active.expand(B, P, D).float())
        return s.clamp_max(1.0).view(B * P, N, N)

    xr = x.unsqueeze(1).expand(B, P, *x.shape[1:]).reshape(B * P, *x.shape[1:])
    ar = adj.unsqueeze(1).expand(B, P, N, N).reshape(B * P, N, N)
    mr = mask.unsqueeze(1).expand(B, P, N).reshape(B * P, N)
    yr = y.unsqueeze(1).expand(B, P).reshape(B * P)
    genes = random_genes((B, P, D))
    broken = torch.zeros(B, dtype=torch.bool)
    best_flips = torch.zeros(B, N, N)
    for _ in range(generations):
        flips = to_flips(genes)
        logits = _predict(model, xr, flip_edges(ar, flips), mr)
        fit = _loss(logits, yr, loss).view(B, P)
        wrong = (logits.argmax(-1) != yr).view(B, P)
        elite = fit.argmax(1)
        newly = wrong.any(1) & ~broken
        if bool(newly.any()):
            first = wrong.float().argmax(1)
            best_flips[newly] = flips.view(B, P, N, N)[newly, first[newly]]
        broken |= wrong.any(1)
        if bool(broken.all()):
            break
        # fitness-proportional selection of two parents per child
        weights = (fit - fit.amin(1, keepdim=True)) + 1e-6
        parents = torch.multinomial(weights, 2 * P, replacement=True, generator=generator).view(B, P, 2)
        g1 = genes.gather(1, parents[..., 0:1].expand(B, P, D))
        g2 = genes.gather(1, parents[..., 1:2].expand(B, P, D))
        child = torch.where(torch.rand((B, P, D), generator=generator) < crossover, g2, g1)
        mutate = torch.rand((B, P, D), generator=generator) < mutation
        child = torch.where(mutate, random_genes((B, P, D)), child)
        child[:, 0] = genes[torch.arange(B), elite]  # elitism
        genes = child
    still = ~broken
    if bool(still.any()):
        best_flips[still] = to_flips(genes).view(B, P, N, N)[still, 0]
    return _result(model, x, adj, y, mask, best_flips, budget)


def pgd_feature_attack(model: nn.Module, x: Tensor, adj: Tensor, y: Tensor, mask: Tensor | None = None,
                       epsilon: float = 0.1, steps: int = 50, step_size: float | None = None) -> AttackResult:
    """l_inf PGD on node features (project addition: the paper's code attacks structure only).

    ``x' = x + delta``, ``|delta| <= epsilon`` entrywise on real nodes, signed-gradient ascent on the
    cross-entropy with step ``step_size`` (default ``2.5 * epsilon / steps``). ``AttackResult.adj`` is
    the unchanged adjacency; ``flips`` counts 0.
    """
    owner = "pgd_feature_attack"
    mask = _check_batch(x, adj, y, mask, owner)
    if not isinstance(epsilon, numbers.Real) or not epsilon >= 0:
        raise ValueError(f"{owner}: `epsilon` must be a float >= 0, got {epsilon!r}")
    _check_int(owner, steps=(steps, 0))
    alpha = step_size if step_size is not None else 2.5 * epsilon / max(steps, 1)
    model.eval()
    _check_labels(model, x, adj, y, mask, owner)
    m = mask.unsqueeze(-1).to(x.dtype)
    delta = torch.zeros_like(x)
    for _ in range(steps):
        delta.requires_grad_(True)
        objective = _loss(model(x + delta * m, adj, mask), y, "ce").sum()
        (grad,) = torch.autograd.grad(objective, delta)
        with torch.no_grad():
            delta = (delta + alpha * grad.sign()).clamp(-epsilon, epsilon)
    pred = _predict(model, x + delta.detach() * m, adj, mask).argmax(-1)
    B = adj.size(0)
    return AttackResult(success=pred != y, flips=torch.zeros(B, dtype=torch.long),
                        budget=torch.zeros(B, dtype=torch.long), adj=adj)


class _EdgeWeightForward(nn.Module):
    """Adapts ``GCN.forward(x, edge_index, batch, edge_weight)`` to PRBCD's call signature."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, x: Tensor, edge_index: Tensor, edge_weight: Tensor | None = None) -> Tensor:
        return self.model(x, edge_index, None, edge_weight)


def prbcd_attack(model: nn.Module, x: Tensor, edge_index: Tensor, y: int, budget: int, epochs: int = 125,
                 loss: str = "prob_margin", seed: int = 0) -> tuple[bool, int]:
    """Attack one graph with PyG's independent ``PRBCDAttack`` (Geisler et al. 2021).

    ``model`` is a sparse :class:`~neurips25.rspool.GCN` (differentiable in edge weights); the
    block covers every node pair. Returns ``(success, flips)``.
    """
    from neurips25.extras import require

    contrib = require("torch_geometric.contrib.nn", "graph")
    if budget < 1 or x.size(0) < 2:
        raise ValueError(f"prbcd_attack: need `budget` >= 1 and at least 2 nodes, got {budget}, {x.size(0)}")
    torch.manual_seed(seed)
    wrapped = _EdgeWeightForward(model).eval()
    n = x.size(0)
    pairs = n * (n - 1) // 2
    attack = contrib.PRBCDAttack(wrapped, block_size=max(pairs, budget + 1), epochs=epochs,
                                 epochs_resampling=max(1, int(0.8 * epochs)), loss=loss, log=False)
    label = torch.tensor([int(y)])
    perturbed, flipped = attack.attack(x, edge_index, label, budget)
    with torch.no_grad():
        pred = int(wrapped(x, perturbed).argmax(-1))
    return pred != int(y), int(flipped.size(1))
