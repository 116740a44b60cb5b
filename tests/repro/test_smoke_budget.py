"""The machinery across methods, within the folder's CPU budget (issue #59).

Every method's own folder runs its smoke reproduction (tests/<slug>/); running all nineteen again here cost
~60 CPU-s, over this folder's 60 s budget on its own. What only this folder can check stays:
- every registered method DECLARES kinds with a headline and an instance word on every judged claim, at every
  scale (``declared_claims``, nothing runs, all nineteen);
- methods run one after another in ONE process (as ``neurips25 reproduce`` runs them) do not leak state into
  each other: thread caps, verdicts set by the machinery, each result ok. This runs the six methods whose smoke
  run costs under ~2 CPU-s (0.6-1.9 s each on the reference host), which span torch training, a torch Sampler,
  networkx/scipy, pymoo and Paillier crypto; the other thirteen run their smoke reproduction in their own folders.
"""

import json
import subprocess
import sys

import pytest

from neurips25.repro.registry import METHODS, declared_claims

BUDGET_S = 60
ONE_PROCESS = ("fair_matroid", "ctsketch", "perm_sgd", "scm", "vfs", "pref_diffusion")


@pytest.mark.parametrize("scale", ["smoke", "quick", "paper"])
def test_every_method_declares_a_headline_and_instance_words(scale):
    slugs = [m.slug for m in METHODS.values() if m.usable()]
    assert len(slugs) == 19, sorted(slugs)
    for slug in slugs:
        claims = declared_claims(slug, scale)
        kinds = [c.kind for c in claims]
        assert kinds and set(kinds) <= {"headline", "supporting", "check"}, slug
        assert "headline" in kinds, f"{slug} declares no headline claim at {scale}"
        for c in claims:  # verdicts v4: every judged claim says what it is judged on (issue #58)
            if c.kind != "check":
                assert c.instance in ("paper", "reduced", "stand-in"), (slug, c.id)
                assert c.instance != "stand-in" or c.instance_note, (slug, c.id)


@pytest.mark.slow
def test_methods_in_one_process_leak_nothing_into_each_other(tmp_path):
    slugs = [s for s in ONE_PROCESS if s in METHODS and METHODS[s].usable()]
    assert len(slugs) == len(ONE_PROCESS), "a method of the one-process set is not usable here"
    out = tmp_path / "smoke"
    proc = subprocess.run([sys.executable, "-m", "neurips25", "reproduce", *slugs, "--scale", "smoke",
                           "--out", str(out)], capture_output=True, text=True, timeout=BUDGET_S + 120)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    total = 0.0
    for slug in slugs:
        res = json.loads((out / slug / "result.json").read_text())
        assert res["status"] == "ok", (slug, res["error"])
        assert "headline" in [c["kind"] for c in res["claims"]], slug
        for c in res["claims"]:
            assert c["decided_by"] == "machinery", (slug, c["id"])
            if c["kind"] != "check":
                assert c.get("instance") in ("paper", "reduced", "stand-in"), (slug, c["id"])
        assert res["threads"]["torch"] in (None, 1), slug
        total += res["wall_s"]
    assert total < BUDGET_S, f"smoke reproductions took {total:.0f}s in all; the budget is {BUDGET_S}s"
