"""The chemcot-suite and chemcot-eval commands against a local server."""

import json

from neurips25.chemcot import RuleBasedSolver, serve
from neurips25.chemcot.commands import main


def test_suite_then_eval(tmp_path, capsys):
    suite = tmp_path / "suite.json"
    assert main(["chemcot-suite", "--out", str(suite), "--n", "1", "--seed", "0"]) == 0
    assert len(json.loads(suite.read_text())) >= 10
    url, stop = serve(RuleBasedSolver(depth=1, max_sites=2), model_name="rb")
    try:
        code = main(["chemcot-eval", "--base-url", url, "--model", "rb", "--suite", str(suite), "--workers", "2",
                     "--json", str(tmp_path / "scores.json")])
    finally:
        stop()
    out = capsys.readouterr().out
    assert code == 0 and "subtask" in out and "parse rate 1.000" in out
    scores = json.loads((tmp_path / "scores.json").read_text())
    assert scores["subtasks"]["add"]["pass"] == 1.0 and scores["failures"] == 0


def test_bad_suite_path_exits_2(tmp_path, capsys):
    assert main(["chemcot-eval", "--base-url", "http://127.0.0.1:9/v1", "--model", "m", "--suite",
                 str(tmp_path / "missing.json")]) == 2
    assert "existing JSON file" in capsys.readouterr().err
