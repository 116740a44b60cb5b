"""Reproduction of BRIDGE's claims (Cen et al., NeurIPS 2025) on mini-iGSM with a tiny Llama trained here.

The paper's own numbers (model list, table values) were not available. Criteria fixed in issue #19 before any
run, in the verdicts-v4 form (#58): :func:`declare_claims` states every claim, the machinery sets every verdict
from the criterion applied to the method and its controls. Every judged claim is a stand-in: a model trained here
from scratch, not the paper's pretrained LLM.

1. checks: c1 the per-step influence identity (GRPO group gradient = sqrt(alpha(1-alpha)) (g+ - g-)) holds to
   1e-6 (relative, float64; negative control: mean-centred advantages without the std); c1b the first-order
   prediction of the one-step change of held-out queries' objective matches the measured change, Pearson r > 0.9
   (negative control: predictions paired with the wrong query pair). When fewer than 4 probe groups are
   informative, binary rewards are planted on the model's own rollouts (the identity holds for any binary
   reward), so both are decided at every scale (#48).
2. headline: ID gain(BRIDGE) - gain(plain) >= 0.05 (RL gain = greedy accuracy after GRPO - after SFT, mean
   over paired seeds). Preconditions: plain SFT accuracy in [0.3, 0.7], and plain's own RL gain > 0 (the
   lower end of its 95 % interval over the paired evaluation problems, #48). Negative control: the filler arm.
3. supporting (mechanism): before RL, BRIDGE has higher mean sqrt(alpha(1-alpha)), a lower share of all-equal
   reward groups and a higher co-influence *cosine* than plain, in EVERY paired seed. Negative control: filler.
4. supporting (control): gain(filler) - gain(plain) < 0.05, judged only when c2's BRIDGE margin passes. Negative
   control: BRIDGE itself (its excess over plain must reach the margin).
"""

from __future__ import annotations

import copy
import dataclasses
import time
from pathlib import Path

import numpy as np

from neurips25.behavior_injection.data import arm_completions, behaviour_content, make_splits
from neurips25.behavior_injection.grpo import GRPO, sample_rollouts, score_rollouts
from neurips25.behavior_injection.influence import (
    Group,
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
from neurips25.behavior_injection.v3 import V3Config, run_v3
from neurips25.repro import Claim, LocalContext, Outcome, Scale, progress, register
from neurips25.repro.claims import Control, Criterion, Precondition, measure
from neurips25.repro.intervals import mean_interval

MARGIN = 0.05  # criterion 2: BRIDGE's RL gain exceeds plain's by >= 5 points
BAND = (0.3, 0.7)  # criterion 2's setting: SFT stopped at moderate accuracy
IDENTITY_TOL = 1e-6  # criterion 1: relative error of the identity (float64)
PEARSON_MIN = 0.9  # criterion 1: predicted vs measured one-step change


@dataclasses.dataclass(frozen=True)
class Config:
    """Every knob of the experiment; smoke / quick / paper are three instances."""

    seeds: int = 2
    arms: tuple[str, ...] = ("plain", "bridge", "filler")
    # the task (#48): tree-shaped DAGs with distractors, so BRIDGE's behaviours have content (a needed node is
    # locked at the start of every 2-3-op problem, several are ready at once in about a quarter of them);
    # until v2.4 the ID split was 1-2-op chains without distractors, where exploitation could only restate
    # known values and 1-op problems had nothing to explore (review of #19; docs history)
    id_ops: tuple[int, int] = (2, 3)
    ood_ops: tuple[int, int] = (4, 5)
    mod: int = 7
    distractors: tuple[int, int] = (1, 2)
    shape: str = "tree"
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
    # the RL query pool (reconstructed: the paper's RL set size is not known); GRPO draws rl_queries a step
    n_rl: int = 400
    group_size: int = 8
    rl_lr: float = 5e-4
    beta: float = 0.0
    max_new_tokens: int = 96
    ood_new_tokens: int = 160
    n_eval: int = 200
    n_probe: int = 24
    probe_n: int = 8
    influence_groups: int = 6


# c2 needs a model that chains (docs, v2.4): the research-note size (d=128 L=4, 664k parameters) at SFT
# lr 1e-3, where plain SFT 600 steps reached 0.66 ID exact match on 1-2-op chains (v2.3 addendum); GRPO at the
# SFT's final learning rate (the v2.2 rule: 1e-4 here) on 16 queries a step
_CHAIN_664K = dict(d_model=128, n_layers=4, n_heads=4, pretrain_steps=1500, sft_steps=600, sft_lr=1e-3, rl_steps=80,
                   rl_queries=16, rl_lr=1e-4, n_eval=500)
# the v2.4 task (1-2-op chains, no distractors, 80 / 128 new tokens): kept for the diagnostic configurations
_V24_TASK = dict(id_ops=(1, 2), ood_ops=(3, 4), distractors=(0, 0), shape="chain", max_new_tokens=80,
                 ood_new_tokens=128)

# settings fixed before any judged run (docs, "Calibration and cost"): LoRA r=16 (the same CPU per SFT step as full
# fine-tuning, 28x fewer trainable parameters, faster rollouts); plain SFT 50 steps x 8 at lr 5e-4 (calibration on
# data seed 100: 0.42 held-out accuracy after 25 steps, 0.39 after 50, base 0.00); GRPO 30 steps x 8 queries x 8
# rollouts at lr 5e-5 (~2 CPU-hours a seed by the measured step costs, within the 3-hour ceiling)
V3_PAPER = V3Config(task="countdown", n_numbers=3, arms=("plain", "bridge", "filler"), p=0.5, model="smollm2",
                    rank=16, n_sft=2000, sft_steps=50, sft_batch=8, sft_lr=5e-4, n_rl=1000, rl_steps=30,
                    rl_queries=8, group_size=8, rl_lr=5e-5, max_new_tokens=64, n_eval=128, n_probe=16, probe_n=8,
                    chunk=5)

CONFIGS = {
    "smoke": Config(seeds=1, arms=("plain", "bridge", "filler"), n_sft=300, pretrain_steps=6, sft_steps=8,
                    sft_batch=16, rl_steps=2, rl_queries=4, group_size=4, n_eval=12, n_probe=6, probe_n=4,
                    influence_groups=3, d_model=32, n_heads=2, max_new_tokens=48, ood_new_tokens=64, n_rl=40),
    "quick": Config(),
    # the 664k model, a fresh RL pool (5000 problems for 80 x 16 draws), on the #48 task. SFT 2400 steps: the
    # calibration on plain SFT (data seed 100, apart from the evaluation seeds; docs) put the 664k model at 0.22
    # ID accuracy after 600 SFT steps on the tree task (below c2's band) and 0.36 after 2400. GRPO: lr 1e-4 x 80
    # steps, the only setting calibrated that did not lower the held-out accuracy (-0.016 [-0.060, +0.028]).
    # One paired seed a run (its own base seeded by --seed), so one run fits the 60-minute ceiling on one core
    # (~50 CPU-minutes) and seeds run side by side (`--seeds 0,1 --jobs 2`) or on a cluster.
    # v3 (issue #60): SmolLM2-135M-Instruct + LoRA on reasoning-gym Countdown with its verifier (instance
    # "reduced"); settings from the calibration and the cost table in the docs, fixed before any judged run. One
    # paired seed a run, resumable stage by stage (SFT, readiness, GRPO chunks, evaluation) through the runner's
    # cache folder; ~3 CPU-hours a seed at one thread.
    "paper": V3_PAPER,
}


# Configurations outside the three scales, for the diagnoses in the docs. Each runs from the command line:
#   python -m neurips25.behavior_injection.diagnose config NAME --seed 0 --out DIR
DIAGNOSTIC_CONFIGS = {
    # the paper scale of v2.4d - v2.5 (the 664k model on the tree task, SFT 2400 steps), now a stand-in diagnostic
    "paper_664k_v2.5": Config(seeds=1, arms=("plain", "bridge", "filler"), n_rl=5000,
                              **{**_CHAIN_664K, "sft_steps": 2400}),
    # the paper scale until v2.3 (the 86k quick model, 5 arms): the docs' v2.3 paper run
    "paper_86k_v2.3": Config(seeds=3, arms=("plain", "bridge", "filler", "explore_only", "exploit_only"),
                             rl_steps=80, n_eval=500, n_probe=48, probe_n=16, **_V24_TASK),
    # v2.4: the 664k model on the 400-problem RL pool (revisited 3.2x)
    "chain_664k": Config(seeds=3, arms=("plain", "bridge", "filler"), **_CHAIN_664K, **_V24_TASK),
    # v2.4c: the same with the fresh pool, i.e. the paper scale of v2.4
    "chain_664k_fresh": Config(seeds=3, arms=("plain", "bridge", "filler"), n_rl=5000, **_CHAIN_664K, **_V24_TASK),
    # the quick scale of v2.1 - v2.4 (1-2-op chains), for the old-vs-new comparison
    "quick_v2.4": Config(n_eval=300, **_V24_TASK),
}


def greedy_hits(model, tok, problems, max_new_tokens, batch=100) -> tuple[np.ndarray, np.ndarray]:
    """Per-problem greedy exact match (the criterion's metric) and chain correctness (``MiniIGSM.chain_reward``:
    the answer AND every reference step right) on the same completions, as 0/1 arrays."""
    hits, chains = [], []
    for s in range(0, len(problems), batch):
        qs = problems[s:s + batch]
        ro = sample_rollouts(model, tok, [q.question for q in qs], 1, max_new_tokens, greedy=True)
        r, _ = score_rollouts(ro, qs, MiniIGSM.reward)
        hits.extend(r[:, 0])
        chains.extend(MiniIGSM.chain_reward(q, t) for q, t in zip(qs, ro.texts))
    return np.array(hits, dtype=np.int8), np.array(chains, dtype=np.int8)


def greedy_scores(model, tok, problems, max_new_tokens, batch=100) -> tuple[float, float]:
    """Greedy exact-match and chain accuracy (means of :func:`greedy_hits`)."""
    h, c = greedy_hits(model, tok, problems, max_new_tokens, batch)
    return float(h.mean()), float(c.mean())


def greedy_accuracy(model, tok, problems, max_new_tokens, batch=100) -> float:
    return greedy_scores(model, tok, problems, max_new_tokens, batch)[0]


def lucky_fraction(groups, problems) -> float:
    """Share of the rewarded sampled rollouts whose chain is wrong (right answer by luck or a wrong chain)."""
    rewarded = [(q, t) for g, q in zip(groups, problems) for t, r in zip(g.rollouts.texts, g.rewards) if r == 1]
    return float(np.mean([1.0 - MiniIGSM.chain_reward(q, t) for q, t in rewarded])) if rewarded else float("nan")


def seed_splits(cfg: Config, seed: int):
    """One paired seed's SFT / RL / probe / evaluation problems under ``cfg``."""
    return make_splits(seed, cfg.n_sft, cfg.n_rl, cfg.n_probe, cfg.n_eval, cfg.id_ops, cfg.ood_ops, cfg.mod,
                       cfg.distractors, cfg.shape)


def pretrain(cfg: Config, tok, seed: int):
    """The shared base model: plain-CoT training on 1-operation problems (stands in for a pretrained LM)."""
    model = tiny_llama(len(tok), cfg.d_model, cfg.n_layers, cfg.n_heads, max_len=320, seed=seed, tokenizer=tok)
    if cfg.pretrain_steps:
        base = MiniIGSM(n_ops=cfg.pretrain_ops, mod=cfg.mod, distractors=cfg.distractors, seed=seed + 1000,
                        shape=cfg.shape)
        qs = base.samples(cfg.n_sft)
        sft_train(model, tok, [q.question for q in qs], [q.completion for q in qs], cfg.pretrain_steps,
                  cfg.sft_batch, cfg.sft_lr, warmup=30, seed=seed + 1000, desc="pretrain (1-op)")
    return model


def grpo_train(cfg: Config, model, tok, pool, seed: int, desc: str = "GRPO") -> tuple[list, list, dict]:
    """``cfg.rl_steps`` GRPO steps on ``model`` (in place), ``cfg.rl_queries`` queries a step drawn from ``pool``;
    returns the batch reward curve, the share of all-equal groups per step and the time of each phase."""
    trainer = GRPO(model, tok, group_size=cfg.group_size, beta=cfg.beta, lr=cfg.rl_lr,
                   max_new_tokens=cfg.max_new_tokens, ref=copy.deepcopy(model) if cfg.beta else None)
    rng = np.random.default_rng(seed + 17)
    curve, zero = [], []
    timing = {"time_rollout": 0.0, "time_reward": 0.0, "time_update": 0.0}
    for _ in progress(range(cfg.rl_steps), desc=desc):
        qs = [pool[i] for i in rng.choice(len(pool), cfg.rl_queries, replace=False)]
        st = trainer.step(qs, MiniIGSM.reward, prompt_of=lambda q: q.question)
        curve.append(st["reward_mean"])
        zero.append(st["frac_reward_zero_std"])
        for k in timing:
            timing[k] += st[k]
    return curve, zero, timing


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
                                                                                      for c in comps])),
           "behaviour_content": behaviour_content(splits.sft, comps)}
    sft_hits, sft_chain = greedy_hits(model, tok, splits.eval_id, cfg.max_new_tokens)
    rec.update(sft_acc_id=float(sft_hits.mean()), sft_chain_id=float(sft_chain.mean()), sft_hits_id=sft_hits)
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
    curve, zero, timing = grpo_train(cfg, model, tok, splits.rl, seed, desc=f"GRPO {arm}")
    t_rl = time.perf_counter() - t1
    rl_hits, rl_chain = greedy_hits(model, tok, splits.eval_id, cfg.max_new_tokens)
    rec.update(rl_acc_id=float(rl_hits.mean()), rl_chain_id=float(rl_chain.mean()), rl_hits_id=rl_hits)
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
    """Criterion 1 on a float64 copy of the plain SFT model, on its probe groups; the two negative controls are
    computed here too (through :func:`measure`, so their provenance is recorded)."""
    m64 = copy.deepcopy(model).double()
    # the groups' rollouts were sampled by the float32 model; gradients are exact for these fixed sequences
    informative = [g for g in groups if 0 < g.alpha < 1]
    out = {"n_informative": len(informative), "planted_rewards": False}
    if len(informative) < 4:
        # the identity holds for any binary reward: plant mixed 0/1 rewards on the model's own rollouts (#48), so
        # the check is decided even where the model earns no reward (smoke) or all of it
        rng = np.random.default_rng(seed + 99)
        informative = []
        for g in groups:
            n = len(g.rewards)
            r = np.zeros(n)
            r[rng.choice(n, size=int(rng.integers(1, n)), replace=False)] = 1.0  # 1 .. n-1 correct
            informative.append(Group(g.rollouts, r))
        out["planted_rewards"] = True
        if len(informative) < 4:
            return out
    used = informative[:n_groups]
    half = min(n_groups, len(informative) // 2)
    fo = first_order_check(m64, informative[:half], informative[half:2 * half])
    out.update(identity=_identity_errors(m64, used), no_std=measure(_identity_errors, m64, used, centred_only=True),
               first_order={"pearson_r": fo["pearson_r"], "n_pairs": fo["n_pairs"]},
               shuffled_pairs=measure(_shuffled_pairs, fo["predicted"], fo["measured"], seed),
               predicted=fo["predicted"], measured=fo["measured"])
    return out


def _identity_errors(m64, groups, centred_only: bool = False) -> dict:
    """Largest relative error of the influence identity over ``groups``; ``centred_only`` (the no-std control)
    gives the advantages mean-centred without the std, and its figure is the best (smallest) group's error."""
    import torch

    if not centred_only:
        return {"identity_rel_error_max": float(max(influence_identity_error(m64, g)["rel_error"] for g in groups))}
    errs = [influence_identity_error(m64, g, advantages=torch.as_tensor(g.rewards - g.rewards.mean()))["rel_error"]
            for g in groups]
    return {"identity_rel_error_max": float(min(errs))}


def _shuffled_pairs(predicted, measured, seed: int) -> dict:
    """Pearson r of the first-order predictions paired with the wrong (train, held-out) query pairs."""
    shuffled = np.random.default_rng(seed).permutation(np.asarray(predicted))
    return {"pearson_r": float(np.corrcoef(shuffled, measured)[0, 1])}


#: what every headline and supporting claim is judged on (issue #58)
INSTANCE_NOTE = ("a tiny Llama (86k parameters at quick, 664k at paper) trained here from scratch on mini-iGSM (DAG "
                 "arithmetic generated here), standing in for the paper's pretrained LLMs on iGSM / Countdown; the "
                 "verdict says whether BRIDGE amplifies GRPO's gain on such a model, not on a pretrained LLM")


#: the paper scale's judged claims since v3 (issue #60): c2_rl_gain_smollm2, c3_mechanism_smollm2, ...
V3_SUFFIX = "_smollm2"
#: the paper scale since v3 (issue #60)
REDUCED_NOTE = ("SmolLM2-135M-Instruct (a real pretrained LM, far smaller than the paper's) with LoRA, SFT on "
                "reasoning-gym Countdown worked solutions (3 numbers, + - *) and GRPO with the task's verifier as the "
                "reward and the accuracy metric; the paper's iGSM / PromptBench and larger models are not run")


def declare_claims(scale: Scale | None = None) -> list[Claim]:
    """The claims with their criteria, controls and preconditions (fixed before any run; the same criteria at
    every scale). The instance: ``reduced`` at the paper scale (SmolLM2 + Countdown, v3), ``stand-in`` below
    (the tiny Llama trained here on mini-iGSM)."""
    checks = _check_claims()
    # the ledger keys claims by id, and instance words do not vary by scale: the stand-in's c2-c4 (judged at smoke
    # and quick) and SmolLM2's c2-c4 (judged at paper) are declared at every scale; each scale records the other
    # triple as not measured there
    return (checks + _judged_claims("", dict(instance="stand-in", instance_note=INSTANCE_NOTE))
            + _judged_claims(V3_SUFFIX, dict(instance="reduced", instance_note=REDUCED_NOTE)))


def _check_claims() -> list[Claim]:
    return [
        Claim("c1_influence_identity", "one GRPO step's gradient on a query is sqrt(alpha(1-alpha)) times the "
              "mean correct minus mean incorrect score gradient", paper_value="analysis (Sec. 3), no figure",
              kind="check",
              criterion=Criterion.at_most("identity_rel_error_max", IDENTITY_TOL, f"identity relative error <= "
                                          f"{IDENTITY_TOL:g} (float64) on every probe group"),
              controls=[Control.negative("no_std", "advantages mean-centred without the std normalisation, its "
                                         "best group (the identity must fail)")]),
        Claim("c1b_first_order", "the first-order influence predicts the one-step change of the GRPO objective on "
              "other queries", paper_value="analysis (Sec. 3), no figure", kind="check",
              criterion=Criterion.at_least("pearson_r", PEARSON_MIN, f"Pearson r > {PEARSON_MIN} of predicted vs "
                                           "measured one-step change on held-out queries", strict=True),
              controls=[Control.negative("shuffled_pairs", "predictions paired with the wrong (train, held-out) "
                                         "query pair (r must fail)")]),
    ]


def _judged_claims(sfx: str, judged: dict) -> list[Claim]:
    return [
        Claim(f"c2_rl_gain{sfx}", "BRIDGE-augmented SFT yields a larger RL gain (RL accuracy - SFT accuracy) than "
              "plain SFT", kind="headline", **judged,
              paper_value="'significantly' larger gain on iGSM and PromptBench (table values not available)",
              criterion=Criterion.at_least("margin_id", MARGIN, f"ID gain(BRIDGE) - gain(plain) >= {MARGIN:.2f}, "
                                           "mean over paired seeds"),
              controls=[Control.negative("filler", "length-matched filler SFT (restatements of known values, no "
                                         "exploration / exploitation) in place of BRIDGE")],
              no_positive_control=("no SFT arm is known to amplify GRPO's gain on this instance; an oracle that "
                                   "did would presuppose the claim (the preconditions check that RL gains at all)"),
              preconditions=[Precondition(f"plain SFT ID accuracy in [{BAND[0]}, {BAND[1]}]",
                                          lambda m: BAND[0] <= m["plain_sft_acc_id"] <= BAND[1]),
                             Precondition("plain's RL gain > 0 (lower end of its 95 % interval over the paired "
                                          "ID evaluation problems)", lambda m: m["plain_gain_id_lo"] > 0)]),
        Claim(f"c3_mechanism{sfx}", "BRIDGE makes the SFT model RL-ready: more RL-informative queries and stronger "
              "co-influence", kind="supporting", **judged,
              paper_value="alpha histograms and co-influence comparison (figures)",
              criterion=Criterion("BRIDGE vs plain before RL, in every paired seed: higher mean sqrt(alpha(1-alpha)), "
                                  "lower frac_reward_zero_std and higher co-influence cosine",
                                  "share_seeds_all_three", _c3_rule, "= 1 (every seed)"),
              controls=[Control.negative("filler", "the filler SFT model against plain on the same statistics")],
              no_positive_control="no SFT model is known to be RL-ready by construction on this instance"),
        Claim(f"c4_filler_control{sfx}",
              "length alone (filler steps, no exploration / exploitation) gives no such gain",
              kind="supporting", **judged,
              criterion=Criterion.at_most("excess_over_plain", MARGIN, f"ID gain(filler) - gain(plain) < {MARGIN:.2f}",
                                          strict=True),
              controls=[Control.negative("bridge", "BRIDGE's own excess over plain; c4 is judged only when it reaches "
                                         "the margin (precondition), so whenever c4 is judged this control fails: "
                                         "it shows the margin is reachable on the instance")],
              no_positive_control="plain against itself passes trivially; no non-trivial arm is known to pass",
              preconditions=[Precondition(f"c2's BRIDGE margin passes (>= {MARGIN:.2f}); otherwise 'no such "
                                          "gain' holds vacuously", lambda m: m["bridge_margin_passes"])]),
    ]


def _c3_rule(m) -> bool:
    """c3: every paired seed shows all three differences in BRIDGE's favour (a NaN anywhere: unmeasured)."""
    return all(i > 0 and z < 0 and c > 0 for i, z, c in zip(m["informativeness_diff_per_seed"],
                                                             m["frac_zero_std_diff_per_seed"],
                                                             m["co_influence_cosine_diff_per_seed"], strict=True))


def paired_gain_interval(per_seed, arm: str) -> tuple[float, float, float]:
    """Mean RL gain of ``arm`` over the paired ID evaluation problems of every seed, with its 95 % interval
    (per problem: correct after RL - correct after SFT, problems pooled across seeds)."""
    d = np.concatenate([np.asarray(s[arm]["rl_hits_id"], float) - np.asarray(s[arm]["sft_hits_id"], float)
                        for s in per_seed])
    iv = mean_interval(d)
    return iv.mean, iv.lo, iv.hi


#: the controls of each judged claim (to record a triple as not measured at a scale)
_JUDGED_CONTROLS = {"c2_rl_gain": ("filler",), "c3_mechanism": ("filler",), "c4_filler_control": ("bridge",)}


def judge_claims(claims, per_seed, infl, cfg) -> dict:
    """Hand every claim's figures (method and controls) to ``Claim.record``; returns the per-arm table.

    A :class:`~neurips25.behavior_injection.v3.V3Config` run judges the ``*_smollm2`` claims and records the
    stand-in's as not measured; a :class:`Config` run the other way round."""
    v3 = isinstance(cfg, V3Config)
    ours, other = (V3_SUFFIX, "") if v3 else ("", V3_SUFFIX)
    by = {c.id: c for c in claims}
    why = ("judged at the paper scale (SmolLM2 + Countdown, v3); this run is the stand-in" if not v3 else
           "the stand-in (tiny Llama, mini-iGSM) is judged at smoke / quick; this run is SmolLM2 (v3)")
    for base, ctls in _JUDGED_CONTROLS.items():
        if base + other in by:
            by[base + other].record(None, {c: None for c in ctls}, unmeasured=why)
        by[base] = by[base + ours]
    # --- c1, c1b -------------------------------------------------------------------------------------------
    if "identity" not in infl:
        why = f"only {infl['n_informative']} probe groups; needs >= 4"
        by["c1_influence_identity"].record(None, {"no_std": None}, details=infl, unmeasured=why)
        by["c1b_first_order"].record(None, {"shuffled_pairs": None}, details=infl, unmeasured=why)
    else:
        planted = ("planted binary rewards on the model's own rollouts (< 4 informative groups)"
                   if infl["planted_rewards"] else None)
        groups = {"n_informative": infl["n_informative"], "planted_rewards": infl["planted_rewards"]}
        by["c1_influence_identity"].record(infl["identity"], {"no_std": infl["no_std"]}, summary=planted,
                                           details=groups)
        by["c1b_first_order"].record(infl["first_order"], {"shuffled_pairs": infl["shuffled_pairs"]},
                                     summary=planted, details=groups | {"predicted": infl["predicted"],
                                                                        "measured": infl["measured"]})

    # --- c2 - c4 -------------------------------------------------------------------------------------------
    def mean_over(arm, key):
        return float(np.mean([s[arm][key] for s in per_seed]))

    def diffs(arm, key):
        return np.array([s[arm][key] - s["plain"][key] for s in per_seed])

    keys = ("sft_acc_id", "rl_acc_id", "gain_id", "sft_acc_ood", "rl_acc_ood", "gain_ood", "sft_chain_id",
            "rl_chain_id", "gain_chain_id", "lucky_frac_probe", "informativeness", "frac_zero_std", "co_influence",
            "co_influence_cosine")
    table = {arm: {k: mean_over(arm, k) for k in keys} for arm in cfg.arms}
    for arm in cfg.arms:
        g, lo, hi = paired_gain_interval(per_seed, arm)
        table[arm].update(gain_id_paired=g, gain_id_lo=lo, gain_id_hi=hi)
        table[arm]["behaviour_content"] = {k: float(np.mean([s[arm]["behaviour_content"][k] for s in per_seed]))
                                           for k in per_seed[0][arm]["behaviour_content"]}
    plain = table["plain"]
    pre = {"plain_sft_acc_id": plain["sft_acc_id"], "plain_gain_id": plain["gain_id_paired"],
           "plain_gain_id_lo": plain["gain_id_lo"], "plain_gain_id_hi": plain["gain_id_hi"]}

    def arm_c2(arm):
        d = diffs(arm, "gain_id")
        return {"margin_id": float(d.mean()), "margin_id_per_seed": d.tolist(),
                "margin_ood": float(diffs(arm, "gain_ood").mean()), **pre}

    def arm_c3(arm):
        d = {k: diffs(arm, k) for k in ("informativeness", "frac_zero_std", "co_influence_cosine", "co_influence")}
        ok = (d["informativeness"] > 0) & (d["frac_zero_std"] < 0) & (d["co_influence_cosine"] > 0)
        return {"share_seeds_all_three": float(ok.mean()), **{f"{k}_diff_per_seed": v.tolist() for k, v in d.items()},
                **{f"{k}_diff": float(v.mean()) for k, v in d.items()}}

    def excess(arm, bridge_margin):
        return {"excess_over_plain": arm_c2(arm)["margin_id"], "bridge_margin_passes": bool(bridge_margin >= MARGIN)}

    def control(fn, arm, *args):  # an arm that is not run at this configuration is not measured
        return measure(fn, arm, *args) if arm in cfg.arms else None

    m2 = arm_c2("bridge")
    by["c2_rl_gain"].record(m2, {"filler": control(arm_c2, "filler")},
                            details={"arms": table, "chain_gain_diff_id_per_seed": diffs("bridge",
                                                                                         "gain_chain_id").tolist()})
    by["c3_mechanism"].record(arm_c3("bridge"), {"filler": control(arm_c3, "filler")},
                              details={arm: {k: table[arm][k] for k in ("informativeness", "frac_zero_std",
                                                                        "co_influence", "co_influence_cosine")}
                                       for arm in cfg.arms})
    by["c4_filler_control"].record(excess("filler", m2["margin_id"]) if "filler" in cfg.arms else None,
                                   {"bridge": measure(excess, "bridge", m2["margin_id"])},
                                   unmeasured="filler arm not run at this configuration")
    return table


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
def run(scale: Scale, seed: int, out: Path, ctx=None, cache_dir: Path | None = None) -> Outcome:
    return run_config(CONFIGS[str(scale)], seed, out, ctx, label=f"scale={scale}", cache_dir=cache_dir,
                      scale=scale)


def run_config(cfg: Config | V3Config, seed: int, out: Path, ctx=None, label: str = "custom config",
               cache_dir: Path | None = None, scale: Scale | None = None) -> Outcome:
    """The reproduction under any :class:`Config` (``run`` passes the scale's; diagnostics pass their own,
    e.g. ``DIAGNOSTIC_CONFIGS``) or :class:`~neurips25.behavior_injection.v3.V3Config` (SmolLM2 on a
    reasoning-gym task), judged by the same fixed criteria."""
    import torch

    if isinstance(cfg, V3Config):
        return run_v3_config(cfg, seed, out, label, cache_dir, scale)
    if not isinstance(cfg, Config):
        raise TypeError(f"`cfg` must be a behavior_injection Config, got {type(cfg).__name__}")
    ctx = ctx if ctx is not None else LocalContext()
    t_start = time.perf_counter()
    logs: list[str] = []
    claims = declare_claims()
    per_seed = []
    infl = None
    # one shared base model (the stand-in for a pretrained LM, as one LLM is shared by every arm and seed in
    # the paper); the paired seeds vary the SFT / RL / evaluation data and the sampling
    vocab_task = make_splits(seed, 1, 1, 1, 1, cfg.id_ops, cfg.ood_ops, cfg.mod, cfg.distractors,
                             cfg.shape).task
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

    table = judge_claims(claims, per_seed, infl, cfg)

    _figures(per_seed, cfg.arms, out)
    wall = time.perf_counter() - t_start
    for rec in (r for seed_recs in per_seed for r in seed_recs.values()):  # keep result.json small
        rec["sft_hits_id"], rec["rl_hits_id"] = (np.asarray(rec["sft_hits_id"]).tolist(),
                                                 np.asarray(rec["rl_hits_id"]).tolist())
    return Outcome(claims, metrics={"config": dataclasses.asdict(cfg), "per_seed": per_seed, "arms": table,
                                    "influence": infl, "log": logs, "wall_s": wall},
                   notes=(f"{label}: {cfg.seeds} paired seed(s), arms {cfg.arms}; tiny Llama d={cfg.d_model} "
                          f"L={cfg.n_layers} trained from scratch on mini-iGSM mod {cfg.mod}, ID ops {cfg.id_ops}, "
                          f"OOD ops {cfg.ood_ops}; SFT {cfg.sft_steps} steps x {cfg.sft_batch}, GRPO "
                          f"{cfg.rl_steps} steps x {cfg.rl_queries} queries x {cfg.group_size} rollouts; "
                          f"accuracy = greedy exact match on {cfg.n_eval} ID and {cfg.n_eval} OOD problems"))


def run_v3_config(cfg: V3Config, seed: int, out: Path, label: str, cache_dir: Path | None,
                  scale: Scale | None) -> Outcome:
    """v3: one paired seed of SmolLM2 + LoRA on a reasoning-gym task (:func:`~neurips25.behavior_injection.v3.run_v3`),
    its stages cached in ``cache_dir`` (kept by the runner when a run is killed, so it resumes), judged by the
    criteria of :func:`declare_claims`."""
    t_start, cpu0 = time.perf_counter(), time.process_time()
    logs: list[str] = []
    work = Path(cache_dir) if cache_dir is not None else Path(out) / "v3-work"
    per_seed, infl = run_v3(cfg, seed, work, log=lambda line: (logs.append(line), print(line, flush=True)),
                            checks=influence_checks)
    claims = declare_claims(scale)
    table = judge_claims(claims, per_seed, infl, cfg)
    _figures(per_seed, cfg.arms, out)
    for rec in per_seed[0].values():
        rec["alpha_probe"] = np.asarray(rec["alpha_probe"]).tolist()
    cost = {arm: {"sft_cpu_s": r["sft_cpu_s"], "sft_cpu_s_per_step": r["sft_cpu_s"] / cfg.sft_steps,
                  "grpo_cpu_s": r["grpo_cpu_s"], "grpo_cpu_s_per_step": r["grpo_cpu_s"] / max(1, cfg.rl_steps),
                  "sft_eval_cpu_s": r["sft_eval_cpu_s"]} for arm, r in per_seed[0].items()}
    return Outcome(claims, metrics={"config": dataclasses.asdict(cfg), "per_seed": per_seed, "arms": table,
                                    "influence": {k: v for k, v in (infl or {}).items()
                                                  if k not in ("no_std", "shuffled_pairs")},
                                    "cost": cost, "log": logs, "wall_s": time.perf_counter() - t_start,
                                    "cpu_s_this_process": time.process_time() - cpu0},
                   notes=(f"{label}: v3, SmolLM2-135M-Instruct + LoRA r={cfg.rank} on reasoning-gym {cfg.task}"
                          f"{f' ({cfg.n_numbers} numbers)' if cfg.task == 'countdown' else ''}; arms {cfg.arms}; "
                          f"SFT {cfg.sft_steps} steps x {cfg.sft_batch} at lr {cfg.sft_lr:g}; GRPO "
                          f"{cfg.rl_steps} steps x {cfg.rl_queries} queries x {cfg.group_size} rollouts at lr "
                          f"{cfg.rl_lr:g}; accuracy = greedy, scored by the task's verifier, on {cfg.n_eval} held-out "
                          "items; one paired seed a run"))
