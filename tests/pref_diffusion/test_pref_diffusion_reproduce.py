"""The smoke reproduction runs end to end, judges every claim with a kind and a summary, and its
controls fail the criteria they are there to fail."""

import json

import numpy as np
import pytest

from neurips25.pref_diffusion import metrics as M
from neurips25.pref_diffusion.reproduce import config_for, thresholds
from neurips25.repro import Scale
from neurips25.repro.runner import run_one


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    out = tmp_path_factory.mktemp("pd")
    res = run_one("pref_diffusion", "smoke", 0, str(out))
    assert res["status"] == "ok", res["error"]
    return res, out


def test_smoke_reproduction(smoke):
    res, out = smoke
    assert {c["id"] for c in res["claims"]} == {"c1", "c2", "c3", "c4"}
    assert all(c["verdict"] != "pending" for c in res["claims"])
    assert res["figures"] == ["figures/scatter_zdt1.png"]
    table = json.loads((out / "pref_diffusion" / "table.json").read_text())["hv_table"]
    assert set(table["zdt1"]) >= {
        "pgd",
        "pgd_w1",
        "pgd_w2",
        "pgd_w5",
        "pgd_dominance",
        "unguided",
        "unguided_redraw",
        "pgd_dominance_redraw",
        "multihead_nsga2",
        "data_best",
        "uniform_random",
        "oracle_nsga2",
    }
    assert 0 < table["zdt1"]["pgd"]["hv"] < 1.1**2


def test_every_claim_has_kind_and_summary(smoke):
    res, _ = smoke
    kinds = {c["id"]: c["kind"] for c in res["claims"]}
    assert kinds == {"c4": "headline", "c1": "supporting", "c2": "supporting", "c3": "supporting"}
    for c in res["claims"]:
        assert c["summary"].strip(), c["id"]
        assert "negative" in c["summary"], c["id"]
        assert "needs >=" in c["summary"], c["id"]
        assert c["instance"] == "stand-in", c["id"]
        assert c["decided_by"] == "machinery", c["id"]  # no verdict set by hand (issue 44)


def test_c4_controls_are_real_draws_judged_by_the_same_criterion(smoke):
    # guards the v2 review: c4's controls compared D(best) with itself under a strict `>` and could not pass
    res, _ = smoke
    c4 = next(c for c in res["claims"] if c["id"] == "c4")
    ctl = c4["measured"]["controls"]
    assert set(ctl) == {"unguided_redraw", "uniform_random", "oracle_nsga2"}
    for figs in ctl.values():
        assert set(figs) == set(c4["measured"]["method"]) and np.isfinite(figs["hv_ratio_multihead"])
    # every control's figures were computed in this run (measure), none handed over as a dict
    assert all(r["provenance"].startswith("ran ") for r in c4["control_results"])
    roles = {r["name"]: r["role"] for r in c4["control_results"]}
    assert roles == {"unguided_redraw": "negative", "uniform_random": "negative", "oracle_nsga2": "positive"}


def _c4_verdict(method, **controls):
    from neurips25.pref_diffusion.reproduce import declare_claims

    return {c.id: c for c in declare_claims(Scale.QUICK)}["c4"].record(method, controls=controls)


def test_a_passing_negative_control_leaves_no_verdict_standing():
    # guards issue 44: if the unguided redraw wins as often as PGD, c4 reads inconclusive (vacuous)
    won, lost = {t: True for t in "abcde"}, {t: False for t in "abcde"}
    good, bad = {"tasks": won, "hv_ratio_multihead": 1.0}, {"tasks": lost, "hv_ratio_multihead": 0.8}
    assert _c4_verdict(good, unguided_redraw=bad, uniform_random=bad, oracle_nsga2=good).verdict == "reproduced"
    vac = _c4_verdict(good, unguided_redraw=good, uniform_random=bad, oracle_nsga2=good)
    assert vac.verdict == "inconclusive" and "unguided_redraw" in vac.reason
    # a failing method counts as not reproduced only when the oracle shows the tasks allow a win
    assert _c4_verdict(bad, unguided_redraw=bad, uniform_random=bad, oracle_nsga2=good).verdict == "not_reproduced"
    assert _c4_verdict(bad, unguided_redraw=bad, uniform_random=bad, oracle_nsga2=bad).verdict == "inconclusive"
    # wins on 5/5 but below the surrogate ratio fails; a NaN ratio (diverged run) decides nothing
    low = {"tasks": won, "hv_ratio_multihead": 0.5}
    assert _c4_verdict(low, unguided_redraw=bad, uniform_random=bad, oracle_nsga2=good).verdict == "not_reproduced"
    nan = {"tasks": won, "hv_ratio_multihead": float("nan")}
    assert _c4_verdict(nan, unguided_redraw=bad, uniform_random=bad, oracle_nsga2=good).verdict == "inconclusive"


def test_thresholds_are_the_issues():
    th = thresholds(config_for(Scale.QUICK))
    assert (th["need_tasks"], th["n_tasks"], th["need_bi"], th["n_bi"], th["surrogate_ratio"]) == (
        4,
        5,
        2,
        3,
        0.9,
    )


def test_deb_spread_oracle():
    even = np.c_[np.linspace(0, 1, 11), 1 - np.linspace(0, 1, 11)]
    assert M.deb_spread(even) == pytest.approx(0.0, abs=1e-12)
    uneven = np.c_[[0, 0.05, 0.1, 1.0], [1.0, 0.95, 0.9, 0.0]]
    assert M.deb_spread(uneven) > 0.5
    # invariant to row order; nan for 3 objectives
    assert M.deb_spread(uneven[::-1]) == pytest.approx(M.deb_spread(uneven))
    assert np.isnan(M.deb_spread(np.random.default_rng(0).random((5, 3))))


def test_bradley_terry_weight_is_recorded(smoke):
    # the 0.5-weight observation behind the reused reference: recorded per task by the reproduction
    _, out = smoke
    w = json.loads((out / "pref_diffusion" / "table.json").read_text())["bt_weight"]["zdt1"]
    assert 0 < w["min_mean"] <= w["max_mean"] < 1 and w["max_sd"] >= 0
