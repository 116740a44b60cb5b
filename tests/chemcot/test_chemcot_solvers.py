"""Solvers: rule-based is exact where it can be, baselines are deterministic and weak."""

import json

import pytest

from neurips25.chemcot import IdentitySolver, RandomEditSolver, RuleBasedSolver, get_oracle
from neurips25.chemcot.metrics import tanimoto
from neurips25.chemcot.tasks import prompt_for


def _ans(solver, sub, **f):
    return json.loads(solver.answer(prompt_for(sub, **f)))


def test_rule_based_understanding_and_editing():
    rb = RuleBasedSolver()
    assert _ans(rb, "fg_count", smiles="OCC(=O)O", group="hydroxyl") == {"count": 2}
    assert _ans(rb, "ring_count", smiles="c1ccc2ccccc2c1") == {"count": 2}
    assert _ans(rb, "Murcko_scaffold", smiles="CCc1ccccc1") == {"Output Scaffold": "c1ccccc1"}
    assert _ans(rb, "equivalence", smiles="OCC", smiles_b="CCO") == {"output": "Yes"}
    assert _ans(rb, "ring_system_scaffold", smiles="Cc1ccncc1", ring="c1ccncc1") == {"output": "Yes"}
    assert _ans(rb, "delete", smiles="ClCCO", group="halo") == {"output": "CCO"}
    assert _ans(rb, "fs", reactants="CC(=O)O.CO", reagents="H2SO4") == {"Major Product": "COC(C)=O"}


def test_optimization_improves_within_the_similarity_constraint():
    rb = RuleBasedSolver(depth=2, min_similarity=0.4)
    src = "CCCCCCCCc1ccccc1"
    for sub in ("qed", "logp", "solubility"):
        out = _ans(rb, sub, smiles=src)["Final Target Molecule"]
        f = get_oracle({"qed": "qed", "logp": "logp", "solubility": "solubility"}[sub])
        assert f(out) > f(src)
        assert tanimoto(out, src) >= 0.4


def test_random_and_identity_are_deterministic_baselines():
    p = prompt_for("add", smiles="CCCCc1ccccc1", group="nitro")
    assert RandomEditSolver(3).answer(p) == RandomEditSolver(3).answer(p)
    assert json.loads(IdentitySolver().answer(p)) == {"output": "CCCCc1ccccc1"}
    answers = {RandomEditSolver(s).answer(p) for s in range(8)}
    assert len(answers) > 1  # the seed matters


def test_solver_arguments():
    with pytest.raises(ValueError, match="`beam` must be a positive integer"):
        RuleBasedSolver(beam=0)
    with pytest.raises(ValueError, match="`min_similarity` must be in"):
        RuleBasedSolver(min_similarity=2)
    with pytest.raises(ValueError, match="`seed` must be a non-negative"):
        RandomEditSolver(-1)
    # a prompt it cannot read gets an empty answer, not an exception
    assert json.loads(RuleBasedSolver().answer("hello")) == {"output": ""}
