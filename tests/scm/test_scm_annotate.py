"""Fine-grained labels (function-word list for POS tagging), sub-token alignment, majority vote."""

import pytest

from neurips25.scm import FUNCTION_WORDS, fine_grained_labels, majority_vote, token_labels_from_spans


def test_notional_words_of_harmful_sentences_only():
    text, spans = fine_grained_labels(["Okay, I can explain.", "Then heat the toxic mixture."], [0, 1])
    got = [(text[a:b], y) for a, b, y in spans]
    assert got == [("Okay", 0), ("I", 0), ("can", 0), ("explain", 0),
                   ("Then", 0), ("heat", 1), ("the", 0), ("toxic", 1), ("mixture", 1)]
    assert text == "Okay, I can explain. Then heat the toxic mixture."


def test_benign_response_has_no_harmful_word():
    _, spans = fine_grained_labels(["Never heat the toxic mixture.", "Report it."], [0, 0])
    assert all(y == 0 for *_, y in spans)


def test_function_word_list_is_closed_class():
    assert {"the", "of", "and", "is", "can", "then"} <= FUNCTION_WORDS
    assert not {"heat", "toxic", "mixture", "password"} & FUNCTION_WORDS


def test_first_subtoken_gets_the_label():
    # "heat the antivirus" tokenised as [" heat", " the", " anti", "virus"]
    text = " heat the antivirus"
    _, spans = fine_grained_labels(["heat the antivirus"], [1])
    offsets = [(0, 5), (5, 9), (9, 14), (14, 19)]
    assert token_labels_from_spans(offsets, spans, start=1) == [1, 0, 1, -100]
    assert text[1:] == "heat the antivirus"


def test_majority_vote():
    yes, no = (lambda t: True), (lambda t: "bad" in t)
    assert majority_vote(["bad thing", "fine"], [yes, no, no]) == [1, 0]
    assert majority_vote(["x"], [yes, no]) == [1]  # a tie counts as harmful


def test_bad_inputs():
    with pytest.raises(ValueError, match="one label per sentence"):
        fine_grained_labels(["a.", "b."], [1])
    with pytest.raises(ValueError, match="`sentences` is empty"):
        fine_grained_labels([], [])
    with pytest.raises(ValueError, match="`moderators` is empty"):
        majority_vote(["x"], [])
    with pytest.raises(ValueError, match="beyond the tokens' offsets"):
        token_labels_from_spans([(0, 2)], [(5, 7, 1)])
