"""The fml reproduction runs end to end at smoke scale."""

from neurips25.repro.runner import run_one


def test_smoke_reproduction(tmp_path):
    res = run_one("fml", "smoke", 0, str(tmp_path))
    assert res["status"] == "ok", res["error"]
    verdicts = {c["id"]: c["verdict"] for c in res["claims"]}
    assert len(verdicts) == 4 and "pending" not in verdicts.values()
    assert verdicts["c1_validity"] == "reproduced"  # validity cannot depend on the scale
    assert res["figures"] == ["figures/aggregation.png"]
    kinds = {c["id"]: c["kind"] for c in res["claims"]}
    assert [k for k, v in kinds.items() if v == "headline"] == ["c3_aggregation"]
    assert kinds["c1_validity"] == "check" and all(c["summary"] for c in res["claims"])
