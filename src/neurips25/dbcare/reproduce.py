"""Reproduction of DBCARE's claims (Harding & Kandasamy, NeurIPS 2025): issue #25's criteria, judged by
the machinery against their controls (verdicts v3, issue #44).

The paper's own figures were not available (see docs/dbcare.md); the claims are those of the abstract and
the public summaries. Each claim declares its criterion and controls in :func:`declare_claims`; the run
measures the method and every control with the same figures and ``Claim.record`` sets the verdict.

1. c1 (two arms, MI): max risk / (32 LB(gap) + 2c) <= 1 where the bound can bind, c in {1e-3, 1e-4, 1e-5}.
   Control: DBCARE without elimination.
2. c2 (headline, two arms, MI, c = 1e-4): the best FB/FC baseline's max_gap risk/LB is >= 5x DBCARE's.
   Control: DBCARE without elimination.
3. c3a (two arms, SR): max_gap R_SR <= 9 LB*_SR + 3c at the three costs. c3b: sup over gaps and costs of
   R_SR / (LB_SR + LB*_SR) is >= 5x lower for DBCARE than for every FB/FC baseline. Controls: guessing and
   DBCARE without elimination (issue #44: the review found the latter meets c3a too).
4. c4 (hopeless instances, K in {2, 5, 10}, gaps sigma sqrt(c)/3): (a) mean total pulls <= 3 K N*(K),
   control successive elimination (budget-blind); v4 dropped the positive "guess" (0 pulls: it could not
   fail). (b) c4b, v4 (the review's part (b), issue #58): the worst MI risk minus guessing's is below
   1/e + 0.1 (95% interval); negative the budget-blind policy, positive a uniform fixed budget that spends
   exactly the initial budget K N*(K) (it costs 1/e, so it passes by the slack and fails if it spends more).
5. c5 (K arms): 6 Gaussian instances x 3 costs x {MI, SR} against 7 baselines: never worst and mean rank
   <= 2 of 8, with the fixed-confidence baselines capped at C5_CAP = 1e5 pulls (the cap is part of the
   criterion, issue #44; smoke's smaller cap leaves c5 inconclusive). Control: guessing.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from neurips25.dbcare.baselines import (
    LUCB,
    Guess,
    OracleFixedBudget,
    SequentialHalving,
    SuccessiveElimination,
    TrackAndStop,
    UniformFixedBudget,
)
from neurips25.dbcare.lower_bounds import (
    k_arm_lower_bound_mi,
    k_arm_lower_bound_sr,
    lower_bound_mi,
    lower_bound_sr,
    worst_case_lower_bound_sr,
)
from neurips25.dbcare.policy import DBCARE
from neurips25.dbcare.simulate import simulate
from neurips25.repro import Claim, Control, Criterion, Outcome, Precondition, Scale, measure, progress, register

SIGMA = 1.0
COST = 1e-4  # the headline cost (c2) and the figure's
COSTS = (1e-3, 1e-4, 1e-5)
Z = 1.96  # normal quantile of the 95% intervals
C5_CAP = 1e5  # c5's criterion: the K-arm fixed-confidence baselines run with (at least) this pull cap
C4B_SLACK = 0.1  # c4b: risk - guess <= 1/e + slack (set in v4, issue #58, after the v3 runs' risk/guess 1.46-1.63)

#: the K-arm grid of the notes: one good arm, staircases, near ties (Gaussian, sigma = 1)
K_ARM_INSTANCES = {
    "one good K=5": [0.0] + [-0.3] * 4,
    "one good K=10": [0.0] + [-0.3] * 9,
    "staircase K=5": list(-0.1 * np.arange(5)),
    "staircase K=10": list(-0.05 * np.arange(10)),
    "near ties K=5": [0.0, -0.02, -0.02, -0.02, -0.5],
    "near ties K=10": [0.0] + [-0.01] * 8 + [-0.5],
}


def never_eliminate(n, k, sigma, cost):
    """Radius of the control "DBCARE without elimination": it only runs to its budget N*(K)."""
    return np.full(np.broadcast_shapes(np.shape(n), np.shape(k)), np.inf)


def penalty_risk(est, kind: str, cost: float) -> float:
    """Risk at ``cost`` from one simulation of a policy that ignores the cost."""
    return (est.p_error if kind == "mi" else est.simple_regret) + cost * est.mean_samples


def _baselines(deltas, max_pulls, n_arms=2, lazy=0.0):
    """Fixed-budget (5 and 250 pulls per arm) and fixed-confidence baselines, named."""
    small, big = 5 * n_arms, 250 * n_arms
    out = {f"uniform T={small}": UniformFixedBudget(small), f"uniform T={big}": UniformFixedBudget(big),
           f"seq. halving T={big}": SequentialHalving(big)}
    for d in deltas:
        out[f"succ. elim. d={d:g}"] = SuccessiveElimination(d, SIGMA, max_pulls)
        out[f"LUCB d={d:g}"] = LUCB(d, SIGMA, max_pulls, lazy=lazy)
        out[f"track&stop d={d:g}"] = TrackAndStop(d, SIGMA, max_pulls, lazy=lazy)
    return out


# ----- the two-arm sweep ---------------------------------------------------------------------
def two_arm_sweep(gaps, costs, reps, ctrl_reps, fb_reps, fc_reps, deltas, max_pulls, seed):
    """Every policy on every gap. Baselines ignore the cost: one simulation serves all costs.

    Fixed budgets are cheap and bind the SR criterion (c3b), so they get ``fb_reps`` replications.
    """
    rows = {}
    baselines = _baselines(deltas, max_pulls)
    for i, gap in enumerate(progress(gaps, desc="two-arm gaps")):
        means = [0.0, -float(gap)]
        s = seed * 1000 + i  # common random numbers: every policy on this gap sees the same rewards
        row = {"base": {}, "guess": simulate(Guess(), means, SIGMA, COST, fb_reps, s)}
        for name, pol in baselines.items():
            row["base"][name] = simulate(pol, means, SIGMA, COST, fc_reps if np.isfinite(pol.max_pulls) else fb_reps, s)
        for kind in ("mi", "sr"):
            row[f"dbcare_{kind}"] = {c: simulate(DBCARE(c, SIGMA, kind), means, n_reps=reps, seed=s) for c in costs}
            row[f"noelim_{kind}"] = {c: simulate(DBCARE(c, SIGMA, kind, radius=never_eliminate), means,
                                                 n_reps=ctrl_reps, seed=s) for c in costs}
            row[f"oracle_{kind}"] = {c: simulate(OracleFixedBudget(c, SIGMA, kind), means, n_reps=reps, seed=s)
                                    for c in costs}
        rows[float(gap)] = row
    return rows, list(baselines)


def max_possible_mi_risk(cost: float) -> float:
    """Largest MI risk DBCARE can incur on two arms: always wrong after its full budget."""
    return 1.0 + cost * 2 * np.ceil(float(DBCARE(cost).budget(2)))


# ----- hopeless instances ---------------------------------------------------------------------
def hopeless_study(ks, costs, reps, fc_reps, fc_cap, seed):
    out = {}
    for K in progress(ks, desc="hopeless instances"):
        for j, c in enumerate(costs):
            gap = SIGMA * np.sqrt(c) / 3
            means = [0.0] + [-gap] * (K - 1)
            s = seed * 1000 + 500 + 10 * K + j
            ours = simulate(DBCARE(c, SIGMA, "mi"), means, n_reps=reps, seed=s)
            blind = simulate(SuccessiveElimination(0.1, SIGMA, fc_cap), means, SIGMA, c, fc_reps, s)
            at_budget = simulate(UniformFixedBudget(int(round(K * float(DBCARE(c).budget(K))))), means, SIGMA, c,
                                 reps, s)
            out[(K, c)] = {"gap": gap, "DBCARE": ours, "control": blind, "uniform_at_budget": at_budget,
                           "budget_pulls": K * float(DBCARE(c).budget(K)), "N_star_K": float(DBCARE(c).budget(K))}
    return out


# ----- the K-arm grid -------------------------------------------------------------------------
def k_arm_study(instances, costs, reps, ctrl_reps, fc_reps, fc_cap, lazy, seed):
    """Risk of the 8 policies (and the no-elimination control) on each instance x cost x penalty."""
    table = {}
    for i, (label, means) in enumerate(progress(list(instances.items()), desc="K-arm instances")):
        K, s = len(means), seed * 1000 + 900 + i
        base = {}
        for name, pol in {**_baselines([0.1], fc_cap, K, lazy), "guess": Guess()}.items():
            base[name] = simulate(pol, means, SIGMA, COST, fc_reps if np.isfinite(pol.max_pulls) else reps, s)
        for c in costs:
            for kind in ("mi", "sr"):
                ours = simulate(DBCARE(c, SIGMA, kind), means, n_reps=reps, seed=s)
                ctrl = simulate(DBCARE(c, SIGMA, kind, radius=never_eliminate), means, n_reps=ctrl_reps, seed=s)
                lb = (k_arm_lower_bound_mi if kind == "mi" else k_arm_lower_bound_sr)(means, SIGMA, c)
                table[(label, c, kind)] = {
                    "risks": {"DBCARE": ours.risk, **{n: penalty_risk(e, kind, c) for n, e in base.items()}},
                    "no-elimination control": ctrl.risk, "DBCARE_stderr": ours.stderr,
                    "DBCARE_pulls": ours.mean_samples, "budget_pulls": K * float(DBCARE(c, SIGMA, kind).budget(K)),
                    "lower_bound": lb, "cap_rate": {n: e.cap_rate for n, e in base.items() if e.cap_rate > 0}}
    return table


def rank_of(name: str, risks: dict) -> tuple[int, bool]:
    """1 + how many policies beat ``name``; worst when every other policy beats it."""
    r = risks[name]
    others = [v for k, v in risks.items() if k != name]
    return 1 + sum(v < r for v in others), all(v < r for v in others)


def _figure(rows, names, out: Path) -> None:
    from matplotlib.figure import Figure

    gaps = np.array(sorted(rows))
    fig = Figure(figsize=(13, 4.8))
    for j, kind in enumerate(("mi", "sr")):
        ax = fig.add_subplot(1, 2, j + 1)
        lb = lower_bound_mi if kind == "mi" else lower_bound_sr
        ax.loglog(gaps, [rows[g][f"dbcare_{kind}"][COST].risk for g in gaps], "k-o", lw=2.5, ms=3,
                  label=f"DBCARE ({kind.upper()})")
        ax.loglog(gaps, [rows[g][f"noelim_{kind}"][COST].risk for g in gaps], "k:", lw=1.5,
                  label="control: no elimination")
        for name in names:
            style = dict(ls="--") if name.startswith("seq.") else {}  # SH coincides with uniform on 2 arms
            ax.loglog(gaps, [penalty_risk(rows[g]["base"][name], kind, COST) for g in gaps], marker=".",
                      lw=1, alpha=0.8, label=name, **style)
        ax.loglog(gaps, [penalty_risk(rows[g]["guess"], kind, COST) for g in gaps], lw=1, label="guess")
        ax.loglog(gaps, [rows[g][f"oracle_{kind}"][COST].risk for g in gaps], lw=1, label="gap oracle")
        ax.loglog(gaps, lb(gaps, SIGMA, COST), "k--", lw=1.5, label="lower bound")
        ax.set_xlabel("gap"), ax.set_ylabel(f"risk ({kind.upper()})")
        ax.set_title(f"two arms, sigma=1, c={COST:g}: {kind.upper()} risk")
        ax.set_ylim(1e-4, 2e2)
        ax.legend(fontsize=6.5, loc="upper right", ncol=2)
    fig.tight_layout()
    fig.savefig(out / "figures" / "risk_vs_gap.png", dpi=110)


def _c5_rule(m):
    return m["worst_count"] == 0 and m["mean_rank"] <= 2.0


TWO_ARM = dict(instance="reduced", instance_note="the paper's two-arm Gaussian simulation (sigma = 1, gap sweep), "
               "fewer replications; bounds and radius reconstructed from summaries")
HOPELESS = dict(instance="reduced", instance_note="Gaussian arms with gaps sigma sqrt(c)/3 (below the "
                "phase transition), the regime where the paper says every policy approaches guessing")


def declare_claims(scale: Scale) -> list[Claim]:
    """The six claims with their criteria and controls (fixed before the run; issue #25, reworked in #44)."""
    no_elim = Control.negative("no_elimination", "DBCARE with its elimination step removed (runs to its budget)")
    guess = Control.negative("guess", "the no-pull policy: recommends an arm at random")
    sr_oracle = Control.positive("gap_oracle", "SR fixed budget tuned with the true gap and cost")
    budget_blind = Control.negative("budget_blind", "successive elimination at delta = 0.1, blind to the cost")
    return [
        Claim("c1_upper_bound", "DBCARE matches the MI lower bound within the (reconstructed) constant on two arms",
              paper_value="R_MI <= 32 LB + 2c (reconstructed from summaries)", kind="supporting", **TWO_ARM,
              criterion=Criterion.at_most("worst_risk_over_bound", 1.0, (
                  "max MI risk / (32 LB(gap) + 2c) <= 1 over the (gap, c) points, c in {1e-3, 1e-4, 1e-5}, where "
                  "the bound can bind (32 LB + 2c < 1 + 2c ceil(N*(2)), the largest risk DBCARE can incur)")),
              controls=[no_elim, Control.positive("gap_oracle", "MI fixed budget tuned with the true gap, cost")]),
        Claim("c2_uniform_mi", "DBCARE is uniformly competitive where fixed-budget / fixed-confidence methods "
              "each fail somewhere (MI risk)", kind="headline", **TWO_ARM,
              criterion=Criterion.at_least("advantage", 5.0, (
                  "c = 1e-4: (min over FB/FC baselines of max_gap risk/LB) / (max_gap risk/LB of the policy) >= 5")),
              controls=[no_elim, Control.positive("gap_oracle", "MI fixed budget tuned with the true gap")]),
        Claim("c3a_sr_minimax", "DBCARE's simple-regret risk meets the minimax bound",
              paper_value="R_SR <= 9 LB*_SR + 3c (reconstructed from summaries)", kind="supporting", **TWO_ARM,
              criterion=Criterion.at_most("worst_over_bound", 1.0,
                                          "max over c in {1e-3, 1e-4, 1e-5} of max_gap R_SR / (9 LB*_SR + 3c) <= 1"),
              controls=[guess, no_elim, sr_oracle]),
        Claim("c3b_sr_competitive", "DBCARE is uniformly competitive for simple regret", kind="supporting",
              **TWO_ARM,
              criterion=Criterion.at_least("advantage", 5.0, (
                  "(min over FB/FC baselines of sup over gaps and costs of R_SR / (LB_SR + LB*_SR)) / (the same "
                  "sup for the policy) >= 5")),
              controls=[guess, no_elim, sr_oracle]),
        Claim("c4_hopeless", "on hopeless instances DBCARE gives up early, close to guessing", kind="supporting",
              **HOPELESS,
              criterion=Criterion.at_most("max_pulls_over_budget", 3.0, (
                  "K in {2, 5, 10}, every gap sigma sqrt(c)/3, c in {1e-3, 1e-4, 1e-5}: mean total pulls "
                  "<= 3 K N*(K) (three times the initial budget) at every (K, c); the risk part is c4b")),
              controls=[budget_blind],
              no_positive_control="any policy with a pull budget <= 3 K N*(K) passes by construction (v3's "
                                  "positive, guessing with 0 pulls, could not fail); the risk part, c4b, has a "
                                  "positive control that can"),
        Claim("c4b_hopeless_risk", "on hopeless instances DBCARE's risk stays close to guessing", kind="supporting",
              **HOPELESS,
              criterion=Criterion.interval(
                  "excess_lo", "excess_hi", 1 / np.e + C4B_SLACK, "below",
                  "K in {2, 5, 10}, gaps sigma sqrt(c)/3, c in {1e-3, 1e-4, 1e-5}: worst MI risk - guessing's "
                  f"(K-1)/K is below 1/e + {C4B_SLACK:g} (the cost of the initial budget plus a slack), by its 95% "
                  "interval (upper end below: passes; lower end at or above: fails)", key="worst_excess"),
              controls=[budget_blind,
                        Control.positive("uniform_at_budget", "uniform fixed budget spending exactly the initial "
                                         "budget K N*(K) = 1/(ec) pulls: risk ~ guess + 1/e")]),
        Claim("c5_k_arm", "across K-arm instances DBCARE is never worst and the most consistently competitive",
              paper_value="drug-discovery data, 5 arms: never worst (data not public)", kind="supporting",
              criterion=Criterion("6 instances (one good, staircase, near ties; K in {5, 10}) x 3 costs x {MI, SR}, "
                                  f"8 policies, fixed-confidence baselines capped at {C5_CAP:.0e} pulls: never worst "
                                  "(worst_count = 0) and mean rank <= 2", "mean_rank", _c5_rule,
                                  "<= 2 and never worst"),
              instance="stand-in", instance_note="six synthetic Gaussian K-arm instances stand in for the paper's "
              "drug-discovery data (not public): the verdict says how DBCARE ranks on synthetic instances only",
              controls=[guess],
              preconditions=[Precondition(f"the fixed-confidence baselines ran with the criterion's cap >= "
                                          f"{C5_CAP:.0e} pulls (smaller caps flatter DBCARE's rivals' cost)",
                                          lambda m: m["fc_cap"] >= C5_CAP)],
              no_positive_control="no policy is known to be never worst with mean rank <= 2 on this grid"),
    ]


@register("dbcare")
def run(scale: Scale, seed: int, out: Path) -> Outcome:
    gaps = scale.pick(smoke=np.array([0.002, 0.03, 0.3, 1.0]), quick=np.logspace(-3, 0, 12),
                      paper=np.logspace(-3, 0, 16))
    costs = scale.pick(smoke=COSTS[:2], quick=COSTS, paper=COSTS)
    reps = scale.pick(smoke=200, quick=2000, paper=10000)
    ctrl_reps = scale.pick(smoke=100, quick=500, paper=2000)  # the controls fail far from the thresholds
    fb_reps = scale.pick(smoke=200, quick=10000, paper=50000)  # fixed budgets: cheap, and they bind c3b
    fc_reps = scale.pick(smoke=20, quick=100, paper=1000)
    deltas = scale.pick(smoke=[0.1], quick=[0.1], paper=[0.1, 0.01])
    max_pulls = scale.pick(smoke=1e5, quick=1e6, paper=1e6)
    k_reps = scale.pick(smoke=100, quick=300, paper=10000)
    k_ctrl = scale.pick(smoke=50, quick=150, paper=2000)
    k_fc = scale.pick(smoke=10, quick=40, paper=500)
    k_cap = scale.pick(smoke=5e3, quick=C5_CAP, paper=C5_CAP)  # c5's criterion needs C5_CAP
    lazy = scale.pick(smoke=0.02, quick=0.02, paper=0.0)
    h_ks = scale.pick(smoke=[2, 5], quick=[2, 5, 10], paper=[2, 5, 10])
    h_cap = scale.pick(smoke=1e4, quick=1e5, paper=1e6)  # the budget-blind control's cap (it always hits it)
    instances = scale.pick(smoke={k: K_ARM_INSTANCES[k] for k in ("one good K=5", "near ties K=5")},
                           quick=K_ARM_INSTANCES, paper=K_ARM_INSTANCES)
    scale_note = (f"scale={scale}, seed={seed}, costs {list(costs)}: two arms {len(gaps)} gaps, {reps} reps (DBCARE, "
                  f"controls {ctrl_reps}), fixed budgets {fb_reps}, {fc_reps} reps for fixed-confidence baselines (cap "
                  f"{max_pulls:.0e} pulls), deltas {deltas}; K arms {len(instances)} instances, {k_reps} reps "
                  f"(controls {k_ctrl}), fixed-confidence {k_fc} reps capped at {k_cap:.0e} pulls, lazy={lazy}")

    claims = {c.id: c for c in declare_claims(scale)}
    for c in claims.values():
        c.note = scale_note

    rows, names = two_arm_sweep(gaps, costs, reps, ctrl_reps, fb_reps, fc_reps, deltas, max_pulls, seed)
    g = np.array(sorted(rows))

    # c1: the upper bound, only at the (gap, c) points where it can bind; the same points for the controls
    pts = [(c, x, b) for c in costs for x, b in zip(g, 32 * lower_bound_mi(g, SIGMA, c) + 2 * c)
           if b < max_possible_mi_risk(c)]

    def c1_figures(key):
        if not pts:
            return None
        ratios = [rows[x][key][c].risk / b for c, x, b in pts]
        i = int(np.argmax(ratios))
        return {"worst_risk_over_bound": ratios[i], "violations": int(sum(r > 1 for r in ratios)),
                "checkable_points": len(pts), "worst_at": {"cost": pts[i][0], "gap": pts[i][1]}}

    hi1 = max(((rows[x]["dbcare_mi"][c].risk + Z * rows[x]["dbcare_mi"][c].stderr) / b for c, x, b in pts),
              default=None)
    claims["c1_upper_bound"].record(
        c1_figures("dbcare_mi"), controls={"no_elimination": pts and measure(c1_figures, "noelim_mi") or None,
                                           "gap_oracle": pts and measure(c1_figures, "oracle_mi") or None},
        unmeasured="no grid point where the bound can bind",
        details={"grid_points": len(g) * len(costs), "DBCARE_worst_upper95_over_bound": hi1})

    # c2: worst-case ratio to the MI lower bound at the headline cost
    lb = lower_bound_mi(g, SIGMA, COST)

    def worst_mi(risk_of):
        return max(risk_of(x) / lb[i] for i, x in enumerate(g))

    base = {n: worst_mi(lambda x, n=n: penalty_risk(rows[x]["base"][n], "mi", COST)) for n in names}
    binding = min(base, key=base.get)

    def c2_figures(key):
        w = worst_mi(lambda x: rows[x][key][COST].risk)
        return {"advantage": base[binding] / w, "worst_risk_over_lb": w}

    per_cost = {}
    for c in costs:
        lbc = lower_bound_mi(g, SIGMA, c)
        o = max(rows[x]["dbcare_mi"][c].risk / lbc[i] for i, x in enumerate(g))
        per_cost[f"{c:g}"] = min(max(penalty_risk(rows[x]["base"][n], "mi", c) / lbc[i] for i, x in enumerate(g))
                                 for n in names) / o
    claims["c2_uniform_mi"].record(
        c2_figures("dbcare_mi"),
        controls={"no_elimination": measure(c2_figures, "noelim_mi"), "gap_oracle": measure(c2_figures, "oracle_mi")},
        details={"DBCARE_upper95": worst_mi(lambda x: rows[x]["dbcare_mi"][COST].risk
                                            + Z * rows[x]["dbcare_mi"][COST].stderr),
                 "baselines_worst_risk_over_lb": base, "binding_baseline": binding,
                 "info_min_baseline_over_DBCARE_per_cost": per_cost})

    # c3a: the minimax SR bound at each cost
    bound_sr = {c: 9 * worst_case_lower_bound_sr(SIGMA, c) + 3 * c for c in costs}

    def c3a_figures(risk_of):
        per = {f"{c:g}": max(risk_of(x, c) for x in g) / bound_sr[c] for c in costs}
        return {"worst_over_bound": max(per.values()), "per_cost": per}

    fb_fail = sorted(n for n in names if c3a_figures(lambda x, c, n=n: penalty_risk(rows[x]["base"][n], "sr", c))
                     ["worst_over_bound"] > 1)
    claims["c3a_sr_minimax"].record(
        c3a_figures(lambda x, c: rows[x]["dbcare_sr"][c].risk),
        controls={"guess": measure(c3a_figures, lambda x, c: penalty_risk(rows[x]["guess"], "sr", c)),
                  "no_elimination": measure(c3a_figures, lambda x, c: rows[x]["noelim_sr"][c].risk),
                  "gap_oracle": measure(c3a_figures, lambda x, c: rows[x]["oracle_sr"][c].risk)},
        details={"bound": {f"{c:g}": b for c, b in bound_sr.items()},
                 "DBCARE_upper95_over_bound": {f"{c:g}": max(rows[x]["dbcare_sr"][c].risk + Z
                                                             * rows[x]["dbcare_sr"][c].stderr for x in g)
                                               / bound_sr[c] for c in costs},
                 "baselines_failing_at_some_cost": fb_fail})

    # c3b: competitiveness over gaps and costs
    def sup_ratio(get):
        return max(get(x, c) / (lower_bound_sr(x, SIGMA, c) + worst_case_lower_bound_sr(SIGMA, c))
                   for x in g for c in costs)

    base_sr = {n: sup_ratio(lambda x, c, n=n: penalty_risk(rows[x]["base"][n], "sr", c)) for n in names}
    # 95% interval of the ratio: the baselines' sup with their risks at -/+ 1.96 se (se exact for fixed budgets)
    base_lo = min(sup_ratio(lambda x, c, n=n: penalty_risk(rows[x]["base"][n], "sr", c)
                            - Z * rows[x]["base"][n].stderr_sr) for n in names)
    base_hi = min(sup_ratio(lambda x, c, n=n: penalty_risk(rows[x]["base"][n], "sr", c)
                            + Z * rows[x]["base"][n].stderr_sr) for n in names)
    b_sr = min(base_sr, key=base_sr.get)

    def c3b_figures(get):
        sr = sup_ratio(get)
        return {"advantage": base_sr[b_sr] / sr, "sup_ratio": sr}

    ours_sr_hi = sup_ratio(lambda x, c: rows[x]["dbcare_sr"][c].risk + Z * rows[x]["dbcare_sr"][c].stderr)
    ours_sr_lo = sup_ratio(lambda x, c: rows[x]["dbcare_sr"][c].risk - Z * rows[x]["dbcare_sr"][c].stderr)
    claims["c3b_sr_competitive"].record(
        c3b_figures(lambda x, c: rows[x]["dbcare_sr"][c].risk),
        controls={"guess": measure(c3b_figures, lambda x, c: penalty_risk(rows[x]["guess"], "sr", c)),
                  "no_elimination": measure(c3b_figures, lambda x, c: rows[x]["noelim_sr"][c].risk),
                  "gap_oracle": measure(c3b_figures, lambda x, c: rows[x]["oracle_sr"][c].risk)},
        details={"DBCARE_upper95": ours_sr_hi, "baselines_sup_ratio": base_sr, "binding_baseline": b_sr,
                 "advantage_interval95": [base_lo / ours_sr_hi, base_hi / ours_sr_lo]})

    # c4 / c4b: hopeless instances, pulls and risk
    hop = hopeless_study(h_ks, costs, k_reps, k_fc, h_cap, seed)

    def c4_figures(which):
        per = {f"K={K} c={c:g}": h[which].mean_samples / h["budget_pulls"] for (K, c), h in hop.items()}
        return {"max_pulls_over_budget": max(per.values()), "per_instance": per}

    def c4b_figures(which):
        ex = {f"K={K} c={c:g}": (h[which].risk_mi - (K - 1) / K, h[which].stderr_mi) for (K, c), h in hop.items()}
        return {"worst_excess": max(e for e, _ in ex.values()), "excess_lo": max(e - Z * s for e, s in ex.values()),
                "excess_hi": max(e + Z * s for e, s in ex.values()),
                "excess_per_instance": {k: e for k, (e, _) in ex.items()},
                "risk_over_guess": {f"K={K} c={c:g}": h[which].risk_mi * K / (K - 1) for (K, c), h in hop.items()}}

    claims["c4_hopeless"].record(c4_figures("DBCARE"), controls={"budget_blind": measure(c4_figures, "control")},
                                 details={"uniform_at_budget": c4_figures("uniform_at_budget")})
    claims["c4b_hopeless_risk"].record(
        c4b_figures("DBCARE"), controls={"budget_blind": measure(c4b_figures, "control"),
                                         "uniform_at_budget": measure(c4b_figures, "uniform_at_budget")},
        details={"risk_floor_over_guess": {f"K={K}": 1 + (K / (K - 1)) / np.e for K in h_ks}})

    # c5: the K-arm grid
    table = k_arm_study(instances, costs, k_reps, k_ctrl, k_fc, k_cap, lazy, seed)

    def c5_figures(name):
        rk, worst = {}, []
        for key, t in table.items():
            label = f"{key[0]}, c={key[1]:g}, {key[2]}"
            rk[label], w = rank_of(name, t["risks"])
            if w:
                worst.append(label)
        return {"mean_rank": float(np.mean(list(rk.values()))), "worst_count": len(worst), "worst_at": worst,
                "fc_cap": float(k_cap), "ranks": rk}

    m5 = c5_figures("DBCARE")
    noelim_ranks = [rank_of("no-elim", {**{k: v for k, v in t["risks"].items() if k != "DBCARE"},
                                        "no-elim": t["no-elimination control"]})[0] for t in table.values()]
    near = {f"{k[0]}, c={k[1]:g}, {k[2]}": {"rank": m5["ranks"][f"{k[0]}, c={k[1]:g}, {k[2]}"],
                                             "risk": t["risks"]["DBCARE"], "pulls": t["DBCARE_pulls"],
                                             "initial_budget_pulls": t["budget_pulls"]}
            for k, t in table.items() if k[0].startswith("near ties")}
    claims["c5_k_arm"].record(m5, controls={"guess": measure(c5_figures, "guess")}, details={
        "n_settings": len(table), "n_policies": len(next(iter(table.values()))["risks"]),
        "info_no_elimination_mean_rank": float(np.mean(noelim_ranks)), "near_ties": near,
        "info_DBCARE_risk_over_K_arm_LB": {f"{k[0]}, c={k[1]:g}, {k[2]}": t["risks"]["DBCARE"] / t["lower_bound"]
                                           for k, t in table.items()},
        "fc_cap_rate": {f"{k[0]}": t["cap_rate"] for k, t in table.items() if t["cap_rate"]}})

    _figure(rows, names, out)
    metrics = {
        "two_arm": {f"{x:.4g}": {
            **{n: {"risk_mi": e.risk_mi, "risk_sr": e.risk_sr, "mean_pulls": e.mean_samples, "p_error": e.p_error,
                   "cap_rate": e.cap_rate} for n, e in rows[x]["base"].items()},
            **{f"{k} c={c:g}": {"risk": e.risk, "stderr": e.stderr, "mean_pulls": e.mean_samples, "p_error": e.p_error}
               for k in ("dbcare_mi", "dbcare_sr", "noelim_mi", "noelim_sr") for c, e in rows[x][k].items()}}
            for x in g},
        "lower_bound_mi": {f"{c:g}": dict(zip([f"{x:.4g}" for x in g], lower_bound_mi(g, SIGMA, c))) for c in costs},
        "lower_bound_sr": {f"{c:g}": dict(zip([f"{x:.4g}" for x in g], lower_bound_sr(g, SIGMA, c))) for c in costs},
        "k_arm": {f"{k[0]}, c={k[1]:g}, {k[2]}": t for k, t in table.items()},
    }
    return Outcome(list(claims.values()), metrics=metrics, notes=(
        "Lower bounds, radius and budget are reconstructed from public summaries (paper text unavailable); "
        "the SR lower bound uses the exact two-arm reduction R_SR = gap * R_MI(c/gap). " + scale_note))
