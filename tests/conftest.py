"""Shared test set-up: quiet progress, a non-interactive matplotlib backend, few threads; a skip audit.

The skip audit: at the end of a session pytest prints how many tests skipped and why, with those skipped for
a missing install counted apart. With ``NEURIPS25_REQUIRE_ALL=1`` (``make test`` sets it: it installs every
extra, data wheel and pretrained model) the session fails when a test skipped because a piece neurips25
installs is missing, so a green ``make test`` means every path ran. A skip for a third-party reference that
neurips25 does not depend on (e.g. NATTEN) is listed but does not fail the session.
"""

import importlib.util
import os
import sys
from collections import Counter

import pytest

os.environ.setdefault("NEURIPS25_QUIET", "1")
os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

REQUIRE_ALL = "NEURIPS25_REQUIRE_ALL"


@pytest.fixture(autouse=True, scope="module")
def one_torch_thread():
    """torch at one intra-op thread for every test module, restored after it: the ONE place the suite pins torch's
    threads. On a loaded 2-core machine torch's default of one thread per core only spins against the other jobs
    (tests/scm: 306 s of CPU at the default threads, 85 s at one). Module scope, so that module-scoped fixtures (a
    fitted model) are built at the thread count of their tests. torch is imported only where it is installed: a
    folder that needs only numpy runs without it (the "importing neurips25 imports no torch" checks run in a fresh
    subprocess, untouched by this)."""
    if "torch" not in sys.modules and importlib.util.find_spec("torch") is None:
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


_SKIPS: list[tuple[str, str]] = []  # (test id, reason)


def _skip_reason(report) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        reason = str(longrepr[2])
    else:
        reason = str(longrepr)
    return reason.removeprefix("Skipped: ")


def pytest_runtest_logreport(report):
    if report.skipped and not hasattr(report, "wasxfail"):
        _SKIPS.append((report.nodeid, _skip_reason(report)))


def _audit():
    from neurips25.repro.doctor import skip_for_missing_piece

    ours, third_party, other = Counter(), Counter(), Counter()
    for _, reason in _SKIPS:
        about_install, piece = skip_for_missing_piece(reason)
        (ours if piece else third_party if about_install else other)[reason] += 1
    return ours, third_party, other


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session, exitstatus):
    if os.environ.get(REQUIRE_ALL) == "1" and _audit()[0] and exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter):
    if not _SKIPS:
        return
    ours, third_party, other = _audit()
    tr = terminalreporter
    tr.section(f"skip audit: {len(_SKIPS)} skipped")
    for title, counts in (("skipped for a missing neurips25 piece (an extra, a data wheel, a pretrained model)",
                           ours),
                          ("skipped for a third-party reference neurips25 does not install", third_party),
                          ("skipped because the case does not apply", other)):
        if counts:
            tr.write_line(f"{sum(counts.values())} {title}:")
            for reason, n in counts.most_common():
                tr.write_line(f"  {n:>4}  {reason}")
    if ours and os.environ.get(REQUIRE_ALL) == "1":
        tr.write_line(f"FAILED: {sum(ours.values())} test(s) skipped for a missing install, but {REQUIRE_ALL}=1 "
                      "(make test installs everything; `neurips25 doctor` names the command)", red=True, bold=True)
