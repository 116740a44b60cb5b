"""`neurips25 report RUN_DIR... --docs DOCS_DIR` fills each method page's claims table from the runs (issue #63)."""

import json

import pytest

from neurips25.cli import main
from neurips25.repro.claims import Claim
from neurips25.repro.report import claims_table, update_docs
from neurips25.repro.store import atomic_write_json

BEGIN, END = "<!-- CLAIMS-TABLE {} -->", "<!-- /CLAIMS-TABLE -->"


def _write_run(run, slug, claims, finished_at, seeds=(0, 1), cpu_s=80.0, status="ok"):
    run.mkdir(parents=True, exist_ok=True)
    (run / "config.json").write_text(json.dumps({"scale": "smoke", "seeds": list(seeds)}))
    atomic_write_json(run / slug / "result.json", {
        "slug": slug, "status": status, "scale": "smoke", "seeds": list(seeds), "claims": claims, "wall_s": 90.0,
        "cpu_s": cpu_s, "finished_at": finished_at, "error": None if status == "ok" else "RuntimeError: boom",
        "provenance": {"code": {"commit": "0123456789abcdef"}}})


def _claims(headline_passes: bool):
    head = Claim("c2_gap", "the method beats the best baseline by 5x | at most", "ratio >= 5", kind="headline",
                 instance="stand-in", instance_note="a toy").judge(headline_passes, {"ratio": 7.0 if headline_passes
                                                                                      else 1.2}, summary="ratio")
    check = Claim("c1_exact", "the bound is an identity with $x_i$ and <eos> [see 3]", "exact", kind="check"
                  ).judge(True, 0)
    return [check.to_dict(), head.to_dict()]


def _page(tmp_path, slug, body="intro"):
    page = tmp_path / "docs" / f"{slug}.md"
    page.parent.mkdir(exist_ok=True)
    page.write_text(f"# {slug}\n\n{body}\n\n{BEGIN.format(slug)}\nstale typed table\n{END}\n\nafter\n")
    return page


def test_claims_table_rows_name_every_column_and_escape_markdown():
    res = {"status": "ok", "scale": "quick", "seeds": [0, 1], "cpu_s": 100.0, "finished_at": "2026-12-07T10:00:00",
           "claims": _claims(False)}
    text = claims_table("dbcare", res)
    lines = text.splitlines()
    assert lines[0].startswith("| claim | kind | judged on | what is claimed | criterion | method vs controls | "
                               "verdict | seeds |")
    # headline first, with its instance word, its criterion and its verdict
    assert lines[2].startswith("| `c2_gap` | headline | stand-in | ") and "ratio >= 5" in lines[2]
    assert "| not reproduced" in lines[2]
    # a pipe in a statement must not split the row; $ and <, _ are escaped so the site renders them as text
    assert lines[2].count(" | ") == 7 and "by 5x \\| at most" in lines[2]
    assert "\\$x\\_i\\$" in lines[3] and "&lt;eos>" in lines[3] and "\\[see 3\\]" in lines[3]
    assert "Scale `quick`, seeds 0, 1, run finished 2026-12-07; 50 s CPU per seed" in text
    assert claims_table("dbcare", None).startswith("No run of `dbcare` is recorded")


def test_update_docs_merges_runs_fills_markers_and_leaves_other_pages(tmp_path):
    # the older run reproduced, the newer did not: the newer result is the one shown
    _write_run(tmp_path / "old", "dbcare", _claims(True), "2026-12-01T00:00:00")
    _write_run(tmp_path / "new", "dbcare", _claims(False), "2026-12-02T00:00:00")
    dbcare = _page(tmp_path, "dbcare")
    fml = _page(tmp_path, "fml")  # no result for fml in either run
    vfs = tmp_path / "docs" / "vfs.md"
    vfs.write_text("# vfs\n\nno markers here\n")
    index = tmp_path / "docs" / "index.md"
    index.write_text("front\n<!-- METHODS-TABLE -->\nold\n<!-- /METHODS-TABLE -->\nend\n")

    done = update_docs(tmp_path / "docs", tmp_path / "old", tmp_path / "new")

    assert done == {"dbcare.md": "claims table", "fml.md": "no run recorded",
                    "vfs.md": "no CLAIMS-TABLE markers: left alone", "index.md": "methods table"}
    text = dbcare.read_text()
    assert text.startswith("# dbcare\n\nintro\n\n") and text.endswith(f"{END}\n\nafter\n")
    assert "stale typed table" not in text and "| `c2_gap` | headline | stand-in |" in text
    assert "not reproduced" in text and "finished 2026-12-02" in text  # the newer run
    assert "No run of `fml` is recorded" in fml.read_text()
    assert vfs.read_text() == "# vfs\n\nno markers here\n"
    row = next(line for line in index.read_text().splitlines() if line.startswith("| [dbcare]"))
    assert row.startswith("| [dbcare](dbcare.md) |") and "not reproduced (stand-in)" in row  # linked within docs/
    # running it again changes nothing (idempotent)
    before = {p.name: p.read_text() for p in (tmp_path / "docs").iterdir()}
    update_docs(tmp_path / "docs", tmp_path / "old", tmp_path / "new")
    assert {p.name: p.read_text() for p in (tmp_path / "docs").iterdir()} == before


def test_a_crashed_run_and_an_unclosed_marker_are_said(tmp_path):
    _write_run(tmp_path / "run", "dbcare", [], "2026-12-03T00:00:00", status="error")
    page = _page(tmp_path, "dbcare")
    update_docs(tmp_path / "docs", tmp_path / "run")
    assert "crashed: RuntimeError: boom" in page.read_text()
    page.write_text(f"{BEGIN.format('dbcare')}\nno end\n")
    with pytest.raises(ValueError, match="has no closing <!-- /CLAIMS-TABLE -->"):
        update_docs(tmp_path / "docs", tmp_path / "run")


def test_cli_report_docs(tmp_path, capsys):
    _write_run(tmp_path / "run", "dbcare", _claims(True), "2026-12-01T00:00:00")
    page = _page(tmp_path, "dbcare")
    assert main(["report", str(tmp_path / "run"), "--docs", str(tmp_path / "docs")]) == 0
    assert "docs tables updated" in capsys.readouterr().out and "| `c2_gap` |" in page.read_text()
    assert main(["report", str(tmp_path / "run"), "--docs", str(tmp_path / "nowhere")]) == 2
    assert "--docs" in capsys.readouterr().err
