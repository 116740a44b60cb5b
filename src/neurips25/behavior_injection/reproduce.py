"""Reproduction of BRIDGE's claims (Cen et al., NeurIPS 2025) on mini-iGSM with a tiny Llama trained here.

The paper's own numbers (model list, table values) were not available; the criteria below were fixed in
issue #19 before any run:

1. check: the per-step influence identity (GRPO group gradient = sqrt(alpha(1-alpha)) (g+ - g-)) holds to
   1e-6 (relative, float64); the first-order prediction of the one-step change of held-out queries'
   objective matches the measured change, Pearson r > 0.9. Controls: mean-centred advantages without the std
   (identity must fail) and the prediction paired with the wrong query pair (shuffled; r must fall below 0.9).
2. headline: RL gain (greedy accuracy after GRPO - after SFT, in-distribution) is >= 5 points larger with
   BRIDGE-augmented SFT than with plain SFT, equal SFT and RL budgets; ID and OOD reported. Control: the
   length-matched filler arm must not reach the same margin.
3. supporting (mechanism): before RL the BRIDGE model has higher mean sqrt(alpha(1-alpha)), fewer all-equal
   reward groups and larger mean co-influence than the plain model on the RL query distribution; the filler
   control is reported on the same three.
4. supporting (control): the filler arm's gain over plain is < 5 points.
"""

from __future__ import annotations

import copy
import dataclasses
import time
from pathlib import Path

import numpy as np

from neurips25.behavior_injection.data import arm_completions, make_splits
from neurips25.behavior_injection.grpo import GRPO, sample_rollouts, score_rollouts
from neurips25.behavior_injection.influence import (
    co_influence,
    first_order_check,
    frac_zero_std,
    influence_identity_error,
    informativeness,
    sample_groups,
)
from neurips25.behavior_injection.model import build_tokenizer, tiny_llama
from neurips25.behavior_injection.sft import sft_train
from neurips25.behavior_injection.tasks import MiniIGSM
from neurips25.repro import Claim, LocalContext, Outcome, Scale, progress, register

MARGIN = 0.05  # criterion 2: BRIDGE's RL gain exceeds plain's by >= 5 points
BAND = (0.3, 0.7)  # criterion 2's setting: SFT stopped at moderate accuracy


@dataclasses.dataclass(frozen=True)
class Config:
    """Every knob of the experiment; smoke / quick / paper are three instances."""

    seeds: int = 2
    arms: tuple[str, ...] = ("plain", "bridge", "filler")
    # calibration (criterion 2 needs plain SFT in the 30-70 % band): with 2-3-operation ID problems plain SFT
    # stayed near chance (0.20 at quick, v1), 2-operation problems alone reached 0.19-0.25 in 600 SFT steps
    # (dev runs); the 1-2-operation mix gave 0.25 at quick (v2): the 1000-step base solved only ~26 % of
    # 1-op problems (it needs ~2000 steps for ~83 %, docs), so v2.1 raises `pretrain_steps` to 2000
    id_ops: tuple[int, int] = (1, 2)
    ood_ops: tuple[int, int] = (3, 4)
    mod: int = 7
    distractors: tuple[int, int] = (0, 0)
    p: float = 0.5
    d_model: int = 64
    n_layers: int = 2
    n_heads: int = 4
    pretrain_ops: tuple[int, int] = (1, 1)
    pretrain_steps: int = 2000
    n_sft: int = 8000
    sft_steps: int = 400
    sft_batch: int = 32
    sft_lr: float = 5e-3
    rl_steps: int = 40
    rl_queries: int = 8
    # the RL query pool (reconstructed: the paper's RL set size is not known); GRPO draws rl_queries a step from
    # it: 400 is revisited 0.8x at quick, 3.2x in v2.4, ~13x in v2.4b (docs: the training reward rises, held-out
    # accuracy does not); the paper scale draws from 5000
    n_rl: int = 400
    group_size: int = 8
    rl_lr: float = 5e-4
    beta: float = 0.0
    max_new_tokens: int = 80
    ood_new_tokens: int = 128
    n_eval: int = 300
    n_probe: int = 24
    probe_n: int = 8
    influence_groups: int = 6


# c2 needs a model that chains (docs, v2.4): the research-note size (d=128 L=4, 664k parameters) at SFT
# lr 1e-3, where plain SFT 600 steps reached 0.66 ID exact match with the first correct 2-op chains (v2.3
# addendum); GRPO at the SFT's final learning rate (the v2.2 rule: 1e-4 here) on 16 queries a step
_CHAIN_664K = dict(d_model=128, n_layers=4, n_heads=4, pretrain_steps=1500, sft_steps=600, sft_lr=1e-3, rl_steps=80,
                   rl_queries=16, rl_lr=1e-4, n_eval=500)

CONFIGS = {
    "smoke": Config(seeds=1, arms=("plain", "bridge", "filler"), n_sft=300, pretrain_steps=6, sft_steps=8,
                    sft_batch=16, rl_steps=2, rl_queries=4, group_size=4, n_eval=16, n_probe=6, probe_n=4,
                    influence_groups=3, d_model=32, n_heads=2, max_new_tokens=48, ood_new_tokens=64),
    "quick": Config(),
    # since v2.4 the 664k model that chains, with a fresh RL pool (5000 problems for 80 x 16 draws: almost no
    # query seen twice); ~47 CPU-minutes, ~28 min with `--executor ray --jobs 2`
    "paper": Config(seeds=3, arms=("plain", "bridge", "filler"), n_rl=5000, **_CHAIN_664K),
}


# Configurations outside the three scales, run with ``run_config`` for the diagnoses in the docs (not by the CLI).
DIAGNOSTIC_CONFIGS = {
    # the paper scale until v2.3 (the 86k quick model, 5 arms): the docs' v2.3 paper run
    "paper_86k_v2.3": Config(seeds=3, arms=("plain", "bridge", "filler", "explore_only", "exploit_only"),
                             rl_steps=80, n_eval=500, n_probe=48, probe_n=16),
    # v2.4: the 664k model on the 400-problem RL pool (revisited 3.2x)
    "chain_664k": Config(seeds=3, arms=("plain", "bridge", "filler"), **_CHAIN_664K),
    # v2.4c: the same with the fresh pool, i.e. the paper scale since v2.4
    "chain_664k_fresh": CONFIGS["paper"],
}


def greedy_scores(model, tok, problems, max_new_tokens, batch=100) -> tuple[float, float]:
    """Greedy exact-match accuracy (the criterion's metric) and chain accuracy (``MiniIGSM.chain_reward``:
    the answer AND every reference step right) on the same completions."""
    hits, chains = [], []
    for s in range(0, len(problems), batch):
        qs = problems[s:s + batch]
        ro = sample_rollouts(model, tok, [q.question for q in qs], 1, max_new_tokens, greedy=True)
        r, _ = score_rollouts(ro, qs, MiniIGSM.reward)
        hits.extend(r[:, 0])
        chains.extend(MiniIGSM.chain_reward(q, t) for q, t in zip(qs, ro.texts))
    return float(np.mean(hits)), float(np.mean(chains))


def greedy_accuracy(model, tok, problems, max_new_tokens, batch=100) -> float:
    return greedy_scores(model, tok, problems, max_new_tokens, batch)[0]


def lucky_fraction(groups, problems) -> float:
    """Share of the rewarded sampled rollouts whose chain is wrong (right answer by luck or a wrong chain)."""
    rewarded = [(q, t) for g, q in zip(groups, problems) for t, r in zip(g.rollouts.texts, g.rewards) if r == 1]
    return float(np.mean([1.0 - MiniIGSM.chain_reward(q, t) for q, t in rewarded])) if rewarded else float("nan")


def seed_splits(cfg: Config, seed: int):
    """One paired seed's SFT / RL / probe / evaluation problems under ``cfg``."""
    return make_splits(seed, cfg.n_sft, cfg.n_rl, cfg.n_probe, cfg.n_eval, cfg.id_ops, cfg.ood_ops, cfg.mod,
                       cfg.distractors)


def pretrain(cfg: Config, tok, seed: int):
    """The shared base model: plain-CoT training on 1-operation problems (stands in for a pretrained LM)."""
    model = tiny_llama(len(tok), cfg.d_model, cfg.n_layers, cfg.n_heads, max_len=320, seed=seed, tokenizer=tok)
    if cfg.pretrain_steps:
        base = MiniIGSM(n_ops=cfg.pretrain_ops, mod=cfg.mod, distractors=cfg.distractors, seed=seed + 1000)
        qs = base.samples(cfg.n_sft)
        sft_train(model, tok, [q.question for q in qs], [q.completion for q in qs], cfg.pretrain_steps,
                  cfg.sft_batch, cfg.sft_lr, warmup=30, seed=seed + 1000, desc="pretrain (1-op)")
    return model


def run_arm(cfg: Config, splits, tok, base, arm: str, seed: int, log) -> dict:
    """SFT on one arm's completions, the pre-RL readiness numbers, GRPO, accuracies before and after."""
    import torch

    t0 = time.perf_counter()
    model = copy.deepcopy(base)
    comps = arm_completions(splits.sft, arm, cfg.p, seed)
    losses = sft_train(model, tok, [q.question for q in splits.sft], comps, cfg.sft_steps, cfg.sft_batch,
                       cfg.sft_lr, warmup=30, seed=seed, desc=f"SFT {arm}")
    t_sft = time.perf_counter() - t0
    rec = {"sft_loss_last": float(np.mean(losses[-20:])), "sft_words": float(np.mean([len(c.split())
                                                                                      for c in comps]))}
    rec["sft_acc_id"], rec["sft_chain_id"] = greedy_scores(model, tok, splits.eval_id, cfg.max_new_tokens)
    rec["sft_acc_ood"], rec["sft_chain_ood"] = greedy_scores(model, tok, splits.eval_ood, cfg.ood_new_tokens)
    torch.manual_seed(seed)
    groups = sample_groups(model, tok, splits.probe, MiniIGSM.reward, lambda q: q.question, cfg.probe_n,
                           cfg.max_new_tokens)
    alpha = np.array([g.alpha for g in groups])
    ci = co_influence(model, groups)
    rec.update(alpha_probe=alpha, informativeness=informativeness(alpha), frac_zero_std=frac_zero_std(alpha),
               co_influence=ci["mean"], co_influence_cosine=ci["cosine"], n_informative=len(ci["index"]),
               sampled_acc_probe=float(alpha.mean()), lucky_frac_probe=lucky_fraction(groups, splits.probe))
    if arm == "plain":
        rec["_groups"], rec["_model"] = groups, copy.deepcopy(model)
    t1 = time.perf_counter()
    trainer = GRPO(model, tok, group_size=cfg.group_size, beta=cfg.beta, lr=cfg.rl_lr,
                   max_new_tokens=cfg.max_new_tokens,
                   ref=copy.deepcopy(model) if cfg.beta else None)
    rng = np.random.default_rng(seed + 17)
    curve, zero = [], []
    timing = {"time_rollout": 0.0, "time_reward": 0.0, "time_update": 0.0}
    for _ in progress(range(cfg.rl_steps), desc=f"GRPO {arm}"):
        qs = [splits.rl[i] for i in rng.choice(len(splits.rl), cfg.rl_queries, replace=False)]
        st = trainer.step(qs, MiniIGSM.reward, prompt_of=lambda q: q.question)
        curve.append(st["reward_mean"])
        zero.append(st["frac_reward_zero_std"])
        for k in timing:
            timing[k] += st[k]
    t_rl = time.perf_counter() - t1
    rec["rl_acc_id"], rec["rl_chain_id"] = greedy_scores(model, tok, splits.eval_id, cfg.max_new_tokens)
    rec["rl_acc_ood"], rec["rl_chain_ood"] = greedy_scores(model, tok, splits.eval_ood, cfg.ood_new_tokens)
    rec.update(gain_id=rec["rl_acc_id"] - rec["sft_acc_id"], gain_ood=rec["rl_acc_ood"] - rec["sft_acc_ood"],
               gain_chain_id=rec["rl_chain_id"] - rec["sft_chain_id"],
               rl_reward_curve=curve, rl_frac_zero_std_curve=zero, time_sft_s=t_sft, time_rl_s=t_rl,
               rl_timing_s=timing)
    log(f"{arm} seed {seed}: SFT acc ID {rec['sft_acc_id']:.3f} (chain {rec['sft_chain_id']:.3f}) OOD "
        f"{rec['sft_acc_ood']:.3f}; RL acc ID {rec['rl_acc_id']:.3f} (chain {rec['rl_chain_id']:.3f}) OOD "
        f"{rec['rl_acc_ood']:.3f}; informativeness {rec['informativeness']:.3f}; lucky rewarded probe rollouts "
        f"{rec['lucky_frac_probe']:.2f}")
    return rec


def influence_checks(model, groups, n_groups: int, seed: int) -> dict:
    """Criterion 1 on a float64 copy of the plain SFT model, on its probe groups."""
    import torch

    m64 = copy.deepcopy(model).double()
    # the groups' rollouts were sampled by the float32 model; gradients are exact for these fixed sequences
    informative = [g for g in groups if 0 < g.alpha < 1]
    out = {"n_informative": len(informative)}
    if len(informative) < 4:
        return out
    errs = [influence_identity_error(m64, g)["rel_error"] for g in informative[:n_groups]]
    ctrl = [influence_identity_error(m64, g, advantages=torch.as_tensor(g.rewards - g.rewards.mean()))
            ["rel_error"] for g in informative[:n_groups]]
    half = min(n_groups, len(informative) // 2)
    fo = first_order_check(m64, informative[:half], informative[half:2 * half])
    rng = np.random.default_rng(seed)
    shuffled = rng.permutation(fo["predicted"])
    r_ctrl = float(np.corrcoef(shuffled, fo["measured"])[0, 1])
    out.update(identity_rel_error_max=float(max(errs)), control_unnormalised_rel_error_min=float(min(ctrl)),
               pearson_r=fo["pearson_r"], n_pairs=fo["n_pairs"], control_shuffled_r=r_ctrl,
               predicted=fo["predicted"], measured=fo["measured"])
    return out


def _figures(per_seed, arms, out: Path) -> None:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(12, 4.2))
    ax = fig.add_subplot(1, 2, 1)
    for arm in arms:
        curves = np.array([s[arm]["rl_reward_curve"] for s in per_seed])
        c = curves.mean(0)
        k = max(1, len(c) // 10)
        smooth = np.convolve(c, np.ones(k) / k, mode="valid")
        ax.plot(np.arange(len(smooth)) + k, smooth, label=arm)
    ax.set_xlabel("GRPO step"), ax.set_ylabel("rollout accuracy (batch mean, smoothed)")
    ax.set_title("accuracy vs RL step"), ax.legend()
    ax = fig.add_subplot(1, 2, 2)
    bins = np.linspace(0, 1, 10)
    for arm in arms:
        a = np.concatenate([s[arm]["alpha_probe"] for s in per_seed])
        ax.hist(a, bins=bins, histtype="step", lw=2, label=arm)
    ax.set_xlabel("per-query rollout accuracy alpha (before RL)"), ax.set_ylabel("queries")
    ax.set_title("alpha histogram of the SFT models"), ax.legend()
    fig.tight_layout()
    (out / "figures").mkdir(parents=True, exist_ok=True)
    fig.savefig(out / "figures" / "rl_curves_alpha_hist.png", dpi=110)


def _arm_task(item) -> tuple[dict, list[str]]:
    """One arm (a ``ctx.map`` item ``(cfg, splits, tok, base, arm, seed)``): its record and log lines."""
    cfg, splits, tok, base, arm, seed = item
    lines: list[str] = []
    return run_arm(cfg, splits, tok, base, arm, seed, lines.append), lines


@register("behavior_injection")
def run(scale: Scale, seed: int, out: Path, ctx=None) -> Outcome:
    return run_config(CONFIGS[str(scale)], seed, out, ctx, label=f"scale={scale}")


def run_config(cfg: Config, seed: int, out: Path, ctx=None, label: str = "custom config") -> Outcome:
    """The reproduction under any :class:`Config` (``run`` passes the scale's; diagnostics pass their own,
    e.g. ``DIAGNOSTIC_CONFIGS``), judged by the same fixed criteria."""
    import torch

    if not isinstance(cfg, Config):
        raise TypeError(f"`cfg` must be a behavior_injection Config, got {type(cfg).__name__}")
    ctx = ctx if ctx is not None else LocalContext()
    t_start = time.perf_counter()
    logs: list[str] = []
    claims = [
        Claim("c1_influence_identity", "one GRPO step's gradient on a query is sqrt(alpha(1-alpha)) times the "
              "mean correct minus mean incorrect score gradient, and the first-order influence predicts the "
              "change on other queries", criterion="relative error <= 1e-6 (float64) and Pearson r > 0.9 of "
              "predicted vs measured one-step change on held-out queries; controls (no std normalisation; "
              "shuffled pairs) must fail", paper_value="analysis (Sec. 3), no figure", kind="check"),
        Claim("c2_rl_gain", "BRIDGE-augmented SFT yields a larger RL gain (RL accuracy - SFT accuracy) than "
              "plain SFT", criterion=f"ID gain(BRIDGE) - gain(plain) >= {MARGIN:.2f}, mean over paired seeds, "
              f"plain SFT accuracy in {BAND}; the filler control must stay below the margin",
              paper_value="'significantly' larger gain on iGSM and PromptBench (table values not available)",
              kind="headline"),
        Claim("c3_mechanism", "BRIDGE makes the SFT model RL-ready: more RL-informative queries and stronger "
              "co-influence", criterion="BRIDGE vs plain before RL: higher mean sqrt(alpha(1-alpha)), lower "
              "frac_reward_zero_std, larger mean co-influence (all three, mean over seeds)",
              paper_value="alpha histograms and co-influence comparison (figures)", kind="supporting"),
        Claim("c4_filler_control", "length alone (filler steps, no exploration / exploitation) gives no such gain",
              criterion=f"ID gain(filler) - gain(plain) < {MARGIN:.2f}", kind="supporting"),
    ]
    per_seed = []
    infl = None
    # one shared base model (the stand-in for a pretrained LM, as one LLM is shared by every arm and seed in
    # the paper); the paired seeds vary the SFT / RL / evaluation data and the sampling
    vocab_task = make_splits(seed, 1, 1, 1, 1, cfg.id_ops, cfg.ood_ops, cfg.mod, cfg.distractors).task
    tok = build_tokenizer(vocab_task.vocabulary())
    torch.manual_seed(seed)
    base = pretrain(cfg, tok, seed)
    splits_of = {}
    for k in range(cfg.seeds):
        torch.manual_seed(seed + k)
        splits_of[seed + k] = seed_splits(cfg, seed + k)
    # every (seed, arm) is independent given the base model (each seeds its own SFT, sampling and RL): one
    # ctx.map over all of them runs here locally, in order, and as parallel Ray tasks on a cluster
    items = [(cfg, splits_of[seed + k], tok, base, arm, seed + k) for k in range(cfg.seeds) for arm in cfg.arms]
    done = ctx.map(_arm_task, items, desc="arms x seeds")
    for k in range(cfg.seeds):
        chunk = done[k * len(cfg.arms):(k + 1) * len(cfg.arms)]
        recs = {arm: rec for arm, (rec, _) in zip(cfg.arms, chunk)}
        logs.extend(line for _, lines in chunk for line in lines)
        s = seed + k
        if k == 0:
            infl = influence_checks(recs["plain"]["_model"], recs["plain"]["_groups"], cfg.influence_groups, s)
        for r in recs.values():
            r.pop("_model", None), r.pop("_groups", None)
        per_seed.append(recs)

    # --- claim 1 -------------------------------------------------------------------------------------------
    if "pearson_r" not in infl:
        claims[0].judge(None, infl, summary=f"only {infl['n_informative']} informative probe groups; needs >= 4")
    else:
        ok = infl["identity_rel_error_max"] <= 1e-6 and infl["pearson_r"] > 0.9
        ctrl_fail = infl["control_unnormalised_rel_error_min"] > 1e-6 and infl["control_shuffled_r"] <= 0.9
        claims[0].judge(ok and ctrl_fail, {k: v for k, v in infl.items()}, summary=(
            f"identity rel. error {infl['identity_rel_error_max']:.1e} (needs <= 1e-6; control without std "
            f"{infl['control_unnormalised_rel_error_min']:.2f}); Pearson r {infl['pearson_r']:.4f} over "
            f"{infl['n_pairs']} pairs (needs > 0.9; shuffled control {infl['control_shuffled_r']:.2f})"))

    # --- claims 2-4 ----------------------------------------------------------------------------------------
    def mean_over(arm, key):
        return float(np.mean([s[arm][key] for s in per_seed]))

    def diffs(arm, key):
        return np.array([s[arm][key] - s["plain"][key] for s in per_seed])

    d_id, d_ood = diffs("bridge", "gain_id"), diffs("bridge", "gain_ood")
    f_id = diffs("filler", "gain_id") if "filler" in cfg.arms else None
    plain_acc = mean_over("plain", "sft_acc_id")
    in_band = BAND[0] <= plain_acc <= BAND[1]
    table = {arm: {k: mean_over(arm, k) for k in ("sft_acc_id", "rl_acc_id", "gain_id", "sft_acc_ood",
                                                  "rl_acc_ood", "gain_ood", "sft_chain_id", "rl_chain_id",
                                                  "gain_chain_id", "lucky_frac_probe", "informativeness",
                                                  "frac_zero_std", "co_influence", "co_influence_cosine")}
             for arm in cfg.arms}
    passed = bool(d_id.mean() >= MARGIN)
    ctrl_passes = f_id is not None and bool(f_id.mean() >= MARGIN)
    verdict = None if not in_band else (passed and not ctrl_passes if not (passed and ctrl_passes) else None)
    agree = len(set((d_id >= MARGIN).tolist())) == 1
    ci = (f" (per seed {', '.join(f'{d:+.3f}' for d in d_id)}; seeds {'agree' if agree else 'DISAGREE'})"
          if len(d_id) > 1 else " (1 seed)")
    claims[1].judge(verdict, {"gain_diff_id_per_seed": d_id, "gain_diff_ood_per_seed": d_ood,
                              "chain_gain_diff_id_per_seed": diffs("bridge", "gain_chain_id"),
                              "filler_minus_plain_id": f_id, "plain_sft_acc_id": plain_acc,
                              "arms": table},
                    note=("plain SFT accuracy outside the moderate band: inconclusive by the criterion's setting"
                          if not in_band else ("the filler control passes too: the gain is not specific to "
                                               "the injected behaviours" if passed and ctrl_passes else "")),
                    summary=(f"ID gain BRIDGE - plain {d_id.mean():+.3f}{ci}; needs >= {MARGIN:.2f} "
                             f"(filler control {f_id.mean() if f_id is not None else float('nan'):+.3f}); OOD "
                             f"{d_ood.mean():+.3f}; plain SFT acc {plain_acc:.2f} (band {BAND})"))
    b, p = table["bridge"], table["plain"]
    mech = lambda a: (a["informativeness"] > p["informativeness"] and a["frac_zero_std"] < p["frac_zero_std"]
                      and a["co_influence"] > p["co_influence"])
    mech_b = bool(mech(b))
    mech_f = bool(mech(table["filler"])) if "filler" in table else False
    claims[2].judge(None if (mech_b and mech_f) else mech_b, {arm: {k: table[arm][k] for k in (
        "informativeness", "frac_zero_std", "co_influence", "co_influence_cosine")} for arm in cfg.arms},
        note="the filler control also passes: not specific to the behaviours" if mech_b and mech_f else "",
        summary=(f"sqrt(a(1-a)) {b['informativeness']:.3f} vs plain {p['informativeness']:.3f}; zero-std "
                 f"{b['frac_zero_std']:.2f} vs {p['frac_zero_std']:.2f}; co-influence {b['co_influence']:.3g} vs "
                 f"{p['co_influence']:.3g} (filler control passes: {mech_f})"))
    if f_id is None:
        claims[3].judge(None, {}, summary="filler arm not run at this scale")
    else:
        claims[3].judge(bool(f_id.mean() < MARGIN), {"filler_minus_plain_id": f_id}, summary=(
            f"ID gain filler - plain {f_id.mean():+.3f}; needs < {MARGIN:.2f} (BRIDGE - plain {d_id.mean():+.3f})"))

    _figures(per_seed, cfg.arms, out)
    wall = time.perf_counter() - t_start
    return Outcome(claims, metrics={"config": dataclasses.asdict(cfg), "per_seed": per_seed, "arms": table,
                                    "influence": infl, "log": logs, "wall_s": wall},
                   notes=(f"{label}: {cfg.seeds} paired seed(s), arms {cfg.arms}; tiny Llama d={cfg.d_model} "
                          f"L={cfg.n_layers} trained from scratch on mini-iGSM mod {cfg.mod}, ID ops {cfg.id_ops}, "
                          f"OOD ops {cfg.ood_ops}; SFT {cfg.sft_steps} steps x {cfg.sft_batch}, GRPO "
                          f"{cfg.rl_steps} steps x {cfg.rl_queries} queries x {cfg.group_size} rollouts; "
                          f"accuracy = greedy exact match on {cfg.n_eval} ID and {cfg.n_eval} OOD problems"))
