"""Smoke reproduction through the shared runner."""

from neurips25.repro.runner import run_one


def test_smoke_reproduction(tmp_path):
    res = run_one("rspool", "smoke", 0, str(tmp_path))
    assert res["status"] == "ok", res["error"]
    verdicts = {c["id"]: c["verdict"] for c in res["claims"]}
    assert set(verdicts) == {"c1_exact", "c2_clean", "c3_robust", "c4_no_masking"}
    assert "pending" not in verdicts.values()
    assert verdicts["c1_exact"] == "reproduced"
    assert res["figures"] == ["figures/paired_differences.png"]
    c4 = next(c for c in res["claims"] if c["id"] == "c4_no_masking")
    assert c4["verdict"] in ("reproduced", "not_reproduced")  # judged always, whatever c3 says
    assert all(c["summary"] for c in res["claims"])
