"""Oracles: the official definitions (TDC penalized logP, refit ESOL, QED), pluggable sklearn models."""

import numpy as np
import pytest
from rdkit import Chem
from rdkit.Chem import QED as RDQED
from rdkit.Chem import Crippen, Descriptors, Lipinski

from neurips25.chemcot import ESOL, PenalizedLogP, SklearnFingerprintOracle, get_oracle, register_oracle
from neurips25.chemcot.reproduce import FIXED_MOLECULES, tdc_penalized_logp

MOLS = ["CCO", "c1ccccc1O", "CC(=O)Nc1ccc(O)cc1", "C1CCCCCCCCC1", "O=C(O)c1ccccc1"]


def test_penalized_logp_is_the_tdc_formula():
    f = PenalizedLogP()
    for s in FIXED_MOLECULES + tuple(MOLS):
        assert abs(f(s) - tdc_penalized_logp(s)) <= 1e-9


def test_penalized_logp_penalises_large_rings_and_differs_from_crippen():
    f = PenalizedLogP()
    # cyclodecane: ring 10 costs (10 - 6) / 0.286 ~ 14 z-units on top of its logP / SA terms
    assert f("C1CCCCCCCCC1") < get_oracle("crippen_logp")("C1CCCCCCCCC1") - 5
    assert get_oracle("logp").name == "logp" and isinstance(get_oracle("LogP"), PenalizedLogP)


def test_esol_is_the_refit_linear_model():
    for s in MOLS:
        m = Chem.MolFromSmiles(s)
        ap = sum(a.GetIsAromatic() for a in m.GetAtoms()) / m.GetNumHeavyAtoms()
        want = (0.26121066137801696 - 0.0066138847738667125 * Descriptors.MolWt(m)
                - 0.7416739523408995 * Crippen.MolLogP(m) + 0.003451545565957996 * Lipinski.NumRotatableBonds(m)
                - 0.42624840441316975 * ap)
        assert ESOL()(s) == pytest.approx(want, abs=1e-12)
    # more polar, more soluble
    assert ESOL()("OCC(O)CO") > ESOL()("CCCCCCCCCC")


def test_qed_is_rdkit_and_invalid_is_none():
    q = get_oracle("qed")
    assert q("CCO") == pytest.approx(RDQED.qed(Chem.MolFromSmiles("CCO")))
    assert q("C1CC((") is None and q("") is None and q(None) is None
    assert q.many(["CCO", "bad("])[1] is None


def test_sklearn_oracle_uses_the_estimator_and_fingerprint():
    from sklearn.linear_model import LogisticRegression

    from neurips25.chemcot.oracles import fingerprint

    smis = ["CCO", "CCN", "c1ccccc1", "c1ccccc1O", "CCCC", "c1ccncc1"]
    y = [0, 0, 1, 1, 0, 1]  # aromatic = active
    X = np.stack([fingerprint(Chem.MolFromSmiles(s), "morgan2_2048") for s in smis])
    est = LogisticRegression(C=10).fit(X, y)
    o = SklearnFingerprintOracle(est, fp="morgan2_2048", name="toy")
    assert o("c1ccccc1C") > 0.5 > o("CCCO")
    assert o.many(["c1ccccc1C", "bad(", "CCCO"])[1] is None
    assert fingerprint(Chem.MolFromSmiles("CCO"), "drd2_counts").sum() > 0
    register_oracle(o)
    assert get_oracle("toy") is o


def test_oracle_errors_are_clear():
    with pytest.raises(LookupError, match="not available offline.*SklearnFingerprintOracle"):
        get_oracle("jnk3")
    with pytest.raises(LookupError, match="unknown oracle 'foo'"):
        get_oracle("foo")
    with pytest.raises(TypeError, match="predict_proba"):
        SklearnFingerprintOracle(object())
    with pytest.raises(ValueError, match="`fp` must be"):
        SklearnFingerprintOracle(type("E", (), {"predict_proba": lambda self, x: x})(), fp="ecfp")
