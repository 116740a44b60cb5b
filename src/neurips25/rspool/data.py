"""Graph-classification data for RS-Pool: three generated sets and an offline TU-format reader.

The paper evaluates on TUDataset benchmarks (D&D, PROTEINS, NCI1, IMDB-BINARY, ...), which are
downloaded at run time and shipped by no package. Offline, this module offers:

- :func:`ba_2motifs`: a Barabasi-Albert base with a house (class 1) or 5-cycle (class 0) attached,
  the BA-2Motifs benchmark of the GNN-explanation literature;
- :func:`sbm_communities`: 2 (class 0) vs 3 (class 1) planted communities;
- :func:`er_vs_ba`: Erdos-Renyi (class 0) vs Barabasi-Albert (class 1) graphs of equal density with
  the node degree as the only feature, mirroring how the paper treats social datasets (IMDB-B);
- :func:`load_tudataset`: a reader of the TU text format for users who have the files on disk;
- :func:`shipped_tudataset` / :func:`shipped_tu_root`: the two real TU sets that ``grakel`` 0.1.11 ships as
  text under ``grakel/tests/data/`` (MUTAG, 188 molecules; Cuneiform, 267 signs), copied into a PyG-style
  root ``<root>/<name>/raw/`` that both :func:`load_tudataset` and PyG's ``TUDataset(root, name)`` read
  with no download;
- :func:`pains_molecules` (needs RDKit): real NCI molecules shipped with RDKit, labelled by whether
  they match a PAINS substructure alert (derived labels, not a paper benchmark).

Every set is a :class:`GraphSet`: per-graph 0/1 adjacency and node features, plus labels, with
:meth:`GraphSet.dense` (padded tensors for dense models and attacks) and :meth:`GraphSet.to_pyg`.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import networkx as nx
import numpy as np

__all__ = ["GraphSet", "ba_2motifs", "sbm_communities", "er_vs_ba", "load_tudataset", "degree_features",
           "pains_molecules", "shipped_tudataset", "shipped_tu_root", "SHIPPED_TU"]

#: TU datasets shipped as text by grakel 0.1.11 (``grakel/tests/data/<name>/``): name -> (graphs, classes)
SHIPPED_TU: dict[str, tuple[int, int]] = {"MUTAG": (188, 2), "Cuneiform": (267, 30)}


@dataclasses.dataclass
class GraphSet:
    """A list of small undirected graphs with node features and one label each.

    Attributes
    ----------
    adjs : list of ndarray, each ``[n_g, n_g]`` uint8, symmetric, zero diagonal
    xs : list of ndarray, each ``[n_g, F]`` float32
    ys : ndarray ``[G]`` int64, labels in ``[0, num_classes)``
    name : str
    """

    adjs: list
    xs: list
    ys: np.ndarray
    name: str = "graphs"

    def __post_init__(self) -> None:
        if not (len(self.adjs) == len(self.xs) == len(self.ys)):
            raise ValueError(f"GraphSet: `adjs`, `xs` and `ys` must have equal length, got "
                             f"{len(self.adjs)}, {len(self.xs)}, {len(self.ys)}")
        self.ys = np.asarray(self.ys, dtype=np.int64)
        widths = {x.shape[1] for x in self.xs}
        if len(widths) > 1:
            raise ValueError(f"GraphSet: every graph needs the same feature width, got {sorted(widths)}")
        for k, (a, x) in enumerate(zip(self.adjs, self.xs)):
            if a.ndim != 2 or a.shape[0] != a.shape[1] or a.shape[0] != x.shape[0]:
                raise ValueError(f"GraphSet: graph {k} has adjacency {a.shape} and features {x.shape}")

    def __len__(self) -> int:
        return len(self.ys)

    @property
    def num_features(self) -> int:
        return int(self.xs[0].shape[1]) if self.xs else 0

    @property
    def num_classes(self) -> int:
        return int(self.ys.max()) + 1 if len(self.ys) else 0

    def subset(self, idx) -> GraphSet:
        idx = [int(i) for i in idx]
        return GraphSet([self.adjs[i] for i in idx], [self.xs[i] for i in idx], self.ys[idx], self.name)

    def num_edges(self) -> np.ndarray:
        """Undirected edge count per graph, ``[G]``."""
        return np.array([int(a.sum()) // 2 for a in self.adjs], dtype=np.int64)

    def dense(self, idx=None):
        """Padded tensors ``(x [B, N, F], adj [B, N, N], mask [B, N] bool, y [B])`` of graphs ``idx``.

        ``N`` is the largest graph among ``idx``; padding rows and columns are zero.
        """
        import torch

        idx = range(len(self)) if idx is None else [int(i) for i in idx]
        idx = list(idx)
        n_max = max((self.adjs[i].shape[0] for i in idx), default=0)
        x = torch.zeros(len(idx), n_max, self.num_features)
        adj = torch.zeros(len(idx), n_max, n_max)
        mask = torch.zeros(len(idx), n_max, dtype=torch.bool)
        for b, i in enumerate(idx):
            n = self.adjs[i].shape[0]
            x[b, :n] = torch.from_numpy(self.xs[i])
            adj[b, :n, :n] = torch.from_numpy(self.adjs[i].astype(np.float32))
            mask[b, :n] = True
        return x, adj, mask, torch.from_numpy(self.ys[idx].copy())

    def to_pyg(self, idx=None) -> list:
        """``torch_geometric.data.Data`` objects (``x``, ``edge_index`` both directions, ``y``)."""
        import torch
        from torch_geometric.data import Data

        idx = range(len(self)) if idx is None else idx
        out = []
        for i in idx:
            r, c = np.nonzero(self.adjs[int(i)])
            out.append(Data(x=torch.from_numpy(self.xs[int(i)]),
                            edge_index=torch.from_numpy(np.stack([r, c]).astype(np.int64)),
                            y=torch.tensor([int(self.ys[int(i)])])))
        return out


def degree_features(adj: np.ndarray, kind: str = "onehot", max_degree: int = 10) -> np.ndarray:
    """Node features from degrees: one-hot capped at ``max_degree`` (``[n, max_degree + 1]``) or the
    raw degree as one column (``kind="scalar"``, ``[n, 1]``)."""
    deg = adj.sum(axis=1).astype(np.int64)
    if kind == "scalar":
        return deg[:, None].astype(np.float32)
    if kind != "onehot":
        raise ValueError(f"degree_features: `kind` must be 'onehot' or 'scalar', got {kind!r}")
    out = np.zeros((adj.shape[0], max_degree + 1), dtype=np.float32)
    out[np.arange(adj.shape[0]), np.minimum(deg, max_degree)] = 1.0
    return out


def _adj(g: nx.Graph) -> np.ndarray:
    a = nx.to_numpy_array(g, nodelist=range(g.number_of_nodes()), dtype=np.uint8)
    np.fill_diagonal(a, 0)
    return a


def _check_count(num_graphs: int, owner: str) -> None:
    if isinstance(num_graphs, bool) or not isinstance(num_graphs, int) or num_graphs < 2:
        raise ValueError(f"{owner}: `num_graphs` must be an int >= 2, got {num_graphs!r}")


def _finish(graphs: list, labels: list, name: str, kind: str, rng: np.random.Generator) -> GraphSet:
    order = rng.permutation(len(graphs))
    adjs = [graphs[i] for i in order]
    return GraphSet(adjs, [degree_features(a, kind) for a in adjs], np.asarray(labels)[order], name)


def ba_2motifs(num_graphs: int = 600, base_nodes: int = 20, seed: int = 0) -> GraphSet:
    """BA-2Motifs: a Barabasi-Albert graph (``base_nodes``, m=1) with a motif joined by one edge.

    Class 1 motif: a house (5 nodes, 6 edges); class 0: a 5-cycle. Balanced classes. Features: one-hot
    degree capped at 10, shape ``[base_nodes + 5, 11]``.

    Examples
    --------
    >>> ds = ba_2motifs(10, seed=0)
    >>> len(ds), ds.num_features, ds.adjs[0].shape
    (10, 11, (25, 25))
    """
    _check_count(num_graphs, "ba_2motifs")
    if base_nodes < 2:
        raise ValueError(f"ba_2motifs: `base_nodes` must be >= 2, got {base_nodes}")
    rng = np.random.default_rng(seed)
    graphs, labels = [], []
    for k in range(num_graphs):
        y = k % 2
        g = nx.barabasi_albert_graph(base_nodes, 1, seed=int(rng.integers(2**31)))
        motif = nx.house_graph() if y == 1 else nx.cycle_graph(5)
        g = nx.disjoint_union(g, motif)
        g.add_edge(int(rng.integers(base_nodes)), base_nodes + int(rng.integers(5)))
        graphs.append(_adj(g))
        labels.append(y)
    return _finish(graphs, labels, "ba_2motifs", "onehot", rng)


def sbm_communities(num_graphs: int = 600, min_nodes: int = 20, max_nodes: int = 40, p_in: float = 0.3,
                    p_out: float = 0.05, mean_degree: float | None = None, seed: int = 0) -> GraphSet:
    """Planted partition graphs with 2 (class 0) or 3 (class 1) equal-sized communities.

    Edges appear with probability ``p_in`` inside a community and ``p_out`` across. With
    ``mean_degree`` set, ``p_in`` is instead chosen per graph so that both classes have that
    expected degree (keeping the ratio p_out / p_in); the count is then invisible to the
    degrees, and a 2-layer GCN on degree features is near chance on it (tested while building this
    module), so the default keeps fixed probabilities. Features: one-hot degree capped at 10.
    """
    _check_count(num_graphs, "sbm_communities")
    if not 2 <= min_nodes <= max_nodes:
        raise ValueError(f"sbm_communities: need 2 <= `min_nodes` <= `max_nodes`, got {min_nodes}, "
                         f"{max_nodes}")
    if not (0 <= p_out <= 1 and 0 < p_in <= 1):
        raise ValueError(f"sbm_communities: need 0 < `p_in` <= 1 and 0 <= `p_out` <= 1, got {p_in}, {p_out}")
    rng = np.random.default_rng(seed)
    graphs, labels = [], []
    for k in range(num_graphs):
        y = k % 2
        n_comm = 2 + y
        n = int(rng.integers(min_nodes, max_nodes + 1))
        sizes = [n // n_comm + (1 if c < n % n_comm else 0) for c in range(n_comm)]
        pi, po = p_in, p_out
        if mean_degree is not None:
            within = sum(s * (s - 1) for s in sizes) / n
            ratio = p_out / p_in
            pi = min(1.0, mean_degree / (within + ratio * (n - 1 - within)))
            po = ratio * pi
        probs = [[pi if i == j else po for j in range(n_comm)] for i in range(n_comm)]
        g = nx.stochastic_block_model(sizes, probs, seed=int(rng.integers(2**31)))
        graphs.append(_adj(nx.convert_node_labels_to_integers(g)))
        labels.append(y)
    return _finish(graphs, labels, "sbm_communities", "onehot", rng)


def er_vs_ba(num_graphs: int = 600, min_nodes: int = 20, max_nodes: int = 40, m: int = 3,
             features: str = "onehot", seed: int = 0) -> GraphSet:
    """Erdos-Renyi (class 0) vs Barabasi-Albert (class 1) graphs of equal expected density.

    "IMDB-like": node degree is the only (1-column) feature, as the paper does for social datasets.
    The ER edge probability matches the BA edge count ``m (n - m)``.
    """
    _check_count(num_graphs, "er_vs_ba")
    if not m + 1 <= min_nodes <= max_nodes:
        raise ValueError(f"er_vs_ba: need m + 1 <= `min_nodes` <= `max_nodes`, got {m}, {min_nodes}, "
                         f"{max_nodes}")
    rng = np.random.default_rng(seed)
    graphs, labels = [], []
    for k in range(num_graphs):
        y = k % 2
        n = int(rng.integers(min_nodes, max_nodes + 1))
        s = int(rng.integers(2**31))
        if y == 1:
            g = nx.barabasi_albert_graph(n, m, seed=s)
        else:
            g = nx.gnp_random_graph(n, m * (n - m) / (n * (n - 1) / 2), seed=s)
        graphs.append(_adj(g))
        labels.append(y)
    return _finish(graphs, labels, "er_vs_ba", features, rng)


def _read_ints(path: Path, name: str, ncols: int | None = None) -> np.ndarray:
    try:
        arr = np.loadtxt(path, delimiter=",", dtype=np.float64, ndmin=2)
    except FileNotFoundError:
        raise FileNotFoundError(f"load_tudataset: {name} file {path} not found") from None
    except ValueError as err:
        raise ValueError(f"load_tudataset: {path} is not comma-separated numbers ({err})") from None
    if ncols is not None and arr.size and arr.shape[1] != ncols:
        raise ValueError(f"load_tudataset: {path} must have {ncols} column(s), got {arr.shape[1]}")
    return arr


def load_tudataset(root: str | Path, name: str) -> GraphSet:
    """Read a TUDataset from its text files, offline (nothing is downloaded).

    Looks for ``<root>/<name>/<name>_A.txt``, ``<root>/<name>/raw/<name>_A.txt`` (PyG's ``TUDataset``
    layout) or ``<root>/<name>_A.txt``, with ``_graph_indicator.txt`` and ``_graph_labels.txt``; optional
    ``_node_labels.txt`` (each column one-hot encoded over the values it holds, columns concatenated, as
    PyG does) and ``_node_attributes.txt`` (appended). Without either, the node degree is the only
    feature, as for the social datasets. Edge labels and attributes are not read (the dense GCN has no
    edge features). Node ids in ``_A.txt`` and graph ids are 1-based; self loops
    and duplicate edges are dropped, edges are symmetrised; labels are remapped to ``0..C-1``.

    Parameters
    ----------
    root : str or Path
        Folder holding the dataset folder (or the files themselves).
    name : str
        Dataset name, the files' prefix (``"MUTAG"``, ``"IMDB-BINARY"``).

    Returns
    -------
    GraphSet
    """
    if not isinstance(root, (str, Path)):
        raise TypeError(f"load_tudataset: `root` must be a str or Path, got {type(root).__name__}")
    if not isinstance(name, str) or not name or "/" in name or "\\" in name:
        raise ValueError(f"load_tudataset: `name` must be a dataset name (the files' prefix), got {name!r}")
    root = Path(root)
    places = (root / name, root / name / "raw", root)
    folder = next((p for p in places if (p / f"{name}_A.txt").is_file()), None)
    if folder is None:
        raise FileNotFoundError(f"load_tudataset: no {name}_A.txt under {root}, {root / name} or "
                                f"{root / name / 'raw'}")
    f = lambda suffix: folder / f"{name}_{suffix}.txt"
    edges = _read_ints(f("A"), "edge list", 2).astype(np.int64)
    gid = _read_ints(f("graph_indicator"), "graph indicator", 1)[:, 0].astype(np.int64)
    glab = _read_ints(f("graph_labels"), "graph labels", 1)[:, 0].astype(np.int64)
    n_nodes, n_graphs = len(gid), len(glab)
    if n_nodes == 0 or gid.min() < 1 or gid.max() > n_graphs:
        raise ValueError(f"load_tudataset: graph ids in {f('graph_indicator')} must lie in 1..{n_graphs}")
    if np.any(np.diff(gid) < 0):
        raise ValueError(f"load_tudataset: {f('graph_indicator')} must list nodes graph by graph")
    if edges.size and (edges.min() < 1 or edges.max() > n_nodes):
        raise ValueError(f"load_tudataset: node ids in {f('A')} must lie in 1..{n_nodes}")
    feats = []
    if f("node_labels").is_file():
        nl = _read_ints(f("node_labels"), "node labels").astype(np.int64)
        if len(nl) != n_nodes:
            raise ValueError(f"load_tudataset: {f('node_labels')} has {len(nl)} rows, expected {n_nodes}")
        for col in nl.T:  # Cuneiform has two label columns; each is one-hot encoded on its own
            _, inv = np.unique(col, return_inverse=True)
            feats.append(np.eye(inv.max() + 1, dtype=np.float32)[inv])
    if f("node_attributes").is_file():
        na = _read_ints(f("node_attributes"), "node attributes").astype(np.float32)
        if len(na) != n_nodes:
            raise ValueError(f"load_tudataset: {f('node_attributes')} has {len(na)} rows, expected {n_nodes}")
        feats.append(na)
    start = np.searchsorted(gid, np.arange(1, n_graphs + 2))
    adjs, xs = [], []
    src, dst = edges[:, 0] - 1, edges[:, 1] - 1
    edge_graph = gid[src] if edges.size else src
    if edges.size and np.any(gid[dst] != edge_graph):
        raise ValueError(f"load_tudataset: {f('A')} has an edge between two different graphs")
    for g in range(n_graphs):
        lo, hi = start[g], start[g + 1]
        a = np.zeros((hi - lo, hi - lo), dtype=np.uint8)
        sel = edge_graph == g + 1
        a[src[sel] - lo, dst[sel] - lo] = 1
        a = np.maximum(a, a.T)
        np.fill_diagonal(a, 0)
        adjs.append(a)
        if feats:
            xs.append(np.concatenate([ft[lo:hi] for ft in feats], axis=1))
        else:
            xs.append(degree_features(a, "scalar"))
    _, labels = np.unique(glab, return_inverse=True)
    return GraphSet(adjs, xs, labels.astype(np.int64), name)


def _shipped_folder(name: str) -> Path:
    """grakel's folder of ``name``'s TU files, found without importing grakel (its import pulls scikit-learn
    kernels); a clear error naming the extra when grakel is not installed."""
    import importlib.util

    if name not in SHIPPED_TU:
        raise ValueError(f"`name` must be one of the TU sets grakel ships ({', '.join(SHIPPED_TU)}), got {name!r}")
    spec = importlib.util.find_spec("grakel")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(f"the real {name} files ship with grakel 0.1.11, which is not installed; "
                                  "install it with: pip install \"neurips25[graph]\" (or pip install grakel==0.1.11)")
    folder = Path(next(iter(spec.submodule_search_locations))) / "tests" / "data" / name
    if not (folder / f"{name}_A.txt").is_file():
        raise FileNotFoundError(f"grakel is installed but {folder / (name + '_A.txt')} is missing; this reader "
                                "expects grakel==0.1.11, which ships the TU files under grakel/tests/data/")
    return folder


def shipped_tu_root(root: str | Path, names=("MUTAG",)) -> Path:
    """Copy the TU files grakel ships into ``<root>/<name>/raw/`` for each of ``names``; return ``root``.

    The folder is PyG's ``TUDataset`` layout, so ``torch_geometric.datasets.TUDataset(root, "MUTAG")`` reads
    it without downloading (it writes its ``processed/`` folder beside ``raw/``), and so does
    :func:`load_tudataset`. Files already present with the same size are left as they are.

    Examples
    --------
    >>> import tempfile
    >>> root = shipped_tu_root(tempfile.mkdtemp(), ["MUTAG"])   # doctest: +SKIP
    >>> TUDataset(root, "MUTAG")                                  # doctest: +SKIP
    MUTAG(188)
    """
    import shutil

    if not isinstance(root, (str, Path)):
        raise TypeError(f"shipped_tu_root: `root` must be a str or Path, got {type(root).__name__}")
    if isinstance(names, str):
        names = [names]
    root = Path(root)
    for name in names:
        src = _shipped_folder(name)
        raw = root / name / "raw"
        raw.mkdir(parents=True, exist_ok=True)
        for path in sorted(src.glob(f"{name}_*.txt")):
            dst = raw / path.name
            if not (dst.is_file() and dst.stat().st_size == path.stat().st_size):
                shutil.copyfile(path, dst)
    return root


def shipped_tudataset(name: str = "MUTAG", root: str | Path | None = None) -> GraphSet:
    """A real TU dataset from the files grakel 0.1.11 ships, as a :class:`GraphSet`, offline.

    ``name``: ``"MUTAG"`` (188 nitroaromatic compounds, mutagenic or not, 7 one-hot atom types; Debnath et
    al. 1991) or ``"Cuneiform"`` (267 Hittite cuneiform signs, 30 classes; node features: two one-hot label
    columns and 3 coordinates). The files are copied into ``<root>/<name>/raw/`` by :func:`shipped_tu_root`
    (a temporary folder, removed afterwards, when ``root`` is None) and read by :func:`load_tudataset`.

    Examples
    --------
    >>> ds = shipped_tudataset("MUTAG")           # doctest: +SKIP
    >>> len(ds), ds.num_features, ds.num_classes  # doctest: +SKIP
    (188, 7, 2)
    """
    import tempfile

    if root is not None:
        return load_tudataset(shipped_tu_root(root, [name]), name)
    with tempfile.TemporaryDirectory(prefix="neurips25-tu-") as tmp:
        return load_tudataset(shipped_tu_root(tmp, [name]), name)


def pains_molecules(num_graphs: int | None = 1000, max_atoms: int = 40, max_molecules: int | None = None,
                    seed: int = 0) -> GraphSet:
    """Real molecules from RDKit's bundled ``Data/NCI/first_5K.smi``, label = matches a PAINS alert.

    The label is a substructure-presence task (like Mutagenicity's toxicophores) derived here from
    RDKit's ``Data/Pains/wehi_pains.csv``; it is not one of the paper's benchmarks. Heavy atoms only;
    features: one-hot of {C, N, O, S, F, Cl, Br, I, P, other}. Molecules that fail to parse or have
    more than ``max_atoms`` atoms are skipped; classes are balanced by subsampling the majority.
    ``max_molecules`` reads only the first lines of the file (parsing all 5,000 takes seconds).
    """
    from neurips25.extras import require

    Chem = require("rdkit.Chem", "chem")
    RDConfig = require("rdkit.RDConfig", "chem")
    require("rdkit.RDLogger", "chem").DisableLog("rdApp.*")  # the file has a few invalid valences
    data_dir = Path(RDConfig.RDDataDir)
    alerts = []
    for line in (data_dir / "Pains" / "wehi_pains.csv").read_text().splitlines():
        smarts = line.split('",')[0].strip('"')
        patt = Chem.MolFromSmarts(smarts) if smarts else None
        if patt is not None:
            alerts.append(patt)
    symbols = ["C", "N", "O", "S", "F", "Cl", "Br", "I", "P"]
    adjs, xs, ys = [], [], []
    for line in (data_dir / "NCI" / "first_5K.smi").read_text().splitlines()[:max_molecules]:
        mol = Chem.MolFromSmiles(line.split()[0]) if line.strip() else None
        if mol is None or not 2 <= mol.GetNumAtoms() <= max_atoms:
            continue
        a = Chem.GetAdjacencyMatrix(mol).astype(np.uint8)
        x = np.zeros((mol.GetNumAtoms(), len(symbols) + 1), dtype=np.float32)
        for atom in mol.GetAtoms():
            sym = atom.GetSymbol()
            x[atom.GetIdx(), symbols.index(sym) if sym in symbols else len(symbols)] = 1.0
        adjs.append(a)
        xs.append(x)
        ys.append(int(any(mol.HasSubstructMatch(p) for p in alerts)))
    ys = np.asarray(ys)
    rng = np.random.default_rng(seed)
    pos, neg = np.nonzero(ys == 1)[0], np.nonzero(ys == 0)[0]
    k = min(len(pos), len(neg))
    if num_graphs is not None:
        k = min(k, num_graphs // 2)
    keep = rng.permutation(np.concatenate([rng.choice(pos, k, replace=False), rng.choice(neg, k, replace=False)]))
    return GraphSet([adjs[i] for i in keep], [xs[i] for i in keep], ys[keep], "pains_molecules")
