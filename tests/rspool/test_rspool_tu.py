"""The real TU sets grakel ships (MUTAG, Cuneiform), PyG's TUDataset on the same root, and the MUTAG claims
(issue #61)."""

import importlib.util

import numpy as np
import pytest

from neurips25.rspool.data import SHIPPED_TU, load_tudataset, shipped_tu_root, shipped_tudataset
from neurips25.rspool.reproduce import declare_claims, paired, tu_folds

needs_grakel = pytest.mark.skipif(importlib.util.find_spec("grakel") is None,
                                  reason="grakel (the graph extra) ships the TU files")


@needs_grakel
@pytest.mark.parametrize("name", sorted(SHIPPED_TU))
def test_shipped_sets_read_as_published(name):
    ds = shipped_tudataset(name)
    graphs, classes = SHIPPED_TU[name]
    assert len(ds) == graphs and ds.num_classes == classes
    assert all(np.array_equal(a, a.T) and a.trace() == 0 for a in ds.adjs)
    if name == "MUTAG":  # 63 non-mutagenic / 125 mutagenic, 7 atom types, 3,371 atoms, 7,442 directed bonds
        assert np.bincount(ds.ys).tolist() == [63, 125] and ds.num_features == 7
        assert sum(a.shape[0] for a in ds.adjs) == 3371 and sum(int(a.sum()) for a in ds.adjs) == 7442
        assert all(np.allclose(x.sum(1), 1) for x in ds.xs)  # one atom type per node
    else:  # Cuneiform: two node-label columns one-hot encoded side by side, plus 3 coordinates
        assert ds.num_features == 10 and np.bincount(ds.ys).min() >= 8


@needs_grakel
def test_pyg_tudataset_reads_the_built_root_without_download(tmp_path, monkeypatch):
    from torch_geometric.datasets import TUDataset

    def no_download(*args, **kwargs):
        raise AssertionError("TUDataset tried to download")

    monkeypatch.setattr(TUDataset, "download", no_download)
    root = shipped_tu_root(tmp_path, ["MUTAG"])
    assert sorted(p.name for p in (root / "MUTAG" / "raw").iterdir())[0] == "MUTAG_A.txt"
    pyg = TUDataset(str(root), "MUTAG")
    ours = load_tudataset(root, "MUTAG")
    assert len(pyg) == len(ours) == 188
    for k in (0, 17, 187):  # same graphs, same atom one-hots, same labels
        d = pyg[k]
        assert np.array_equal(d.x.numpy(), ours.xs[k]) and int(d.y) == ours.ys[k]
        a = np.zeros_like(ours.adjs[k])
        a[d.edge_index[0].numpy(), d.edge_index[1].numpy()] = 1
        assert np.array_equal(a, ours.adjs[k])


def test_tu_reader_finds_the_pyg_raw_layout_and_multi_column_labels(tmp_path):
    # a TU file written here: graph 1 a triangle, graph 2 an edge; two node-label columns as in Cuneiform
    raw = tmp_path / "TWO" / "raw"
    raw.mkdir(parents=True)
    (raw / "TWO_A.txt").write_text("1, 2\n2, 1\n2, 3\n3, 1\n4, 5\n")
    (raw / "TWO_graph_indicator.txt").write_text("1\n1\n1\n2\n2\n")
    (raw / "TWO_graph_labels.txt").write_text("-1\n1\n")
    (raw / "TWO_node_labels.txt").write_text("0, 5\n1, 5\n0, 6\n2, 5\n2, 6\n")
    ds = load_tudataset(tmp_path, "TWO")
    assert ds.ys.tolist() == [0, 1] and ds.num_features == 3 + 2
    assert ds.xs[0].tolist() == [[1, 0, 0, 1, 0], [0, 1, 0, 1, 0], [1, 0, 0, 0, 1]]
    assert np.array_equal(ds.adjs[0], np.ones((3, 3)) - np.eye(3)) and ds.adjs[1].tolist() == [[0, 1], [1, 0]]


def test_shipped_loader_errors_name_the_argument(tmp_path):
    with pytest.raises(ValueError, match="`name` must be one of the TU sets grakel ships"):
        shipped_tudataset("PROTEINS")
    with pytest.raises(TypeError, match="`root` must be a str or Path"):
        shipped_tu_root(3, ["MUTAG"])
    with pytest.raises(ValueError, match="`name` must be a dataset name"):
        load_tudataset(tmp_path, "../MUTAG")
    with pytest.raises(FileNotFoundError, match="raw"):
        load_tudataset(tmp_path, "MUTAG")


def test_missing_grakel_is_a_clear_error(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == "grakel" else real(n, *a))
    with pytest.raises(ModuleNotFoundError, match=r"neurips25\[graph\]"):
        shipped_tudataset("MUTAG")


def test_tu_folds_partition_stratified():
    ys = np.array([0] * 63 + [1] * 125)
    folds = tu_folds(ys, 10, repeat_seed=3)
    tests = np.concatenate([te for _, _, te in folds])
    assert sorted(tests.tolist()) == list(range(188))  # every graph tested exactly once
    for tr, va, te in folds:
        assert not (set(tr) & set(va) or set(tr) & set(te) or set(va) & set(te))
        assert len(tr) + len(va) + len(te) == 188 and abs(ys[te].mean() - 125 / 188) < 0.06
    assert not np.array_equal(folds[0][2], tu_folds(ys, 10, repeat_seed=4)[0][2])
    with pytest.raises(ValueError, match="`folds` must be an int >= 3"):
        tu_folds(ys, 2, 0)


def test_corrected_interval_widens_by_the_nadeau_bengio_factor():
    a, b = [0.5, 0.7, 0.6, 0.9, 0.4], [0.5, 0.5, 0.5, 0.5, 0.5]
    plain, corr = paired(a, b), paired(a, b, test_train=0.125)
    factor = (corr["hi90"] - corr["lo90"]) / (plain["hi90"] - plain["lo90"])
    assert corr["mean"] == plain["mean"] and factor == pytest.approx(np.sqrt(1 + 5 * 0.125))
    with pytest.raises(ValueError, match="`test_train` must be a positive ratio"):
        paired(a, b, test_train=-1.0)


def test_mutag_claims_are_reduced_and_gated_by_their_controls():
    claims = {c.id: c for c in declare_claims("paper")}
    c2, c3 = claims["c2_mutag"], claims["c3_mutag"]
    assert c3.kind == "headline" and c2.kind == "supporting"
    assert c2.instance == c3.instance == "reduced" and "MUTAG" in c3.instance_note
    win, lose = {"datasets": {"MUTAG": True}}, {"datasets": {"MUTAG": False}}
    assert c3.record(win, controls={"sum_alpha": lose, "masked_sum": win}).verdict == "reproduced"
    c3 = {c.id: c for c in declare_claims("paper")}["c3_mutag"]
    assert c3.record(lose, controls={"sum_alpha": lose, "masked_sum": lose}).verdict == "inconclusive"
    undecided = {c.id: c for c in declare_claims("paper")}["c3_mutag"]
    assert undecided.record(None, controls={"sum_alpha": None, "masked_sum": None},
                            unmeasured="grakel missing").verdict == "inconclusive"


def test_cuneiform_claims_mirror_mutags_and_are_judged_at_paper_scale():
    from neurips25.rspool.reproduce import SCALES, TU_SETS

    claims = {c.id: c for c in declare_claims("paper")}
    for a, b in (("c2_mutag", "c2_cuneiform"), ("c3_mutag", "c3_cuneiform")):
        m, c = claims[a], claims[b]
        assert c.criterion == m.criterion and c.instance == "reduced" and "Cuneiform" in c.statement
        assert [(x.name, x.role) for x in c.controls] == [(x.name, x.role) for x in m.controls]
    assert claims["c3_cuneiform"].kind == "supporting" and claims["c3_mutag"].kind == "headline"
    assert list(TU_SETS) == ["MUTAG", "Cuneiform"]
    assert SCALES["paper"].tu_names == ("MUTAG", "Cuneiform") and SCALES["quick"].tu_names == ("MUTAG",)


@needs_grakel
def test_tu_run_judges_the_datasets_asked_for_at_any_scale():
    from neurips25.rspool import tu_run

    res = tu_run.run_seed("smoke", 0, log=lambda line: None, datasets=("Cuneiform",))
    assert [c["id"] for c in res["claims"]] == ["c2_cuneiform", "c3_cuneiform"]
    assert res["datasets"] == ["Cuneiform"] and len(res["tu"]["Cuneiform"]["folds"]) == 2
    assert res["tu"]["Cuneiform"]["graphs"] == 267 and res["tu"]["Cuneiform"]["n_folds"] == 8
    assert all(c["decided_by"] == "machinery" for c in res["claims"])
    for bad in ("PROTEINS", [], "MUTAG"):
        with pytest.raises(ValueError, match="`datasets` must be a non-empty sequence"):
            tu_run.run_seed("smoke", 0, datasets=bad)
