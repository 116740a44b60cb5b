"""`EARerankerEstimator`: fit / predict / rank / filter around the :class:`EAReranker` network.

scikit-learn style (``BaseEstimator``: hyper-parameters in ``__init__``, checked in ``fit``) with the shapes
of sentence-transformers' ``CrossEncoder``: ``predict(pairs)`` scores text pairs and ``rank(query, documents,
top_k)`` returns ``[{"corpus_id", "score", "bin"}, ...]`` best first, so it can replace a cross-encoder in a
RAG pipeline. Given embeddings (what a vector store already holds) no text is needed; given text, the
``encode_fn`` (default: the shipped MiniLM) embeds it first.
"""

from __future__ import annotations

import json
import numbers
from pathlib import Path

import numpy as np
import torch
from sklearn.base import BaseEstimator

from neurips25.eareranker.checks import as_embeddings, as_scores, nonneg_real, positive_int
from neurips25.eareranker.loss import BinAwareLoss
from neurips25.eareranker.model import EAReranker, PairMLP
from neurips25.eareranker.rubric import DEFAULT_EDGES, AdequacyRubric

_CONFIG = "eareranker_config.json"
_WEIGHTS = "model.safetensors"


class EARerankerEstimator(BaseEstimator):
    """Embedding-only adequacy reranker (EAReranker, NeurIPS 2025; internals reconstructed, see docs).

    Parameters
    ----------
    n_chunks : int, default 8
        Expansion chunks T per vector (must divide the embedding dimension; 1 = no expansion).
    d_model, n_layers, n_heads, dim_feedforward, dropout
        Decoder size.
    interactions : bool, default True
        Expansion adds q*x and |q-x| segments.
    architecture : {"decoder", "mlp"}, default "decoder"
        "mlp" swaps the decoder for :class:`~neurips25.eareranker.model.PairMLP` (the baseline).
    mlp_hidden : int, default 256
        Hidden width of the "mlp" architecture.
    bin_edges : sequence, default (0, 20, 40, 60, 75, 90, 100)
        Rubric bins (see :class:`AdequacyRubric`).
    beta, ordinal_weight, huber_weight : float
        :class:`BinAwareLoss` (``beta=0, ordinal_weight=0`` is plain cross-entropy).
    epochs, batch_size, lr, weight_decay
        AdamW training with a cosine learning-rate schedule.
    seed : int, default 0
        Drives initialisation and batch order: the same seed gives the same model.
    encode_fn : callable, optional
        ``list[str] -> (n, d) array``, used when text is passed (default: MiniLM, loaded on first use).

    Attributes
    ----------
    model_ : nn.Module, rubric_ : AdequacyRubric, d_in_ : int, loss_curve_ : list of float

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> Q, D = rng.normal(size=(64, 16)), rng.normal(size=(64, 16))
    >>> s = 100 / (1 + np.exp(-(Q * D).sum(1)))
    >>> est = EARerankerEstimator(n_chunks=4, d_model=16, n_layers=1, n_heads=2, epochs=2).fit(Q, D, s)
    >>> [r["corpus_id"] for r in est.rank(Q[0], D[:5], top_k=2)] == list(np.argsort(-est.predict_score(
    ...     np.repeat(Q[:1], 5, 0), D[:5]))[:2])
    True
    """

    def __init__(self, n_chunks: int = 8, d_model: int = 64, n_layers: int = 2, n_heads: int = 4,
                 dim_feedforward: int = 128, dropout: float = 0.1, interactions: bool = True,
                 architecture: str = "decoder", mlp_hidden: int = 256, bin_edges=DEFAULT_EDGES, beta: float = 0.5,
                 ordinal_weight: float = 0.5, huber_weight: float = 1.0, epochs: int = 20, batch_size: int = 256,
                 lr: float = 3e-3, weight_decay: float = 1e-2, seed: int = 0, encode_fn=None):
        self.n_chunks = n_chunks
        self.d_model = d_model
        self.n_layers = n_layers
        self.n_heads = n_heads
        self.dim_feedforward = dim_feedforward
        self.dropout = dropout
        self.interactions = interactions
        self.architecture = architecture
        self.mlp_hidden = mlp_hidden
        self.bin_edges = bin_edges
        self.beta = beta
        self.ordinal_weight = ordinal_weight
        self.huber_weight = huber_weight
        self.epochs = epochs
        self.batch_size = batch_size
        self.lr = lr
        self.weight_decay = weight_decay
        self.seed = seed
        self.encode_fn = encode_fn

    # --- construction ---------------------------------------------------------------------------------------
    def _arch_config(self) -> dict:
        return {k: getattr(self, k) for k in ("n_chunks", "d_model", "n_layers", "n_heads", "dim_feedforward",
                                               "dropout", "interactions", "architecture", "mlp_hidden")}

    def _build(self, d_in: int, n_bins: int):
        if self.architecture == "mlp":
            return PairMLP(d_in, hidden=self.mlp_hidden, n_layers=self.n_layers, dropout=self.dropout, n_bins=n_bins)
        if self.architecture != "decoder":
            raise ValueError(f"`architecture` must be 'decoder' or 'mlp'; got {self.architecture!r}")
        if d_in % positive_int(self.n_chunks, "n_chunks"):
            raise ValueError(f"`n_chunks` must divide the embedding dimension d={d_in}; got n_chunks={self.n_chunks}")
        return EAReranker(d_in, self.n_chunks, self.d_model, self.n_layers, self.n_heads, self.dim_feedforward,
                          self.dropout, n_bins, self.interactions)

    def _check_pairs(self, query_emb, doc_emb, fitted: bool):
        q, x = as_embeddings(query_emb, "query_emb"), as_embeddings(doc_emb, "doc_emb")
        if q.shape[1] != x.shape[1]:
            raise ValueError(f"`query_emb` and `doc_emb` must have the same embedding dimension; got "
                             f"{q.shape[1]} and {x.shape[1]}")
        if q.shape[0] != x.shape[0]:
            raise ValueError(f"`query_emb` and `doc_emb` must have one row per pair (same number of rows); got "
                             f"{q.shape[0]} and {x.shape[0]}")
        if fitted:
            self._check_fitted()
            if q.shape[1] != self.d_in_:
                raise ValueError(f"embedding dimension mismatch: the model was fitted on d={self.d_in_}, got "
                                 f"d={q.shape[1]}")
        return q, x

    def _check_fitted(self):
        if not hasattr(self, "model_"):
            raise RuntimeError("this EARerankerEstimator is not fitted yet; call fit(query_emb, doc_emb, scores)")

    # --- training -------------------------------------------------------------------------------------------
    def fit(self, query_emb, doc_emb, scores):
        """Train on paired rows: ``query_emb[i]``, ``doc_emb[i]`` (n, d) and adequacy ``scores[i]`` in [0, 100]."""
        q, x = self._check_pairs(query_emb, doc_emb, fitted=False)
        s = as_scores(scores, "scores", q.shape[0])
        self.rubric_ = AdequacyRubric(bin_edges=self.bin_edges)
        epochs, bs = positive_int(self.epochs, "epochs"), positive_int(self.batch_size, "batch_size")
        lr, wd = nonneg_real(self.lr, "lr"), nonneg_real(self.weight_decay, "weight_decay")
        seed = positive_int(self.seed, "seed", 0)
        bins = self.rubric_.to_bin(s)
        gen = torch.Generator().manual_seed(seed)
        torch.manual_seed(seed)
        self.d_in_ = q.shape[1]
        self.model_ = self._build(self.d_in_, self.rubric_.n_bins)
        loss_fn = BinAwareLoss(np.bincount(bins, minlength=self.rubric_.n_bins), self.beta, self.ordinal_weight,
                               self.huber_weight)
        opt = torch.optim.AdamW(self.model_.parameters(), lr=lr, weight_decay=wd)
        steps = epochs * int(np.ceil(q.shape[0] / bs))
        sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=max(lr, 1e-12), total_steps=steps, pct_start=0.1)
        Q, X = torch.from_numpy(q), torch.from_numpy(x)
        S, B = torch.as_tensor(s, dtype=torch.float32), torch.as_tensor(bins, dtype=torch.long)
        self.loss_curve_ = []
        self.model_.train()
        for _ in range(epochs):
            perm, total = torch.randperm(q.shape[0], generator=gen), 0.0
            for i in range(0, q.shape[0], bs):
                idx = perm[i:i + bs]
                logits, pred = self.model_(Q[idx], X[idx])
                loss = loss_fn(logits, pred, B[idx], S[idx])
                opt.zero_grad()
                loss.backward()
                opt.step()
                sched.step()
                total += loss.item() * idx.numel()
            self.loss_curve_.append(total / q.shape[0])
        self.model_.eval()
        return self

    # --- prediction on embeddings ---------------------------------------------------------------------------
    @torch.no_grad()
    def _forward(self, q, x, batch: int = 1024):
        logits, score = [], []
        for i in range(0, q.shape[0], batch):
            lg, sc = self.model_(torch.from_numpy(q[i:i + batch]), torch.from_numpy(x[i:i + batch]))
            logits.append(lg), score.append(sc)
        return torch.cat(logits).numpy(), torch.cat(score).numpy().astype(np.float64)

    def predict_score(self, query_emb, doc_emb) -> np.ndarray:
        """Predicted adequacy score in [0, 100] of each pair (the score head), shape (n,)."""
        return self._forward(*self._check_pairs(query_emb, doc_emb, fitted=True))[1]

    def predict_proba(self, query_emb, doc_emb) -> np.ndarray:
        """Predicted bin distribution of each pair, shape (n, n_bins)."""
        logits = self._forward(*self._check_pairs(query_emb, doc_emb, fitted=True))[0]
        e = np.exp(logits - logits.max(1, keepdims=True))
        return e / e.sum(1, keepdims=True)

    def predict_bin(self, query_emb, doc_emb) -> np.ndarray:
        """Most likely adequacy bin of each pair (the bin head), shape (n,)."""
        return np.argmax(self._forward(*self._check_pairs(query_emb, doc_emb, fitted=True))[0], axis=1)

    # --- CrossEncoder-shaped interface ----------------------------------------------------------------------
    def _encode(self, texts) -> np.ndarray:
        if self.encode_fn is None:
            from neurips25.eareranker.encoders import MiniLMEncoder

            self.encode_fn = MiniLMEncoder()
        return np.asarray(self.encode_fn(list(texts)), dtype=np.float32)

    def predict(self, pairs) -> np.ndarray:
        """Scores of ``[(query_text, doc_text), ...]`` (as ``CrossEncoder.predict``), embedding the texts."""
        pairs = list(pairs)
        if not pairs or not all(isinstance(p, (tuple, list)) and len(p) == 2 and all(isinstance(t, str) for t in p)
                                for p in pairs):
            raise ValueError("`pairs` must be a non-empty list of (query_text, doc_text) string pairs")
        emb = self._encode([p[0] for p in pairs] + [p[1] for p in pairs])
        return self.predict_score(emb[:len(pairs)], emb[len(pairs):])

    def _query_docs(self, query, documents):
        if isinstance(query, str):
            query = self._encode([query])[0]
        if isinstance(documents, (list, tuple)) and documents and all(isinstance(d, str) for d in documents):
            documents = self._encode(documents)
        q = as_embeddings(query, "query", ndim=1)
        x = as_embeddings(documents, "documents")
        if x.shape[1] != q.shape[0]:
            raise ValueError(f"`query` (d={q.shape[0]}) and `documents` (d={x.shape[1]}) must have the same "
                             "embedding dimension")
        return np.repeat(q[None], x.shape[0], 0), x

    def rank(self, query, documents, top_k: int | None = None, return_documents: bool = False) -> list[dict]:
        """Documents sorted by predicted adequacy, best first: ``[{"corpus_id", "score", "bin"}, ...]``.

        ``query`` is a (d,) embedding or a string; ``documents`` an (m, d) array or a list of strings.
        """
        raw = documents
        q, x = self._query_docs(query, documents)
        logits, score = self._forward(q, x)
        order = np.argsort(-score, kind="stable")
        if top_k is not None:
            if isinstance(top_k, bool) or not isinstance(top_k, numbers.Integral) or top_k < 1:
                raise ValueError(f"`top_k` must be a positive integer or None; got {top_k!r}")
            order = order[: int(top_k)]
        out = [{"corpus_id": int(i), "score": float(score[i]), "bin": int(np.argmax(logits[i]))} for i in order]
        if return_documents:
            for r in out:
                r["text"] = raw[r["corpus_id"]]
        return out

    def filter(self, query, documents, min_bin: int) -> list[int]:
        """Indices of documents whose predicted bin is >= ``min_bin``, best score first (drop inadequate ones)."""
        self._check_fitted()
        if isinstance(min_bin, bool) or not isinstance(min_bin, numbers.Integral) or not (
                0 <= min_bin < self.rubric_.n_bins):
            raise ValueError(f"`min_bin` must be an integer in [0, {self.rubric_.n_bins - 1}]; got {min_bin!r}")
        return [r["corpus_id"] for r in self.rank(query, documents) if r["bin"] >= min_bin]

    # --- persistence ----------------------------------------------------------------------------------------
    def save(self, path) -> Path:
        """Write ``model.safetensors`` and ``eareranker_config.json`` into the folder ``path``."""
        from safetensors.torch import save_file

        self._check_fitted()
        p = Path(path)
        p.mkdir(parents=True, exist_ok=True)
        params = {k: v for k, v in self.get_params().items() if k != "encode_fn"}
        params["bin_edges"] = list(map(float, params["bin_edges"]))
        cfg = {"format": "neurips25.eareranker/1", "params": params, "d_in": self.d_in_,
               "rubric": self.rubric_.get_config()}
        (p / _CONFIG).write_text(json.dumps(cfg, indent=2))
        save_file({k: v.contiguous() for k, v in self.model_.state_dict().items()}, str(p / _WEIGHTS))
        return p

    @classmethod
    def load(cls, path, encode_fn=None) -> EARerankerEstimator:
        """Rebuild a fitted estimator from :meth:`save`'s folder (no pickle)."""
        from safetensors.torch import load_file

        p = Path(path)
        if not (p / _CONFIG).is_file() or not (p / _WEIGHTS).is_file():
            raise FileNotFoundError(f"`path` must be a folder written by save() holding {_CONFIG} and {_WEIGHTS}; "
                                    f"got {str(path)!r}")
        cfg = json.loads((p / _CONFIG).read_text())
        if cfg.get("format") != "neurips25.eareranker/1":
            raise ValueError(f"{p / _CONFIG} is not an EAReranker config (format {cfg.get('format')!r})")
        est = cls(**cfg["params"], encode_fn=encode_fn)
        est.rubric_ = AdequacyRubric(**cfg["rubric"])
        est.d_in_ = int(cfg["d_in"])
        est.model_ = est._build(est.d_in_, est.rubric_.n_bins)
        est.model_.load_state_dict(load_file(str(p / _WEIGHTS)))
        est.model_.eval()
        return est
