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
import numbers
import warnings
from pathlib import Path

import networkx as nx
import numpy as np

from neurips25.fml.baselines import alternating_labeling, closest_labeling, greedy_labeling
from neurips25.fml.data import (
    aggregation_instance,
    cycle_trap_instance,
    detour_instance,
    group_test_set,
    small_instance,
)
from neurips25.fml.frt import frt_tree
from neurips25.fml.milp import fml_milp
from neurips25.fml.solvers import fml_approx, fml_approx_uncapped, fml_biapprox
from neurips25.fml.temporal import TemporalLabeling, reaching_nodes, verify_labeling
from neurips25.fml.tree_dp import TreeDP
from neurips25.repro import Claim, Control, Criterion, Outcome, Scale, progress, register

METHODS = ("FMLapprox", "FMLbiApprox", "Greedy", "Closest", "Alternating")


def _lower(opt) -> float:
    # an unproven MILP is compared with its dual bound: ratios can only be overstated
    return opt.cost if opt.info["optimal"] else opt.info["dual_bound"]


def approximation_study(n_graphs: int, n_detour: int, trap_ns, seed: int, time_limit: float):
    """Cost / OPT of FML, FML on a de-randomised FRT and the fair baselines on random, detour and trap graphs."""
    rng = np.random.default_rng(seed)
    rows = {"random": [], "detour": [], "trap": []}
    plans = []
    jobs = [("random", None)] * n_graphs + [("detour", None)] * n_detour + [("trap", n) for n in trap_ns]
    for family, n in progress(jobs, desc="vs MILP"):
        if family == "random":
            G, colors, t, demand = small_instance(rng)
        elif family == "detour":
            G, colors, t, demand, _ = detour_instance(rng)
        else:
            G, colors, t, demand = cycle_trap_instance(n, frt_tree(nx.cycle_graph(n), seed=fixed_frt()))
        opt = fml_milp(G, colors, t, demand, time_limit=time_limit)
        res = {"FMLapprox": fml_approx(G, colors, t, demand, n_trees=5, seed=int(rng.integers(2**31))),
               "FMLapprox fixed FRT": fml_approx(G, colors, t, demand, n_trees=5, seed=fixed_frt()),
               "Closest": closest_labeling(G, colors, t, demand),
               "Alternating": alternating_labeling(G, colors, t, demand)}
        lower = max(_lower(opt), 1e-12)
        row = {"n": G.number_of_nodes(), "opt": opt.cost, "optimal": opt.info["optimal"], "lower": lower,
               "fml_single_tree": min(res["FMLapprox"].info["costs_per_tree"][:1]) / lower, "MILP": opt.cost / lower}
        for name, r in res.items():
            row[name] = r.cost / lower
        rows[family].append(row)
        plans += [("MILP", opt)] + list(res.items())
    return rows, plans


def c2_figures(rows, name: str) -> dict:
    """c2's figures for one policy (a column of ``rows``): the same keys for the method and every control."""
    rnd, det, trap = rows["random"], rows["detour"], rows["trap"]
    r = np.array([x[name] for x in rnd])
    bound = np.array([2 * math.log(x["n"]) for x in rnd])
    d = np.array([x[name] for x in det])
    best = np.array([min(x["Closest"], x["Alternating"]) for x in det])
    return {"random_mean": float(r.mean()), "random_max": float(r.max()),
            "random_max_over_2ln_n": float(np.max(r / bound)), "detour_mean": float(d.mean()),
            "detour_gain": float(np.mean(best / d)), "trap_mean": float(np.mean([x[name] for x in trap])),
            "trap_per_n": {str(x["n"]): x[name] for x in trap}}


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
                     "control_guarantee_met": control.demand_met,
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


class _FixedFRT(np.random.Generator):
    """A generator that de-randomises FRT: ``random()`` is 0 (beta = 1) and ``permutation`` the identity.

    Handed to :func:`fml_approx` as its ``seed``, it gives the same tree every time: c2's broken control.
    """

    def random(self, *args, **kwargs):
        return 0.0

    def permutation(self, x):
        return np.arange(x) if isinstance(x, numbers.Integral) else np.asarray(x)


def fixed_frt():
    return _FixedFRT(np.random.PCG64(0))


def _c1_rule(m):
    return m["failed_count"] == 0 and m["plans_checked"] > 0


def _c2_rule(m):
    return (m["random_mean"] <= 2.0 and m["random_max_over_2ln_n"] <= 1.0 and m["detour_mean"] <= 2.0
            and m["detour_gain"] >= 1.3 and m["trap_mean"] <= 2.0)


def _c3_rule(m):
    return (m["vs_closest"] <= 0.6 and m["vs_alternating"] <= 0.6 and m["demand_met_share"] == 1
            and m["acc_red"] >= 0.9 and m["greedy_acc_red"] <= 0.6)


def _c4_rule(m):
    return m["ratio"] <= 1 / 3 and m["coverage_met_share"] == 1


def declare_claims(n_agg: int = 512, demand: int = 32, seeds: int = 5, n_bi=(1024,)) -> list[Claim]:
    """The claims with criteria (issue #27) and controls that gate them (issue #44)."""
    return [
        Claim("c1_validity", "every plan is a valid temporal labeling meeting its coverage demand", kind="check",
              criterion=Criterion("all labelings verified; FML, Closest, Alternating meet the demand; FMLbiApprox "
                                  ">= demand/(1+eps)^(H+1)", "failed_count", _c1_rule, "= 0"),
              controls=[Control.negative("reversed_labels", "the first aggregation FML plan with its labels "
                                         "reversed (decreasing toward the terminal)")]),
        Claim("c2_approximation", "FMLapprox is an O(log n)-approximation (in expectation)",
              paper_value="O(log n), matching the Omega(log n) hardness", kind="supporting",
              criterion=Criterion(
                  "random graphs (n=25..40): mean cost/OPT <= 2.0 and max <= 2 ln n; detour graphs: mean cost/OPT "
                  "<= 2 and the best fair baseline >= 1.3x the policy on average; cycle traps (a cycle whose "
                  "terminal ends the edge a de-randomised FRT tree stretches most, issue #44): mean cost/OPT <= 2 "
                  "(best of 5 FRT trees)", "detour_mean", _c2_rule, "<= 2 (all parts)"),
              controls=[Control.negative("closest", "Closest (shortest paths, fair)"),
                        Control.negative("alternating", "Alternating (shortest paths, fair)"),
                        Control.negative("fixed_frt", "FMLapprox on a de-randomised FRT tree (identity order, "
                                         "beta = 1)"),
                        Control.positive("milp_opt", "the MILP optimum itself (cost/OPT = 1): the detour graphs "
                                         "must leave room for a 1.3x gain")]),
        Claim("c3_aggregation", "fair plans meet both groups' demands at much lower cost than the fairness-aware "
              "heuristics, and only fair plans train a model that works for both groups",
              paper_value="cost FMLapprox 74.3 vs Closest 224.0, Alternating 212.8; red acc Greedy 0.27 vs FML 0.93",
              kind="headline",
              criterion=Criterion(
                  f"RGG n={n_agg}, far red group, demand {demand}/{demand}, {seeds} seeds: mean cost <= 0.6 x "
                  "Closest's and Alternating's (per-path accounting); demands met every seed; red accuracy >= 0.9; "
                  "and Greedy's red accuracy <= 0.6", "vs_closest", _c3_rule, "<= 0.6 (and the rest)"),
              controls=[Control.negative("alternating", "Alternating, a fairness-aware heuristic"),
                        Control.negative("greedy", "Greedy, cheapest plan blind to the groups")],
              no_positive_control="no cheaper fair plan is computable at this size (the MILP does not scale to "
                                  "n = 512); FML is the only candidate"),
        Claim("c4_bicriteria_speed", "FMLbiApprox is much faster than the exact DP with coverage close to demand",
              paper_value="~10x faster on BA graphs, >98% coverage", kind="supporting",
              criterion=Criterion(
                  f"BA n in {list(n_bi)}, eps=0.01, demand = half of each class: DP CPU time <= 1/3 of the "
                  "uncapped exact DP on the same tree (mean over seeds and n); coverage >= demand/(1+eps)^(H+1) "
                  "every seed", "ratio", _c4_rule, "<= 0.333"),
              controls=[Control.negative("eps_1e-6", "the same buckets with eps = 1e-6 (no two counts merge)")],
              no_positive_control="no tabulation with the coverage guarantee is known to be faster; the "
                                  "demand-capped DP is reported beside it"),
        Claim("c5_bucket_rounding", "rounding once per tree node keeps the coverage guarantee d/(1+eps)^(H+1)",
              kind="check",
              criterion=Criterion.at_least("coverage_over_required", 1.0,
                                           "400-leaf star, d = 250, eps = 0.01: coverage / (d / (1+eps)^(H+1)) >= 1"),
              controls=[Control.negative("every_merge", "rounding after every child merge (v1's bug)")]),
    ]


@register("fml")
def run(scale: Scale, seed: int, out: Path) -> Outcome:
    n_graphs = scale.pick(smoke=3, quick=30, paper=30)
    n_detour = scale.pick(smoke=2, quick=10, paper=20)
    trap_ns = scale.pick(smoke=[64], quick=[64, 128], paper=[64, 128, 256])
    n_agg = scale.pick(smoke=96, quick=512, paper=1024)
    seeds = scale.pick(smoke=1, quick=5, paper=5)
    demand = scale.pick(smoke=6, quick=32, paper=32)
    n_bi = scale.pick(smoke=[128], quick=[1024], paper=[2048, 3072])  # paper: where the exact DP's n^4 bites
    bi_seeds = scale.pick(smoke=1, quick=2, paper=2)
    claims = declare_claims(n_agg, demand, seeds, n_bi)
    plans = []

    # c2
    rows, p = approximation_study(n_graphs, n_detour, trap_ns, seed, time_limit=scale.pick(smoke=20, quick=30,
                                                                                            paper=120))
    plans += [(name, r) for name, r in p if name != "FMLapprox fixed FRT"]  # the broken control need not be valid
    m2 = c2_figures(rows, "FMLapprox")
    ctl2 = {"closest": c2_figures(rows, "Closest"), "alternating": c2_figures(rows, "Alternating"),
            "fixed_frt": c2_figures(rows, "FMLapprox fixed FRT"), "milp_opt": c2_figures(rows, "MILP")}
    rnd = rows["random"]
    claims[1].record(m2, controls=ctl2, details={
        "random_single_tree_mean": float(np.mean([r["fml_single_tree"] for r in rnd])),
        "milp_proven_optimal": {k: int(sum(r["optimal"] for r in v)) for k, v in rows.items()},
        "graphs": {k: len(v) for k, v in rows.items()}},
        summary=f"FML: random {m2['random_mean']:.2f}x OPT mean ({m2['random_max']:.2f} max, "
                f"{m2['random_max_over_2ln_n']:.2f} of 2 ln n); detour {m2['detour_mean']:.2f}x OPT, best baseline "
                f"{m2['detour_gain']:.2f}x FML (needs <= 2, >= 1.3); cycle traps {m2['trap_mean']:.2f}x OPT "
                f"(needs <= 2). Controls: Closest detour {ctl2['closest']['detour_mean']:.2f}x, Alternating "
                f"{ctl2['alternating']['detour_mean']:.2f}x; fixed FRT traps {ctl2['fixed_frt']['trap_mean']:.1f}x; "
                f"MILP gain room {ctl2['milp_opt']['detour_gain']:.2f}x")

    # c3
    table, first, p = aggregation_study(n_agg, seeds, seed, demand)
    plans += p
    cost = {m: np.array([r["cost"] for r in rows_]) for m, rows_ in table.items()}
    mean = {m: {k: float(np.mean([r[k] for r in rows_])) for k in ("cost", "cov_blue", "cov_red", "acc_blue",
                                                                      "acc_red", "time_s")}
            for m, rows_ in table.items()}
    acc_g = mean["Greedy"]["acc_red"]

    def c3_figures(name):
        c = cost[name]
        return {"vs_closest": float(c.mean() / cost["Closest"].mean()),
                "vs_alternating": float(c.mean() / cost["Alternating"].mean()),
                "demand_met_share": float(np.mean([r["demand_met"] for r in table[name]])),
                "acc_red": mean[name]["acc_red"], "greedy_acc_red": acc_g}

    m3 = c3_figures("FMLapprox")
    ctl3 = {"alternating": c3_figures("Alternating"), "greedy": c3_figures("Greedy")}
    f = cost["FMLapprox"]
    sh_c = f.mean() / cost["Closest (shared labels)"].mean()
    sh_a = f.mean() / cost["Alternating (shared labels)"].mean()
    claims[2].record(m3, controls=ctl3, details={
        "mean": {m: {k: round(v, 3) for k, v in d.items()} for m, d in mean.items()},
        "fml_over_closest_per_seed": (f / cost["Closest"]).tolist(),
        "fml_over_alternating_per_seed": (f / cost["Alternating"]).tolist(),
        "fml_over_shared_closest": sh_c, "fml_over_shared_alternating": sh_a,
        "acc_red_fml_per_seed": [r["acc_red"] for r in table["FMLapprox"]],
        "acc_red_greedy_per_seed": [r["acc_red"] for r in table["Greedy"]]},
        note=f"n={n_agg}, demand {demand} per group, {seeds} seeds; baselines reconstructed from descriptions",
        summary=f"FML cost {m3['vs_closest']:.2f}x Closest, {m3['vs_alternating']:.2f}x Alternating (needs <= 0.6; "
                f"per seed {_spread(f / cost['Closest'])} / {_spread(f / cost['Alternating'])}; shared-label "
                f"baselines {sh_c:.2f} / {sh_a:.2f}); red acc FML {m3['acc_red']:.2f} (>= 0.9), Greedy {acc_g:.2f} "
                f"(<= 0.6). Controls: Alternating {ctl3['alternating']['vs_closest']:.2f}x Closest; Greedy "
                f"{ctl3['greedy']['vs_closest']:.2f}x Closest, demand met {ctl3['greedy']['demand_met_share']:.0%}")

    # c4
    speed = [r for n in n_bi for r in bicriteria_speed(n, bi_seeds, seed)]
    for r in speed:
        plans += [("bicriteria", x) for x in r.pop("plans")]
    m4 = {"ratio": float(np.mean([r["ratio"] for r in speed])),
          "coverage_met_share": float(np.mean([r["bi_guarantee_met"] for r in speed]))}
    n4 = {"ratio": float(np.mean([r["control_eps1e-6_ratio"] for r in speed])),
          "coverage_met_share": float(np.mean([r["control_guarantee_met"] for r in speed]))}
    capped = float(np.mean([r["bi_capped_at_demand_ratio"] for r in speed]))
    per_run = ", ".join(f"n={r['n']}: {r['ratio']:.2f}" for r in speed)
    claims[3].record(m4, controls={"eps_1e-6": n4}, details={"per_seed": speed, "bi_capped_at_demand_mean_ratio":
                                                             capped},
                     note="DP CPU time (process_time) on the same FRT tree; both DPs uncapped (the paper's form)",
                     summary=f"bucketed/exact DP CPU time {m4['ratio']:.2f} (needs <= 0.33; per (n, seed) "
                             f"{per_run}); coverage "
                             f">= d/xi in {m4['coverage_met_share']:.0%} of runs (worst "
                             f"{min(r['coverage_fraction'] for r in speed):.3f} of demand); control eps=1e-6 "
                             f"{n4['ratio']:.2f}; demand-capped biApprox {capped:.2f} (info)")

    # c5: bucket rounding on a high fan-out star
    star = star_control()
    claims[4].record({"coverage_over_required": star["once_per_node"] / star["required"]},
                     controls={"every_merge": {"coverage_over_required": star["every_merge"] / star["required"]}},
                     details=star,
                     summary=f"once per node covers {star['once_per_node']} of {star['required']:.0f} required; "
                             f"control per-merge rounding covers {star['every_merge']}")

    # c1: every plan above was verified by `finish` (labels on edges, positive integers, coverage recomputed)
    must_meet = [(name, r) for name, r in plans if name not in ("Greedy",)]
    failed = [name for name, r in must_meet if not r.demand_met]
    G0, res0, t0, colors0 = first
    rev = verify_labeling(G0, _reversed(res0.labeling), colors0, [t0], res0.demand)
    claims[0].record({"failed_count": len(failed), "plans_checked": len(must_meet), "failed": failed},
                     controls={"reversed_labels": {"failed_count": int(not rev["demand_met"]), "plans_checked": 1,
                                                   "coverage": rev["coverage"]}},
                     summary=f"{len(must_meet) - len(failed)}/{len(must_meet)} plans meet their demand (needs all); "
                             f"control: reversed FML plan covers {rev['coverage']} of {res0.demand}")

    _figures(first, {m: table[m] for m in METHODS}, out)
    return Outcome(claims, metrics={"approximation": rows, "aggregation": table, "bicriteria": speed,
                                    "star_control": star},
                   notes="Baselines, the demand of 32 per group, the aggregation geometry and the paper's table "
                         "values come from a secondary summary of the paper or are reconstructed (issue #27).")
