"""Reproduction of DBCARE's headline claims (Harding & Kandasamy, NeurIPS 2025).

The paper's own numbers were not available (see docs/dbcare.md); the claims below are those of the
abstract with criteria fixed in issue #2 before any run:

1. two arms, sigma = 1, c = 1e-4, a log grid of gaps: DBCARE's MI risk <= 32 LB(gap) + 2c everywhere;
2. its worst-case risk / LB ratio over the grid is >= 5x lower than every fixed-budget and
   fixed-confidence baseline's (misidentification risk);
3. the same for the simple-regret risk;
4. hopeless instances (gap <= sigma sqrt(c) / 3): DBCARE's MI risk <= 2x that of guessing;
5. a 5-arm Bernoulli stand-in for the paper's drug-discovery example (the data set is not public):
   over 3 costs x 2 penalties DBCARE is never the worst policy and its mean rank is <= 2.
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
from neurips25.dbcare.lower_bounds import lower_bound_mi, lower_bound_sr
from neurips25.dbcare.policy import DBCARE
from neurips25.dbcare.simulate import simulate
from neurips25.repro import Claim, Outcome, Scale, progress, register

SIGMA, COST = 1.0, 1e-4
#: the drug-style stand-in: five treatments with binary response rates (synthetic, our choice)
DRUG_MEANS = [0.35, 0.30, 0.28, 0.22, 0.15]
DRUG_COSTS = [1e-5, 1e-4, 1e-3]


def _baselines(deltas, max_pulls, sigma=SIGMA, budgets=(10, 500)):
    """Fixed-budget and fixed-confidence baselines, named."""
    out = {}
    for T in budgets:
        out[f"uniform T={T}"] = UniformFixedBudget(T)
    out[f"seq. halving T={budgets[-1]}"] = SequentialHalving(budgets[-1])
    for d in deltas:
        out[f"succ. elim. d={d:g}"] = SuccessiveElimination(d, sigma, max_pulls)
        out[f"LUCB d={d:g}"] = LUCB(d, sigma, max_pulls)
        out[f"track&stop d={d:g}"] = TrackAndStop(d, sigma, max_pulls)
    return out


def two_arm_sweep(gaps, reps, fc_reps, deltas, max_pulls, seed):
    """Risk of every policy on every gap; baselines simulated once and scored for both penalties."""
    rows = {}
    baselines = _baselines(deltas, max_pulls)
    for i, gap in enumerate(progress(gaps, desc="two-arm gaps")):
        means = [0.0, -float(gap)]
        s = seed * 1000 + i  # common random numbers: every policy on this gap sees the same rewards
        rec = {
            "DBCARE (MI)": simulate(DBCARE(COST, SIGMA, "mi"), means, SIGMA, COST, reps, s),
            "DBCARE (SR)": simulate(DBCARE(COST, SIGMA, "sr"), means, SIGMA, COST, reps, s),
            "guess": simulate(Guess(), means, SIGMA, COST, reps, s),
            "gap oracle (MI)": simulate(OracleFixedBudget(COST, SIGMA, "mi"), means, SIGMA, COST, reps, s),
            "gap oracle (SR)": simulate(OracleFixedBudget(COST, SIGMA, "sr"), means, SIGMA, COST, reps, s),
        }
        for name, pol in baselines.items():
            n = fc_reps if np.isfinite(pol.max_pulls) else reps
            rec[name] = simulate(pol, means, SIGMA, COST, n, s)
        rows[float(gap)] = rec
    return rows, list(baselines)


def k_arm_study(reps, fc_reps, max_pulls, seed):
    """Risks on the 5-arm Bernoulli stand-in for every cost and penalty."""
    sigma = 0.5
    K = len(DRUG_MEANS)
    fixed = _baselines([0.1], max_pulls, sigma, budgets=(5 * K, 250 * K))
    fixed["guess"] = Guess()
    base_est = {}
    for name, pol in progress(list(fixed.items()), desc="5-arm baselines"):
        n = fc_reps if np.isfinite(pol.max_pulls) else reps
        base_est[name] = simulate(pol, DRUG_MEANS, sigma, 1.0, n, seed + 77, env="bernoulli")
    table = {}
    for c in DRUG_COSTS:
        for kind in ("mi", "sr"):
            est = simulate(DBCARE(c, sigma, kind), DRUG_MEANS, sigma, c, reps, seed + 77, env="bernoulli")
            risks = {"DBCARE": (est.p_error if kind == "mi" else est.simple_regret) + c * est.mean_samples}
            for name, e in base_est.items():
                # baselines ignore the cost: one simulation serves every cost
                risks[name] = (e.p_error if kind == "mi" else e.simple_regret) + c * e.mean_samples
            table[f"c={c:g} {kind}"] = risks
    return table, {k: v.cap_rate for k, v in base_est.items()}


def _figure(rows, names, out: Path) -> None:
    from matplotlib.figure import Figure

    gaps = np.array(sorted(rows))
    fig = Figure(figsize=(12, 4.5))
    for ax, kind, lb, ours in ((fig.add_subplot(1, 2, 1), "mi", lower_bound_mi, "DBCARE (MI)"),
                               (fig.add_subplot(1, 2, 2), "sr", lower_bound_sr, "DBCARE (SR)")):
        for name in [ours, *names, "guess", f"gap oracle ({kind.upper()})"]:
            r = [getattr(rows[g][name], f"risk_{kind}") for g in gaps]
            style = dict(lw=2.5, color="k") if name == ours else dict(lw=1, alpha=0.8)
            ax.loglog(gaps, r, marker="o", ms=3, label=name, **style)
        ax.loglog(gaps, lb(gaps, SIGMA, COST), "k--", lw=1.5, label="lower bound")
        ax.set_xlabel("gap"), ax.set_ylabel(f"risk ({kind.upper()})")
        ax.set_title(f"two arms, sigma=1, c={COST:g}: {kind.upper()} risk")
        ax.set_ylim(1e-4, 2e2)
    fig.axes[1].legend(fontsize=7, loc="upper right", ncol=2)
    fig.tight_layout()
    fig.savefig(out / "figures" / "risk_vs_gap.png", dpi=110)


@register("dbcare")
def run(scale: Scale, seed: int, out: Path) -> Outcome:
    gaps = scale.pick(smoke=np.array([0.002, 0.03, 0.3, 1.0]), quick=np.logspace(-3, 0, 12),
                      paper=np.logspace(-3, 0, 16))
    reps = scale.pick(smoke=200, quick=2000, paper=10000)
    fc_reps = scale.pick(smoke=20, quick=100, paper=1000)
    deltas = scale.pick(smoke=[0.1], quick=[0.1], paper=[0.1, 0.01])
    max_pulls = scale.pick(smoke=1e5, quick=1e6, paper=1e6)
    scale_note = (f"scale={scale}: {len(gaps)} gaps, {reps} reps (DBCARE, fixed budget), {fc_reps} reps for "
                  f"fixed-confidence baselines (cap {max_pulls:.0e} pulls), deltas {deltas}")

    claims = [
        Claim("c1_upper_bound", "DBCARE matches the MI lower bound within the (reconstructed) constant: "
              "risk <= 32 LB + 2c on two arms", criterion="DBCARE MI risk <= 32*LB(gap) + 2c at every gap",
              paper_value="R_MI <= 32 LB + 2c (reconstructed from summaries)", kind="supporting"),
        Claim("c2_uniform_mi", "DBCARE is uniformly competitive where fixed-budget / fixed-confidence methods "
              "each fail somewhere (MI risk)",
              criterion="max_gap risk/LB of DBCARE <= (1/5) x that of every FB/FC baseline", kind="headline"),
        Claim("c3_uniform_sr", "the same for simple-regret risk",
              criterion="max_gap risk/LB_SR of DBCARE(SR) <= (1/5) x that of every FB/FC baseline", kind="supporting"),
        Claim("c4_hopeless", "on hopeless instances DBCARE stops early, costing at most 2x guessing",
              criterion="gap <= sigma sqrt(c)/3: DBCARE MI risk <= 2 x guess's MI risk", kind="supporting"),
        Claim("c5_k_arm_drug_standin", "in the applied 5-arm example DBCARE is never worst and the most "
              "consistently competitive", paper_value="drug discovery data, 5 arms (not public)",
              criterion="5-arm Bernoulli stand-in, 3 costs x {MI, SR}: DBCARE never worst, mean rank <= 2",
                  kind="supporting"),
    ]

    rows, names = two_arm_sweep(gaps, reps, fc_reps, deltas, max_pulls, seed)
    g = np.array(sorted(rows))
    lb_mi, lb_sr = lower_bound_mi(g, SIGMA, COST), lower_bound_sr(g, SIGMA, COST)
    r_mi = np.array([rows[x]["DBCARE (MI)"].risk_mi for x in g])
    r_sr = np.array([rows[x]["DBCARE (SR)"].risk_sr for x in g])

    bound = 32 * lb_mi + 2 * COST
    claims[0].judge(bool(np.all(r_mi <= bound)), {
        "gaps": g, "risk": r_mi, "bound_32LB_2c": bound, "max_risk_over_LB": float(np.max(r_mi / lb_mi))},
        note=scale_note)

    def worst(name, kind, lb):
        return float(np.max([getattr(rows[x][name], f"risk_{kind}") for x in g] / lb))

    ours_mi, ours_sr = float(np.max(r_mi / lb_mi)), float(np.max(r_sr / lb_sr))
    base_mi = {n: worst(n, "mi", lb_mi) for n in names}
    base_sr = {n: worst(n, "sr", lb_sr) for n in names}
    claims[1].judge(all(ours_mi * 5 <= v for v in base_mi.values()),
                    {"DBCARE": ours_mi, **base_mi, "min_baseline_over_DBCARE": min(base_mi.values()) / ours_mi})
    claims[2].judge(all(ours_sr * 5 <= v for v in base_sr.values()),
                    {"DBCARE": ours_sr, **base_sr, "min_baseline_over_DBCARE": min(base_sr.values()) / ours_sr})

    hopeless = g[g <= SIGMA * np.sqrt(COST) / 3]
    if hopeless.size == 0:
        claims[3].judge(None, {}, note="no hopeless gap in the grid")
    else:
        ratio = [rows[x]["DBCARE (MI)"].risk_mi / rows[x]["guess"].risk_mi for x in hopeless]
        sr_ratio = [rows[x]["DBCARE (SR)"].risk_sr / max(rows[x]["guess"].risk_sr, 1e-12) for x in hopeless]
        fc_cost = {n: float(np.mean([rows[x][n].mean_samples for x in hopeless])) for n in names}
        claims[3].judge(bool(np.all(np.array(ratio) <= 2)), {
            "gaps": hopeless, "DBCARE_over_guess_MI": ratio, "DBCARE_mean_pulls":
            [rows[x]["DBCARE (MI)"].mean_samples for x in hopeless], "baseline_mean_pulls": fc_cost,
            "info_SR_ratio_to_guess": sr_ratio},
            note="the SR ratio to guessing is reported for information only (guessing costs gap/2, "
                 "which no sampling policy can approach on tiny gaps)")

    k_reps = scale.pick(smoke=100, quick=1000, paper=5000)
    k_fc = scale.pick(smoke=10, quick=100, paper=500)
    k_cap = scale.pick(smoke=2e4, quick=1e5, paper=1e6)
    table, caps = k_arm_study(k_reps, k_fc, k_cap, seed)
    ranks, worst_flags = {}, {}
    for setting, risks in table.items():
        order = sorted(risks, key=risks.get)
        ranks[setting] = order.index("DBCARE") + 1
        worst_flags[setting] = order[-1] == "DBCARE"
    mean_rank = float(np.mean(list(ranks.values())))
    claims[4].judge(not any(worst_flags.values()) and mean_rank <= 2.0, {
        "DBCARE_rank_per_setting": ranks, "mean_rank": mean_rank, "n_policies": len(next(iter(table.values()))),
        "fc_cap_rate": caps},
        note=f"synthetic Bernoulli means {DRUG_MEANS} (stand-in: the paper's data set is not public); "
             f"{k_reps} reps, fixed-confidence {k_fc} reps capped at {k_cap:.0e} pulls")

    _figure(rows, names, out)
    metrics = {
        "two_arm": {f"{x:.4g}": {n: {"risk_mi": e.risk_mi, "risk_sr": e.risk_sr, "stderr_mi": e.stderr_mi,
                                     "mean_pulls": e.mean_samples, "p_error": e.p_error, "cap_rate": e.cap_rate}
                                 for n, e in rows[x].items()} for x in g},
        "lower_bound_mi": dict(zip([f"{x:.4g}" for x in g], lb_mi)),
        "lower_bound_sr": dict(zip([f"{x:.4g}" for x in g], lb_sr)),
        "k_arm": table,
    }
    return Outcome(claims, metrics=metrics, notes=(
        "Lower bounds, radius and budget are reconstructed from public summaries (paper text unavailable); "
        "the SR lower bound uses the exact two-arm reduction R_SR = gap * R_MI(c/gap). " + scale_note))
