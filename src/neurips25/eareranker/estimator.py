"""`EARerankerEstimator`: fit / predict / rank / filter around the :class:`EAReranker` network.

scikit-learn style (``BaseEstimator``: hyper-parameters in ``__init__``, checked in ``fit``) with the shapes
of sentence-transformers' ``CrossEncoder``: ``predict(pairs)`` scores text pairs and ``rank(query, documents,
top_k)`` returns ``[{"corpus_id", "score", "bin"}, ...]`` best first, so it can replace a cross-encoder in a
RAG pipeline (``batch_size`` and ``show_progress_bar`` are accepted as there). Given embeddings (what a vector
store already holds) no text is needed; given text, the ``encode_fn`` (default: the shipped MiniLM) embeds it.

Training budget: ``max_steps`` optimisation steps (not epochs), with early stopping on a held-out
``validation_fraction`` of the pairs (the best weights are kept), so a 500-pair and a 50,000-pair data set both
train. ``fit`` warns when the fitted model's predictions collapse (their spread far below the targets') and
when the scores look like a 0-1 scale while the rubric's bins span 0-100.

One decision: the bin head picks the bin and the score head places the pair inside that bin's range, so
``predict_score``, ``predict_bin``, ``rank`` and ``filter`` always agree (``rubric_.to_bin(score) == bin``;
sorting by score sorts by bin first; ``filter`` keeps a prefix of ``rank``).
"""

from __future__ import annotations

import json
import numbers
import warnings
from pathlib import Path

import numpy as np
import torch
from sklearn.base import BaseEstimator

from neurips25.eareranker.checks import as_embeddings, as_scores, nonneg_real, positive_int, unit_interval
from neurips25.eareranker.loss import BinAwareLoss
from neurips25.eareranker.metrics import spearman_within
from neurips25.eareranker.model import EAReranker, PairMLP
from neurips25.eareranker.rubric import DEFAULT_EDGES, AdequacyRubric

_CONFIG = "eareranker_config.json"
_WEIGHTS = "model.safetensors"
_FORMAT = "neurips25.eareranker/3"
COLLAPSE_RATIO = 0.25  # fit warns when std(predicted score) < COLLAPSE_RATIO * std(target score)


class EARerankerEstimator(BaseEstimator):
    """Embedding-only adequacy reranker (EAReranker, NeurIPS 2025; internals reconstructed, see docs).

    Parameters
    ----------
    n_chunks : int, default 4
        Expansion tokens T per vector (1 = no expansion; must divide d for ``expansion="chunk"``).
    expansion : {"lift", "chunk"}, default "lift"
        Whole-vector lift to T tokens, or T chunks of d/T features (see :class:`EmbeddingExpansion`).
    d_model, n_layers, n_heads, dim_feedforward, dropout
        Decoder size (dropout 0 by default: early stopping regularises, and dropout costs a fifth of a step).
    interactions : bool, default True
        Expansion adds q*x and |q-x| segments.
    similarity_path : bool, default True
        A calibrated-cosine and linear path beside the decoder that both heads start from (see
        :class:`~neurips25.eareranker.model.EAReranker`); the decoder learns the residual. Ignored by
        ``architecture="mlp"``.
    architecture : {"decoder", "mlp"}, default "decoder"
        "mlp" swaps the decoder for :class:`~neurips25.eareranker.model.PairMLP` (the baseline).
    mlp_hidden : int, default 256
        Hidden width of the "mlp" architecture.
    bin_edges : sequence, default (0, 20, 40, 60, 75, 90, 100)
        Rubric bins (see :class:`AdequacyRubric`).
    beta, ordinal_weight, huber_weight : float
        :class:`BinAwareLoss` (``beta=0, ordinal_weight=0`` is plain cross-entropy).
    max_steps : int, default 3000
        Training budget in optimisation steps (AdamW; linear warm-up over min(100, max_steps / 10, one epoch)
        steps, then a constant learning rate; early stopping usually ends training before the budget).
    epochs : int, optional
        When set, the budget is ``epochs`` passes over the data instead of ``max_steps`` (the old form).
    early_stopping : bool, default True
        Hold out ``validation_fraction`` of the pairs (at least 32 of them; needs >= 64 pairs), evaluate the
        validation loss every ``eval_every`` steps, stop after ``n_iter_no_change`` evaluations without a
        relative improvement of ``tol`` and keep the best weights. Evaluations inside the warm-up are recorded
        but never chosen and never count towards the patience (a checkpoint taken while the learning rate is
        still rising is not a trained model).
    validation_fraction, n_iter_no_change, eval_every, tol
        Early stopping (see above).
    batch_size, lr, weight_decay
        Optimiser settings.
    seed : int, default 0
        Drives initialisation, the validation split and batch order: the same seed gives the same model.
    encode_fn : callable, optional
        ``list[str] -> (n, d) array``, used when text is passed (default: MiniLM, loaded on first use).
        :class:`MiniLMEncoder` / :class:`HashedBowEncoder` settings are saved by :meth:`save`.

    Attributes
    ----------
    model_ : nn.Module, rubric_ : AdequacyRubric, d_in_ : int, loss_curve_ : list of float (training loss per
    evaluation interval), validation_curve_ : list of float, n_steps_ : int (steps taken), best_step_ : int,
    warmup_steps_ : int (no checkpoint is kept at or before it)

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> Q, D = rng.normal(size=(64, 16)), rng.normal(size=(64, 16))
    >>> s = 100 / (1 + np.exp(-(Q * D).sum(1)))
    >>> est = EARerankerEstimator(n_chunks=4, d_model=16, n_layers=1, n_heads=2, max_steps=20).fit(Q, D, s)
    >>> [r["corpus_id"] for r in est.rank(Q[0], D[:5], top_k=2)] == list(np.argsort(-est.predict_score(
    ...     np.repeat(Q[:1], 5, 0), D[:5]), kind="stable")[:2])
    True
    """

    def __init__(self, n_chunks: int = 4, expansion: str = "lift", d_model: int = 64, n_layers: int = 2,
                 n_heads: int = 4, dim_feedforward: int = 128, dropout: float = 0.0, interactions: bool = True,
                 similarity_path: bool = True, architecture: str = "decoder", mlp_hidden: int = 256,
                 bin_edges=DEFAULT_EDGES, beta: float = 0.5,
                 ordinal_weight: float = 0.5, huber_weight: float = 1.0, max_steps: int = 3000, epochs=None,
                 early_stopping: bool = True, validation_fraction: float = 0.1, n_iter_no_change: int = 5,
                 eval_every: int = 25, tol: float = 1e-3, batch_size: int = 128, lr: float = 5e-4,
                 weight_decay: float = 1e-2, seed: int = 0, encode_fn=None):
        self.n_chunks = n_chunks
        self.expansion = expansion
        self.d_model = d_model
        self.n_layers = n_layers
        self.n_heads = n_heads
        self.dim_feedforward = dim_feedforward
        self.dropout = dropout
        self.interactions = interactions
        self.similarity_path = similarity_path
        self.architecture = architecture
        self.mlp_hidden = mlp_hidden
        self.bin_edges = bin_edges
        self.beta = beta
        self.ordinal_weight = ordinal_weight
        self.huber_weight = huber_weight
        self.max_steps = max_steps
        self.epochs = epochs
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.eval_every = eval_every
        self.tol = tol
        self.batch_size = batch_size
        self.lr = lr
        self.weight_decay = weight_decay
        self.seed = seed
        self.encode_fn = encode_fn

    # --- construction ---------------------------------------------------------------------------------------
    def _build(self, d_in: int, n_bins: int):
        unit_interval(self.dropout, "dropout")
        if self.architecture == "mlp":
            return PairMLP(d_in, hidden=self.mlp_hidden, n_layers=self.n_layers, dropout=self.dropout, n_bins=n_bins)
        if self.architecture != "decoder":
            raise ValueError(f"`architecture` must be 'decoder' or 'mlp'; got {self.architecture!r}")
        if self.expansion not in ("lift", "chunk"):
            raise ValueError(f"`expansion` must be 'lift' or 'chunk'; got {self.expansion!r}")
        if self.expansion == "chunk" and d_in % positive_int(self.n_chunks, "n_chunks"):
            raise ValueError(f"`n_chunks` must divide the embedding dimension d={d_in}; got n_chunks={self.n_chunks}")
        if not isinstance(self.similarity_path, (bool, np.bool_)):
            raise ValueError(f"`similarity_path` must be True or False; got {self.similarity_path!r}")
        edges = getattr(self, "rubric_", None)
        edges = edges.bin_edges if edges is not None and edges.n_bins == n_bins else None
        return EAReranker(d_in, self.n_chunks, self.d_model, self.n_layers, self.n_heads, self.dim_feedforward,
                          self.dropout, n_bins, self.interactions, self.expansion, bool(self.similarity_path), edges)

    def n_parameters(self, d_in: int, n_bins: int = 6) -> int:
        """Parameter count of the network these settings build for embeddings of dimension ``d_in``."""
        return sum(p.numel() for p in self._build(positive_int(d_in, "d_in"), n_bins).parameters())

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
    def _budget(self, n_train: int, bs: int) -> int:
        if self.epochs is not None:
            return positive_int(self.epochs, "epochs") * int(np.ceil(n_train / bs))
        return positive_int(self.max_steps, "max_steps")

    def fit(self, query_emb, doc_emb, scores, *, val_query_emb=None, val_doc_emb=None, val_scores=None,
            val_groups=None):
        """Train on paired rows: ``query_emb[i]``, ``doc_emb[i]`` (n, d) and adequacy ``scores[i]`` in [0, 100].

        With an external validation set (``val_query_emb``, ``val_doc_emb``, ``val_scores``) every pair trains
        (no hold-out) and the checkpoints are chosen on that set instead, every ``eval_every`` steps, stopping
        after ``n_iter_no_change`` evaluations without improvement, best weights kept: by its loss, or, when
        ``val_groups`` (one query id per validation pair) is given, by its mean per-query Spearman correlation
        between predicted and true scores (an improvement must exceed 1e-4), the rule ``finetune_cross_encoder``
        applies per epoch.
        """
        q, x = self._check_pairs(query_emb, doc_emb, fitted=False)
        s = as_scores(scores, "scores", q.shape[0])
        ext = val_query_emb is not None or val_doc_emb is not None or val_scores is not None
        if ext:
            if val_query_emb is None or val_doc_emb is None or val_scores is None:
                raise ValueError("`val_query_emb`, `val_doc_emb` and `val_scores` must be given together")
            vq, vx = self._check_pairs(val_query_emb, val_doc_emb, fitted=False)
            if vq.shape[1] != q.shape[1]:
                raise ValueError(f"`val_query_emb` must have the training embeddings' dimension {q.shape[1]}; got "
                                 f"{vq.shape[1]}")
            vs = as_scores(val_scores, "val_scores", vq.shape[0])
            if val_groups is not None:
                val_groups = np.asarray(val_groups)
                if val_groups.shape != (vq.shape[0],):
                    raise ValueError(f"`val_groups` must hold one query id per validation pair ({vq.shape[0]}); "
                                     f"got shape {val_groups.shape}")
        elif val_groups is not None:
            raise ValueError("`val_groups` needs `val_query_emb`, `val_doc_emb` and `val_scores`")
        self.rubric_ = AdequacyRubric(bin_edges=self.bin_edges)
        bs = positive_int(self.batch_size, "batch_size")
        lr, wd = nonneg_real(self.lr, "lr"), nonneg_real(self.weight_decay, "weight_decay")
        seed = positive_int(self.seed, "seed", 0)
        every, patience = positive_int(self.eval_every, "eval_every"), positive_int(self.n_iter_no_change,
                                                                                    "n_iter_no_change")
        tol = nonneg_real(self.tol, "tol")
        vf = nonneg_real(self.validation_fraction, "validation_fraction")
        if not vf < 1:
            raise ValueError(f"`validation_fraction` must be in [0, 1); got {self.validation_fraction!r}")
        bins = self.rubric_.to_bin(s)
        self._warn_scale(s, bins)
        gen = torch.Generator().manual_seed(seed)
        torch.manual_seed(seed)
        n = q.shape[0]
        n_val = max(32, int(round(vf * n))) if self.early_stopping and vf > 0 and n >= 64 and not ext else 0
        order = np.random.default_rng(seed).permutation(n)
        val, tr = np.sort(order[:n_val]), np.sort(order[n_val:])
        self.d_in_ = q.shape[1]
        self.model_ = self._build(self.d_in_, self.rubric_.n_bins)
        loss_fn = BinAwareLoss(np.bincount(bins[tr], minlength=self.rubric_.n_bins), self.beta, self.ordinal_weight,
                               self.huber_weight)
        opt = torch.optim.AdamW(self.model_.parameters(), lr=lr, weight_decay=wd)
        steps = self._budget(tr.size, bs)
        # linear warm-up over at most 100 steps, a tenth of the budget and one epoch, then constant: early stopping
        # decides the end (a longer warm-up let a large-d model overfit before its first eligible checkpoint)
        warm = max(1, min(100, steps // 10, int(np.ceil(tr.size / bs))))
        self.warmup_steps_ = warm
        if isinstance(self.model_, EAReranker) and self.model_.similarity_path:
            self.model_.calibrate_similarity(torch.from_numpy(q[tr]), torch.from_numpy(x[tr]),
                                             torch.as_tensor(s[tr], dtype=torch.float32))
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda i: min(1.0, (i + 1) / warm))
        Q, X = torch.from_numpy(q), torch.from_numpy(x)
        S, B = torch.as_tensor(s, dtype=torch.float32), torch.as_tensor(bins, dtype=torch.long)
        tr_t, val_t = torch.from_numpy(tr), torch.from_numpy(val)
        if ext:
            VQ, VX = torch.from_numpy(vq), torch.from_numpy(vx)
            VB, VS = torch.as_tensor(self.rubric_.to_bin(vs), dtype=torch.long), torch.as_tensor(vs,
                                                                                                  dtype=torch.float32)
        self.loss_curve_, self.validation_curve_ = [], []
        best, best_state, stale, self.best_step_ = np.inf, None, 0, 0
        perm, pos, total, count = tr_t[torch.randperm(tr.size, generator=gen)], 0, 0.0, 0
        self.model_.train()
        step = 0
        while step < steps:
            if pos >= tr.size:
                perm, pos = tr_t[torch.randperm(tr.size, generator=gen)], 0
            idx = perm[pos:pos + bs]
            pos += bs
            logits, pred = self.model_(Q[idx], X[idx])
            loss = loss_fn(logits, pred, B[idx], S[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            step += 1
            total, count = total + loss.item() * idx.numel(), count + idx.numel()
            if step % every == 0 or step == steps:
                self.loss_curve_.append(total / count)
                total, count = 0.0, 0
                if n_val or ext:
                    if not ext:
                        v = self._loss_on(loss_fn, Q[val_t], X[val_t], B[val_t], S[val_t])
                        better = v < best * (1 - tol)
                    elif val_groups is None:
                        v = self._loss_on(loss_fn, VQ, VX, VB, VS)
                        better = v < best * (1 - tol)
                    else:  # the ranking criterion (higher is better; tracked as its negative)
                        self.model_.eval()
                        v = spearman_within(self._decide(*self._forward(vq, vx))[1], vs, val_groups)
                        better = -v < best - 1e-4
                    self.validation_curve_.append(v)
                    if step <= warm:  # inside the warm-up: recorded, never a checkpoint, no patience spent
                        pass
                    elif better:
                        best, stale, self.best_step_ = (-v if ext and val_groups is not None else v), 0, step
                        best_state = {k: t.detach().clone() for k, t in self.model_.state_dict().items()}
                    else:
                        stale += 1
                        if stale >= patience:
                            break
                    self.model_.train()
        self.n_steps_ = step
        if best_state is not None:
            self.model_.load_state_dict(best_state)
        else:
            self.best_step_ = step
        self.model_.eval()
        self._warn_if_collapsed(q[tr], x[tr], s[tr])
        return self

    def _warn_scale(self, s: np.ndarray, bins: np.ndarray) -> None:
        """Warn, naming the scores' range, when they sit on another scale than the rubric's bins."""
        if not s.size:
            return
        edges = self.rubric_.bin_edges
        lo, hi, top = float(s.min()), float(s.max()), float(edges[-1])
        cap, scale = next(((c, name) for c, name in ((1.0, "0-1"), (5.0, "1-5 (Likert)"), (10.0, "0-10"))
                           if hi <= c), (None, None))
        used = np.unique(bins)
        if scale is not None and hi < 0.5 * top:
            counts = np.bincount(bins)
            warnings.warn(f"`scores` all lie in [0, {cap:g}] (observed [{lo:g}, {hi:g}]), a {scale} scale, but the "
                          f"rubric's bins span [{edges[0]:g}, {top:g}] (edges {edges.tolist()}): "
                          f"{counts.max() / bins.size:.0%} of the pairs fall in bin {int(counts.argmax())}. Rescale "
                          "the scores to 0-100 (e.g. (s - 1) * 25 for 1-5, s * 100 for 0-1) or pass bin_edges= on "
                          "the scores' scale", UserWarning, stacklevel=3)
        elif used.size == 1:
            warnings.warn(f"`scores` lie in [{lo:g}, {hi:g}]: every pair falls in bin {int(used[0])} of the rubric's "
                          f"edges {edges.tolist()}; the bin head has nothing to learn. Pass bin_edges= that split "
                          "the scores' range", UserWarning, stacklevel=3)

    @torch.no_grad()
    def _loss_on(self, loss_fn, q, x, b, s) -> float:
        self.model_.eval()
        total = 0.0
        for i in range(0, q.shape[0], 1024):
            logits, pred = self.model_(q[i:i + 1024], x[i:i + 1024])
            total += loss_fn(logits, pred, b[i:i + 1024], s[i:i + 1024]).item() * logits.shape[0]
        return total / q.shape[0]

    def _warn_if_collapsed(self, q, x, s) -> None:
        rows = np.random.default_rng(0).permutation(q.shape[0])[:4096]
        target = float(np.std(s[rows]))
        spread = float(np.std(self._decide(*self._forward(q[rows], x[rows]))[1]))
        self.prediction_spread_ = (spread, target)
        if target > 1e-6 and spread < COLLAPSE_RATIO * target:
            warnings.warn(f"EARerankerEstimator predictions collapsed: their standard deviation on the training "
                          f"pairs is {spread:.3g}, against {target:.3g} for the target scores (< {COLLAPSE_RATIO:g}x); "
                          f"the model learnt a near-constant scorer after {self.n_steps_} steps. Train longer "
                          "(max_steps=), change lr=, or check that the embeddings carry the signal", UserWarning,
                          stacklevel=3)

    # --- prediction on embeddings ---------------------------------------------------------------------------
    @torch.no_grad()
    def _forward(self, q, x, batch: int = 1024):
        logits, score = [], []
        for i in range(0, q.shape[0], batch):
            lg, sc = self.model_(torch.from_numpy(q[i:i + batch]), torch.from_numpy(x[i:i + batch]))
            logits.append(lg), score.append(sc)
        return torch.cat(logits).numpy(), torch.cat(score).numpy().astype(np.float64)

    def _decide(self, logits, raw):
        """The one decision: bin = the bin head's argmax; score = the score head kept inside that bin's range."""
        bins = np.argmax(logits, axis=1)
        edges = np.asarray(self.rubric_.bin_edges, dtype=np.float64)
        lo = edges[bins]
        hi = np.where(bins == self.rubric_.n_bins - 1, edges[-1], np.nextafter(edges[bins + 1], -np.inf))
        return bins, np.clip(raw, lo, hi)

    def _predict(self, query_emb, doc_emb, batch: int = 1024):
        q, x = self._check_pairs(query_emb, doc_emb, fitted=True)
        logits, raw = self._forward(q, x, batch)
        return logits, raw, *self._decide(logits, raw)

    def predict_score(self, query_emb, doc_emb) -> np.ndarray:
        """Predicted adequacy in [0, 100] of each pair, shape (n,): the score head placed inside the predicted bin.

        ``rubric_.to_bin(predict_score(...)) == predict_bin(...)``; :meth:`predict_raw_score` is the score head
        alone.
        """
        return self._predict(query_emb, doc_emb)[3]

    def predict_raw_score(self, query_emb, doc_emb) -> np.ndarray:
        """The score head's own output in [0, 100], shape (n,) (may fall outside the predicted bin)."""
        return self._predict(query_emb, doc_emb)[1]

    def predict_proba(self, query_emb, doc_emb) -> np.ndarray:
        """Predicted bin distribution of each pair (the bin head), shape (n, n_bins)."""
        logits = self._predict(query_emb, doc_emb)[0]
        e = np.exp(logits - logits.max(1, keepdims=True))
        return e / e.sum(1, keepdims=True)

    def predict_bin(self, query_emb, doc_emb) -> np.ndarray:
        """Most likely adequacy bin of each pair (the bin head), shape (n,)."""
        return self._predict(query_emb, doc_emb)[2]

    # --- CrossEncoder-shaped interface ----------------------------------------------------------------------
    def _encode(self, texts) -> np.ndarray:
        if self.encode_fn is None:
            missing = getattr(self, "_encoder_missing_", None)
            if missing:
                raise RuntimeError(f"this estimator was saved with a custom encode_fn ({missing}) that save() cannot "
                                   "store: pass encode_fn= to load() (or set est.encode_fn) before scoring text")
            from neurips25.eareranker.encoders import MiniLMEncoder

            self.encode_fn = MiniLMEncoder()
        return np.asarray(self.encode_fn(list(texts)), dtype=np.float32)

    @staticmethod
    def _batch(batch_size) -> int:
        return positive_int(batch_size, "batch_size")

    def predict(self, pairs, batch_size: int = 32, show_progress_bar: bool | None = None,
                convert_to_numpy: bool = True) -> np.ndarray:
        """Scores of ``[(query_text, doc_text), ...]`` (as ``CrossEncoder.predict``), embedding the texts.

        ``batch_size`` (pairs per forward pass) and ``show_progress_bar`` (ignored: scoring is one pass) are
        accepted so the call drops in where a ``CrossEncoder`` was.
        """
        bs = self._batch(batch_size)
        pairs = list(pairs)
        if not pairs or not all(isinstance(p, (tuple, list)) and len(p) == 2 and all(isinstance(t, str) for t in p)
                                for p in pairs):
            raise ValueError("`pairs` must be a non-empty list of (query_text, doc_text) string pairs")
        emb = self._encode([p[0] for p in pairs] + [p[1] for p in pairs])
        return self._predict(emb[:len(pairs)], emb[len(pairs):], bs)[3]

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

    def rank(self, query, documents, top_k: int | None = None, return_documents: bool = False,
             batch_size: int = 32, show_progress_bar: bool | None = None) -> list[dict]:
        """Documents sorted by predicted adequacy, best first: ``[{"corpus_id", "score", "bin"}, ...]``.

        ``query`` is a (d,) embedding or a string; ``documents`` an (m, d) array or a list of strings. ``score``
        and ``bin`` come from the one decision (see the module docstring): sorted by score is sorted by bin.
        ``batch_size`` and ``show_progress_bar`` are accepted as in ``CrossEncoder.rank``.
        """
        bs = self._batch(batch_size)
        if top_k is not None and (isinstance(top_k, bool) or not isinstance(top_k, numbers.Integral) or top_k < 1):
            raise ValueError(f"`top_k` must be a positive integer or None; got {top_k!r}")
        raw = documents
        q, x = self._query_docs(query, documents)
        _, _, bins, score = self._predict(q, x, bs)
        order = np.argsort(-score, kind="stable")
        if top_k is not None:
            order = order[: int(top_k)]
        out = [{"corpus_id": int(i), "score": float(score[i]), "bin": int(bins[i])} for i in order]
        if return_documents:
            for r in out:
                r["text"] = raw[r["corpus_id"]]
        return out

    def filter(self, query, documents, min_bin: int) -> list[int]:
        """Indices of documents whose predicted bin is >= ``min_bin``, best first: a prefix of :meth:`rank`."""
        self._check_fitted()
        if isinstance(min_bin, bool) or not isinstance(min_bin, numbers.Integral) or not (
                0 <= min_bin < self.rubric_.n_bins):
            raise ValueError(f"`min_bin` must be an integer in [0, {self.rubric_.n_bins - 1}]; got {min_bin!r}")
        return [r["corpus_id"] for r in self.rank(query, documents) if r["bin"] >= min_bin]

    # --- persistence ----------------------------------------------------------------------------------------
    def save(self, path) -> Path:
        """Write ``model.safetensors`` and ``eareranker_config.json`` into the folder ``path``.

        The config keeps the hyper-parameters, the rubric and the encoder's settings (``MiniLMEncoder`` /
        ``HashedBowEncoder``: its type and arguments), so :meth:`load` embeds text as at training time. A custom
        ``encode_fn`` cannot be stored: save warns, and the loaded estimator asks for ``encode_fn=``.
        """
        from safetensors.torch import save_file

        from neurips25.eareranker.encoders import encoder_config

        self._check_fitted()
        p = Path(path)
        params = {k: v for k, v in self.get_params().items() if k != "encode_fn"}
        params["bin_edges"] = list(map(float, params["bin_edges"]))
        enc = None if self.encode_fn is None else encoder_config(self.encode_fn)
        if self.encode_fn is not None and enc is None:
            warnings.warn(f"save(): the custom encode_fn {self.encode_fn!r} cannot be stored; pass encode_fn= to "
                          "load() before scoring text", UserWarning, stacklevel=2)
            enc = {"type": "custom", "repr": repr(self.encode_fn)[:200]}
        cfg = {"format": _FORMAT, "params": params, "d_in": self.d_in_, "rubric": self.rubric_.get_config(),
               "encoder": enc}
        p.mkdir(parents=True, exist_ok=True)
        (p / _CONFIG).write_text(json.dumps(cfg, indent=2))
        save_file({k: v.contiguous() for k, v in self.model_.state_dict().items()}, str(p / _WEIGHTS))
        return p

    @classmethod
    def load(cls, path, encode_fn=None) -> EARerankerEstimator:
        """Rebuild a fitted estimator from :meth:`save`'s folder (no pickle), with its saved encoder settings.

        ``encode_fn`` overrides the saved encoder.
        """
        from safetensors.torch import load_file

        from neurips25.eareranker.encoders import encoder_from_config

        p = Path(path)
        if not (p / _CONFIG).is_file() or not (p / _WEIGHTS).is_file():
            raise FileNotFoundError(f"`path` must be a folder written by save() holding {_CONFIG} and {_WEIGHTS}; "
                                    f"got {str(path)!r}")
        cfg = json.loads((p / _CONFIG).read_text())
        if cfg.get("format") not in (_FORMAT, "neurips25.eareranker/2", "neurips25.eareranker/1"):
            raise ValueError(f"{p / _CONFIG} is not an EAReranker config (format {cfg.get('format')!r})")
        params = dict(cfg["params"])
        if cfg["format"] == "neurips25.eareranker/1":  # written before the expansion modes: chunk layout
            params.setdefault("expansion", "chunk")
        if cfg["format"] != _FORMAT:  # written before the similarity path (issue #59)
            params.setdefault("similarity_path", False)
        enc_cfg = cfg.get("encoder")
        missing = None
        if encode_fn is None and enc_cfg is not None:
            if enc_cfg.get("type") == "custom":
                missing = enc_cfg.get("repr", "custom")
            else:
                encode_fn = encoder_from_config(enc_cfg)
        est = cls(**params, encode_fn=encode_fn)
        est._encoder_missing_ = missing
        est.rubric_ = AdequacyRubric(**cfg["rubric"])
        est.d_in_ = int(cfg["d_in"])
        est.model_ = est._build(est.d_in_, est.rubric_.n_bins)
        est.model_.load_state_dict(load_file(str(p / _WEIGHTS)))
        est.model_.eval()
        return est
