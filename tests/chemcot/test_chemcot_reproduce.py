"""The ChemCoTBench reproduction runs end to end at smoke scale."""

from neurips25.repro.runner import run_one


def test_smoke_reproduction(tmp_path):
    res = run_one("chemcot", "smoke", 0, str(tmp_path))
    assert res["status"] == "ok", res["error"]
    by_id = {c["id"]: c for c in res["claims"]}
    assert len(by_id) == 6 and all(c["verdict"] != "pending" for c in by_id.values())
    assert by_id["c1_metric_fidelity"]["verdict"] == "reproduced"
    assert by_id["c2_transport"]["measured"]["http_equals_inprocess"] is True
    assert by_id["c2_transport"]["measured"]["noisy_parse_rate"] == 1.0
    assert by_id["c4_llm_ranking"]["verdict"] == "inconclusive" and by_id["c4_llm_ranking"]["kind"] == "headline"
    assert by_id["c4b_llm_end_to_end"]["verdict"] == "reproduced"
    assert res["figures"] == ["figures/subtask_scores.png"]
