"""The 3DID reproduction runs end to end at smoke scale and writes its figures, cache and design mesh."""

from pathlib import Path

from neurips25.repro.runner import run_one


def test_smoke_reproduction(tmp_path):
    res = run_one("inverse3d", "smoke", 0, str(tmp_path))
    assert res["status"] == "ok", res["error"]
    ids = [c["id"] for c in res["claims"]]
    assert ids == ["c1_solver", "c1_phiflow", "c2_sim_drag", "c3_ablation", "c4_physics_branch", "c5_mesh_surrogate"]
    assert all(c["verdict"] != "pending" and c["summary"] for c in res["claims"])
    assert [c["kind"] for c in res["claims"]].count("headline") == 1
    # verdicts v3: the machinery judges every claim, each with its declared controls measured
    assert all(c["decided_by"] == "machinery" for c in res["claims"])
    ctl = {c["id"]: sorted(r["name"] for r in c["control_results"]) for c in res["claims"]}
    assert ctl["c2_sim_drag"] == ["best_k_training", "shuffled_drag"]
    assert ctl["c5_mesh_surrogate"] == ["shuffled_gnn", "solver_gradient"]
    c2 = next(c for c in res["claims"] if c["id"] == "c2_sim_drag")
    assert "prior" in c2["summary"] and c2["preconditions"]
    assert all(r["provenance"].startswith("ran ") for c in res["claims"] for r in c["control_results"])
    assert sorted(res["figures"]) == ["figures/best_designs.png", "figures/drag_histograms.png",
                                      "figures/surface_pressure.png"]
    cache = list(Path(tmp_path).rglob("cache/*.npz"))
    assert len(cache) >= 8  # every solved body is cached


def test_training_labels_use_the_designs_body_convention():
    # review #23 / issue #52: labels were solved on the one-cell ramp, designs as 0.5-level solids (Spearman 0.82
    # between the two); the reproduction's own evaluation of a training body's crop must give back its label
    import numpy as np

    from neurips25.inverse3d import BrinkmanSpectralNS, DesignSpace, SolveCache, build_dataset
    from neurips25.inverse3d.reproduce import _evaluate

    ns = BrinkmanSpectralNS(grid=(32, 16, 16), steps=10)
    space = DesignSpace(ns.grid, ns.h)
    cache = SolveCache(None)
    data = build_dataset(2, ns, space, cache, seed=0, n_points=16, n_occ=32)
    cdv, valid, inside = _evaluate(data["occ"], ns, space, cache)
    assert valid.all()
    np.testing.assert_allclose(cdv, data["cdv"], rtol=1e-6)
    assert cache.misses == 2  # the evaluation found the labels' solves: the same solid, not a re-solve


def test_headline_rule_and_paired_refinement_figures():
    import numpy as np

    from neurips25.inverse3d.reproduce import _paired, declare_claims

    claims = {c.id: c for c in declare_claims("smoke")}
    _c2_rule = claims["c2_sim_drag"].rule  # read through the machinery's Figures view: None/NaN -> undecided
    ok = dict(reduction=0.08, worst_seed_reduction=0.02, valid=1.0, inside=1.0)
    assert _c2_rule(ok) is True
    assert _c2_rule(dict(ok, reduction=0.03)) is False
    assert _c2_rule(dict(ok, valid=5 / 6)) is False  # a design without a drag fails the headline, never passes
    assert _c2_rule(dict(ok, reduction=None)) is None
    assert _c2_rule(dict(ok, reduction=float("nan"))) is None
    assert all(c.instance == "stand-in" for c in claims.values() if c.kind != "check")
    before = np.array([1.0, 1.2, 1.1, np.nan])
    f = _paired(before, before * 0.97, seed=0)  # a planted 3% drop on every design with a drag
    assert f["n_pairs"] == 3 and abs(f["paired_ratio"] - 0.97) < 1e-9 and f["ci_high"] < 1
    assert _paired(before[:1], before[:1], seed=0)["paired_ratio"] is None
