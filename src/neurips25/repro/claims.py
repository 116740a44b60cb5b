"""Claims and verdicts.

A :class:`Claim` is one statement of a paper, the criterion that decides it (written down before the
run) and what was measured here. A verdict is one of ``reproduced``, ``not_reproduced`` or
``inconclusive``; it comes only from :meth:`Claim.judge`, which applies the pre-declared criterion's
outcome (a bool, or ``None`` when the measurement could not decide).

Every claim has a :class:`ClaimKind`: ``headline`` (the paper's main empirical claim), ``supporting``
(another empirical claim of the paper) or ``check`` (exactness, identities, unit-level properties).
Summaries count the kinds apart and give the headline verdict first, so a method whose headline failed
never reads as "4/5 reproduced". Each judged claim also carries a one-line human ``summary``: the key
figure against its threshold, e.g. ``"worst risk/LB 180; needs <= 40 (5x below the best baseline's 202)"``.
"""

from __future__ import annotations

import dataclasses
import enum
import math
from typing import Any


class ClaimKind(str, enum.Enum):
    """What a claim is: the paper's main empirical claim, another empirical claim, or a unit-level check."""

    HEADLINE = "headline"
    SUPPORTING = "supporting"
    CHECK = "check"

    def __str__(self) -> str:
        return self.value

    @classmethod
    def parse(cls, value: str | ClaimKind) -> ClaimKind:
        try:
            return cls(value)
        except ValueError:
            names = ", ".join(k.value for k in cls)
            raise ValueError(f"claim kind must be one of {names}; got {value!r}") from None


class Verdict(str, enum.Enum):
    """Outcome of checking a claim."""

    REPRODUCED = "reproduced"
    NOT_REPRODUCED = "not_reproduced"
    INCONCLUSIVE = "inconclusive"
    UNSTABLE = "unstable"  # several seeds disagree (set only when results are combined across seeds)
    PENDING = "pending"  # declared, not yet judged

    def __str__(self) -> str:
        return self.value


def jsonable(value: Any) -> Any:
    """Turn numpy scalars/arrays, tuples and non-finite floats into JSON-safe values."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if hasattr(value, "tolist"):  # numpy scalar / array, torch tensor
        return jsonable(value.tolist())
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


@dataclasses.dataclass
class Claim:
    """One headline claim of a paper and its check here.

    Parameters
    ----------
    id : str
        Short identifier, unique within a method (``"c1"``, ``"robustness"``).
    statement : str
        The claim as the paper makes it (paraphrased, never copied at length).
    criterion : str
        The rule that decides the verdict, fixed before the run (``"ratio <= 32 on every gap"``).
    paper_value : str, optional
        The paper's own figure when it gives one (``"92.85% LACC@10"``).
    measured : Any, optional
        What was measured here; set by :meth:`judge`.
    verdict : Verdict
        Starts as ``PENDING``; set by :meth:`judge`.
    note : str
        Free text: caveats, the scale it ran at, what differs from the paper's setting.
    kind : ClaimKind or str, keyword-only, required
        ``"headline"``, ``"supporting"`` or ``"check"`` (see :class:`ClaimKind`).
    summary : str
        One line a person reads: the key figure against its threshold; set by :meth:`judge`.
    """

    id: str
    statement: str
    criterion: str
    paper_value: str | None = None
    measured: Any = None
    verdict: Verdict = Verdict.PENDING
    note: str = ""
    kind: ClaimKind = dataclasses.field(kw_only=True)
    summary: str = dataclasses.field(default="", kw_only=True)

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise ValueError(f"claim id must be a non-empty string; got {self.id!r}")
        self.kind = ClaimKind.parse(self.kind)
        self.verdict = Verdict(self.verdict)

    def judge(self, passed: bool | None, measured: Any = None, note: str | None = None,
              summary: str | None = None) -> Claim:
        """Record the measurement and the criterion's outcome.

        Parameters
        ----------
        passed : bool or None
            ``True`` -> reproduced, ``False`` -> not reproduced, ``None`` -> inconclusive.
        measured : Any
            Numbers (or a short summary) supporting the verdict; stored as JSON.
        note : str, optional
            Replaces :attr:`note` when given.
        summary : str, optional
            One line: the key figure against its threshold (``"gap +0.031 AUROC; needs >= 0.02"``).
            Without it the report falls back to a short rendering of ``measured``.
        """
        if passed is None:
            self.verdict = Verdict.INCONCLUSIVE
        else:
            self.verdict = Verdict.REPRODUCED if bool(passed) else Verdict.NOT_REPRODUCED
        self.measured = jsonable(measured)
        if note is not None:
            self.note = note
        if summary is not None:
            if not isinstance(summary, str):
                raise TypeError(f"summary must be a str; got {type(summary).__name__}")
            self.summary = " ".join(summary.split())
        return self

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["verdict"] = self.verdict.value
        d["kind"] = self.kind.value
        d["measured"] = jsonable(self.measured)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> Claim:
        """Rebuild a claim from :meth:`to_dict`; results written before kinds existed read as supporting."""
        d = dict(d)
        d["verdict"] = Verdict(d.get("verdict", "pending"))
        d.setdefault("kind", ClaimKind.SUPPORTING)
        return cls(**{f.name: d[f.name] for f in dataclasses.fields(cls) if f.name in d})


@dataclasses.dataclass
class Outcome:
    """What a reproduction's ``run`` returns: its claims, raw numbers and notes.

    Figures are the PNG files the run wrote to ``out / "figures"``; the runner collects them.
    """

    claims: list[Claim]
    metrics: dict = dataclasses.field(default_factory=dict)
    notes: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.claims, list) or not all(isinstance(c, Claim) for c in self.claims):
            raise TypeError("Outcome.claims must be a list of Claim objects")
        ids = [c.id for c in self.claims]
        if len(set(ids)) != len(ids):
            raise ValueError(f"claim ids must be unique, got {ids}")


def _as_dict(claim: Claim | dict) -> dict:
    return claim.to_dict() if isinstance(claim, Claim) else claim


def headline_verdict(claims: list[Claim | dict]) -> str:
    """The headline claims' verdict: the single verdict, ``"mixed"`` when several disagree, ``"none"``."""
    verdicts = [_as_dict(c)["verdict"] for c in claims if _as_dict(c).get("kind") == ClaimKind.HEADLINE.value]
    if not verdicts:
        return "none"
    return verdicts[0] if len(set(verdicts)) == 1 else "mixed"


def kind_counts(claims: list[Claim | dict]) -> dict[str, tuple[int, int]]:
    """``{kind: (reproduced, total)}`` for each kind present, in the order headline, supporting, check."""
    out: dict[str, tuple[int, int]] = {}
    for kind in ClaimKind:
        mine = [_as_dict(c) for c in claims if _as_dict(c).get("kind", "supporting") == kind.value]
        if mine:
            out[kind.value] = (sum(c["verdict"] == Verdict.REPRODUCED.value for c in mine), len(mine))
    return out


def describe_claims(claims: list[Claim | dict]) -> str:
    """One line, headline first, kinds counted apart: ``"headline: not reproduced; supporting 1/2; checks 2/2"``.

    Results written before claim kinds existed count as supporting.
    """
    if not claims:
        return "no claims"
    parts = [f"headline: {headline_verdict(claims).replace('_', ' ')}"]
    for kind, (ok, n) in kind_counts(claims).items():
        if kind != ClaimKind.HEADLINE.value:
            parts.append(f"{'checks' if kind == 'check' else kind} {ok}/{n}")
    return "; ".join(parts)
