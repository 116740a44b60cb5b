"""Fine-grained harm annotation (FineHarm's heuristic) and moderator majority voting.

FineHarm labels each sentence of a response, then marks as harmful only the *notional* words (nouns, verbs,
adjectives; via POS tagging) inside harmful sentences; function words stay benign. No POS-tagger model ships
offline, so notional := not in a closed-class function-word list and not punctuation (documented deviation).
Word labels go to the first sub-token of each word; other sub-tokens and prompt tokens get -100.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

IGNORE_INDEX = -100

#: closed-class English words (determiners, pronouns, prepositions, conjunctions, auxiliaries, particles,
#: common adverbs of degree); our list, standing in for a POS tagger's non-notional tags
FUNCTION_WORDS = frozenset("""
a an the this that these those some any each every either neither no another other such what which whose
i me my mine myself you your yours yourself yourselves he him his himself she her hers herself it its itself
we us our ours ourselves they them their theirs themselves one ones someone somebody something anyone anybody
anything everyone everybody everything nobody nothing who whom whoever whatever whichever
of in on at by for with about against between into through during before after above below to from up down
out off over under again further once than via per upon within without along across behind beyond near among
around toward towards onto amid despite except inside outside since until till unto throughout
and or but nor so yet because although though while whereas if unless whether as whenever wherever both also
then therefore thus hence however otherwise
am is are was were be been being have has had having do does did doing done will would shall should can could
may might must ought 's 're 've 'll 'd 'm n't not
here there where when why how all most more less least few many much several own same just only very too
quite rather really even still already ever never always often sometimes
""".split())

_WORD = re.compile(r"[A-Za-z0-9]+(?:['\-][A-Za-z0-9]+)*|[^\sA-Za-z0-9]")


def words_with_spans(text: str) -> list[tuple[str, int, int]]:
    """Words and punctuation marks of ``text`` with their character spans."""
    return [(m.group(), m.start(), m.end()) for m in _WORD.finditer(text)]


def is_notional(word: str, function_words=FUNCTION_WORDS) -> bool:
    """A content word: has a letter or digit and is not a function word (case-insensitive)."""
    return any(c.isalnum() for c in word) and word.lower() not in function_words


def fine_grained_labels(sentences: Sequence[str], sentence_labels: Sequence[int], function_words=FUNCTION_WORDS,
                        sep: str = " ") -> tuple[str, list[tuple[int, int, int]]]:
    """Join sentences into a response and label its words.

    Returns ``(text, spans)`` where ``spans`` lists ``(start, end, label)`` for every word (punctuation gets
    no span): label 1 for notional words of harmful sentences, 0 otherwise.

    Examples
    --------
    >>> text, spans = fine_grained_labels(["Sure.", "Mix the powder."], [0, 1])
    >>> [(text[s:e], y) for s, e, y in spans]
    [('Sure', 0), ('Mix', 1), ('the', 0), ('powder', 1)]
    """
    if len(sentences) != len(sentence_labels):
        raise ValueError(f"`sentence_labels` must have one label per sentence ({len(sentences)}); "
                         f"got {len(sentence_labels)}")
    if not sentences or not any(s.strip() for s in sentences):
        raise ValueError("`sentences` is empty: a response needs at least one non-empty sentence")
    if any(int(y) not in (0, 1) for y in sentence_labels):
        raise ValueError(f"`sentence_labels` must be 0 or 1; got {list(sentence_labels)}")
    text, spans, pos = "", [], 0
    for i, (s, y) in enumerate(zip(sentences, sentence_labels)):
        if i:
            text += sep
            pos += len(sep)
        for w, a, b in words_with_spans(s):
            if any(c.isalnum() for c in w):
                spans.append((pos + a, pos + b, int(bool(y) and is_notional(w, function_words))))
        text += s
        pos += len(s)
    return text, spans


def token_labels_from_spans(offsets: Sequence[tuple[int, int]], spans: Sequence[tuple[int, int, int]],
                            start: int = 0) -> list[int]:
    """Give each word's label to the first token that overlaps it; every other token gets -100.

    ``offsets`` are the tokens' character spans (a fast tokenizer's ``offset_mapping``) in a string where the
    response begins at character ``start``; ``spans`` are response-relative word spans from
    :func:`fine_grained_labels`.
    """
    labels = [IGNORE_INDEX] * len(offsets)
    j = 0
    for a, b, y in spans:
        a, b = a + start, b + start
        while j < len(offsets) and offsets[j][1] <= a:
            j += 1
        if j == len(offsets):
            raise ValueError(f"word span ({a}, {b}) lies beyond the tokens' offsets: `offsets` do not cover the text")
        if labels[j] == IGNORE_INDEX:
            labels[j] = y
        else:  # a token spanning two words: harmful if either is
            labels[j] = max(labels[j], y)
    return labels


def majority_vote(texts: Sequence[str], moderators: Sequence[Callable[[str], bool]]) -> list[int]:
    """Response labels by majority of moderators (ties count as harmful, as a cautious annotator would)."""
    if not moderators:
        raise ValueError("`moderators` is empty: give at least one callable text -> bool")
    if isinstance(texts, str):
        raise TypeError("`texts` must be a sequence of strings, not one string")
    out = []
    for t in texts:
        votes = sum(bool(m(t)) for m in moderators)
        out.append(int(2 * votes >= len(moderators)))
    return out
