"""The reproduction machinery shared by every method; it knows no method.

A method's ``reproduce.py`` declares its claims and one ``run`` function::

    from neurips25.repro import Claim, Control, Criterion, Outcome, register

    @register("dbcare")
    def run(scale, seed, out):
        claim = Claim("c1", statement="...", paper_value="...", kind="headline",
                      criterion=Criterion.at_most("ratio", 32),
                      controls=[Control.negative("no_elim", "the policy with its key step removed"),
                                Control.positive("oracle", "the policy told the gap")])
        ours, ctrl, oracle = ...          # the method and its controls, measured here
        claim.record({"ratio": ours}, controls={"no_elim": {"ratio": ctrl}, "oracle": {"ratio": oracle}})
        return Outcome([claim], metrics={...})

The machinery applies the criterion to the method and to every control and sets the verdict
(:func:`neurips25.repro.claims.decide`); a reproduction never sets one itself.

``scale`` is a :class:`Scale` (``smoke`` | ``quick`` | ``paper``), ``seed`` an int and ``out`` the
method's folder in the run directory (figures go to ``out / "figures"``).
"""

from neurips25.repro.claims import (
    Claim,
    ClaimKind,
    Control,
    Criterion,
    Figures,
    Outcome,
    Precondition,
    Verdict,
    decide,
    describe_claims,
    finite_figure,
    measure,
)
from neurips25.repro.context import LocalContext
from neurips25.repro.progress import progress
from neurips25.repro.registry import METHODS, MethodInfo, register
from neurips25.repro.scale import Scale
from neurips25.repro.seeding import seed_everything
from neurips25.repro.threads import limit_threads, thread_cap

__all__ = [
    "Claim",
    "ClaimKind",
    "Control",
    "Criterion",
    "Precondition",
    "decide",
    "describe_claims",
    "finite_figure",
    "Figures",
    "measure",
    "Outcome",
    "Verdict",
    "Scale",
    "METHODS",
    "MethodInfo",
    "register",
    "progress",
    "seed_everything",
    "limit_threads",
    "thread_cap",
    "LocalContext",
]
