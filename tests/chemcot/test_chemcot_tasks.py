"""Items, prompts, the release's JSON loader, offline suites."""

import json

import pytest

from neurips25.chemcot import generate_suite, load_official_json, save_items
from neurips25.chemcot.data import OFFLINE_SUBTASKS, forward_products, molecule_pool
from neurips25.chemcot.metrics import edit_passes
from neurips25.chemcot.tasks import parse_prompt

RELEASE_STYLE = [  # records shaped like the release (meta is a JSON string), prompts written here
    {"id": "a1", "query": "Help me add a group. Output JSON {\"output\": \"SMILES\"}\n\nInput Molecule: CCc1ccccc1, "
                          "Functional Group to add: hydroxyl.", "gt": "", "task": "mol_edit", "subtask": "add",
     "meta": json.dumps({"reference": "OCCc1ccccc1", "added_group": "hydroxyl"})},
    {"id": "s1", "query": "Help me ADD and DELETE groups.\nInput Molecule: Clc1ccccc1, Functional Group to delete: "
                          "halo, Functional Group to add: nitrile", "gt": "", "task": "mol_edit", "subtask": "sub",
     "meta": json.dumps({"removed_group": "halo", "added_group": "nitrile"})},
    {"id": "q1", "query": "Optimize the Source Molecule to improve the QED property.\n\nSource Molecule: CCCCCCCC.",
     "gt": "", "task": "mol_opt", "subtask": "qed", "meta": json.dumps({"type": "small"})},
    {"id": "c1", "query": "Count the fragment.\nInput Molecule: OCCO, Fragment Name: hydroxyl.", "gt": 2,
     "task": "mol_und", "subtask": "fg_count", "meta": "{}"},
    {"id": "r1", "query": "retro", "gt": "CC", "task": "rxn", "subtask": "retro", "meta": ""},
]


def test_load_official_json(tmp_path):
    p = tmp_path / "bench.json"
    p.write_text(json.dumps(RELEASE_STYLE))
    items = load_official_json(p)
    assert [it.subtask for it in items] == ["add", "sub", "qed", "fg_count", "retro"]
    add, sub, opt, cnt, _ = items
    assert add.meta["source"] == "CCc1ccccc1" and add.reference is None and add.family == "editing"
    assert edit_passes("OCCc1ccccc1", add)
    assert sub.meta["source"] == "Clc1ccccc1" and edit_passes("N#Cc1ccccc1", sub)
    assert opt.meta["source"] == "CCCCCCCC" and parse_prompt(opt.prompt)["subtask"] == "qed"
    assert cnt.reference == 2 and cnt.answer_key == ("count", "int")


def test_loader_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="existing JSON file"):
        load_official_json(tmp_path / "none.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_official_json(bad)
    bad.write_text(json.dumps([{"query": "x"}]))
    with pytest.raises(ValueError, match="record 0 must have string fields"):
        load_official_json(bad)


def test_suite_round_trip_and_prompt_parsing(tmp_path):
    items = generate_suite("nci", 2, seed=1, pool_size=80)
    assert {it.subtask for it in items} == set(OFFLINE_SUBTASKS)
    assert len({it.id for it in items}) == len(items)
    for it in items:
        assert parse_prompt(it.prompt).get("subtask") == it.subtask, it.prompt
        if it.task == "mol_edit":
            assert edit_passes(it.meta["reference"], it)
    back = load_official_json(save_items(items, tmp_path / "suite.json"))
    assert [b.to_dict() for b in back] == [a.to_dict() for a in items]


def test_suite_is_seeded():
    a = generate_suite("nci", 2, seed=5, subtasks=["add", "qed"], pool_size=60)
    b = generate_suite("nci", 2, seed=5, subtasks=["add", "qed"], pool_size=60)
    c = generate_suite("nci", 2, seed=6, subtasks=["add", "qed"], pool_size=60)
    assert [x.prompt for x in a] == [x.prompt for x in b] != [x.prompt for x in c]


def test_optimization_sources_come_from_the_lower_half():
    from neurips25.chemcot import get_oracle

    items = generate_suite("nci", 5, seed=0, subtasks=["solubility"], pool_size=120)
    pool = molecule_pool("nci", 120, 0)
    f = get_oracle("solubility")
    import numpy as np

    median = np.median([f(s) for s in pool[:100]])
    assert all(f(it.meta["source"]) <= median for it in items)


def test_templates_and_bad_arguments():
    assert forward_products(["CC(=O)O", "NCc1ccccc1"],
                            "[CX3:1](=[O:2])[OX2H1].[NX3;H2;!$(NC=O):3]>>[C:1](=[O:2])[N:3]") == ["CC(=O)NCc1ccccc1"]
    with pytest.raises(ValueError, match="`n_per_subtask` must be a positive integer"):
        generate_suite("nci", 0)
    with pytest.raises(ValueError, match="`subtasks` must be among"):
        generate_suite("nci", 1, subtasks=["drd"])
    with pytest.raises(ValueError, match="`source` must be"):
        generate_suite("zinc", 1)
