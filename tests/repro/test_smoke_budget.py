"""The time budget of the machinery: every implemented method's smoke reproduction, in ONE process (as
``neurips25 reproduce --scale smoke`` runs them), finishes within 5 minutes, and every result declares claim
kinds with a headline claim, every headline and supporting claim with its instance word, every verdict set by
the machinery. This tests the machinery (thread caps, no method leaking state into the next),
not a method's speed: a method whose smoke run is slow shows up here first."""

import json
import subprocess
import sys

import pytest

from neurips25.repro.registry import METHODS

BUDGET_S = 300


@pytest.mark.slow
def test_every_smoke_reproduction_in_one_process_within_five_minutes(tmp_path):
    slugs = [m.slug for m in METHODS.values() if m.usable()]
    if not slugs:
        pytest.skip("no method usable here")
    out = tmp_path / "smoke"
    proc = subprocess.run([sys.executable, "-m", "neurips25", "reproduce", *slugs, "--scale", "smoke",
                           "--out", str(out)], capture_output=True, text=True, timeout=BUDGET_S + 120)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    total = 0.0
    for slug in slugs:
        res = json.loads((out / slug / "result.json").read_text())
        assert res["status"] == "ok", (slug, res["error"])
        kinds = [c["kind"] for c in res["claims"]]
        assert kinds and set(kinds) <= {"headline", "supporting", "check"}, slug
        assert "headline" in kinds, f"{slug} declares no headline claim"
        for c in res["claims"]:  # verdicts v4: every judged claim says what it was judged on (issue #58)
            if c["kind"] != "check":
                assert c.get("instance") in ("paper", "reduced", "stand-in"), (slug, c["id"])
                assert c["instance"] != "stand-in" or c.get("instance_note"), (slug, c["id"])
            assert c["decided_by"] == "machinery", (slug, c["id"])
        assert res["threads"]["torch"] in (None, 1), slug
        total += res["wall_s"]
    assert total < BUDGET_S, f"smoke reproductions took {total:.0f}s in all; the budget is {BUDGET_S}s"
