"""Reproduction of Fair Minimum Labeling's claims (Oettershagen & Michail, NeurIPS 2025).

Criteria fixed in issue #11 before any run:

1. validity: every labeling returned in this run is verified independently; coverage >= demand (exact
   methods) or >= demand / (1+eps)^(H+1) (bicriteria);
2. approximation: on 30 random graphs (n = 25..40) mean cost(FMLapprox, best of 5 trees) / OPT(MILP)
   <= 2.0 and max <= 2 ln n;
3. aggregation (RGG radius 0.2, n = 512 at quick scale, 5 seeds): FML's cost < 0.6x Closest's and
   Alternating's with both demands met; a model trained on the reached data has red (far group) accuracy
   >= 0.85 with FML, <= 0.6 with Greedy. Paper: FMLapprox 74.3 vs Closest 224.0 / Alternating 212.8;
   Greedy red accuracy 0.27 vs FML 0.93;
4. bicriteria speed: eps = 0.01, DP time <= 1/3 of the exact DP's at n = 512, coverage guarantee met.
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np

from neurips25.fml.baselines import alternating_labeling, closest_labeling, greedy_labeling
from neurips25.fml.data import aggregation_instance, group_test_set, small_instance
from neurips25.fml.milp import fml_milp
from neurips25.fml.solvers import fml_approx, fml_biapprox
from neurips25.fml.temporal import reaching_nodes
from neurips25.repro import Claim, Outcome, Scale, progress, register

METHODS = ("FMLapprox", "FMLbiApprox", "Greedy", "Closest", "Alternating")


def approximation_study(n_graphs: int, seed: int, time_limit: float):
    rng = np.random.default_rng(seed)
    rows = []
    for _ in progress(range(n_graphs), desc="vs MILP", total=n_graphs):
        G, colors, t, demand = small_instance(rng)
        opt = fml_milp(G, colors, t, demand, time_limit=time_limit)
        approx = fml_approx(G, colors, t, demand, n_trees=5, seed=int(rng.integers(2**31)))
        # an unproven MILP is compared with its dual bound: the ratio can only be overstated
        lower = opt.cost if opt.info["optimal"] else opt.info["dual_bound"]
        rows.append({"n": G.number_of_nodes(), "opt": opt.cost, "optimal": opt.info["optimal"], "lower": lower,
                     "approx": approx.cost, "ratio": approx.cost / max(lower, 1e-12),
                     "valid": approx.demand_met and opt.demand_met})
    return rows


def aggregation_study(n: int, seeds: int, seed0: int, demand: int):
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier

    table = {m: [] for m in METHODS}
    first = None
    for s in progress(range(seeds), desc="aggregation", total=seeds):
        G, colors, t, X, y, owner = aggregation_instance(n, seed0 + s)
        red_flag = np.array([1.0 if colors[v] == "red" else 0.0 for v in owner])
        test = group_test_set(2000, seed0 + 100 + s)
        dem = {"blue": demand, "red": demand}
        results = {
            "FMLapprox": fml_approx(G, colors, t, dem, n_trees=5, seed=seed0 + s),
            "FMLbiApprox": fml_biapprox(G, colors, t, dem, eps=0.01, seed=seed0 + s),
            "Greedy": greedy_labeling(G, colors, t, dem),
            "Closest": closest_labeling(G, colors, t, dem),
            "Alternating": alternating_labeling(G, colors, t, dem),
        }
        for name, res in results.items():
            reached = reaching_nodes(G, res.labeling, [t])
            mask = np.isin(owner, list(reached))
            acc = {"blue": 0.5, "red": 0.5}
            if mask.sum() >= 10 and len(np.unique(y[mask])) == 2:
                clf = MLPClassifier(hidden_layer_sizes=(32, 32), learning_rate_init=0.01, alpha=0.01,
                                    batch_size=64, max_iter=100, early_stopping=True, random_state=seed0 + s)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    clf.fit(np.column_stack([X[mask], red_flag[mask]]), y[mask])
                acc = {c: float(clf.score(*test[c])) for c in ("blue", "red")}
            table[name].append({"cost": res.cost, "cov_blue": res.coverage.get("blue", 0),
                                "cov_red": res.coverage.get("red", 0), "demand_met": res.demand_met,
                                "acc_blue": acc["blue"], "acc_red": acc["red"], "time_s": res.runtime_s,
                                "dp_s": res.info.get("dp_seconds"), "coverage_factor": res.info.get("coverage_factor")})
        if first is None:
            first = (G, results["FMLapprox"], t, colors)
    return table, first


def bicriteria_speed(n: int, seed: int, demand: int):
    G, colors, t, *_ = aggregation_instance(n, seed)
    dem = {"blue": demand, "red": demand}
    exact = fml_approx(G, colors, t, dem, n_trees=1, seed=seed)
    bi = fml_biapprox(G, colors, t, dem, eps=0.01, n_trees=1, seed=seed)
    need = {c: d / bi.info["coverage_factor"] for c, d in dem.items()}
    return {"exact_dp_s": exact.info["dp_seconds"], "bi_dp_s": bi.info["dp_seconds"],
            "ratio": bi.info["dp_seconds"] / exact.info["dp_seconds"], "bi_coverage": bi.coverage,
            "required": need, "bi_guarantee_met": bi.demand_met, "tree_height": bi.info["tree_height"],
            "exact_cost": exact.cost, "bi_cost": bi.cost}


def _figures(first, table, out: Path) -> None:
    from matplotlib import cm
    from matplotlib.figure import Figure

    G, res, t, colors = first
    pos = {v: G.nodes[v]["pos"] for v in G}
    fig = Figure(figsize=(12, 5))
    ax = fig.add_subplot(1, 2, 1)
    ax.scatter([pos[v][0] for v in G], [pos[v][1] for v in G], s=6,
               c=["tab:blue" if colors[v] == "blue" else "tab:red" for v in G], alpha=0.35)
    times = [ts[0] for ts in res.labeling.times.values()]
    tmax = max(times) if times else 1
    for e, ts in res.labeling.times.items():
        u, v = tuple(e)
        ax.plot([pos[u][0], pos[v][0]], [pos[u][1], pos[v][1]], color=cm.viridis(ts[0] / tmax), lw=1.6)
    ax.scatter([pos[t][0]], [pos[t][1]], marker="*", s=250, c="k", zorder=5)
    ax.set_title(f"FMLapprox activation plan (cost {res.cost:g}); edge colour = time label")
    ax.set_aspect("equal")
    ax = fig.add_subplot(1, 2, 2)
    for name, rows in table.items():
        cost = [r["cost"] for r in rows]
        cov = [r["cov_red"] for r in rows]
        ax.scatter(cost, cov, label=name, s=30)
    ax.set_xlabel("activation cost"), ax.set_ylabel("red-group coverage")
    ax.set_title("cost vs coverage of the far group, per seed"), ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "figures" / "aggregation.png", dpi=110)


@register("fml")
def run(scale: Scale, seed: int, out: Path) -> Outcome:
    n_graphs = scale.pick(smoke=3, quick=30, paper=30)
    n_agg = scale.pick(smoke=96, quick=512, paper=1024)
    seeds = scale.pick(smoke=1, quick=5, paper=5)
    demand = scale.pick(smoke=6, quick=32, paper=32)
    claims = [
        Claim("c1_validity", "every plan is a valid temporal labeling meeting the coverage demand",
              criterion="all labelings verified; coverage >= demand (exact) or >= demand/(1+eps)^(H+1)", kind="check"),
        Claim("c2_approximation", "FMLapprox is an O(log n)-approximation (in expectation)",
              paper_value="O(log n), matching the Omega(log n) hardness",
              criterion="30 graphs, n=25..40: mean cost/OPT <= 2.0 and max <= 2 ln n (best of 5 FRT trees)",
                  kind="headline"),
        Claim("c3_aggregation", "fair plans meet both groups' demands at much lower cost than the fairness-aware "
              "heuristics, and only fair plans train a model that works for both groups",
              paper_value="cost FMLapprox 74.3 vs Closest 224.0, Alternating 212.8; red acc Greedy 0.27 vs FML 0.93",
              criterion="mean FML cost < 0.6 x Closest's and Alternating's; demands met every seed; "
                        "FML red accuracy >= 0.85; Greedy red accuracy <= 0.6", kind="supporting"),
        Claim("c4_bicriteria_speed", "FMLbiApprox is much faster than the exact DP with coverage close to demand",
              paper_value="~10x faster on BA graphs, >98% coverage",
              criterion=f"eps=0.01, n={n_agg}: DP time <= 1/3 of the exact DP; coverage >= demand/(1+eps)^(H+1)",
                  kind="supporting"),
    ]

    rows = approximation_study(n_graphs, seed, time_limit=scale.pick(smoke=20, quick=30, paper=120))
    ratios = np.array([r["ratio"] for r in rows])
    bound = np.array([2 * math.log(r["n"]) for r in rows])
    claims[1].judge(bool(ratios.mean() <= 2.0 and np.all(ratios <= bound)), {
        "mean_ratio": ratios.mean(), "max_ratio": ratios.max(), "min_2ln_n": bound.min(),
        "milp_proven_optimal": int(sum(r["optimal"] for r in rows)), "graphs": len(rows)})

    table, first = aggregation_study(n_agg, seeds, seed, demand)
    mean = {m: {k: float(np.mean([r[k] for r in rows_])) for k in ("cost", "cov_blue", "cov_red", "acc_blue",
                                                                      "acc_red", "time_s")}
            for m, rows_ in table.items()}
    fml_cost = mean["FMLapprox"]["cost"]
    met = all(r["demand_met"] for r in table["FMLapprox"])
    claims[2].judge(
        fml_cost < 0.6 * mean["Closest"]["cost"] and fml_cost < 0.6 * mean["Alternating"]["cost"] and met
        and mean["FMLapprox"]["acc_red"] >= 0.85 and mean["Greedy"]["acc_red"] <= 0.6,
        {m: {k: round(v, 3) for k, v in d.items()} for m, d in mean.items()},
        note=f"n={n_agg}, demand {demand} per group, {seeds} seeds; baselines label each shortest path on its own "
             f"(reconstructed definitions)")

    speed = bicriteria_speed(n_agg, seed, demand)
    claims[3].judge(speed["ratio"] <= 1 / 3 and speed["bi_guarantee_met"], speed,
                    note="both DPs are capped at the demand; bucketing with eps=0.01 merges nothing below counts "
                         "of ~100, so it can only pay off for demands in the hundreds")

    # every result above went through verify_labeling (labels on edges, positive integers); FML plans must
    # also meet their (bicriteria) demand
    valid = [r["valid"] for r in rows] + [r["demand_met"] for m in ("FMLapprox", "FMLbiApprox") for r in table[m]]
    valid.append(speed["bi_guarantee_met"])
    claims[0].judge(all(valid), {"plans_checked": len(valid), "all_valid": all(valid)})

    _figures(first, table, out)
    return Outcome(claims, metrics={"approximation": rows, "aggregation": table, "bicriteria": speed},
                   notes="Baselines, the demand of 32 per group and the paper's table values come from a "
                         "secondary summary of the paper (reconstructed).")
