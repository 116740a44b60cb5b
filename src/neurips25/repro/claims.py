"""Claims and verdicts.

A :class:`Claim` is one statement of a paper, the criterion that decides it (written down before the
run) and what was measured here. A verdict is one of ``reproduced``, ``not_reproduced`` or
``inconclusive``; it comes only from :meth:`Claim.judge`, which applies the pre-declared criterion's
outcome (a bool, or ``None`` when the measurement could not decide).
"""

from __future__ import annotations

import dataclasses
import enum
import math
from typing import Any


class Verdict(str, enum.Enum):
    """Outcome of checking a claim."""

    REPRODUCED = "reproduced"
    NOT_REPRODUCED = "not_reproduced"
    INCONCLUSIVE = "inconclusive"
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
    """

    id: str
    statement: str
    criterion: str
    paper_value: str | None = None
    measured: Any = None
    verdict: Verdict = Verdict.PENDING
    note: str = ""

    def judge(self, passed: bool | None, measured: Any = None, note: str | None = None) -> Claim:
        """Record the measurement and the criterion's outcome.

        Parameters
        ----------
        passed : bool or None
            ``True`` -> reproduced, ``False`` -> not reproduced, ``None`` -> inconclusive.
        measured : Any
            Numbers (or a short summary) supporting the verdict; stored as JSON.
        note : str, optional
            Replaces :attr:`note` when given.
        """
        if passed is None:
            self.verdict = Verdict.INCONCLUSIVE
        else:
            self.verdict = Verdict.REPRODUCED if bool(passed) else Verdict.NOT_REPRODUCED
        self.measured = jsonable(measured)
        if note is not None:
            self.note = note
        return self

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["verdict"] = self.verdict.value
        d["measured"] = jsonable(self.measured)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> Claim:
        d = dict(d)
        d["verdict"] = Verdict(d.get("verdict", "pending"))
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
