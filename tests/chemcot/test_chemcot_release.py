"""The release's own record format, one test per family: each record scores 1.0 for its own answer.

Records are written here in the release's shape (``gt`` and ``meta`` as in the released JSON: fs ``gt`` a JSON
string, edit ``gt`` empty, ``meta`` a JSON string); prompts are shortened, their field structure kept.
"""

import json

import pytest

from neurips25.chemcot import evaluate, load_official_json
from neurips25.chemcot.clients import CallableClient
from neurips25.chemcot.metrics import score_subtask
from neurips25.chemcot.tasks import RELEASE_FORMAT, SUBTASKS, item_from_record

FS = {"id": "eb88", "task": "reaction", "subtask": "fs",
      "query": "Question:\nReactants: Cl.Cl.CC(C)(C)OC(=O)c1ccc(C(=N)N)cc1\nReagents: O.CC(=O)O\n\nAnswer:\n{\n"
               "    \"Major Product\": ...\n    \"Byproduct(s)\": ...\n}\n",
      "gt": json.dumps({"Major Product": "ClN=C(N)c1ccc(C(=O)O)cc1", "Byproduct(s)": "CC(C)(C)O"}),
      "meta": json.dumps({"rxn_cls": "CO2H-tBu deprotection",
                          "reactants": ["Cl", "Cl", "CC(C)(C)OC(=O)c1ccc(C(=N)N)cc1"], "reagents": ["O", "CC(=O)O"]})}
RECORDS = {  # family -> [(record, the right answer's reply)]
    "mol_und": [
        ({"id": "u1", "task": "mol_und", "subtask": "fg_count", "gt": 1, "meta": json.dumps({"fg_smarts": "*-[O;D1]"}),
          "query": "Input Molecule: CCC(CO)Oc1ccccc1, Fragment Name: side-chain hydroxyls."}, '{"count": "1"}'),
        ({"id": "u2", "task": "mol_und", "subtask": "equivalence", "gt": "Yes", "meta": "{}",
          "query": "Molecule A: CCO, Molecule B: OCC."}, '{"output": "Yes"}'),
        ({"id": "u3", "task": "mol_und", "subtask": "Murcko_scaffold", "gt": "c1ccccc1", "meta": "{}",
          "query": "Input Molecule: CCc1ccccc1."}, '{"Output Scaffold": "c1ccccc1"}'),
    ],
    "mol_edit": [
        ({"id": "e1", "task": "mol_edit", "subtask": "sub", "gt": "",
          "query": "\"You are a chemical assistent.\nInput Molecule: O=Cc1cn2c(nc3ccccc32)s1, Functional Group to "
                   "delete: aldehyde, Functional Group to add: carboxyl",
          "meta": json.dumps({"reference": "O=C(O)c1cn2c(nc3ccccc32)s1", "removed_group": "aldehyde",
                              "added_group": "carboxyl"})}, '{"output": "O=C(O)c1cn2c(nc3ccccc32)s1"}'),
    ],
    "mol_opt": [
        ({"id": "o1", "task": "mol_opt", "subtask": "qed", "gt": "", "meta": "{}",
          "query": "Optimize the Source Molecule to improve the QED property.\n\nSource Molecule: CCCCCCCCCC."},
         '{"Final Target Molecule": "CCCCCCCCCO"}'),
    ],
    "reaction": [
        (FS, '{"Major Product": "ClN=C(N)c1ccc(C(=O)O)cc1", "Byproduct(s)": "CC(C)(C)O"}'),
        ({"id": "r1", "task": "reaction", "subtask": "retro", "gt": "CC(=O)Cl.Nc1ccccc1",
          "meta": json.dumps({"rxn_cls": "Amide Schotten-Baumann", "products": ["CC(=O)Nc1ccccc1"]}),
          "query": "Products: CC(=O)Nc1ccccc1\nReagents: CCN(CC)CC\n"}, '{"Reactants": "Nc1ccccc1.CC(=O)Cl"}'),
        ({"id": "n1", "task": "reaction", "subtask": "nepp", "gt": "CC[NH+](CC)CC.CC(=O)Nc1ccccc1", "meta": "{}",
          "query": "predict the next elementary step"}, '{"pred_smi": "CC(=O)Nc1ccccc1.CC[NH+](CC)CC"}'),
        ({"id": "c1", "task": "reaction", "subtask": "rcr", "gt": "CN(C)C=O", "meta": json.dumps({"query_target":
          "solvent"}), "query": "give me the most recommended solvent(s)"}, '{"SMILES": "O=CN(C)C"}'),
        ({"id": "m1", "task": "reaction", "subtask": "mechsel", "gt": "G", "meta": "{}",
          "query": "Choices: A .. J"}, '{"choice": "G"}'),
    ],
}


def test_the_release_format_table_covers_every_scored_subtask():
    from neurips25.chemcot.metrics import METRICS

    assert set(METRICS) <= set(RELEASE_FORMAT)
    assert RELEASE_FORMAT["fs"].key == "Major Product" and "JSON string" in RELEASE_FORMAT["fs"].gt
    assert SUBTASKS["mechsel"] == ("reaction", "choice", "choice")


def test_release_fs_record_scores_one_for_its_own_answer():
    # issue #46: the fs gt (a JSON string) was the reference itself, so a perfect answer scored exact 0 / FTS 0
    it = item_from_record(FS)
    assert it.reference == "ClN=C(N)c1ccc(C(=O)O)cc1" and it.meta["byproducts"] == "CC(C)(C)O"
    m = score_subtask("fs", ["ClN=C(N)c1ccc(C(=O)O)cc1"], [it])
    assert m["exact"] == 1.0 and m["fts"] == pytest.approx(1.0)


@pytest.mark.parametrize("family", sorted(RECORDS))
def test_each_family_scores_its_own_answers(family, tmp_path):
    path = tmp_path / f"{family}.json"
    path.write_text(json.dumps([r for r, _ in RECORDS[family]]))
    items = load_official_json(path)
    replies = {it.prompt: reply for it, (_, reply) in zip(items, RECORDS[family])}
    rep = evaluate(CallableClient(lambda msgs: replies[msgs[-1]["content"]]), items, workers=1)
    assert rep.parse_rate == 1.0
    for sub, m in rep.subtasks.items():
        head = {"fg_count": ("mae", 0.0), "ring_count": ("mae", 0.0)}.get(sub)
        if head:
            assert m[head[0]] == head[1], (sub, m)
        else:
            val = m.get("pass", m.get("accuracy", m.get("score", m.get("exact", m.get("success")))))
            assert val == 1.0, (sub, m)


def test_release_shape_errors_name_the_record():
    bad = dict(FS, gt=json.dumps({"Product": "CCO"}))
    with pytest.raises(ValueError, match="record 3 .*no 'Major Product' key"):
        item_from_record(bad, 3)
    with pytest.raises(ValueError, match="looks like JSON but does not parse"):
        item_from_record(dict(FS, gt="{not json"))
    opt = dict(RECORDS["mol_opt"][0][0], query="Optimize this molecule: CCO")
    with pytest.raises(ValueError, match="no source molecule in meta or in the prompt"):
        item_from_record(opt)
    with pytest.raises(ValueError, match="gt must be one letter"):
        item_from_record(dict(RECORDS["reaction"][-1][0], gt="GH"))


def test_release_records_with_an_invalid_source_or_a_fractional_count_are_refused_by_name():
    """issue #59: an unparseable source molecule and a non-integer count reference loaded silently."""
    opt = dict(RECORDS["mol_opt"][0][0], query="Optimize the Source Molecule: C1CC to raise its QED.",
               meta={"source": "C1CC"})
    with pytest.raises(ValueError, match="record 4 .*source molecule 'C1CC' is not a valid SMILES"):
        item_from_record(opt, 4)
    count = next(r for r, _ in RECORDS["mol_und"] if r["subtask"] == "fg_count")
    assert item_from_record(dict(count, gt="2.0")).reference == 2
    with pytest.raises(ValueError, match="record 5 .*gt must be an integer count; got 2.7"):
        item_from_record(dict(count, gt=2.7), 5)
