"""Generated datasets (planted ground truth) and the offline TU-format reader."""

import networkx as nx
import numpy as np
import pytest

from neurips25.rspool.data import (
    GraphSet,
    ba_2motifs,
    er_vs_ba,
    load_tudataset,
    pains_molecules,
    sbm_communities,
)


def test_ba_2motifs_label_is_triangle_presence():
    # The BA base with m=1 is a tree, so a triangle exists iff the house motif (class 1) is attached.
    ds = ba_2motifs(40, seed=1)
    for a, y in zip(ds.adjs, ds.ys):
        has_triangle = sum(nx.triangles(nx.from_numpy_array(a)).values()) > 0
        assert has_triangle == bool(y)
        assert a.shape == (25, 25) and np.array_equal(a, a.T) and a.trace() == 0
    assert sorted(np.bincount(ds.ys)) == [20, 20]


def test_sbm_and_er_vs_ba_shapes_and_balance():
    for ds in (sbm_communities(30, seed=2), er_vs_ba(30, seed=2)):
        sizes = [a.shape[0] for a in ds.adjs]
        assert min(sizes) >= 20 and max(sizes) <= 40
        assert np.bincount(ds.ys).tolist() == [15, 15]
        assert all(x.shape == (a.shape[0], 11) for a, x in zip(ds.adjs, ds.xs))  # one-hot degree


def test_er_vs_ba_scalar_feature_is_degree():
    ds = er_vs_ba(4, features="scalar", seed=3)
    assert all(np.array_equal(x[:, 0], a.sum(1)) for a, x in zip(ds.adjs, ds.xs))


def test_same_seed_same_data():
    a, b = sbm_communities(10, seed=5), sbm_communities(10, seed=5)
    assert all(np.array_equal(p, q) for p, q in zip(a.adjs, b.adjs))


def test_dense_padding():
    ds = er_vs_ba(6, seed=0)
    x, adj, mask, y = ds.dense()
    n = [a.shape[0] for a in ds.adjs]
    assert adj.shape == (6, max(n), max(n)) and mask.sum(1).tolist() == n
    assert float(adj[~mask].abs().sum()) == 0.0 and y.tolist() == ds.ys.tolist()


def write_tu(folder, name="TINY", node_labels=True):
    # two graphs: a triangle (nodes 1-3, label 2) and a path 4-5 (label 5); 1-based ids, one direction
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}_A.txt").write_text("1, 2\n2, 3\n3, 1\n4, 5\n")
    (folder / f"{name}_graph_indicator.txt").write_text("1\n1\n1\n2\n2\n")
    (folder / f"{name}_graph_labels.txt").write_text("2\n5\n")
    if node_labels:
        (folder / f"{name}_node_labels.txt").write_text("0\n1\n0\n3\n3\n")


def test_tu_reader_on_fixture(tmp_path):
    write_tu(tmp_path / "TINY")
    ds = load_tudataset(tmp_path, "TINY")
    assert len(ds) == 2 and ds.ys.tolist() == [0, 1]
    assert np.array_equal(ds.adjs[0], np.ones((3, 3)) - np.eye(3))
    assert np.array_equal(ds.adjs[1], np.array([[0, 1], [1, 0]]))
    # node labels {0, 1, 3} one-hot encoded into 3 columns
    assert ds.xs[0].tolist() == [[1, 0, 0], [0, 1, 0], [1, 0, 0]] and ds.xs[1].tolist() == [[0, 0, 1]] * 2


def test_tu_reader_degree_feature_without_labels(tmp_path):
    write_tu(tmp_path, node_labels=False)  # files directly under root
    ds = load_tudataset(tmp_path, "TINY")
    assert ds.xs[0][:, 0].tolist() == [2, 2, 2] and ds.xs[1][:, 0].tolist() == [1, 1]


def test_tu_reader_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="no TINY_A.txt"):
        load_tudataset(tmp_path, "TINY")
    write_tu(tmp_path)
    (tmp_path / "TINY_A.txt").write_text("1, 2\n3, 4\n")  # edge 3-4 joins graph 1 and graph 2
    with pytest.raises(ValueError, match="edge between two different graphs"):
        load_tudataset(tmp_path, "TINY")
    (tmp_path / "TINY_A.txt").write_text("1, 9\n")
    with pytest.raises(ValueError, match="node ids .* must lie in 1..5"):
        load_tudataset(tmp_path, "TINY")


def test_graphset_validation():
    with pytest.raises(ValueError, match="equal length"):
        GraphSet([np.zeros((2, 2))], [], np.array([0]))
    with pytest.raises(ValueError, match="`num_graphs` must be an int >= 2"):
        ba_2motifs(1)


def test_pains_molecules_balanced_bond_graphs():
    pytest.importorskip("rdkit")
    from rdkit import Chem

    ds = pains_molecules(30, max_molecules=400, seed=0)  # 18 of the first 400 match an alert
    assert len(ds) == 30 and np.bincount(ds.ys).tolist() == [15, 15]
    assert all(x.shape == (a.shape[0], 10) and np.allclose(x.sum(1), 1) for a, x in zip(ds.adjs, ds.xs))
    # a molecule's adjacency is its bond graph: symmetric, no self loops, connected atoms have bonds
    mol = Chem.MolFromSmiles("c1ccccc1")
    assert Chem.GetAdjacencyMatrix(mol).sum() == 12  # sanity of the RDKit call the loader uses
    assert all(np.array_equal(a, a.T) and a.trace() == 0 for a in ds.adjs)
