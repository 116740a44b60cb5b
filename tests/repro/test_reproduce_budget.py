"""benchmarks/reproduce_budget.py: the run's elapsed time is the union of its units' busy intervals."""

import importlib.util
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "reproduce_budget.py"


@pytest.fixture(scope="module")
def budget():
    spec = importlib.util.spec_from_file_location("reproduce_budget", _PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _unit(finished: str, wall: float) -> dict:
    return {"finished_at": finished, "wall_s": wall, "status": "ok"}


def test_overlapping_units_count_once(budget):
    results = {"a": _unit("2026-12-01T10:01:40", 100.0),   # 10:00:00-10:01:40
               "b": _unit("2026-12-01T10:01:00", 50.0)}    # 10:00:10-10:01:00, inside a
    assert budget.elapsed_s(results, {}) == pytest.approx(100.0)


def test_a_later_partial_rerun_does_not_count_the_gap(budget):
    results = {"a": _unit("2026-12-01T10:01:40", 100.0),   # first run
               "b": _unit("2026-12-01T15:00:30", 30.0)}    # re-run five hours later
    config = {"created": "2026-12-01T10:00:00"}
    assert budget.elapsed_s(results, config) == pytest.approx(130.0)


def test_missing_timestamps_give_none(budget):
    assert budget.elapsed_s({"a": {"wall_s": 3.0}}, {}) is None
