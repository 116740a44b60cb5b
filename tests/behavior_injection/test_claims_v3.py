"""The v4 claims of the reproduction, judged from planted figures (no training): each rule can fail."""

import numpy as np

from neurips25.behavior_injection.reproduce import Config, declare_claims, judge_claims, paired_gain_interval


def _rec(sft, rl, inf=0.2, zs=0.5, cos=0.1, n=200, seed=0):
    rng = np.random.default_rng(seed)
    s = (rng.random(n) < sft).astype(int)
    r = (rng.random(n) < rl).astype(int)
    return {"sft_hits_id": s, "rl_hits_id": r, "sft_acc_id": s.mean(), "rl_acc_id": r.mean(),
            "gain_id": r.mean() - s.mean(), "sft_acc_ood": 0.1, "rl_acc_ood": 0.1, "gain_ood": 0.0,
            "sft_chain_id": 0.1, "rl_chain_id": 0.1, "gain_chain_id": 0.0, "lucky_frac_probe": 0.5,
            "informativeness": inf, "frac_zero_std": zs, "co_influence": 1.0, "co_influence_cosine": cos,
            "behaviour_content": {"explorations_per_problem": 0.0}}


INFL = {"n_informative": 6, "planted_rewards": False, "identity": {"identity_rel_error_max": 1e-8},
        "no_std": {"identity_rel_error_max": 0.9}, "first_order": {"pearson_r": 0.99, "n_pairs": 9},
        "shuffled_pairs": {"pearson_r": 0.1}, "predicted": [0.0], "measured": [0.0]}


def _judge(per_seed, infl=INFL):
    claims = declare_claims("quick")
    judge_claims(claims, per_seed, infl, Config())
    return {c.id: c for c in claims}


def _seed(plain, bridge, filler):
    return {"plain": _rec(*plain), "bridge": _rec(*bridge[:2], **bridge[2]), "filler": _rec(*filler[:2], **filler[2])}


def test_c2_reproduced_only_where_plain_rl_gains_and_filler_does_not():
    # plain gains ~0.15 (interval above 0), BRIDGE ~0.35, filler ~0.15
    seeds = [_seed((0.4, 0.55), (0.4, 0.75, {"inf": 0.3, "zs": 0.3, "cos": 0.2}), (0.4, 0.55, {}))
             for _ in range(2)]
    c = _judge(seeds)
    assert c["c2_rl_gain"].verdict.value == "reproduced", c["c2_rl_gain"].reason
    assert c["c3_mechanism"].verdict.value == "reproduced", c["c3_mechanism"].reason
    assert c["c4_filler_control"].verdict.value == "reproduced", c["c4_filler_control"].reason


def test_c2_inconclusive_when_plain_rl_does_not_gain():
    seeds = [_seed((0.4, 0.4), (0.4, 0.6, {}), (0.4, 0.4, {})) for _ in range(2)]
    c = _judge(seeds)
    assert c["c2_rl_gain"].verdict.value == "inconclusive" and "RL gain > 0" in c["c2_rl_gain"].reason
    assert c["c4_filler_control"].verdict.value == "reproduced"  # judged: c2's margin passes (its gate)
    seeds = [_seed((0.4, 0.55), (0.4, 0.55, {}), (0.4, 0.55, {})) for _ in range(2)]
    c = _judge(seeds)
    assert c["c2_rl_gain"].verdict.value == "not_reproduced"
    assert "margin passes" in c["c4_filler_control"].reason  # not judged: would hold vacuously


def test_c3_needs_every_seed_and_the_filler_must_fail():
    good = (0.4, 0.5, {"inf": 0.3, "zs": 0.3, "cos": 0.2})
    bad = (0.4, 0.5, {"inf": 0.3, "zs": 0.3, "cos": 0.05})  # cosine below plain's in this seed
    c = _judge([_seed((0.4, 0.5), good, (0.4, 0.5, {})), _seed((0.4, 0.5), bad, (0.4, 0.5, {}))])
    assert c["c3_mechanism"].verdict.value == "not_reproduced"
    c = _judge([_seed((0.4, 0.5), good, good) for _ in range(2)])
    assert c["c3_mechanism"].verdict.value == "inconclusive" and "vacuous" in c["c3_mechanism"].reason


def test_c1_controls_and_missing_groups():
    ok = _judge([_seed((0.4, 0.5), (0.4, 0.5, {}), (0.4, 0.5, {}))])
    assert ok["c1_influence_identity"].verdict.value == "reproduced"
    assert ok["c1b_first_order"].verdict.value == "reproduced"
    broken = INFL | {"shuffled_pairs": {"pearson_r": 0.95}}  # a shuffled pairing that still predicts: void
    c = _judge([_seed((0.4, 0.5), (0.4, 0.5, {}), (0.4, 0.5, {}))], broken)
    assert c["c1b_first_order"].verdict.value == "inconclusive" and "vacuous" in c["c1b_first_order"].reason
    assert c["c1_influence_identity"].verdict.value == "reproduced"  # the identity is judged on its own
    c = _judge([_seed((0.4, 0.5), (0.4, 0.5, {}), (0.4, 0.5, {}))], {"n_informative": 2, "planted_rewards": True})
    assert c["c1_influence_identity"].verdict.value == "inconclusive"
    assert c["c1b_first_order"].verdict.value == "inconclusive"


def test_a_nan_figure_reads_inconclusive_never_a_verdict():
    nan = (0.4, 0.5, {"inf": float("nan"), "zs": 0.3, "cos": 0.2})
    c = _judge([_seed((0.4, 0.5), nan, (0.4, 0.5, {})) for _ in range(2)])
    assert c["c3_mechanism"].verdict.value == "inconclusive"
    c = _judge([_seed((0.4, 0.5), (0.4, 0.5, {}), (0.4, 0.5, {}))],
               INFL | {"identity": {"identity_rel_error_max": float("nan")}})
    assert c["c1_influence_identity"].verdict.value == "inconclusive"


def test_every_judged_claim_is_a_stand_in_and_controls_are_measured_here():
    c = _judge([_seed((0.4, 0.55), (0.4, 0.75, {}), (0.4, 0.55, {})) for _ in range(2)])
    for claim in c.values():
        if claim.kind.value != "check" and not claim.id.endswith("_smollm2"):
            assert claim.instance == "stand-in" and "trained here" in claim.instance_note
        elif claim.kind.value != "check":  # SmolLM2's triple (issue #60): judged at paper only, unmeasured here
            assert claim.instance == "reduced" and "judged at the paper scale" in claim.reason
    assert c["c2_rl_gain"].control_results[0]["provenance"].startswith("ran ")
    assert c["c4_filler_control"].control_results[0]["provenance"].startswith("ran ")


def test_paired_gain_interval_pools_problems_across_seeds():
    s = [{"plain": {"sft_hits_id": [0, 0, 1, 1], "rl_hits_id": [1, 0, 1, 1]}} for _ in range(2)]
    g, lo, hi = paired_gain_interval(s, "plain")
    assert g == 0.25 and lo < 0.25 < hi
