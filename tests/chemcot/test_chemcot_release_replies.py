"""Re-scoring released model replies (issue #62) on a small release the test writes in the 080a8eb layout:
``baselines/api_results/<family>/<task>/cot_results_<model>.json`` lists of records with ``json_results`` (a dict
or the raw reply), beside ``<family>/eval_score_<model>.json``."""

import json

import numpy as np
import pytest

from neurips25.chemcot.oracles import QED
from neurips25.chemcot.release import (
    HOW_TO_GET,
    agreement,
    reasoning_gap,
    release_dir,
    rescore_release,
    same_group_halves,
)

SOURCES = ("CCCCCCCCCCCCCCCCCC", "CCCCCCCCCCCCCCCCCCCC", "CCCCCCCCCCCCCCCCCCCCCC", "CCCCCCCCCCCCCCCCCCCCCCCC",
           "CCCCCCCCCCCCCCCCCCCCCCCCCC", "CCCCCCCCCCCCCCCCCCCCCCCCCCCC", "CCCCCCCCCCCCCCCCCCCCCCCCCCCCCC",
           "CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC")
BETTER = "CC(=O)Nc1ccc(O)cc1"  # paracetamol: a higher QED than every long alkane above
REASONING, PLAIN = ("dsr1", "o1mini", "o3mini"), ("gpt4o", "dsv3", "claude3")


def _write(root, rel, obj):
    path = root / "baselines" / "api_results" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj))


def _opt_reply(model, smiles):
    if model == "dsr1":  # a reasoning model's raw reply: think block and a fence, as the release keeps it
        return f'<think>make it drug-like</think>\n\n```json\n{{\n    "Final Target Molecule": "{smiles}"\n}}\n```'
    return {"Final Target Molecule": smiles}


def make_release(root, reasoning_better=True, wrong_scores=False):
    """Reasoning models answer ``BETTER`` (success) and the others the source (delta 0), or the reverse."""
    for m in REASONING + PLAIN:
        good = (m in REASONING) == reasoning_better
        recs = [{"src_smiles": s, "prop": "qed", "json_results": _opt_reply(m, BETTER if good else s)}
                for s in SOURCES]
        _write(root, f"deep_mol_opt/qed/cot_results_{m}.json", recs)
        rate = 0.0 if wrong_scores else float(good)
        _write(root, f"deep_mol_opt/eval_score_{m}.json", {"qed": {"improvement": {"success_rate": rate}}})
        # understanding: a count task with one unparsable reply (the release leaves it out of the denominator)
        fg = [{"smiles": "OCCO", "fg_name": "hydroxyl", "fg_num": 2, "json_results": {"count": 2}},
              {"smiles": "OCC", "fg_name": "hydroxyl", "fg_num": 1, "json_results": {"count": 3}},
              {"smiles": "CCO", "fg_name": "hydroxyl", "fg_num": 1, "json_results": "Sorry, I cannot count."}]
        _write(root, f"mol_understanding/fg_samples/cot_results_{m}.json", fg)
        edit = [{"molecule": "CCC", "added_group": "hydroxyl", "task": "add", "json_results": {"output": "CCCO"}},
                {"molecule": "CCC", "added_group": "hydroxyl", "task": "add", "json_results": {"output": "CCC"}}]
        _write(root, f"mol_edit/add/cot_results_{m}.json", edit)
        _write(root, f"mol_understanding/eval_score_{m}.json", {"fg_samples": 1.0})  # (0 + 2) / 2 answered
        _write(root, f"mol_edit/eval_score_{m}.json", {"add": 0.5})
    return root


def test_the_planted_sources_really_improve():
    q = QED()
    assert all(q(BETTER) > q(s) for s in SOURCES)


def test_rescore_parses_both_reply_shapes_and_agrees_with_matching_scores(tmp_path):
    r = rescore_release(make_release(tmp_path), models=list(REASONING + PLAIN))
    rows = r.rows[("dsr1", "qed")]
    assert all(row["answered"] for row in rows) and all(row["value"] > 0 for row in rows)  # think + fence parsed
    assert all(row["value"] == 0.0 for row in r.rows[("gpt4o", "qed")])  # the source back: delta 0, no success
    # understanding: ours keeps the refusal in the denominator (a missing count is 0 -> error 1), the release's
    # convention drops it
    assert r.ours[("gpt4o", "fg_samples")] == pytest.approx((0 + 2 + 1) / 3)
    assert r.release_convention[("gpt4o", "fg_samples")] == pytest.approx(1.0)
    assert r.ours[("gpt4o", "add")] == 0.5
    ag = agreement(r)
    assert ag["agree_fraction"] == 1.0 and ag["cells"] == 18
    # the negative control: each model against another model's scores disagrees on the mol-opt cells
    assert agreement(r, shift=1)["agree_fraction"] < 0.9
    assert ("gpt4o", "logp") in r.missing  # absent files are listed, not invented


def test_wrong_release_scores_are_caught(tmp_path):
    r = rescore_release(make_release(tmp_path, wrong_scores=True), models=list(REASONING + PLAIN))
    assert agreement(r, families=("deep_mol_opt",))["agree_fraction"] == 0.5  # the 3 reasoning models disagree


@pytest.mark.parametrize("reasoning_better", [True, False])
def test_reasoning_gap_sees_a_planted_gap_either_way(tmp_path, reasoning_better):
    r = rescore_release(make_release(tmp_path, reasoning_better), models=list(REASONING + PLAIN))
    g = reasoning_gap(r, seed=0, n_boot=200)
    assert g["n_items"] == len(SOURCES) and g["n_reasoning"] == 3 and g["n_non_reasoning"] == 3
    sign = 1.0 if reasoning_better else -1.0
    assert g["reasoning_minus_plain_success"] == pytest.approx(sign)
    assert g["rmp_lo"] == pytest.approx(sign) and g["rmp_hi"] == pytest.approx(sign)
    h = same_group_halves(r, seed=0, n_boot=200)  # one group against itself: no difference
    assert h["reasoning_minus_plain_success"] == 0.0


def test_c4_through_the_reproduction_with_and_without_the_release(tmp_path, monkeypatch):
    from neurips25.chemcot import reproduce
    from neurips25.chemcot.release import ENV_KEY

    root = make_release(tmp_path / "rel")
    monkeypatch.setenv(ENV_KEY, str(root))
    claims = {c.id: c for c in reproduce.declare_claims("smoke")}
    info = reproduce._c4_release(claims, 0, tmp_path)
    assert info["cells"] == 18 and (tmp_path / "release_rescore.json").is_file()
    c4, c4c = claims["c4_llm_ranking"], claims["c4c_release_agreement"]
    assert str(c4c.verdict) == "reproduced"
    assert str(c4.verdict) == "reproduced", c4.reason
    assert c4.measured["method"]["opt_agree_fraction"] == 1.0

    monkeypatch.delenv(ENV_KEY)
    claims = {c.id: c for c in reproduce.declare_claims("smoke")}
    reproduce._c4_release(claims, 0, tmp_path)
    assert str(claims["c4_llm_ranking"].verdict) == "inconclusive"
    assert HOW_TO_GET in claims["c4_llm_ranking"].reason


def test_bad_release_paths_are_named(tmp_path):
    with pytest.raises(ValueError, match="not a checkout of the ChemCoTBench release"):
        release_dir(tmp_path)
    with pytest.raises(ValueError, match="`path` must name"):
        release_dir("")
    root = make_release(tmp_path / "rel")
    with pytest.raises(ValueError, match="unknown model"):
        rescore_release(root, models=["gpt5"])
    (root / "baselines/api_results/deep_mol_opt/qed/cot_results_gpt4o.json").write_text('{"not": "a list"}')
    with pytest.raises(ValueError, match="JSON list of records"):
        rescore_release(root, models=["gpt4o"])


def test_cli_refuses_a_directory_that_is_not_the_release(tmp_path, capsys):
    from neurips25.cli import main

    assert main(["reproduce", "chemcot", "--scale", "smoke", "--release", str(tmp_path),
                 "--out", str(tmp_path / "run")]) == 2
    assert "--release" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_per_model_success_is_the_mean_over_duplicate_records(tmp_path):
    from neurips25.chemcot.release import success_matrix

    root = make_release(tmp_path)
    recs = json.loads((root / "baselines/api_results/deep_mol_opt/qed/cot_results_gpt4o.json").read_text())
    recs.append({"src_smiles": SOURCES[0], "prop": "qed", "json_results": {"Final Target Molecule": BETTER}})
    (root / "baselines/api_results/deep_mol_opt/qed/cot_results_gpt4o.json").write_text(json.dumps(recs))
    items, mat = success_matrix(rescore_release(root, models=["gpt4o", "dsr1"]))
    i = items.index(("qed", SOURCES[0]))
    assert mat["gpt4o"][i] == 0.5 and np.all(mat["dsr1"] == 1.0)
