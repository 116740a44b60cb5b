"""Reproduction of Fair Minimum Labeling's claims (Oettershagen & Michail, NeurIPS 2025).

Criteria fixed in issue #27 before any run (v2; v1's were issue #11):

1. validity (check): every labeling returned is verified independently; FML and the fair baselines
   (Closest, Alternating) meet their demand, FMLbiApprox its relaxed demand d / (1+eps)^(H+1).
   Control: the FML plan with its labels reversed (decreasing toward the terminal) must fail.
2. approximation (supporting): on 30 random graphs (n = 25..40) mean cost(FMLapprox, best of 5 trees) /
   OPT(MILP) <= 2.0 and max <= 2 ln n, Closest and Alternating reported beside it; on detour graphs
   (shortest-path heuristics provably bad, ``data.detour_instance``) FML's mean cost/OPT <= 2 and the best
   fair baseline costs >= 1.3x FML's on average. Controls: Closest and Alternating on the detour graphs
   (mean cost/OPT must exceed 2).
3. aggregation (headline): RGG radius 0.2, n = 512 at quick scale, far red group (aggregator at the left
   edge, red = x >= 0.75), demand 32 per group, 5 seeds: mean FML cost <= 0.6x Closest's and
   Alternating's with both demands met every seed; red accuracy of a model trained on the reached data
   >= 0.9 with FML, <= 0.6 with Greedy. The baselines are judged in the paper's accounting (each path
   labelled in its own time window, cost = sum of path costs, which is what the paper's 224 for 64 paths
   implies); the shared-label accounting is reported beside. Paper: FMLapprox 74.3 vs Closest 224.0 /
   Alternating 212.8; red accuracy Greedy 0.27 vs FML 0.93. Controls: Alternating's cost / Closest's
   (must be > 0.6); Greedy's red accuracy (must be < 0.9).
4. bicriteria speed (supporting): eps = 0.01, BA n = 1024 at quick scale, demand half of each class:
   FMLbiApprox's DP CPU time <= 1/3 of the paper's uncapped exact DP on the same FRT tree, and coverage
   >= d / (1+eps)^(H+1). Both DPs use the same uncapped tables (the paper's form), so the ratio measures
   the buckets alone. Controls: buckets with eps = 1e-6 (no two counts merge: must miss the 1/3), and
   rounding after every child merge on a 400-leaf star with d = 250 (must miss the coverage bound).
"""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import networkx as nx
import numpy as np

from neurips25.fml.baselines import alternating_labeling, closest_labeling, greedy_labeling
from neurips25.fml.data import aggregation_instance, detour_instance, group_test_set, small_instance
from neurips25.fml.milp import fml_milp
from neurips25.fml.solvers import fml_approx, fml_approx_uncapped, fml_biapprox
from neurips25.fml.temporal import TemporalLabeling, reaching_nodes, verify_labeling
from neurips25.fml.tree_dp import TreeDP
from neurips25.repro import Claim, Outcome, Scale, progress, register

METHODS = ("FMLapprox", "FMLbiApprox", "Greedy", "Closest", "Alternating")


def _lower(opt) -> float:
    # an unproven MILP is compared with its dual bound: ratios can only be overstated
    return opt.cost if opt.info["optimal"] else opt.info["dual_bound"]


def approximation_study(n_graphs: int, n_detour: int, seed: int, time_limit: float):
    """Cost / OPT of FML and the fair baselines on random graphs and on detour graphs."""
    rng = np.random.default_rng(seed)
    rows = {"random": [], "detour": []}
    plans = []
    for family, count in (("random", n_graphs), ("detour", n_detour)):
        for _ in progress(range(count), desc=f"vs MILP ({family})", total=count):
            if family == "random":
                G, colors, t, demand = small_instance(rng)
            else:
                G, colors, t, demand, _ = detour_instance(rng)
            opt = fml_milp(G, colors, t, demand, time_limit=time_limit)
            res = {"FMLapprox": fml_approx(G, colors, t, demand, n_trees=5, seed=int(rng.integers(2**31))),
                   "Closest": closest_labeling(G, colors, t, demand),
                   "Alternating": alternating_labeling(G, colors, t, demand)}
            lower = max(_lower(opt), 1e-12)
            row = {"n": G.number_of_nodes(), "opt": opt.cost, "optimal": opt.info["optimal"], "lower": lower,
                   "fml_single_tree": min(res["FMLapprox"].info["costs_per_tree"][:1]) / lower}
            for name, r in res.items():
                row[name] = r.cost / lower
            rows[family].append(row)
            plans += [("MILP", opt)] + list(res.items())
    return rows, plans


def _accuracy(G, res, t, X, y, owner, red_flag, test, seed):
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier

    reached = reaching_nodes(G, res.labeling, [t])
    mask = np.isin(owner, list(reached))
    if mask.sum() < 10 or len(np.unique(y[mask])) < 2:
        return {"blue": 0.5, "red": 0.5}
    clf = MLPClassifier(hidden_layer_sizes=(32, 32), learning_rate_init=0.01, alpha=0.01, batch_size=64,
                        max_iter=100, early_stopping=True, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(np.column_stack([X[mask], red_flag[mask]]), y[mask])
    return {c: float(clf.score(*test[c])) for c in ("blue", "red")}


def aggregation_study(n: int, seeds: int, seed0: int, demand: int):
    table = {m: [] for m in (*METHODS, "Closest (shared labels)", "Alternating (shared labels)")}
    first, plans = None, []
    for s in progress(range(seeds), desc="aggregation", total=seeds):
        G, colors, t, X, y, owner = aggregation_instance(n, seed0 + s)
        red_flag = np.array([1.0 if colors[v] == "red" else 0.0 for v in owner])
        test = group_test_set(2000, seed0 + 100 + s)
        dem = {"blue": demand, "red": demand}
        results = {
            "FMLapprox": fml_approx(G, colors, t, dem, n_trees=5, seed=seed0 + s),
            "FMLbiApprox": fml_biapprox(G, colors, t, dem, eps=0.01, seed=seed0 + s),
            "Greedy": greedy_labeling(G, colors, t, dem, share_labels=False),
            "Closest": closest_labeling(G, colors, t, dem, share_labels=False),
            "Alternating": alternating_labeling(G, colors, t, dem, share_labels=False),
            "Closest (shared labels)": closest_labeling(G, colors, t, dem),
            "Alternating (shared labels)": alternating_labeling(G, colors, t, dem),
        }
        for name, res in results.items():
            acc = (_accuracy(G, res, t, X, y, owner, red_flag, test, seed0 + s) if name in METHODS
                   else {"blue": np.nan, "red": np.nan})
            table[name].append({"cost": res.cost, "cov_blue": res.coverage.get("blue", 0),
                                "cov_red": res.coverage.get("red", 0), "demand_met": res.demand_met,
                                "acc_blue": acc["blue"], "acc_red": acc["red"], "time_s": res.runtime_s})
            plans.append((name, res))
        if first is None:
            first = (G, results["FMLapprox"], t, colors)
    return table, first, plans


def bicriteria_speed(n: int, seeds: int, seed0: int):
    """DP CPU time of the paper's uncapped exact DP vs the bucketed DP on the same FRT tree (BA graph)."""
    rows = []
    for s in progress(range(seeds), desc="bicriteria", total=seeds):
        G = nx.barabasi_albert_graph(n, 3, seed=seed0 + s)
        rng = np.random.default_rng(seed0 + s)
        colors = {v: ("blue" if rng.random() < 0.5 else "red") for v in G}
        dem = {"blue": 0.5, "red": 0.5}
        t = 0  # the BA graph's oldest node, a hub
        exact = fml_approx_uncapped(G, colors, t, dem, seed=seed0 + s)
        bi = fml_biapprox(G, colors, t, dem, eps=0.01, seed=seed0 + s, cap="class")
        control = fml_biapprox(G, colors, t, dem, eps=1e-6, seed=seed0 + s, cap="class")
        capped = fml_biapprox(G, colors, t, dem, eps=0.01, seed=seed0 + s)
        need = {c: d / bi.info["coverage_factor"] for c, d in bi.demand.items()}
        rows.append({"n": n, "demand": bi.demand, "exact_dp_cpu_s": exact.info["dp_cpu_s"],
                     "bi_dp_cpu_s": bi.info["dp_cpu_s"], "ratio": bi.info["dp_cpu_s"] / exact.info["dp_cpu_s"],
                     "control_eps1e-6_ratio": control.info["dp_cpu_s"] / exact.info["dp_cpu_s"],
                     "bi_capped_at_demand_ratio": capped.info["dp_cpu_s"] / exact.info["dp_cpu_s"],
                     "bi_coverage": bi.coverage, "required": need, "bi_guarantee_met": bi.demand_met,
                     "coverage_fraction": min(bi.coverage[c] / d for c, d in bi.demand.items()),
                     "tree_height": bi.info["tree_height"], "exact_cost": exact.cost, "bi_cost": bi.cost,
                     "plans": [exact, bi, control, capped]})
    return rows


def star_control(k: int = 400, d: int = 250, eps: float = 0.01):
    """Coverage of the bucketed DP on a k-leaf star, rounding once per node vs after every child merge."""
    parent = np.array([-1] + [0] * k)
    weight = np.r_[0.0, np.ones(k)]
    leaf_colour = {i: 0 for i in range(1, k + 1)}
    out = {}
    for name, each in (("once_per_node", False), ("every_merge", True)):
        dp = TreeDP(parent, weight, leaf_colour, 1, [d], eps=eps, _round_each_merge=each)
        _, sel = dp.solve()
        out[name] = 0 if sel is None else len(sel)
    out["required"] = d / (1 + eps) ** (dp.height + 1)
    return out


def _reversed(labeling: TemporalLabeling) -> TemporalLabeling:
    top = max((t for ts in labeling.times.values() for t in ts), default=0)
    return TemporalLabeling({e: tuple(sorted(top + 1 - t for t in ts)) for e, ts in labeling.times.items()})


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
        ax.scatter([r["cost"] for r in rows], [r["cov_red"] for r in rows], label=name, s=30)
    ax.set_xlabel("activation cost"), ax.set_ylabel("red-group coverage")
    ax.set_title("cost vs coverage of the far group, per seed"), ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "figures" / "aggregation.png", dpi=110)


def _spread(x) -> str:
    x = np.asarray(x, dtype=float)
    return f"{x.mean():.2f} [{x.min():.2f}, {x.max():.2f}]"


@register("fml")
def run(scale: Scale, seed: int, out: Path) -> Outcome:
    n_graphs = scale.pick(smoke=3, quick=30, paper=30)
    n_detour = scale.pick(smoke=2, quick=10, paper=20)
    n_agg = scale.pick(smoke=96, quick=512, paper=1024)
    seeds = scale.pick(smoke=1, quick=5, paper=5)
    demand = scale.pick(smoke=6, quick=32, paper=32)
    n_bi = scale.pick(smoke=128, quick=1024, paper=1024)
    bi_seeds = scale.pick(smoke=1, quick=2, paper=3)
    claims = [
        Claim("c1_validity", "every plan is a valid temporal labeling meeting its coverage demand",
              criterion="all labelings verified; FML, Closest, Alternating meet the demand; FMLbiApprox "
                        ">= demand/(1+eps)^(H+1); the reversed-label control fails", kind="check"),
        Claim("c2_approximation", "FMLapprox is an O(log n)-approximation (in expectation)",
              paper_value="O(log n), matching the Omega(log n) hardness",
              criterion="random graphs (n=25..40): mean cost/OPT <= 2.0 and max <= 2 ln n; detour graphs: mean "
                        "cost/OPT <= 2 and best fair baseline >= 1.3x FML on average (best of 5 FRT trees); "
                        "Closest/Alternating must exceed 2x OPT on the detour graphs", kind="supporting"),
        Claim("c3_aggregation", "fair plans meet both groups' demands at much lower cost than the fairness-aware "
              "heuristics, and only fair plans train a model that works for both groups",
              paper_value="cost FMLapprox 74.3 vs Closest 224.0, Alternating 212.8; red acc Greedy 0.27 vs FML 0.93",
              criterion=f"RGG n={n_agg}, far red group, demand {demand}/{demand}, {seeds} seeds: mean FML cost <= 0.6 "
                        "x Closest's and Alternating's (per-path accounting); demands met every seed; FML red "
                        "accuracy >= 0.9; Greedy red accuracy <= 0.6", kind="headline"),
        Claim("c4_bicriteria_speed", "FMLbiApprox is much faster than the exact DP with coverage close to demand",
              paper_value="~10x faster on BA graphs, >98% coverage",
              criterion=f"BA n={n_bi}, eps=0.01, demand = half of each class: DP CPU time <= 1/3 of the uncapped "
                        "exact DP on the same tree (mean over seeds); coverage >= demand/(1+eps)^(H+1) every seed",
              kind="supporting"),
    ]
    plans = []

    rows, p = approximation_study(n_graphs, n_detour, seed, time_limit=scale.pick(smoke=20, quick=30, paper=120))
    plans += p
    rnd, det = rows["random"], rows["detour"]
    r_fml = np.array([r["FMLapprox"] for r in rnd])
    bound = np.array([2 * math.log(r["n"]) for r in rnd])
    d_fml = np.array([r["FMLapprox"] for r in det])
    d_best = np.array([min(r["Closest"], r["Alternating"]) for r in det])
    d_gain = d_best / d_fml
    d_ctrl = {b: float(np.mean([r[b] for r in det])) for b in ("Closest", "Alternating")}
    c2_ok = bool(r_fml.mean() <= 2.0 and np.all(r_fml <= bound) and d_fml.mean() <= 2.0 and d_gain.mean() >= 1.3)
    claims[1].judge(c2_ok, {
        "random": {"FMLapprox_mean": r_fml.mean(), "FMLapprox_max": r_fml.max(), "min_2ln_n": bound.min(),
                   "single_tree_mean": float(np.mean([r["fml_single_tree"] for r in rnd])),
                   **{f"{b}_mean": float(np.mean([r[b] for r in rnd])) for b in ("Closest", "Alternating")},
                   **{f"{b}_max": float(np.max([r[b] for r in rnd])) for b in ("Closest", "Alternating")},
                   "milp_proven_optimal": int(sum(r["optimal"] for r in rnd)), "graphs": len(rnd)},
        "detour": {"FMLapprox_mean": d_fml.mean(), "FMLapprox_max": d_fml.max(), "best_baseline_over_fml_mean":
                   d_gain.mean(), "best_baseline_over_fml_min": d_gain.min(),
                   **{f"{b}_mean_control": v for b, v in d_ctrl.items()},
                   "milp_proven_optimal": int(sum(r["optimal"] for r in det)), "graphs": len(det)}},
        summary=f"random: FML {r_fml.mean():.2f}x OPT mean, {r_fml.max():.2f} max (needs <= 2, <= 2 ln n >= "
                f"{bound.min():.1f}); detour: FML {d_fml.mean():.2f}x OPT (needs <= 2), best baseline "
                f"{d_gain.mean():.2f}x FML (needs >= 1.3); controls Closest {d_ctrl['Closest']:.2f}x / "
                f"Alternating {d_ctrl['Alternating']:.2f}x OPT on detour (must be > 2)")

    table, first, p = aggregation_study(n_agg, seeds, seed, demand)
    plans += p
    cost = {m: np.array([r["cost"] for r in rows_]) for m, rows_ in table.items()}
    mean = {m: {k: float(np.mean([r[k] for r in rows_])) for k in ("cost", "cov_blue", "cov_red", "acc_blue",
                                                                      "acc_red", "time_s")}
            for m, rows_ in table.items()}
    f = cost["FMLapprox"]
    vs_c, vs_a = f.mean() / cost["Closest"].mean(), f.mean() / cost["Alternating"].mean()
    sh_c = f.mean() / cost["Closest (shared labels)"].mean()
    sh_a = f.mean() / cost["Alternating (shared labels)"].mean()
    met = all(r["demand_met"] for r in table["FMLapprox"])
    acc_f, acc_g = mean["FMLapprox"]["acc_red"], mean["Greedy"]["acc_red"]
    ctrl = cost["Alternating"].mean() / cost["Closest"].mean()
    claims[2].judge(
        bool(vs_c <= 0.6 and vs_a <= 0.6 and met and acc_f >= 0.9 and acc_g <= 0.6),
        {"mean": {m: {k: round(v, 3) for k, v in d.items()} for m, d in mean.items()},
         "fml_over_closest_per_seed": (f / cost["Closest"]).tolist(),
         "fml_over_alternating_per_seed": (f / cost["Alternating"]).tolist(),
         "fml_over_shared_closest": sh_c, "fml_over_shared_alternating": sh_a,
         "acc_red_fml_per_seed": [r["acc_red"] for r in table["FMLapprox"]],
         "acc_red_greedy_per_seed": [r["acc_red"] for r in table["Greedy"]],
         "control_alternating_over_closest": ctrl, "fml_demand_met_every_seed": met},
        note=f"n={n_agg}, demand {demand} per group, {seeds} seeds; baselines reconstructed from descriptions",
        summary=f"FML cost {vs_c:.2f}x Closest, {vs_a:.2f}x Alternating (needs <= 0.6; per seed "
                f"{_spread(f / cost['Closest'])} / {_spread(f / cost['Alternating'])}; shared-label baselines "
                f"{sh_c:.2f} / {sh_a:.2f}); red acc FML {acc_f:.2f} (>= 0.9), Greedy {acc_g:.2f} (<= 0.6); "
                f"control Alternating/Closest {ctrl:.2f} (must be > 0.6)")

    speed = bicriteria_speed(n_bi, bi_seeds, seed)
    for r in speed:
        plans += [("bicriteria", x) for x in r.pop("plans")]
    star = star_control()
    ratio = float(np.mean([r["ratio"] for r in speed]))
    ctrl_ratio = float(np.mean([r["control_eps1e-6_ratio"] for r in speed]))
    capped = float(np.mean([r["bi_capped_at_demand_ratio"] for r in speed]))
    cov_ok = all(r["bi_guarantee_met"] for r in speed)
    claims[3].judge(bool(ratio <= 1 / 3 and cov_ok), {"per_seed": speed, "mean_ratio": ratio,
                                                       "control_eps1e-6_mean_ratio": ctrl_ratio,
                                                       "bi_capped_at_demand_mean_ratio": capped,
                                                       "star_control": star},
                    note="DP CPU time (process_time) on the same FRT tree; both DPs uncapped (the paper's form)",
                    summary=f"bucketed/exact DP CPU time {ratio:.2f} (needs <= 0.33; per seed "
                            f"{', '.join(format(r['ratio'], '.2f') for r in speed)}); coverage >= d/xi every seed: "
                            f"{cov_ok} (worst {min(r['coverage_fraction'] for r in speed):.3f} of demand); controls: "
                            f"eps=1e-6 {ctrl_ratio:.2f}, per-merge rounding on a star covers {star['every_merge']} "
                            f"< {star['required']:.0f} required (once per node: {star['once_per_node']}); "
                            f"demand-capped biApprox {capped:.2f} (info)")

    # every plan above was verified by `finish` (labels on edges, positive integers, coverage recomputed)
    must_meet = [(name, r) for name, r in plans if name not in ("Greedy",)]
    failed = [name for name, r in must_meet if not r.demand_met]
    G0, res0, t0, colors0 = first
    rev = verify_labeling(G0, _reversed(res0.labeling), colors0, [t0], res0.demand)
    claims[0].judge(not failed and not rev["demand_met"],
                    {"plans_checked": len(must_meet), "failed": failed,
                     "control_reversed_coverage": rev["coverage"]},
                    summary=f"{len(must_meet) - len(failed)}/{len(must_meet)} plans meet their demand (needs all); "
                            f"control: reversed FML plan covers {rev['coverage']} of {res0.demand} (must fail)")

    _figures(first, {m: table[m] for m in METHODS}, out)
    return Outcome(claims, metrics={"approximation": rows, "aggregation": table, "bicriteria": speed,
                                    "star_control": star},
                   notes="Baselines, the demand of 32 per group, the aggregation geometry and the paper's table "
                         "values come from a secondary summary of the paper or are reconstructed (issue #27).")
