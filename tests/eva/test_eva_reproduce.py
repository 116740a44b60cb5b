"""Smoke-scale reproduction: runs end to end and judges every claim."""

import json

from neurips25.repro.runner import run_one


def test_smoke_reproduction(tmp_path):
    res = run_one("eva", "smoke", 0, str(tmp_path))
    assert res["status"] == "ok", res["error"]
    claims = json.loads((tmp_path / "eva" / "result.json").read_text())["claims"]
    assert [c["id"] for c in claims] == ["c1", "c2", "c3", "c4", "c5"]
    assert all(c.get("summary") for c in claims)
    assert all(c["verdict"] != "pending" for c in claims)
    assert claims[0]["verdict"] == "reproduced"  # agreement with PEFT holds even on the tiny model
    assert (tmp_path / "eva" / "figures" / "loss_curves.png").is_file()
