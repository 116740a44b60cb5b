"""Reproduction of Fair Minimum Labeling's claims (Oettershagen & Michail, NeurIPS 2025).

Criteria of issues #11, #27 and #44, judged by the machinery (verdicts v4, issue #58); :func:`declare_claims`
holds each claim's criterion and controls. v4 replaced the controls that could not lose:

- c2: Closest / Alternating as negatives (their detour "gain", best of the two over their own cost, is <= 1
  by construction) -> a random fair tree (shortest paths to demand nodes drawn at random), which could pass.
- c3: Alternating as a negative (``vs_alternating`` = 1 by construction) -> the same random fair tree; Greedy's
  red accuracy, copied into every control, is now a precondition on the instance (fair and unfair plans must
  separate), and each control's figures come from its own run.
- c4: eps = 1e-6 (the exact DP: ratio ~1 by construction) -> coarse buckets eps = 0.25 judged against the
  eps = 0.01 coverage bound (fast; it fails only by losing coverage, which is what it tests).
"""

from __future__ import annotations

import math
import numbers
import time
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
from neurips25.fml.problem import finish, make_problem
from neurips25.fml.solvers import fml_approx, fml_approx_uncapped, fml_biapprox
from neurips25.fml.temporal import TemporalLabeling, reaching_nodes, verify_labeling
from neurips25.fml.tree_dp import TreeDP
from neurips25.repro import Claim, Control, Criterion, Outcome, Precondition, Scale, measure, progress, register

METHODS = ("FMLapprox", "FMLbiApprox", "Greedy", "Closest", "Alternating")


def _lower(opt) -> float:
    # an unproven MILP is compared with its dual bound: ratios can only be overstated
    return opt.cost if opt.info["optimal"] else opt.info["dual_bound"]


def approximation_study(n_graphs: int, n_detour: int, trap_ns, seed: int, time_limit: float):
    """Cost / OPT of FML, FML on a de-randomised FRT and the fair baselines on random, detour and trap graphs."""
    rng = np.random.default_rng(seed)
    rows = {"random": [], "detour": [], "trap": []}
    plans, instances = [], []
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
               "Closest": closest_labeling(G, colors, t, demand),
               "Alternating": alternating_labeling(G, colors, t, demand)}
        lower = max(_lower(opt), 1e-12)
        row = {"n": G.number_of_nodes(), "opt": opt.cost, "optimal": opt.info["optimal"], "lower": lower,
               "fml_single_tree": min(res["FMLapprox"].info["costs_per_tree"][:1]) / lower, "MILP": opt.cost / lower}
        for name, r in res.items():
            row[name] = r.cost / lower
        rows[family].append(row)
        instances.append((family, G, colors, t, demand, row))
        plans += [("MILP", opt)] + list(res.items())
    return rows, plans, instances


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
        coarse = fml_biapprox(G, colors, t, dem, eps=0.25, seed=seed0 + s, cap="class")
        capped = fml_biapprox(G, colors, t, dem, eps=0.01, seed=seed0 + s)
        need = {c: d / bi.info["coverage_factor"] for c, d in bi.demand.items()}  # eps = 0.01's bound, both
        rows.append({"n": n, "demand": bi.demand, "exact_dp_cpu_s": exact.info["dp_cpu_s"],
                     "bi_dp_cpu_s": bi.info["dp_cpu_s"], "bi_ratio": bi.info["dp_cpu_s"] / exact.info["dp_cpu_s"],
                     "bi_coverage_ok": all(bi.coverage[c] >= need[c] for c in need),
                     "coarse_ratio": coarse.info["dp_cpu_s"] / exact.info["dp_cpu_s"],
                     "coarse_coverage_ok": all(coarse.coverage[c] >= need[c] for c in need),
                     "coarse_coverage": coarse.coverage,
                     "capped_ratio": capped.info["dp_cpu_s"] / exact.info["dp_cpu_s"],
                     "bi_coverage": bi.coverage, "required": need, "bi_guarantee_met": bi.demand_met,
                     "coverage_fraction": min(bi.coverage[c] / d for c, d in bi.demand.items()),
                     "tree_height": bi.info["tree_height"], "exact_cost": exact.cost, "bi_cost": bi.cost,
                     "plans": [exact, bi, capped]})
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


def random_fair_tree(G, colors, terminal, demand, seed=0, weight: str = "weight"):
    """Control: a fair plan with no optimisation, labelled as one tree (one label per edge, like FML's).

    Nodes are drawn in random order; a node's shortest path to the terminal joins the tree while its colour
    is still short of its demand. Every node on the tree reaches the terminal, so the demand is met."""
    t0 = time.perf_counter()
    problem = make_problem(G, colors, terminal, demand, weight)
    _, paths = nx.single_source_dijkstra(problem.G, problem.terminal, weight=lambda u, v, d: problem.w(u, v))
    nodes = [v for v in paths if v != problem.terminal]
    covered, chosen = {problem.terminal}, []
    for i in np.random.default_rng(seed).permutation(len(nodes)):
        short = {c for c in problem.groups if sum(problem.colors[x] == c for x in covered) < problem.demand[c]}
        if not short:
            break
        v = nodes[i]
        if problem.colors[v] in short and v not in covered:
            chosen.append(v)
            covered |= set(paths[v])
    height = max(len(paths[v]) - 1 for v in covered)
    pairs = [((v, paths[v][-2]), height - (len(paths[v]) - 1) + 1) for v in covered if v != problem.terminal]
    return finish(problem, TemporalLabeling.from_pairs(pairs), "random fair tree", time.perf_counter() - t0, chosen)


def c2_control(instances, policy) -> dict:
    """c2's figures of a control policy run here on the study's graphs (cost / the MILP's bound)."""
    rows = {"random": [], "detour": [], "trap": []}
    for k, (family, G, colors, t, demand, row) in enumerate(instances):
        rows[family].append({**row, "policy": policy(G, colors, t, demand, k).cost / row["lower"]})
    return c2_figures(rows, "policy")


def c3_figures(costs, demand_met, acc_red, ref) -> dict:
    c = float(np.mean(costs))
    return {"vs_closest": c / ref["Closest"], "vs_alternating": c / ref["Alternating"],
            "demand_met_share": float(np.mean(demand_met)), "acc_red": float(np.mean(acc_red))}


def c3_control(n: int, seeds: int, seed0: int, demand: int, policy, ref) -> dict:
    """c3's figures of a control policy, run here on the same aggregation instances (same seeds)."""
    costs, met, acc = [], [], []
    for s in range(seeds):
        G, colors, t, X, y, owner = aggregation_instance(n, seed0 + s)
        red_flag = np.array([1.0 if colors[v] == "red" else 0.0 for v in owner])
        res = policy(G, colors, t, {"blue": demand, "red": demand}, seed0 + s)
        costs.append(res.cost)
        met.append(res.demand_met)
        acc.append(_accuracy(G, res, t, X, y, owner, red_flag, group_test_set(2000, seed0 + 100 + s), seed0 + s)["red"])
    return c3_figures(costs, met, acc, ref)


def c4_figures(speed, key: str) -> dict:
    return {"ratio": float(np.mean([r[f"{key}_ratio"] for r in speed])),
            "coverage_met_share": float(np.mean([r[f"{key}_coverage_ok"] for r in speed]))}


def _greedy(G, colors, t, demand, seed):
    return greedy_labeling(G, colors, t, demand, share_labels=False)


def _c2_rule(m):
    return (m["random_mean"] <= 2.0 and m["random_max_over_2ln_n"] <= 1.0 and m["detour_mean"] <= 2.0
            and m["detour_gain"] >= 1.3 and m["trap_mean"] <= 2.0)


def _c3_rule(m):
    return (m["vs_closest"] <= 0.6 and m["vs_alternating"] <= 0.6 and m["demand_met_share"] == 1
            and m["acc_red"] >= 0.9)


def declare_claims(scale: Scale) -> list[Claim]:
    """The claims with their criteria and controls (issues #27, #44; controls that can lose, #58)."""
    random_tree = ("a random fair tree: demand nodes of each colour drawn at random, joined to the terminal by "
                   "shortest paths, one label per edge (no optimisation)")
    return [
        Claim("c1_validity", "every plan is a valid temporal labeling meeting its coverage demand", kind="check",
              criterion=Criterion("all labelings verified; FML, Closest, Alternating meet the demand; FMLbiApprox "
                                  ">= demand/(1+eps)^(H+1)", "failed_count",
                                  lambda m: m["failed_count"] == 0 and m["plans_checked"] > 0, "= 0"),
              controls=[Control.negative("reversed_labels", "the first aggregation FML plan with its labels "
                                         "reversed (decreasing toward the terminal)")]),
        Claim("c2_approximation", "FMLapprox is an O(log n)-approximation (in expectation)",
              paper_value="O(log n), matching the Omega(log n) hardness", kind="supporting",
              instance="reduced", instance_note="generated random, detour and cycle-trap graphs (n <= 128) against "
              "the exact MILP; the paper proves the bound and checks it against its ILP",
              criterion=Criterion(
                  "random graphs (n=25..40): mean cost/OPT <= 2.0 and max <= 2 ln n; detour graphs: mean cost/OPT "
                  "<= 2 and the best fair baseline >= 1.3x the policy on average; cycle traps (a cycle whose "
                  "terminal ends the edge a de-randomised FRT tree stretches most, issue #44): mean cost/OPT <= 2 "
                  "(best of 5 FRT trees)", "detour_mean", _c2_rule, "<= 2 (all parts)"),
              controls=[Control.negative("random_fair_tree", random_tree),
                        Control.negative("fixed_frt", "FMLapprox on a de-randomised FRT tree (identity order, "
                                         "beta = 1)"),
                        Control.positive("milp_opt", "the MILP optimum itself (cost/OPT = 1): the detour graphs "
                                         "must leave room for a 1.3x gain")]),
        Claim("c3_aggregation", "fair plans meet both groups' demands at much lower cost than the fairness-aware "
              "heuristics, and only fair plans train a model that works for both groups",
              paper_value="cost FMLapprox 74.3 vs Closest 224.0, Alternating 212.8; red acc Greedy 0.27 vs FML 0.93",
              kind="headline", instance="reduced",
              instance_note="the paper's aggregation task rebuilt from a summary (RGG radius 0.2, far red group, "
                            "MLP 2x32) at n = 512 instead of 1024, demand 32 per group, 5 seeds",
              criterion=Criterion(
                  "RGG, far red group, demand per group and 5 seeds (quick: n=512, 32/32): mean cost <= 0.6 x "
                  "Closest's and Alternating's (per-path accounting); demands met every seed; red accuracy >= 0.9",
                  "vs_closest", _c3_rule, "<= 0.6 (and the rest)"),
              controls=[Control.negative("random_fair_tree", random_tree + ", same instances"),
                        Control.negative("greedy", "Greedy, cheapest plan blind to the groups, same instances")],
              preconditions=[Precondition("the instance separates fair from unfair plans: Greedy's red accuracy "
                                          "<= 0.6 (its own run)", lambda m: m["greedy_acc_red"] <= 0.6)],
              no_positive_control="no cheaper fair plan is computable at this size (the MILP does not scale to "
                                  "n = 512); FML is the only candidate"),
        Claim("c4_bicriteria_speed", "FMLbiApprox is much faster than the exact DP with coverage close to demand",
              paper_value="~10x faster on BA graphs, >98% coverage", kind="supporting", instance="reduced",
              instance_note="BA graphs of 1024 nodes (quick) instead of the paper's larger BA graphs and Pokec",
              criterion=Criterion(
                  "BA graphs, eps=0.01, demand = half of each class: DP CPU time <= 1/3 of the uncapped exact DP on "
                  "the same tree (mean over seeds and n); coverage >= demand/(1.01)^(H+1) every seed", "ratio",
                  lambda m: m["ratio"] <= 1 / 3 and m["coverage_met_share"] == 1, "<= 0.333"),
              controls=[Control.negative("coarse_eps_0.25", "coarse buckets, eps = 0.25, on the same tree, judged "
                                         "against the eps = 0.01 coverage bound (fast, but should lose coverage)")],
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
    c1, c2, c3, c4, c5 = declare_claims(scale)
    note = f"scale {scale}: aggregation n={n_agg}, demand {demand}/{demand}, {seeds} seeds; BA n={n_bi}"
    plans = []

    # c2
    rows, p, instances = approximation_study(n_graphs, n_detour, trap_ns, seed,
                                             time_limit=scale.pick(smoke=20, quick=30, paper=120))
    plans += p
    ctl2 = {"random_fair_tree": measure(c2_control, instances, lambda G, c, t, d, k: random_fair_tree(
                G, c, t, d, seed=seed * 1000 + k)),
            "fixed_frt": measure(c2_control, instances, lambda G, c, t, d, k: fml_approx(
                G, c, t, d, n_trees=5, seed=fixed_frt())),
            "milp_opt": measure(c2_figures, rows, "MILP")}
    c2.record(c2_figures(rows, "FMLapprox"), controls=ctl2, details={
        "random_single_tree_mean": float(np.mean([r["fml_single_tree"] for r in rows["random"]])),
        "closest_alternating": {k: c2_figures(rows, k) for k in ("Closest", "Alternating")},
        "milp_proven_optimal": {k: int(sum(r["optimal"] for r in v)) for k, v in rows.items()},
        "graphs": {k: len(v) for k, v in rows.items()}})

    # c3
    table, first, p = aggregation_study(n_agg, seeds, seed, demand)
    plans += p
    cost = {m: np.array([r["cost"] for r in rows_]) for m, rows_ in table.items()}
    ref = {m: float(cost[m].mean()) for m in ("Closest", "Alternating")}
    mean = {m: {k: float(np.mean([r[k] for r in rows_])) for k in ("cost", "cov_blue", "cov_red", "acc_blue",
                                                                      "acc_red", "time_s")}
            for m, rows_ in table.items()}
    ctl3 = {"random_fair_tree": measure(c3_control, n_agg, seeds, seed, demand, random_fair_tree, ref),
            "greedy": measure(c3_control, n_agg, seeds, seed, demand, _greedy, ref)}
    fml = table["FMLapprox"]
    m3 = {**c3_figures(cost["FMLapprox"], [r["demand_met"] for r in fml], [r["acc_red"] for r in fml], ref),
          "greedy_acc_red": ctl3["greedy"].raw()["acc_red"]}
    f = cost["FMLapprox"]
    c3.record(m3, controls=ctl3, note=note + "; baselines reconstructed from descriptions", details={
        "mean": {m: {k: round(v, 3) for k, v in d.items()} for m, d in mean.items()},
        "fml_over_closest_per_seed": (f / cost["Closest"]).tolist(),
        "fml_over_alternating_per_seed": (f / cost["Alternating"]).tolist(),
        "fml_over_shared_closest": f.mean() / cost["Closest (shared labels)"].mean(),
        "fml_over_shared_alternating": f.mean() / cost["Alternating (shared labels)"].mean(),
        "acc_red_fml_per_seed": [r["acc_red"] for r in fml]})

    # c4
    speed = [r for n in n_bi for r in bicriteria_speed(n, bi_seeds, seed)]
    for r in speed:
        plans += [("bicriteria", x) for x in r.pop("plans")]
    c4.record(c4_figures(speed, "bi"), controls={"coarse_eps_0.25": measure(c4_figures, speed, "coarse")},
              details={"per_seed": speed,
                       "bi_capped_at_demand_mean_ratio": float(np.mean([r["capped_ratio"] for r in speed]))},
              note=note + "; DP CPU time (process_time) on the same FRT tree; both DPs uncapped (the paper's form)")

    # c5: bucket rounding on a high fan-out star
    star = star_control()
    c5.record({"coverage_over_required": star["once_per_node"] / star["required"]},
              controls={"every_merge": {"coverage_over_required": star["every_merge"] / star["required"]}},
              details=star)

    # c1: every plan above was verified by `finish` (labels on edges, positive integers, coverage recomputed)
    must_meet = [(name, r) for name, r in plans if name not in ("Greedy",)]
    failed = [name for name, r in must_meet if not r.demand_met]
    G0, res0, t0, colors0 = first
    rev = verify_labeling(G0, _reversed(res0.labeling), colors0, [t0], res0.demand)
    c1.record({"failed_count": len(failed), "plans_checked": len(must_meet), "failed": failed},
              controls={"reversed_labels": {"failed_count": int(not rev["demand_met"]), "plans_checked": 1,
                                            "coverage": rev["coverage"]}})

    _figures(first, {m: table[m] for m in METHODS}, out)
    return Outcome([c1, c2, c3, c4, c5], metrics={"approximation": rows, "aggregation": table, "bicriteria": speed,
                                                  "star_control": star},
                   notes="Baselines, the demand of 32 per group, the aggregation geometry and the paper's table "
                         "values come from a secondary summary of the paper or are reconstructed (issue #27).")
