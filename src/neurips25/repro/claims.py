"""Claims and verdicts (verdicts v4: sealed verdicts, figures read through the machinery, instance words).

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

Verdicts v4 (issue #58) closes what the v3 audit found:

- **Sealed.** ``verdict``, ``reason``, ``decided_by``, ``key_value``, ``control_results``, ``measured`` and
  ``summary`` are not constructor arguments; :meth:`Claim.record` sets them once, and a recorded claim refuses
  any further assignment (``note`` aside). :func:`validate_outcome` recomputes the verdict from the stored
  figures with the claim's own rule and refuses a mismatch, and refuses any headline or supporting claim that
  was not judged by the machinery in this run (a claim rebuilt by :meth:`Claim.from_dict` is read-only and
  never passes).
- **Figures through the machinery.** A rule reads a :class:`Figures` view: a missing key, or a NaN / inf
  anywhere in the figure it reads, raises :class:`Unmeasured`, which makes the rule answer ``None``
  (inconclusive), never reproduced or not reproduced. A control that could not be measured reads
  "not measured".
- **Instance words.** Every headline and supporting claim says what it was judged on: ``paper`` (the
  paper's model, data and budget), ``reduced`` (the same kind, smaller) or ``stand-in`` (a different kind:
  a toy trained here for a pretrained model, synthetic data for a release; ``instance_note`` then says what
  a user may conclude).
- **Provenance of controls.** :func:`measure` runs a control's code and tags its figures with what ran
  and how long; a plain dict is recorded as "handed over (not tracked)", and a control whose key figure
  equals the method's is flagged in the report.

The older form, ``claim.judge(passed)`` with a hand-computed bool, is kept for plugins and test fakes
outside the 19 methods; the runner refuses it for every built-in method.
"""

from __future__ import annotations

import dataclasses
import enum
import math
import numbers
import time
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
    if x is None:
        return "-"
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

    A missing, NaN, boolean or non-numeric figure gives None (unmeasurable) instead of deciding on it."""
    try:
        value = figures.get(key)
    except Unmeasured:
        return None
    return _finite_number(value)


# ----- figures read through the machinery ----------------------------------------------------------------
class Unmeasured(Exception):
    """Raised by a :class:`Figures` view when a rule reads a missing or non-finite figure; the rule then
    answers None (the claim is inconclusive), never a verdict."""


def _has_non_finite(value: Any, depth: int = 0) -> bool:
    if depth > 6:
        return False
    if isinstance(value, bool):
        return False
    if isinstance(value, numbers.Real):
        return not math.isfinite(float(value))
    if hasattr(value, "dtype") and hasattr(value, "tolist"):  # numpy / torch arrays
        return _has_non_finite(value.tolist(), depth + 1)
    if isinstance(value, Mapping):
        return any(_has_non_finite(v, depth + 1) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_has_non_finite(v, depth + 1) for v in value)
    return False


class Figures(Mapping):
    """A read-only view of a figures dict, the only form in which a rule sees them.

    ``figures[key]`` raises :class:`Unmeasured` when the key is missing or the value holds a NaN or inf
    (at any depth: a list of per-dataset figures with one NaN is unmeasured as a whole); nested dicts come
    back as views too. ``figures.get(key, default)`` returns ``default`` for a missing key and raises for a
    non-finite value, so a rule cannot quietly turn a diverged run into a verdict.
    """

    __slots__ = ("_data", "provenance")

    def __init__(self, data: Mapping[str, Any], provenance: str = "") -> None:
        if isinstance(data, Figures):
            data = data._data
        if not isinstance(data, Mapping):
            raise TypeError(f"figures must be a dict; got {type(data).__name__}")
        self._data = dict(data)
        self.provenance = provenance

    def __getitem__(self, key: str) -> Any:
        if key not in self._data:
            raise Unmeasured(f"figure {key!r} is missing")
        value = self._data[key]
        if value is None:
            raise Unmeasured(f"figure {key!r} was not measured (None)")
        if _has_non_finite(value):
            raise Unmeasured(f"figure {key!r} is not finite ({value!r})")
        return Figures(value) if isinstance(value, Mapping) else value

    def get(self, key: str, default: Any = None) -> Any:
        if key not in self._data:
            return default
        return self[key]

    def __iter__(self):
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def raw(self) -> dict:
        """The underlying dict (for storing, never for judging)."""
        return dict(self._data)

    def __repr__(self) -> str:
        return f"Figures({self._data!r})"


def measure(fn: Callable[..., Mapping[str, Any]], *args: Any, **kwargs: Any) -> Figures:
    """Run ``fn(*args, **kwargs)`` (a method or a control) and return its figures tagged with what ran.

    The tag ("ran <module.qualname> in this run, 0.31 s") is recorded beside the control's verdict, so a
    reader can tell a control computed here from one handed over as a literal dict. Example::

        oracle = measure(run_oracle, data, seed=seed)      # -> Figures with .provenance
        claim.record(ours, controls={"oracle": oracle})
    """
    if not callable(fn):
        raise TypeError(f"measure: fn must be callable; got {type(fn).__name__}")
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    dt = time.perf_counter() - t0
    if not isinstance(out, Mapping):
        raise TypeError(f"measure: {getattr(fn, '__qualname__', fn)!r} must return a dict of figures; "
                        f"got {type(out).__name__}")
    name = f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', getattr(fn, '__name__', '?'))}"
    return Figures(out, provenance=f"ran {name} in this run, {dt:.2f} s")


def _outcome(rule: Callable[[Mapping[str, Any]], Any], figures: Mapping[str, Any] | None, what: str) -> str:
    """Apply a rule to a figures view: ``"pass"``, ``"fail"``, ``"undecided"`` (the rule answered None: an
    interval that straddles the bar) or ``"unmeasured"`` (no figures, or a missing / non-finite figure read)."""
    if figures is None:
        return "unmeasured"
    try:
        out = rule(figures if isinstance(figures, Figures) else Figures(figures))
    except Unmeasured:
        return "unmeasured"
    if out is None:
        return "undecided"
    if isinstance(out, (bool, numbers.Integral)) or (hasattr(out, "item") and hasattr(out, "dtype")):
        return "pass" if bool(out) else "fail"
    raise TypeError(f"{what} returned {type(out).__name__}; expected bool or None")


def _judge(rule: Callable[[Mapping[str, Any]], Any], figures: Mapping[str, Any] | None, what: str) -> bool | None:
    """:func:`_outcome` as True / False / None (undecided and unmeasured alike)."""
    out = _outcome(rule, figures, what)
    return True if out == "pass" else False if out == "fail" else None


def _control_state(outcome: str) -> bool | None:
    """A control's outcome as :func:`decide` reads it: an undecided control does not pass (a negative that cannot
    be shown to meet the bar has not met it; a positive that cannot be shown to meet it has not shown the instance
    can); only an unmeasured control is None ("could not be measured")."""
    return True if outcome == "pass" else None if outcome == "unmeasured" else False


def _raw(figures: Mapping[str, Any] | None) -> dict | None:
    """A private copy of a figures dict (so a later change to the caller's dict cannot change a verdict)."""
    if figures is None:
        return None
    return figures.raw() if isinstance(figures, Figures) else dict(figures)


def _count_true(values: Any) -> tuple[int, int, int]:
    """(passed, failed, unknown) over per-unit outcomes (a list or a dict of bool / None)."""
    items = list(values.values()) if isinstance(values, Mapping) else list(values)
    passed = sum(1 for v in items if v is not None and bool(v))
    unknown = sum(v is None for v in items)
    return passed, len(items) - passed - unknown, unknown


# ----- criterion, controls, preconditions -------------------------------------------------------------
INSTANCES = ("paper", "reduced", "stand-in")
INSTANCE_MEANING = {
    "paper": "the paper's model, data and budget",
    "reduced": "the same kind of model and data as the paper, smaller",
    "stand-in": "a different kind: a toy trained here instead of a pretrained model, or synthetic data "
                "instead of the release",
}


@dataclasses.dataclass(frozen=True)
class Criterion:
    """The rule that decides a claim: ``rule(figures) -> True | False | None`` over a dict of figures.

    ``key`` names the figure a person reads first (the report shows it for the method and for every
    control, beside ``threshold``); the rule may read other figures of the same dict. The rule sees a
    :class:`Figures` view: reading a missing or non-finite figure makes it answer None (undecided). ``None``
    also means an interval that straddles the bar. The same criterion is applied to the method and to every
    control: a control's figures carry the same keys.
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
        t = _real(threshold, "threshold")
        op = ">" if strict else ">="
        return cls(text or f"{key} {op} {t:g}", key, lambda m: m[key] > t if strict else m[key] >= t, f"{op} {t:g}")

    @classmethod
    def at_most(cls, key: str, threshold: float, text: str | None = None, *, strict: bool = False) -> Criterion:
        """``figures[key] <= threshold`` (``<`` when ``strict``); a missing or non-finite figure decides nothing."""
        t = _real(threshold, "threshold")
        op = "<" if strict else "<="
        return cls(text or f"{key} {op} {t:g}", key, lambda m: m[key] < t if strict else m[key] <= t, f"{op} {t:g}")

    @classmethod
    def interval_above(cls, low_key: str, high_key: str, threshold: float, text: str | None = None,
                       *, key: str | None = None) -> Criterion:
        """Decided by an interval: passes when ``low > threshold``, fails when ``high <= threshold``, else None."""
        return cls.interval(low_key, high_key, threshold, "above", text, key=key)

    @classmethod
    def interval(cls, low_key: str, high_key: str, threshold: float, side: str = "above",
                 text: str | None = None, *, key: str | None = None, band: float | None = None) -> Criterion:
        """A criterion decided by a confidence interval ``[figures[low_key], figures[high_key]]``.

        ``side``:

        - ``"above"``: passes when ``low > threshold``, fails when ``high <= threshold``, else undecided;
        - ``"below"``: passes when ``high < threshold``, fails when ``low >= threshold``, else undecided;
        - ``"within"`` (two-sided: "the difference is about ``threshold``"): passes when the whole interval lies
          in ``threshold +- band``, fails when the interval lies wholly outside it, else undecided.

        The interval itself comes from :func:`neurips25.repro.intervals.mean_interval` (Student-t over seeds or
        reps) or :func:`neurips25.repro.intervals.bootstrap_interval` (paired bootstrap).
        """
        t = _real(threshold, "threshold")
        if side not in ("above", "below", "within"):
            raise ValueError(f"side must be 'above', 'below' or 'within'; got {side!r}")
        if side == "within":
            if band is None:
                raise ValueError("side='within' needs band= (the half-width of the accepted range)")
            b = _real(band, "band")
            if b <= 0:
                raise ValueError(f"band must be > 0; got {band!r}")

            def rule(m):
                lo, hi = m[low_key], m[high_key]
                if t - b <= lo and hi <= t + b:
                    return True
                return False if (hi < t - b or lo > t + b) else None

            return cls(text or f"interval [{low_key}, {high_key}] within {t:g} +- {b:g}", key or low_key, rule,
                       f"within {t:g} +- {b:g}")
        if side == "above":
            def rule(m):
                return True if m[low_key] > t else (False if m[high_key] <= t else None)
            return cls(text or f"interval [{low_key}, {high_key}] above {t:g}", key or low_key, rule, f"> {t:g}")

        def rule(m):
            return True if m[high_key] < t else (False if m[low_key] >= t else None)
        return cls(text or f"interval [{low_key}, {high_key}] below {t:g}", key or high_key, rule, f"< {t:g}")

    @classmethod
    def count_at_least(cls, units_key: str, need: int, text: str | None = None) -> Criterion:
        """"Wins on k of n units": ``figures[units_key]`` is a dict (unit -> True / False / None) or a list;
        passes when at least ``need`` units are True, fails when even the undecided units could not bring the
        count to ``need``, else undecided. The key figure shown is ``"<units_key>_count"`` (filled in by
        :meth:`Claim.record`)."""
        if isinstance(need, bool) or not isinstance(need, numbers.Integral) or need < 1:
            raise ValueError(f"need must be an integer >= 1; got {need!r}")
        need = int(need)

        def rule(m):
            passed, _, unknown = _count_true(m[units_key])
            if passed >= need:
                return True
            return False if passed + unknown < need else None

        return cls(text or f"{units_key}: at least {need} units pass", f"{units_key}_count", rule, f">= {need}")

    @classmethod
    def all_of(cls, *parts: Criterion, text: str | None = None, key: str | None = None) -> Criterion:
        """Every part must pass ("wins on k of n AND the ratio >= r"): fails when any part fails (even if another
        part could not be measured), is unmeasured when a part reads a missing figure and none failed, passes when
        all pass, else undecided. The key figure shown is the first part's unless ``key`` names another; ``text``
        defaults to the parts' texts joined by "AND"."""
        if len(parts) < 2 or not all(isinstance(p, Criterion) for p in parts):
            raise TypeError("all_of needs two or more Criterion objects")

        def rule(m):
            seen, missing = [], None
            for p in parts:
                try:
                    v = p.rule(m)
                except Unmeasured as err:  # a part that cannot be read decides nothing, unless another part fails
                    missing = err
                    continue
                seen.append(None if v is None else bool(v))
            if any(v is False for v in seen):
                return False
            if missing is not None:
                raise missing
            return True if all(v is True for v in seen) else None

        joined = " AND ".join(p.text for p in parts)
        return cls(text or joined, key or parts[0].key, rule, " and ".join(p.threshold for p in parts if p.threshold))

    def __call__(self, figures: Mapping[str, Any] | None) -> bool | None:
        return _judge(self.rule, figures, f"criterion {self.text!r}")

    def outcome(self, figures: Mapping[str, Any] | None) -> str:
        """``"pass"``, ``"fail"``, ``"undecided"`` (the rule could not decide) or ``"unmeasured"``."""
        return _outcome(self.rule, figures, f"criterion {self.text!r}")


def _real(x: Any, name: str) -> float:
    if isinstance(x, bool) or not isinstance(x, numbers.Real) or not math.isfinite(float(x)):
        raise ValueError(f"{name} must be a finite real number; got {x!r}")
    return float(x)


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

    Example: "plain SFT's RL gain > 0" before judging whether an augmentation amplifies that gain. The rule
    reads a :class:`Figures` view, like a criterion's.
    """

    text: str
    rule: Callable[[Mapping[str, Any]], bool | None]

    def __post_init__(self) -> None:
        if not callable(self.rule):
            raise TypeError("Precondition.rule must be callable")

    def __call__(self, figures: Mapping[str, Any] | None) -> bool | None:
        return _judge(self.rule, figures, f"precondition {self.text!r}")


def decide(method: bool | None, negatives: Mapping[str, bool | None] | None = None,
           positives: Mapping[str, bool | None] | None = None,
           preconditions: Mapping[str, bool | None] | None = None,
           no_positive_control: str = "") -> tuple[Verdict, str]:
    """The verdict rule, from the criterion's outcome on the method and on each control.

    Returns ``(verdict, reason)``. ``None`` anywhere means that figure could not be measured (for the method,
    also that its measurement could not decide); a control whose rule could not decide is handed in as not
    passing (:func:`_control_state`).
    """
    negatives, positives, preconditions = dict(negatives or {}), dict(positives or {}), dict(preconditions or {})
    if method is None:
        return Verdict.INCONCLUSIVE, "the method's measurement could not decide the criterion"
    unmet = [t for t, ok in preconditions.items() if ok is not True]
    if unmet:
        return Verdict.INCONCLUSIVE, "precondition not met: " + "; ".join(unmet)
    pos_unmeasured = [n for n, ok in positives.items() if ok is None]
    if pos_unmeasured:
        return Verdict.INCONCLUSIVE, ("positive control " + ", ".join(pos_unmeasured) + " was not measured, so "
                                      "nothing shows the instance can express the effect")
    pos_bad = [n for n, ok in positives.items() if ok is not True]
    if pos_bad:
        return Verdict.INCONCLUSIVE, ("the instance cannot show the effect: positive control "
                                      + ", ".join(pos_bad) + " does not pass the criterion")
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
#: set only by :meth:`Claim.record` (or :meth:`Claim.judge` for plugins); never constructor arguments
SEALED_FIELDS = ("verdict", "reason", "decided_by", "key_value", "control_results", "measured", "summary")


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
    instance : str, keyword-only
        What the claim is judged on: ``"paper"``, ``"reduced"`` or ``"stand-in"`` (:data:`INSTANCE_MEANING`).
        Required for a headline or supporting claim with a Criterion.
    instance_note : str, keyword-only
        What the instance is, in a few words; for a stand-in, what it stands in for and what a user may
        conclude from its verdict (required for ``"stand-in"``).
    controls : iterable of Control, keyword-only
        Negative controls (a headline or supporting claim needs at least one) and a positive control
        where the instance allows one.
    no_positive_control : str, keyword-only
        Why no positive control is possible; required for a headline or supporting claim without one.
    preconditions : iterable of Precondition, keyword-only
        Rules over the method's figures that must hold before its verdict means anything.
    note : str
        Free text: caveats, the scale it ran at, what differs from the paper's setting.

    After :meth:`record` (and only then): ``measured`` (the method's figures, the controls' figures and any
    details), ``verdict``, ``reason`` (why that verdict), ``control_results`` and ``summary``. A recorded claim
    is sealed: assigning to any field but ``note`` raises.
    """

    id: str
    statement: str
    criterion: Any
    paper_value: str | None = None
    note: str = ""
    kind: ClaimKind = dataclasses.field(kw_only=True)
    instance: str = dataclasses.field(default="", kw_only=True)
    instance_note: str = dataclasses.field(default="", kw_only=True)
    controls: tuple = dataclasses.field(default=(), kw_only=True)
    no_positive_control: str = dataclasses.field(default="", kw_only=True)
    preconditions: tuple = dataclasses.field(default=(), kw_only=True)
    key: str = dataclasses.field(default="", kw_only=True)
    threshold: str = dataclasses.field(default="", kw_only=True)
    measured: Any = dataclasses.field(default=None, init=False)
    verdict: Verdict = dataclasses.field(default=Verdict.PENDING, init=False)
    summary: str = dataclasses.field(default="", init=False)
    reason: str = dataclasses.field(default="", init=False)
    decided_by: str = dataclasses.field(default="", init=False)
    key_value: Any = dataclasses.field(default=None, init=False)
    control_results: list = dataclasses.field(default_factory=list, init=False)

    def __setattr__(self, name: str, value: Any) -> None:
        if self.__dict__.get("_sealed") and name != "note":
            raise AttributeError(f"claim {self.__dict__.get('id')!r} is sealed: its {name!r} was set by the "
                                 "machinery when it was recorded and cannot be changed")
        object.__setattr__(self, name, value)

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise ValueError(f"claim id must be a non-empty string; got {self.id!r}")
        self.kind = ClaimKind.parse(self.kind)
        self._rule: Criterion | None = None
        self._figures: tuple | None = None  # (method, controls) as handed to record(), for validate_outcome
        self._rebuilt = False
        if isinstance(self.criterion, Criterion):
            self._rule = self.criterion
            self.key, self.threshold = self.criterion.key, self.criterion.threshold
            self.criterion = self.criterion.text
        elif not isinstance(self.criterion, str):
            raise TypeError(f"claim {self.id}: criterion must be a Criterion (or a str in the hand-judged form); "
                            f"got {type(self.criterion).__name__}")
        if self.instance not in ("", *INSTANCES):
            raise ValueError(f"claim {self.id}: instance must be one of {', '.join(INSTANCES)}; got {self.instance!r}")
        if not isinstance(self.instance_note, str):
            raise TypeError(f"claim {self.id}: instance_note must be a str")
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
            self._validate_declaration()

    def _validate_declaration(self) -> None:
        if self.kind is ClaimKind.CHECK:
            return
        if not any(isinstance(c, Control) and c.role == "negative" for c in self.controls):
            raise ValueError(f"claim {self.id} ({self.kind}): a headline or supporting claim needs a negative "
                             "control (a trivial, broken or do-nothing method that must fail its criterion)")
        roles = [c.role for c in self.controls if isinstance(c, Control)]
        if "positive" not in roles and not self.no_positive_control.strip():
            raise ValueError(f"claim {self.id} ({self.kind}): declare a positive control or say in "
                             "no_positive_control= why none is possible")
        if self.instance not in INSTANCES:
            raise ValueError(f"claim {self.id} ({self.kind}): say what it is judged on: instance= one of "
                             f"{', '.join(INSTANCES)} ({'; '.join(f'{k}: {v}' for k, v in INSTANCE_MEANING.items())})")
        if self.instance == "stand-in" and not self.instance_note.strip():
            raise ValueError(f"claim {self.id}: a stand-in needs instance_note= (what it stands in for and what a "
                             "user may conclude from its verdict)")

    @property
    def machine_judged(self) -> bool:
        return self._rule is not None and not self._rebuilt

    @property
    def recorded(self) -> bool:
        return bool(self.__dict__.get("_sealed"))

    @property
    def rule(self) -> Criterion | None:
        """The claim's criterion object (None for a hand-judged or rebuilt claim)."""
        return self._rule

    def _seal(self, **fields: Any) -> None:
        if self.recorded:
            raise RuntimeError(f"claim {self.id} was already recorded; a verdict is set once")
        for name, value in fields.items():
            object.__setattr__(self, name, value)
        object.__setattr__(self, "_sealed", True)

    # -- the v3/v4 path ---------------------------------------------------------------------------------
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
            that could not be measured). Every declared control must be present, and no other. Figures from
            :func:`measure` carry where they came from.
        summary : str, optional
            Extra words after the generated line (the key figure against its threshold and the controls'
            figures are written by the machinery; do not retype them).
        details : Any
            Further numbers kept in ``measured["details"]`` (not judged).
        """
        if self._rule is None or self._rebuilt:
            raise RuntimeError(f"claim {self.id}: record() needs a Criterion; this claim was declared with a "
                               "text criterion (the hand-judged form) or rebuilt from a dict")
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
        raw_method = _raw(method)
        raw_controls = {k: _raw(v) for k, v in controls.items()}
        m_pass = self._rule(raw_method)
        m_key = self._key_figure(raw_method)
        results, neg, pos = [], {}, {}
        for name, ctl in declared.items():
            figs = raw_controls[name]
            state = self._rule.outcome(figs)
            ok = _control_state(state)
            (neg if ctl.role == "negative" else pos)[name] = ok
            key_value = None if figs is None else self._key_figure(figs)
            prov = ("not measured" if figs is None
                    else getattr(controls[name], "provenance", "") or "handed over as a dict (provenance not tracked)")
            if figs is not None and controls[name] is method:
                prov += "; the SAME object as the method's figures"
            elif key_value is not None and m_key is not None and jsonable(key_value) == jsonable(m_key):
                prov += "; its key figure equals the method's"
            results.append({"name": name, "role": ctl.role, "description": ctl.description,
                            "key_value": jsonable(key_value), "passes": ok, "outcome": state,
                            "expected": "fail" if ctl.role == "negative" else "pass",
                            "as_expected": None if ok is None else (ok is (ctl.role == "positive")),
                            "provenance": prov})
        pre = {p.text: (p(raw_method) if raw_method is not None else None) for p in self.preconditions}
        verdict, reason = decide(m_pass, neg, pos, pre, self.no_positive_control)
        if method is None and unmeasured:
            reason = f"{reason}: {unmeasured}"
        if note is not None:
            self.note = note
        measured = jsonable({"method": raw_method, "method_passes": m_pass,
                             "method_provenance": getattr(method, "provenance", "") if method is not None else "",
                             "controls": raw_controls,
                             "preconditions": pre, **({"details": details} if details is not None else {})})
        object.__setattr__(self, "_figures", (raw_method, raw_controls))
        generated = self._generated_summary(jsonable(m_key), results, m_pass)
        extra = " ".join(summary.split()) if summary else ""
        self._seal(verdict=verdict, reason=reason, decided_by="machinery", key_value=jsonable(m_key),
                   control_results=results, measured=measured,
                   summary=f"{generated}. {extra}" if extra else generated)
        return self

    def _key_figure(self, figures: Mapping[str, Any] | None) -> Any:
        """The key figure of a figures dict; for a count criterion, the number of units that pass."""
        if figures is None:
            return None
        if self.key in figures:
            return figures[self.key]
        units = self.key.removesuffix("_count")
        if units != self.key and units in figures:
            vals = figures[units]
            if isinstance(vals, (Mapping, list, tuple)):
                passed, failed, unknown = _count_true(vals)
                return passed
        return None

    def _generated_summary(self, key_value: Any, results: list, m_pass: bool | None) -> str:
        mark = "passes" if m_pass else ("fails" if m_pass is False else "undecided")
        parts = [f"{self.key} {format_number(key_value)} ({mark}; needs {self.threshold or self.criterion})"]
        for r in results:
            state = {"unmeasured": "not measured", "undecided": "undecided: does not pass",
                     "pass": "passes", "fail": "fails"}.get(r.get("outcome"), "passes" if r["passes"] else "fails")
            ok = "" if r["as_expected"] is None else (", as it must" if r["as_expected"] else ", UNEXPECTED")
            parts.append(f"{r['role']} {r['name']} {format_number(r['key_value'])} ({state}{ok})")
        return "; ".join(parts)

    def default_summary(self) -> str:
        return self._generated_summary(self.key_value, self.control_results,
                                       (self.measured or {}).get("method_passes") if isinstance(self.measured, dict)
                                       else None)

    def recompute(self) -> tuple[Verdict, str]:
        """The verdict the claim's own rule gives on the figures it was recorded with (validate_outcome)."""
        if self._rule is None or self._figures is None:
            raise RuntimeError(f"claim {self.id} was not recorded with a Criterion in this run")
        method, controls = self._figures
        neg, pos = {}, {}
        for c in self.controls:
            (neg if c.role == "negative" else pos)[c.name] = _control_state(self._rule.outcome(controls.get(c.name)))
        pre = {p.text: (p(method) if method is not None else None) for p in self.preconditions}
        return decide(self._rule(method), neg, pos, pre, self.no_positive_control)

    # -- the older, hand-judged path (plugins and test fakes only) -----------------------------------------
    def judge(self, passed: bool | None, measured: Any = None, note: str | None = None,
              summary: str | None = None) -> Claim:
        """Hand-judged form, for plugins and test fakes outside the 19 methods (the runner refuses it for them).

        ``True`` -> reproduced, ``False`` -> not reproduced, ``None`` -> inconclusive.
        """
        if self._rule is not None:
            raise RuntimeError(f"claim {self.id} declares a Criterion: hand its figures to record(), "
                               "the machinery sets the verdict")
        if self._rebuilt:
            raise RuntimeError(f"claim {self.id} was rebuilt from a dict and is read-only")
        if summary is not None and not isinstance(summary, str):
            raise TypeError(f"summary must be a str; got {type(summary).__name__}")
        if note is not None:
            self.note = note
        verdict = (Verdict.INCONCLUSIVE if passed is None
                   else Verdict.REPRODUCED if bool(passed) else Verdict.NOT_REPRODUCED)
        self._seal(verdict=verdict, decided_by="hand", measured=jsonable(measured),
                   summary=" ".join(summary.split()) if summary else "")
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
        """Rebuild a claim from :meth:`to_dict`, read-only: its rule is not serialised, so it can never be
        recorded again nor pass :func:`validate_outcome`; its stored verdict is kept for reading."""
        d = dict(d)
        d.setdefault("kind", ClaimKind.SUPPORTING)
        init = {f.name: d[f.name] for f in dataclasses.fields(cls) if f.init and f.name in d}
        init["controls"] = tuple(dict(c) if isinstance(c, Mapping) else c for c in init.get("controls", ()))
        init["preconditions"] = tuple(str(p) for p in init.get("preconditions", ()))
        if init.get("instance") not in ("", *INSTANCES):
            init["instance"] = ""
        claim = cls(**init)
        object.__setattr__(claim, "_rebuilt", True)
        sealed = {f.name: d[f.name] for f in dataclasses.fields(cls) if not f.init and f.name in d}
        sealed["verdict"] = Verdict(d.get("verdict", "pending"))
        claim._seal(**sealed)
        return claim



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
    """What the runner checks when a reproduction returns.

    Every claim judged; for a built-in method (``hand_verdicts_allowed=False``) every claim recorded by the
    machinery in this run, every headline and supporting claim declared with a criterion, a negative control
    and an instance word, and every verdict equal to the one its own rule gives on the stored figures.
    """
    pending = [c.id for c in outcome.claims if c.verdict is Verdict.PENDING]
    if pending:
        raise RuntimeError(f"claims left unjudged: {pending}")
    rebuilt = [c.id for c in outcome.claims if c._rebuilt]
    if rebuilt and not hand_verdicts_allowed:
        raise RuntimeError(f"claims {rebuilt} were rebuilt from a dict (Claim.from_dict), not judged in this run")
    if not hand_verdicts_allowed:
        by_hand = [c.id for c in outcome.claims if c.decided_by != "machinery" or not c.machine_judged]
        if by_hand:
            raise RuntimeError(f"claims {by_hand} were not judged by the machinery in this run; declare a Criterion "
                               "and Controls and hand the figures to Claim.record")
    for c in outcome.claims:
        if c.kind is not ClaimKind.CHECK and not c.machine_judged and not hand_verdicts_allowed:
            raise RuntimeError(f"claim {c.id} ({c.kind}) has no criterion and controls")
        if c.machine_judged:
            c._validate_declaration()
            verdict, _ = c.recompute()
            if verdict is not c.verdict:
                raise RuntimeError(f"claim {c.id}: its stored verdict {c.verdict.value} differs from the "
                                   f"{verdict.value} its own criterion gives on its recorded figures")


def _as_dict(claim: Claim | dict) -> dict:
    return claim.to_dict() if isinstance(claim, Claim) else claim


def headline_verdict(claims: Iterable[Claim | dict]) -> str:
    """The headline claims' verdict: the single verdict, ``"mixed"`` when several disagree, ``"none"``."""
    verdicts = [_as_dict(c)["verdict"] for c in claims if _as_dict(c).get("kind") == ClaimKind.HEADLINE.value]
    if not verdicts:
        return "none"
    return verdicts[0] if len(set(verdicts)) == 1 else "mixed"


def headline_instance(claims: Iterable[Claim | dict]) -> str:
    """The instance word(s) of the headline claims (``"stand-in"``, ``"reduced"``, ``"paper"``), '' if none."""
    words = []
    for c in claims:
        d = _as_dict(c)
        if d.get("kind") == ClaimKind.HEADLINE.value and d.get("instance") and d["instance"] not in words:
            words.append(d["instance"])
    return "/".join(words)


def verdict_with_instance(verdict: str, instance: str) -> str:
    """``"not reproduced (stand-in)"``: a verdict as a person reads it, with what it was judged on."""
    v = verdict.replace("_", " ")
    return f"{v} ({instance})" if instance else v


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
    parts = [f"headline: {verdict_with_instance(headline_verdict(claims), headline_instance(claims))}"]
    for kind, (ok, n) in kind_counts(claims).items():
        if kind != ClaimKind.HEADLINE.value:
            parts.append(f"{'checks' if kind == 'check' else kind} {ok}/{n}")
    return "; ".join(parts)
