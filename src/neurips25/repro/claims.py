"""Claims and verdicts (verdicts v3: the machinery judges every claim against its controls).

A :class:`Claim` is one statement of a paper, the :class:`Criterion` that decides it (a function of a
measurement, a dict of figures, written down before the run), and its :class:`Control` s:

- *negative* controls: a trivial, broken or do-nothing method (best-of-data, a constant, the key step
  removed) that must FAIL the same criterion;
- a *positive* control, where the instance allows one: an oracle, a planted effect, a ceiling, something
  that must PASS, showing that the instance can express the claim at all.

A reproduction measures the method and every control and hands the figures to :meth:`Claim.record`;
the machinery (:func:`decide`) applies the one criterion to each and sets the verdict:

- ``reproduced``: the method passes, every negative control fails, the positive control (if any) passes;
- ``not_reproduced``: the method fails and the instance could show the effect (the positive control
  passes, or none is possible and the claim says why in ``no_positive_control``);
- ``inconclusive``, with the reason recorded: a negative control passes too ("vacuous"), the positive
  control fails ("the instance cannot show it"), a precondition does not hold, or a figure could not be
  measured.

No reproduction sets a verdict itself. A headline or supporting claim without a negative control is
refused when it is declared (a ``check``, an identity or exactness property, may have none).

Every claim has a :class:`ClaimKind`: ``headline``, ``supporting`` or ``check``. Summaries count the kinds
apart and give the headline verdict first, so a method whose headline failed never reads as "4/5
reproduced".

Example::

    claim = Claim("c2", "DBCARE is uniformly competitive", kind="headline",
                  criterion=Criterion.at_least("advantage", 5.0, "best baseline's worst ratio / ours >= 5"),
                  controls=[Control.negative("no_elimination", "DBCARE with its elimination step removed")],
                  no_positive_control="no policy is known to reach the bound; the baselines bracket it")
    claim.record({"advantage": 7.1}, controls={"no_elimination": {"advantage": 0.9}},
                 summary="7.1x; needs >= 5x; control 0.9x")

The older form, ``claim.judge(passed)`` with a hand-computed bool, is kept for the methods that have not
migrated yet (``registry.HAND_VERDICTS``); the runner refuses it for every other method.
"""

from __future__ import annotations

import dataclasses
import enum
import math
import numbers
from collections.abc import Callable, Iterable, Mapping
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


def format_number(x) -> str:
    """A figure as a person reads it: 4 significant digits, 3 in scientific form for very large or small."""
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        return str(x)
    if isinstance(x, numbers.Integral):
        return str(int(x))
    x = float(x)
    if not math.isfinite(x):
        return str(x)
    if x != 0 and (abs(x) >= 1e5 or abs(x) < 1e-3):
        return f"{x:.3g}"
    return f"{x:.4g}"


def _finite_number(x: Any) -> float | None:
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def finite_figure(figures: Mapping[str, Any], key: str) -> float | None:
    """``figures[key]`` as a float when it is a finite real number (numpy scalars included), else None.

    The reader every rule uses, so a missing, NaN, boolean or non-numeric figure makes a rule answer None
    (unmeasurable) instead of deciding on it."""
    return _finite_number(figures.get(key))


# ----- criterion, controls, preconditions -------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Criterion:
    """The rule that decides a claim: ``rule(figures) -> True | False | None`` over a dict of figures.

    ``key`` names the figure a person reads first (the report shows it for the method and for every
    control, beside ``threshold``); the rule may read other figures of the same dict. ``None`` means the
    measurement could not decide (a missing or non-finite figure, an interval that straddles the bar).
    The same criterion is applied to the method and to every control: a control's figures carry the same
    keys.
    """

    text: str
    key: str
    rule: Callable[[Mapping[str, Any]], bool | None]
    threshold: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.text, str) or not self.text.strip():
            raise ValueError("Criterion.text must be a non-empty string (the rule in words)")
        if not isinstance(self.key, str) or not self.key:
            raise ValueError("Criterion.key must name the key figure of the measurement")
        if not callable(self.rule):
            raise TypeError(f"Criterion.rule must be callable; got {type(self.rule).__name__}")

    @classmethod
    def at_least(cls, key: str, threshold: float, text: str | None = None, *, strict: bool = False) -> Criterion:
        """``figures[key] >= threshold`` (``>`` when ``strict``); a missing or non-finite figure decides nothing."""
        t = float(threshold)
        op = ">" if strict else ">="

        def rule(m: Mapping[str, Any]) -> bool | None:
            x = _finite_number(m.get(key))
            return None if x is None else (x > t if strict else x >= t)

        return cls(text or f"{key} {op} {t:g}", key, rule, f"{op} {t:g}")

    @classmethod
    def at_most(cls, key: str, threshold: float, text: str | None = None, *, strict: bool = False) -> Criterion:
        """``figures[key] <= threshold`` (``<`` when ``strict``); a missing or non-finite figure decides nothing."""
        t = float(threshold)
        op = "<" if strict else "<="

        def rule(m: Mapping[str, Any]) -> bool | None:
            x = _finite_number(m.get(key))
            return None if x is None else (x < t if strict else x <= t)

        return cls(text or f"{key} {op} {t:g}", key, rule, f"{op} {t:g}")

    @classmethod
    def interval_above(cls, low_key: str, high_key: str, threshold: float, text: str | None = None,
                       *, key: str | None = None) -> Criterion:
        """Decided by an interval: passes when ``low > threshold``, fails when ``high <= threshold``, else None."""
        t = float(threshold)

        def rule(m: Mapping[str, Any]) -> bool | None:
            lo, hi = _finite_number(m.get(low_key)), _finite_number(m.get(high_key))
            if lo is None or hi is None:
                return None
            return True if lo > t else (False if hi <= t else None)

        return cls(text or f"interval [{low_key}, {high_key}] above {t:g}", key or low_key, rule, f"> {t:g}")

    def __call__(self, figures: Mapping[str, Any] | None) -> bool | None:
        if figures is None:
            return None
        out = self.rule(figures)
        if out is None:
            return None
        if not isinstance(out, (bool, numbers.Integral)) and not hasattr(out, "item"):
            raise TypeError(f"criterion {self.text!r} returned {type(out).__name__}; expected bool or None")
        return bool(out)


@dataclasses.dataclass(frozen=True)
class Control:
    """A control run in the same reproduction and judged by the claim's own criterion.

    ``role`` is ``"negative"`` (must fail: a trivial, broken or do-nothing method) or ``"positive"`` (must
    pass: an oracle or planted effect showing the instance can express the claim).
    """

    name: str
    role: str
    description: str

    def __post_init__(self) -> None:
        if self.role not in ("negative", "positive"):
            raise ValueError(f"Control.role must be 'negative' or 'positive'; got {self.role!r}")
        if not isinstance(self.name, str) or not self.name:
            raise ValueError("Control.name must be a non-empty string")
        if not isinstance(self.description, str) or not self.description.strip():
            raise ValueError(f"control {self.name!r}: description must say what the control is")

    @classmethod
    def negative(cls, name: str, description: str) -> Control:
        return cls(name, "negative", description)

    @classmethod
    def positive(cls, name: str, description: str) -> Control:
        return cls(name, "positive", description)


@dataclasses.dataclass(frozen=True)
class Precondition:
    """Something the method's measurement must show before its verdict means anything (else inconclusive).

    Example: "plain SFT's RL gain > 0" before judging whether an augmentation amplifies that gain.
    """

    text: str
    rule: Callable[[Mapping[str, Any]], bool | None]

    def __post_init__(self) -> None:
        if not callable(self.rule):
            raise TypeError("Precondition.rule must be callable")

    def __call__(self, figures: Mapping[str, Any]) -> bool | None:
        out = self.rule(figures)
        return None if out is None else bool(out)


def decide(method: bool | None, negatives: Mapping[str, bool | None] | None = None,
           positives: Mapping[str, bool | None] | None = None,
           preconditions: Mapping[str, bool | None] | None = None,
           no_positive_control: str = "") -> tuple[Verdict, str]:
    """The verdict rule, from the criterion's outcome on the method and on each control.

    Returns ``(verdict, reason)``. ``None`` anywhere means that figure could not be measured.
    """
    negatives, positives, preconditions = dict(negatives or {}), dict(positives or {}), dict(preconditions or {})
    if method is None:
        return Verdict.INCONCLUSIVE, "the method's measurement could not decide the criterion"
    unmet = [t for t, ok in preconditions.items() if ok is not True]
    if unmet:
        return Verdict.INCONCLUSIVE, "precondition not met: " + "; ".join(unmet)
    pos_bad = [n for n, ok in positives.items() if ok is not True]
    if pos_bad:
        return Verdict.INCONCLUSIVE, ("the instance cannot show the effect: positive control "
                                      + ", ".join(pos_bad) + " fails the criterion")
    neg_unmeasured = [n for n, ok in negatives.items() if ok is None]
    if neg_unmeasured:
        return Verdict.INCONCLUSIVE, "negative control " + ", ".join(neg_unmeasured) + " could not be measured"
    neg_pass = [n for n, ok in negatives.items() if ok]
    why_possible = (f"positive control {', '.join(positives)} passes" if positives
                    else f"no positive control possible: {no_positive_control}" if no_positive_control
                    else "no positive control")
    if method:
        if neg_pass:
            return Verdict.INCONCLUSIVE, ("vacuous: negative control " + ", ".join(neg_pass)
                                          + " passes the criterion too")
        neg = ", ".join(negatives) or "none"
        return Verdict.REPRODUCED, f"the method passes; negative controls ({neg}) fail; {why_possible}"
    extra = f" (negative control {', '.join(neg_pass)} passes where the method fails)" if neg_pass else ""
    return Verdict.NOT_REPRODUCED, f"the method fails; {why_possible}{extra}"


# ----- the claim -----------------------------------------------------------------------------------------
@dataclasses.dataclass
class Claim:
    """One claim of a paper and its check here.

    Parameters
    ----------
    id : str
        Short identifier, unique within a method (``"c1"``, ``"robustness"``).
    statement : str
        The claim as the paper makes it (paraphrased, never copied at length).
    criterion : Criterion (or str in the older hand-judged form)
        The rule that decides the verdict, fixed before the run.
    paper_value : str, optional
        The paper's own figure when it gives one (``"92.85% LACC@10"``).
    kind : ClaimKind or str, keyword-only, required
        ``"headline"``, ``"supporting"`` or ``"check"`` (see :class:`ClaimKind`).
    controls : iterable of Control, keyword-only
        Negative controls (a headline or supporting claim needs at least one) and a positive control
        where the instance allows one.
    no_positive_control : str, keyword-only
        Why no positive control is possible; required for a headline or supporting claim without one.
    preconditions : iterable of Precondition, keyword-only
        Rules over the method's figures that must hold before its verdict means anything.
    note : str
        Free text: caveats, the scale it ran at, what differs from the paper's setting.

    After :meth:`record`: ``measured`` (the method's figures, the controls' figures and any details),
    ``verdict``, ``reason`` (why that verdict), ``control_results`` and ``summary``.
    """

    id: str
    statement: str
    criterion: Any
    paper_value: str | None = None
    measured: Any = None
    verdict: Verdict = Verdict.PENDING
    note: str = ""
    kind: ClaimKind = dataclasses.field(kw_only=True)
    summary: str = dataclasses.field(default="", kw_only=True)
    controls: tuple = dataclasses.field(default=(), kw_only=True)
    no_positive_control: str = dataclasses.field(default="", kw_only=True)
    preconditions: tuple = dataclasses.field(default=(), kw_only=True)
    reason: str = dataclasses.field(default="", kw_only=True)
    decided_by: str = dataclasses.field(default="", kw_only=True)
    key: str = dataclasses.field(default="", kw_only=True)
    threshold: str = dataclasses.field(default="", kw_only=True)
    key_value: Any = dataclasses.field(default=None, kw_only=True)
    control_results: list = dataclasses.field(default_factory=list, kw_only=True)

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise ValueError(f"claim id must be a non-empty string; got {self.id!r}")
        self.kind = ClaimKind.parse(self.kind)
        self.verdict = Verdict(self.verdict)
        self._rule: Criterion | None = None
        if isinstance(self.criterion, Criterion):
            self._rule = self.criterion
            self.key, self.threshold = self.criterion.key, self.criterion.threshold
            self.criterion = self.criterion.text
        elif not isinstance(self.criterion, str):
            raise TypeError(f"claim {self.id}: criterion must be a Criterion (or a str in the hand-judged form); "
                            f"got {type(self.criterion).__name__}")
        controls = tuple(self.controls)
        if not all(isinstance(c, (Control, dict)) for c in controls):
            raise TypeError(f"claim {self.id}: controls must be Control objects")
        names = [c.name if isinstance(c, Control) else c["name"] for c in controls]
        if len(set(names)) != len(names):
            raise ValueError(f"claim {self.id}: control names must be unique; got {names}")
        self.controls = controls
        pre = tuple(self.preconditions)
        if not all(isinstance(p, (Precondition, str)) for p in pre):
            raise TypeError(f"claim {self.id}: preconditions must be Precondition objects")
        self.preconditions = pre
        if self._rule is not None:
            self._validate_controls()

    def _validate_controls(self) -> None:
        if self.kind is ClaimKind.CHECK:
            return
        roles = [c.role for c in self.controls]
        if "negative" not in roles:
            raise ValueError(f"claim {self.id} ({self.kind}): a headline or supporting claim needs a negative "
                             "control (a trivial, broken or do-nothing method that must fail its criterion)")
        if "positive" not in roles and not self.no_positive_control.strip():
            raise ValueError(f"claim {self.id} ({self.kind}): declare a positive control or say in "
                             "no_positive_control= why none is possible")

    @property
    def machine_judged(self) -> bool:
        return self._rule is not None

    # -- the v3 path ------------------------------------------------------------------------------------
    def record(self, method: Mapping[str, Any] | None, controls: Mapping[str, Mapping[str, Any] | None] | None = None,
               *, summary: str | None = None, note: str | None = None, details: Any = None,
               unmeasured: str = "") -> Claim:
        """Hand over the figures of the method and of every declared control; the machinery sets the verdict.

        Parameters
        ----------
        method : dict or None
            The method's figures (must carry the criterion's key). ``None`` when it could not be measured
            (say why in ``unmeasured``).
        controls : dict name -> dict
            One figures dict per declared control, with the same keys as the method's (``None`` for a control
            that could not be measured). Every declared control must be present, and no other.
        summary : str, optional
            One line a person reads: the key figure against its threshold, and the controls'.
        details : Any
            Further numbers kept in ``measured["details"]`` (not judged).
        """
        if self._rule is None:
            raise RuntimeError(f"claim {self.id}: record() needs a Criterion; this claim was declared with a "
                               "text criterion (the hand-judged form)")
        controls = dict(controls or {})
        declared = {c.name: c for c in self.controls}
        if set(controls) != set(declared):
            missing, extra = sorted(set(declared) - set(controls)), sorted(set(controls) - set(declared))
            raise ValueError(f"claim {self.id}: controls measured must be exactly the declared ones; "
                             f"missing {missing}, undeclared {extra}")
        if method is not None and not isinstance(method, Mapping):
            raise TypeError(f"claim {self.id}: method figures must be a dict; got {type(method).__name__}")
        for name, figs in controls.items():
            if figs is not None and not isinstance(figs, Mapping):
                raise TypeError(f"claim {self.id}: control {name!r} figures must be a dict; got {type(figs).__name__}")
        m_pass = self._rule(method)
        results, neg, pos = [], {}, {}
        for name, ctl in declared.items():
            ok = self._rule(controls[name])
            (neg if ctl.role == "negative" else pos)[name] = ok
            figs = controls[name]
            results.append({"name": name, "role": ctl.role, "description": ctl.description,
                            "key_value": jsonable(None if figs is None else figs.get(self.key)),
                            "passes": ok, "expected": "fail" if ctl.role == "negative" else "pass",
                            "as_expected": None if ok is None else (ok is (ctl.role == "positive"))})
        pre = {p.text: (p(method) if method is not None else None) for p in self.preconditions}
        verdict, reason = decide(m_pass, neg, pos, pre, self.no_positive_control)
        if method is None and unmeasured:
            reason = f"{reason}: {unmeasured}"
        self.verdict, self.reason, self.decided_by = verdict, reason, "machinery"
        self.key_value = jsonable(None if method is None else method.get(self.key))
        self.control_results = results
        self.measured = jsonable({"method": dict(method) if method is not None else None,
                                  "method_passes": m_pass,
                                  "controls": {k: (dict(v) if v is not None else None) for k, v in controls.items()},
                                  "preconditions": pre, **({"details": details} if details is not None else {})})
        if note is not None:
            self.note = note
        self.summary = " ".join((summary or self.default_summary()).split())
        return self

    def default_summary(self) -> str:
        parts = [f"{self.key} {format_number(self.key_value)} (needs {self.threshold or self.criterion})"]
        for r in self.control_results:
            mark = "ok" if r["as_expected"] else ("?" if r["as_expected"] is None else "UNEXPECTED")
            parts.append(f"{r['role']} {r['name']} {format_number(r['key_value'])} ({mark})")
        return "; ".join(parts)

    # -- the older, hand-judged path -------------------------------------------------------------------
    def judge(self, passed: bool | None, measured: Any = None, note: str | None = None,
              summary: str | None = None) -> Claim:
        """Hand-judged form (kept for methods not yet migrated; refused by the runner for the others).

        ``True`` -> reproduced, ``False`` -> not reproduced, ``None`` -> inconclusive.
        """
        if self._rule is not None:
            raise RuntimeError(f"claim {self.id} declares a Criterion: hand its figures to record(), "
                               "the machinery sets the verdict")
        if passed is None:
            self.verdict = Verdict.INCONCLUSIVE
        else:
            self.verdict = Verdict.REPRODUCED if bool(passed) else Verdict.NOT_REPRODUCED
        self.decided_by = "hand"
        self.measured = jsonable(measured)
        if note is not None:
            self.note = note
        if summary is not None:
            if not isinstance(summary, str):
                raise TypeError(f"summary must be a str; got {type(summary).__name__}")
            self.summary = " ".join(summary.split())
        return self

    def to_dict(self) -> dict:
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        d["verdict"] = self.verdict.value
        d["kind"] = self.kind.value
        d["measured"] = jsonable(self.measured)
        d["controls"] = [dataclasses.asdict(c) if isinstance(c, Control) else dict(c) for c in self.controls]
        d["preconditions"] = [p.text if isinstance(p, Precondition) else str(p) for p in self.preconditions]
        d["control_results"] = jsonable(self.control_results)
        d["key_value"] = jsonable(self.key_value)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> Claim:
        """Rebuild a claim from :meth:`to_dict` (its rule is not serialised: the result is read-only)."""
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


def validate_outcome(outcome: Outcome, *, hand_verdicts_allowed: bool) -> None:
    """What the runner checks when a reproduction returns: judged claims, by the machinery where required."""
    pending = [c.id for c in outcome.claims if c.verdict is Verdict.PENDING]
    if pending:
        raise RuntimeError(f"claims left unjudged: {pending}")
    if not hand_verdicts_allowed:
        by_hand = [c.id for c in outcome.claims if c.decided_by != "machinery"]
        if by_hand:
            raise RuntimeError(f"claims {by_hand} were judged by hand (Claim.judge); declare a Criterion and "
                               "Controls and hand the figures to Claim.record")
    for c in outcome.claims:
        if c.machine_judged:
            c._validate_controls()


def _as_dict(claim: Claim | dict) -> dict:
    return claim.to_dict() if isinstance(claim, Claim) else claim


def headline_verdict(claims: Iterable[Claim | dict]) -> str:
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
