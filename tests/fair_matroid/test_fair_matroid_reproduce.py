"""The fair_matroid reproduction runs end to end at smoke scale."""

from neurips25.repro.runner import run_one


def test_smoke_reproduction(tmp_path):
    res = run_one("fair_matroid", "smoke", 0, str(tmp_path))
    assert res["status"] == "ok", res["error"]
    verdicts = {c["id"]: c["verdict"] for c in res["claims"]}
    assert len(verdicts) == 7 and "pending" not in verdicts.values()
    kinds = [c["kind"] for c in res["claims"]]
    assert kinds.count("headline") == 1
    # the exact checks cannot depend on the scale
    for cid in ("c1_characterization", "c3_two_groups", "c6_lottery"):
        assert verdicts[cid] == "reproduced", cid
    assert res["figures"] == ["figures/pof_random_models.png"]
