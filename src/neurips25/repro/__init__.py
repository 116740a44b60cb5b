"""The reproduction machinery shared by every method; it knows no method.

A method's ``reproduce.py`` declares its claims and one ``run`` function::

    from neurips25.repro import Claim, Outcome, register

    @register("dbcare")
    def run(scale, seed, out):
        claim = Claim("c1", statement="...", paper_value="...", criterion="ratio <= 32", kind="headline")
        ratio = ...                      # measured here
        claim.judge(ratio <= 32, measured={"ratio": ratio}, summary=f"ratio {ratio:.1f}; needs <= 32")
        return Outcome([claim], metrics={...})

``scale`` is a :class:`Scale` (``smoke`` | ``quick`` | ``paper``), ``seed`` an int and ``out`` the
method's folder in the run directory (figures go to ``out / "figures"``).
"""

from neurips25.repro.claims import Claim, ClaimKind, Outcome, Verdict, describe_claims
from neurips25.repro.context import LocalContext
from neurips25.repro.progress import progress
from neurips25.repro.registry import METHODS, MethodInfo, register
from neurips25.repro.scale import Scale
from neurips25.repro.seeding import seed_everything
from neurips25.repro.threads import limit_threads, thread_cap

__all__ = [
    "Claim",
    "ClaimKind",
    "describe_claims",
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
