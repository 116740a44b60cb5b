"""The narrow_gate reproduction runs end to end at smoke scale with the claims of issue #21."""

from neurips25.repro.runner import run_one


def test_smoke_reproduction(tmp_path):
    res = run_one("narrow_gate", "smoke", 0, str(tmp_path))
    assert res["status"] == "ok", res["error"]
    by_id = {c["id"]: c for c in res["claims"]}
    assert set(by_id) == {"c1_knockout_exact", "c2_narrow_gate", "c3_attention_share", "c4_steering",
                          "c5_residual_gap"}
    assert [c["id"] for c in res["claims"] if c["kind"] == "headline"] == ["c2_narrow_gate"]
    assert all(c["verdict"] != "pending" and c["summary"] for c in res["claims"])
    assert by_id["c1_knockout_exact"]["verdict"] == "reproduced"
    m = by_id["c2_narrow_gate"]["measured"]["N=16"]
    assert {"native_drop_eoi", "adapter_drop_all_image", "native_drop_random10"} <= set(m)
    assert res["figures"] == ["figures/narrow_gate_layers.png"]
