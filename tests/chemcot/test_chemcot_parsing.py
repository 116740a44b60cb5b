"""Answer extraction: think blocks, fences, lenient JSON, fallbacks; never raises."""

from hypothesis import given, settings
from hypothesis import strategies as st

from neurips25.chemcot import extract_answer


def test_think_block_and_fence_are_stripped():
    text = '<think>maybe {"output": "CCCC"}</think>\n```json\n{"output": "CCO"}\n```'
    assert extract_answer(text, "output", "smiles") == "CCO"


def test_unclosed_think_and_answer_before_it():
    assert extract_answer('{"output": "CCN"} <think> I will keep thinking', "output", "smiles") == "CCN"
    assert extract_answer("<think> never closed, no answer", "output", "smiles") is None


def test_lenient_json_and_key_aliases():
    assert extract_answer('{"count": 3,}', "count", "int") == 3
    assert extract_answer("{'count': '2'}", "count", "int") == 2
    assert extract_answer('{"Final Target Molecule": "CC(=O)O"}', "final target molecule", "smiles") == "CC(=O)O"
    assert extract_answer('{"answer": "c1ccccc1"}', "Major Product", "smiles") == "c1ccccc1"
    assert extract_answer('{"output": "Yes"}', "output", "yesno") == "yes"
    assert extract_answer('{"output": false}', "output", "yesno") == "no"


def test_last_object_wins_and_regex_fallbacks():
    assert extract_answer('{"output": "CC"} then corrected {"output": "CCC"}', "output", "smiles") == "CCC"
    assert extract_answer("output: CCOC", "output", "smiles") == "CCOC"
    assert extract_answer("So the product is c1ccccc1O.", "Major Product", "smiles") == "c1ccccc1O"
    assert extract_answer("I think the answer is no.", "output", "yesno") == "no"
    assert extract_answer("there are 4 rings", "count", "int") == 4


def test_garbage_gives_none():
    assert extract_answer(None, "output") is None
    assert extract_answer("", "output", "smiles") is None
    assert extract_answer("{{{{", "count", "int") is None
    assert extract_answer('{"output": "x"}', "output", "no-such-kind") is None


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=200), st.sampled_from(["smiles", "int", "yesno", "text"]))
def test_never_raises(text, kind):
    extract_answer(text, "output", kind)
