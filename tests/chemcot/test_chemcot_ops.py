"""Operations: SMARTS-count semantics, every product passes the official check, clear errors."""

import pytest
from rdkit import Chem

from neurips25.chemcot import (
    FUNCTIONAL_GROUPS,
    OperationError,
    add_group,
    apply_plan,
    count_group,
    delete_group,
    substitute_group,
)
from neurips25.chemcot.data import molecule_pool

POOL = molecule_pool("nci", 25, seed=3)


@pytest.mark.parametrize("smiles,group,n", [
    ("OCCO", "hydroxyl", 2), ("CC(=O)O", "hydroxyl", 1), ("CC(=O)O", "carboxyl", 1), ("CC(=O)OC", "ester", 1),
    ("CC(=O)OC", "carboxyl", 0), ("CC(C)=O", "ketone", 1), ("CC=O", "aldehyde", 1), ("CC(N)=O", "amide", 1),
    ("CC(N)=O", "amine", 0), ("CCN", "amine", 1), ("Nc1ccccc1", "amine", 1), ("ClCCBr", "halo", 2),
    ("c1ccc2ccccc2c1", "benzene_ring", 2), ("CC#N", "nitrile", 1), ("C[N+](=O)[O-]", "nitro", 1),
    ("CCS", "thiol", 1), ("CSC", "sulfide", 1), ("CS(C)(=O)=O", "sulfone", 1), ("COC", "ether", 1),
])
def test_count_follows_smarts(smiles, group, n):
    # a carboxylic-acid OH is a hydroxyl under SMARTS semantics; an ester oxygen is not an ether
    assert count_group(smiles, group) == n


@pytest.mark.parametrize("group", sorted(FUNCTIONAL_GROUPS))
def test_every_product_passes_the_official_check(group):
    for smi in POOL[:8]:
        k = count_group(smi, group)
        for p in add_group(smi, group, max_sites=4):
            assert Chem.MolFromSmiles(p) is not None and Chem.MolToSmiles(Chem.MolFromSmiles(p)) == p
            assert count_group(p, group) == k + 1
        for p in delete_group(smi, group):
            assert count_group(p, group) == k - 1


def test_products_are_canonical_and_deduplicated():
    prods = add_group("c1ccccc1", "hydroxyl")  # six symmetric sites, one product
    assert prods == ["Oc1ccccc1"]


def test_delete_and_substitute_hand_cases():
    assert delete_group("OCC(=O)O", "carboxyl") == ["CO"]
    assert delete_group("Cc1ccc([N+](=O)[O-])cc1", "nitro") == ["Cc1ccccc1"]
    assert substitute_group("Clc1ccc(O)cc1", "halo", "amine") == ["Nc1ccc(O)cc1"]
    assert substitute_group("Clc1cc[nH]c1", "halo", "hydroxyl") == ["Oc1cc[nH]c1"]
    assert delete_group("CCC", "nitro") == []


def test_substitute_products_pass_both_counts():
    for smi in POOL:
        for old in ("halo", "hydroxyl", "amide", "ether"):
            if count_group(smi, old) == 0:
                continue
            for p in substitute_group(smi, old, "nitrile"):
                assert count_group(p, old) == count_group(smi, old) - 1
                assert count_group(p, "nitrile") == count_group(smi, "nitrile") + 1


def test_apply_plan_runs_and_reports_the_failing_step():
    res = apply_plan("CCc1ccccc1", [("add", "hydroxyl"), ("substitute", "hydroxyl", "amine"), ("delete", "nitro")])
    assert not res.ok and res.failed_step == 2 and "no nitro group" in res.reason
    assert count_group(res.final, "amine") == 1 and count_group(res.final, "hydroxyl") == 0
    ok = apply_plan("CCO", [{"op": "delete", "group": "hydroxyl"}])
    assert ok.ok and ok.final == "CC"
    bad_target = apply_plan("CCO", [{"op": "add", "group": "halo", "target": "CCCC"}])
    assert not bad_target.ok and "is not a product" in bad_target.reason


def test_bad_inputs_name_the_argument():
    with pytest.raises(OperationError, match="`smiles` is not a valid SMILES"):
        count_group("C1CC((", "hydroxyl")
    with pytest.raises(OperationError, match="`group` must be one of"):
        add_group("CCO", "hydroxy")
    with pytest.raises(OperationError, match="`new` must be one of"):
        substitute_group("CCO", "hydroxyl", "nope")
    with pytest.raises(OperationError, match="`steps` must be a non-empty"):
        apply_plan("CCO", [])
    with pytest.raises(OperationError, match="`max_sites` must be a positive integer"):
        add_group("CCO", "halo", max_sites=0)
    unknown = apply_plan("CCO", [("oxidise", "hydroxyl")])  # a bad step is reported, not raised
    assert not unknown.ok and unknown.failed_step == 0 and "must be add, delete or substitute" in unknown.reason
    with pytest.raises(OperationError, match=r"`steps\[0\]` must have keys"):
        apply_plan("CCO", [{"group": "halo"}])
