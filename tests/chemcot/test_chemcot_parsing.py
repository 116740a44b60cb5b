"""Answer extraction: the official-style strict parser (default) and the lenient one; never raises on replies."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neurips25.chemcot import extract_answer
from neurips25.chemcot.parsing import is_refusal, parse_lenient, parse_official


def test_think_block_and_fence_are_stripped():
    text = '<think>maybe {"output": "CCCC"}</think>\n```json\n{"output": "CCO"}\n```'
    assert extract_answer(text, "output", "smiles", "lenient") == "CCO"


def test_official_parser_reads_what_the_official_code_reads():
    # what follows "</think>\n\n", a ```json fence, newlines removed, json.loads, the key read exactly
    assert parse_official('<think>{"output": "CC"}</think>\n\n{"output": "CCO"}', "output", "smiles") == "CCO"
    assert parse_official('```json\n{\n    "output": "CCN"\n}\n```', "output", "smiles") == "CCN"
    assert parse_official('{"count": "3"}', "count", "int") == 3
    assert parse_official('{"output": "Yes"}', "output", "yesno") == "yes"
    assert parse_official('{"choice": "g"}', "choice", "choice") == "G"
    # what the official code scores as a failure, so does this parser
    assert parse_official('Sure! {"output": "CCO"}', "output", "smiles") is None
    assert parse_official('{"output": "CCO",}', "output", "smiles") is None
    assert parse_official('{"answer": "CCO"}', "output", "smiles") is None
    assert parse_official('{"count": "maybe 2"}', "count", "int") is None
    assert extract_answer('Sure! {"output": "CCO"}', "output", "smiles") is None  # the default is the official one


def test_unclosed_think_and_answer_before_it():
    assert parse_lenient('{"output": "CCN"} <think> I will keep thinking', "output", "smiles") == "CCN"
    assert parse_lenient("<think> never closed, no answer", "output", "smiles") is None


def test_lenient_json_and_key_aliases():
    assert parse_lenient('{"count": 3,}', "count", "int") == 3
    assert parse_lenient("{'count': '2'}", "count", "int") == 2
    assert parse_lenient('{"Final Target Molecule": "CC(=O)O"}', "final target molecule", "smiles") == "CC(=O)O"
    assert parse_lenient('{"answer": "c1ccccc1"}', "Major Product", "smiles") == "c1ccccc1"
    assert parse_lenient('{"output": "Yes"}', "output", "yesno") == "yes"
    assert parse_lenient('{"output": false}', "output", "yesno") == "no"


def test_last_object_wins_and_regex_fallbacks():
    assert parse_lenient('{"output": "CC"} then corrected {"output": "CCC"}', "output", "smiles") == "CCC"
    assert parse_lenient("output: CCOC", "output", "smiles") == "CCOC"
    assert parse_lenient("So the product is c1ccccc1O.", "Major Product", "smiles") == "c1ccccc1O"
    assert parse_lenient("I think the answer is no.", "output", "yesno") == "no"
    assert parse_lenient("there are 4 rings", "count", "int") == 4


def test_refusals_and_ambiguity_never_parse():
    # issue #46 / review section 6: each of these gave an answer before
    assert is_refusal("Sorry, I cannot modify CCO.")
    assert parse_lenient("Sorry, I cannot modify CCO.", "output", "smiles") is None
    assert parse_lenient("I cannot answer; no idea.", "output", "yesno") is None
    assert parse_lenient("maybe 2 or 3", "count", "int") is None
    assert parse_lenient('{"output": "Sorry, I cannot do that"}', "output", "smiles") is None
    assert parse_lenient('{"output": "No change is possible"}', "output", "smiles") is None  # "No" is nobelium


def test_garbage_gives_none_and_bad_arguments_raise():
    assert extract_answer(None, "output") is None
    assert extract_answer("", "output", "smiles") is None
    assert extract_answer("{{{{", "count", "int", "lenient") is None
    with pytest.raises(ValueError, match="`kind` must be one of"):
        extract_answer('{"output": "x"}', "output", "no-such-kind")
    with pytest.raises(ValueError, match="`parser` must be one of official, lenient"):
        extract_answer('{"output": "x"}', "output", "smiles", "loose")


@settings(max_examples=120, deadline=None)
@given(st.text(max_size=200), st.sampled_from(["smiles", "int", "yesno", "choice", "text"]),
       st.sampled_from(["official", "lenient"]))
def test_never_raises(text, kind, parser):
    extract_answer(text, "output", kind, parser)
