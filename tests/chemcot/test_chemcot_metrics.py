"""Official metrics: hand cases, invalid answers in the denominator, winsorising, scaffold score, FTS."""

import pytest

from neurips25.chemcot import Item, get_oracle
from neurips25.chemcot.metrics import (
    counting,
    editing,
    murcko,
    optimization,
    reaction,
    scaffold,
    scaffold_similarity,
    winsorized_mean,
    yes_no,
)


def _it(sub, task, ref=None, **meta):
    return Item("x", task, sub, "", ref, meta)


def test_counting_missing_answer_counts_as_zero():
    items = [_it("fg_count", "mol_und", 2), _it("fg_count", "mol_und", 1), _it("fg_count", "mol_und", 3)]
    r = counting([2, None, 1], items)
    assert r["mae"] == pytest.approx((0 + 1 + 2) / 3) and r["exact"] == pytest.approx(1 / 3)
    assert r["answered"] == pytest.approx(2 / 3)


def test_editing_semantics():
    add = _it("add", "mol_edit", source="CCC", added_group="hydroxyl")
    assert editing(["CCC(=O)O"], [add])["pass"] == 1.0  # COOH adds a hydroxyl match
    assert editing(["OCC(O)C"], [add])["pass"] == 0.0  # +2
    assert editing(["C1CC(("], [add]) == {"n": 1, "pass": 0.0, "valid": 0.0}
    sub = _it("sub", "mol_edit", source="Clc1ccccc1", added_group="hydroxyl", removed_group="halo")
    assert editing(["Oc1ccccc1", "Oc1ccccc1Cl"], [sub, sub])["pass"] == 0.5


def test_optimization_invalid_is_zero_delta_in_the_denominator():
    q = get_oracle("qed")
    src = "CCOc1ccccc1"
    items = [_it("qed", "mol_opt", source=src) for _ in range(3)]
    r = optimization(["CCOc1ccccc1O", "bad((", None], items)
    d = q("CCOc1ccccc1O") - q(src)
    assert r["n"] == 3 and r["deltas"] == pytest.approx([d, 0.0, 0.0])
    assert r["raw_mean_delta"] == pytest.approx(d / 3) and r["valid"] == pytest.approx(1 / 3)
    assert r["success"] == pytest.approx((d > 0) / 3)
    ident = optimization([src, src, src], items)
    assert ident["success"] == 0 and ident["scaffold_hard"] == 1.0 and ident["scaffold_soft"] == 1.0


def test_best_threshold_depends_on_the_property():
    items = [_it("solubility", "mol_opt", source="CCCCCCCC")]
    r = optimization(["OCCCCCCCO"], items)  # a large solubility gain
    assert r["deltas"][0] > 0.5 and r["best"] == 1.0


def test_winsorized_mean_clips_at_interpolated_percentiles():
    # issue #46: the official code clips at np.percentile (interpolated), not scipy's rank-based winsorize.
    # 0..18 and 100: 5th pct = 0.95, 95th = 18 + 0.05 * 82 = 22.1, mean = (0.95 + 171 + 22.1) / 20 by hand
    x = list(range(19)) + [100]
    assert winsorized_mean(x) == pytest.approx(9.7025, abs=1e-12)  # rank winsorising gives 9.5
    assert winsorized_mean([3.0] * 7) == 3.0
    with pytest.raises(ValueError, match="`x` must be finite"):
        winsorized_mean([1.0, float("nan")])
    with pytest.raises(ValueError, match="`limits` must be in"):
        winsorized_mean(x, limits=0.5)


def test_scaffold_score():
    assert murcko("CCc1ccccc1") == "c1ccccc1" and murcko("CCO") == ""
    assert scaffold_similarity("c1ccccc1", "c1ccccc1") == 1.0
    s = scaffold_similarity("c1ccc(-c2ccccc2)cc1", "c1ccc(Cc2ccccc2)cc1")
    assert 0 < s < 1
    items = [_it("Murcko_scaffold", "mol_und", "c1ccccc1"), _it("Murcko_scaffold", "mol_und", "c1ccccc1")]
    assert scaffold(["c1ccccc1", None], items) == {"n": 2, "score": 0.5, "exact": 0.5}


def test_yes_no_and_reaction():
    items = [_it("equivalence", "mol_und", "yes"), _it("equivalence", "mol_und", "no")]
    assert yes_no(["yes", None], items)["accuracy"] == 0.5
    r = reaction(["OC(=O)c1ccccc1", "CCO", None], [_it("fs", "rxn", "O=C(O)c1ccccc1")] * 3)
    assert r["exact"] == pytest.approx(1 / 3) and r["valid"] == pytest.approx(2 / 3)
    assert 1 / 3 < r["fts"] < 2 / 3  # one perfect, one partial similarity, one zero


def test_reaction_exact_match_is_the_official_inchi_on_flat_smiles():
    # stereo is dropped before the comparison (isomericSmiles=False), as the official evaluator does
    r = reaction(["C[C@H](N)C(=O)O"], [_it("nepp", "reaction", "CC(N)C(=O)O")])
    assert r["exact"] == 1.0 and r["fts"] == pytest.approx(1.0) and r["fts_official"] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="the reference must be a SMILES string"):
        reaction(["CCO"], [_it("fs", "reaction", {"Major Product": "CCO"})])


def test_silent_wrong_answers_now_raise_or_score():
    # issue #46 / review section 6: each of these returned a silent False / 0 before
    sulfoxide = _it("add", "mol_edit", source="CSC", added_group="sulfoxide")
    assert editing(["CS(C)=O"], [sulfoxide])["pass"] == 1.0
    with pytest.raises(ValueError, match="group 'ether' is not in the official SMARTS set"):
        editing(["COC"], [_it("add", "mol_edit", source="CC", added_group="ether")])
    assert editing(["COCC"], [_it("add", "mol_edit", source="CC", added_group="ether")], smarts="neurips25")["pass"]
    with pytest.raises(ValueError, match="has no meta\\['source'\\] SMILES"):
        optimization(["CCO"], [_it("qed", "mol_opt")])
    with pytest.raises(ValueError, match="has no meta\\['source'\\] SMILES"):
        editing(["CCO"], [_it("add", "mol_edit", added_group="hydroxyl")])


def test_length_mismatch_is_an_error():
    with pytest.raises(ValueError, match="same length"):
        counting([1], [])


def test_an_invalid_source_smiles_is_refused_by_name_not_scored_zero():
    """issue #59: a mol_opt item whose source is not a molecule scored valid 0 / delta 0 silently."""
    items = [_it("qed", "mol_opt", source="CCOc1ccccc1"), Item("bad-src", "mol_opt", "qed", "", None,
                                                              {"source": "C1CC"})]
    with pytest.raises(ValueError, match="item 'bad-src' \\(qed\\): meta\\['source'\\] is not a valid SMILES: 'C1CC'"):
        optimization(["CCOc1ccccc1O", "CCO"], items)


def test_a_count_reference_must_be_an_integer_and_is_never_truncated():
    """issue #59: gt 2.7 was truncated to 2 (exact 1.0 for an answer of 2); gt "2.0" failed without naming the item."""
    assert counting([2], [_it("fg_count", "mol_und", 2.0)])["exact"] == 1.0
    assert counting([2], [_it("fg_count", "mol_und", "2.0")])["exact"] == 1.0
    with pytest.raises(ValueError, match="item 'x' \\(fg_count\\): the reference must be an integer count; got 2.7"):
        counting([2], [_it("fg_count", "mol_und", 2.7)])
    with pytest.raises(ValueError, match="item 'x' \\(ring_count\\): the reference must be an integer count"):
        counting([2], [_it("ring_count", "mol_und", "two")])
