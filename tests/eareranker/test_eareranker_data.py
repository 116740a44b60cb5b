"""AdequacySynth: planted ground truth (rubric formula, distractors), lengths, seeds, entity-disjoint splits."""

import numpy as np
import pytest

from neurips25.eareranker import AdequacySynth


@pytest.fixture(scope="module")
def data():
    return AdequacySynth(n_entities=30, seed=3).generate()


def test_ground_truth_follows_rubric(data):
    np.testing.assert_allclose(data.scores, data.dims.mean(1))  # equal weights
    assert np.all(data.scores[data.distractor] <= 25)  # another entity: structure term only
    assert np.all(data.dims[data.distractor][:, :3] == 0)
    own = ~data.distractor
    assert data.scores[own].max() > 75 and len(np.unique(data.bins)) == 6


def test_dimension_formula_hand_case():
    doc = {"stated": {"a": {"hedged": False, "vague": False, "contra": False},
                      "b": {"hedged": True, "vague": True, "contra": False}}, "cited": True, "structure": "shuffled"}
    d = AdequacySynth.dimensions(["a", "b", "c", "e"], doc, same_entity=True)
    # coverage 2/4, completeness 1/4, verifiability 0.75 * 1/4 + 0.25 (cited), structure 30
    np.testing.assert_allclose(d, [100 * (0.75 / 4 + 0.25), 50, 25, 30])


def test_lengths_seed_and_splits(data):
    assert data.doc_words.min() >= 30 and data.doc_words.max() <= 2100
    again = AdequacySynth(n_entities=30, seed=3).generate()
    assert again.docs == data.docs and np.array_equal(again.scores, data.scores)
    assert AdequacySynth(n_entities=30, seed=4).generate().docs != data.docs
    for d in np.unique(data.pair_doc):  # a document (hence its entity) lives in one split only
        assert len(set(data.split[data.pair_doc == d])) == 1
    assert len(AdequacySynth().make_document(2000, seed=1).split()) >= 2000


def test_bad_arguments():
    with pytest.raises(ValueError, match="`n_entities`"):
        AdequacySynth(n_entities=2)
    with pytest.raises(ValueError, match="`split_fractions`"):
        AdequacySynth(split_fractions=(0.5, 0.5, 0.5))
