"""Baselines EAReranker is compared against.

- :class:`CosineBaseline`: relevance only. cos(q, x) mapped to an adequacy score by isotonic regression fitted
  on training pairs (a monotone map, i.e. fitted bin thresholds on the cosine); ranks by cosine.
- :func:`finetune_cross_encoder`: the plaintext reranker, a sentence-transformers ``CrossEncoder`` whose
  encoder starts from the shipped all-MiniLM-L6-v2 weights (a fresh 1-logit head), fine-tuned on the same
  text pairs with a binary cross-entropy on ``score / 100``; optionally in bf16 mixed precision (the head in
  fp32), with :func:`cross_encoder_scores` scoring pairs the same way.
- The MLP on ``[q, x, q*x, |q-x|]`` is ``EARerankerEstimator(architecture="mlp")``.
"""

from __future__ import annotations

import numpy as np

from neurips25.eareranker.checks import as_embeddings, as_scores, positive_int
from neurips25.eareranker.rubric import AdequacyRubric


class CosineBaseline:
    """cos(q, x) -> adequacy through an isotonic (monotone) map fitted on training pairs."""

    def __init__(self, rubric: AdequacyRubric | None = None):
        self.rubric = rubric or AdequacyRubric()

    @staticmethod
    def cosine(query_emb, doc_emb) -> np.ndarray:
        q, x = as_embeddings(query_emb, "query_emb"), as_embeddings(doc_emb, "doc_emb")
        if q.shape != x.shape:
            raise ValueError(f"`query_emb` and `doc_emb` must have the same shape; got {q.shape} and {x.shape}")
        num = np.sum(q * x, axis=1)
        return num / np.maximum(np.linalg.norm(q, axis=1) * np.linalg.norm(x, axis=1), 1e-12)

    def fit(self, query_emb, doc_emb, scores):
        from sklearn.isotonic import IsotonicRegression

        c = self.cosine(query_emb, doc_emb)
        self.iso_ = IsotonicRegression(y_min=0, y_max=100, out_of_bounds="clip").fit(c, as_scores(scores, "scores",
                                                                                                  c.size))
        return self

    def predict_score(self, query_emb, doc_emb) -> np.ndarray:
        return self.iso_.predict(self.cosine(query_emb, doc_emb))

    def predict_bin(self, query_emb, doc_emb) -> np.ndarray:
        return self.rubric.to_bin(self.predict_score(query_emb, doc_emb))


class _MixedPrecision:
    """``with _MixedPrecision(model, on):`` runs the block under CPU bf16 autocast (matrix products in bfloat16,
    weights, norms and softmax in float32), with the model's 1-logit ``classifier`` head recomputed in float32 so
    that near-equal scores are not rounded to ties (bfloat16 keeps ~3 significant digits). A no-op when ``on``
    is false (``on="auto"``: true only where bf16 is faster than float32 on this CPU, see
    :func:`neurips25.pretrained.precision.choose_cpu_dtype`); the hook is removed on exit, so the model is a
    plain float32 model outside the block."""

    def __init__(self, model, on):
        import torch

        from neurips25.pretrained.precision import cpu_autocast_bf16

        # "auto": bf16 only where this CPU runs it faster than float32 (probed once per process, logged)
        self.torch, self.model, self.on, self.handle = torch, model, cpu_autocast_bf16(on), None
        self.autocast = torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.on)

    def _fp32_head(self, module, inputs, output):
        with self.torch.autocast("cpu", enabled=False):
            return self.torch.nn.functional.linear(inputs[0].float(), module.weight.float(),
                                                   None if module.bias is None else module.bias.float())

    def __enter__(self):
        head = getattr(self.model, "classifier", None)
        if self.on and isinstance(head, self.torch.nn.Linear):
            self.handle = head.register_forward_hook(self._fp32_head)
        self.autocast.__enter__()
        return self

    def __exit__(self, *exc):
        self.autocast.__exit__(*exc)
        if self.handle is not None:
            self.handle.remove()
        return False


#: the precision each cross-encoder call of this process resolved ``bf16="auto"`` to (``provenance_facts``)
_PRECISION: dict = {}


def resolve_bf16(bf16) -> bool:
    """``True`` / ``False`` as given; ``"auto"`` -> ``choose_cpu_dtype("auto") == bfloat16`` (bf16 only where this
    CPU runs it faster than float32: a one-off probe per process, logged), recorded for the run's provenance."""
    from neurips25.pretrained.precision import choose_cpu_dtype

    if isinstance(bf16, str):
        if bf16 != "auto":
            raise ValueError(f"`bf16` must be True, False or 'auto'; got {bf16!r}")
        import torch

        on = choose_cpu_dtype("auto") == torch.bfloat16
        _PRECISION.update(requested="auto", bf16_autocast=on, reason="choose_cpu_dtype('auto') probe: bfloat16 "
                          + ("faster" if on else "not faster") + " than float32 on this CPU")
        return on
    if isinstance(bf16, (bool, np.bool_)):
        _PRECISION.setdefault("requested", bool(bf16))
        _PRECISION.setdefault("bf16_autocast", bool(bf16))
        return bool(bf16)
    raise ValueError(f"`bf16` must be True, False or 'auto'; got {bf16!r}")


def provenance_facts() -> dict | None:
    """What the cross-encoder's ``bf16`` resolved to in this process (read into result.json's provenance)."""
    return dict(cross_encoder_precision=dict(_PRECISION)) if _PRECISION else None


def cross_encoder_scores(ce, queries, docs, *, batch_size: int = 32, bf16="auto") -> np.ndarray:
    """Adequacy / 100 (sigmoid of the logit) of a ``CrossEncoder`` on text pairs, as ``ce.predict`` returns it,
    computed in bf16 mixed precision when ``bf16`` (the head in float32; see :func:`finetune_cross_encoder`); the
    default ``"auto"`` does so only where this CPU runs bfloat16 faster than float32.

    ``queries[i]``, ``docs[i]`` are pair i's texts; returns a float64 array of shape (n,). Pairs are truncated to
    ``ce.max_seq_length`` word pieces, as in training."""
    return 1.0 / (1.0 + np.exp(-_logits(ce, list(queries), list(docs), batch_size, resolve_bf16(bf16))))


def _logits(ce, queries, docs, batch_size: int, bf16: bool) -> np.ndarray:
    import torch

    if len(docs) != len(queries):
        raise ValueError(f"`queries` and `docs` must have the same length; got {len(queries)} and {len(docs)}")
    bs = positive_int(batch_size, "batch_size")
    model, tok = ce.model, ce.processor
    was_training = model.training
    model.eval()
    out = []
    with torch.no_grad(), _MixedPrecision(model, bf16):
        for i in range(0, len(queries), bs):
            f = tok(queries[i:i + bs], docs[i:i + bs], truncation=True, max_length=ce.max_seq_length, padding=True,
                    return_tensors="pt")
            out.append(model(**f).logits.reshape(-1).float())
    model.train(was_training)
    return torch.cat(out).numpy().astype(np.float64) if out else np.zeros(0)


def finetune_cross_encoder(queries, docs, scores, *, max_length: int = 256, epochs: int = 1, batch_size: int = 16,
                           lr: float = 4e-5, seed: int = 0, model_path=None, progress=None, val_queries=None,
                           val_docs=None, val_scores=None, val_groups=None, patience: int = 1, bf16="auto",
                           evals_per_epoch: int = 1):
    """Fine-tune a MiniLM ``CrossEncoder`` on text pairs; returns the ``CrossEncoder`` (``predict``/``rank``).

    ``queries[i]``, ``docs[i]`` are the texts of pair i and ``scores[i]`` its adequacy in [0, 100]; the head is
    trained on ``score / 100`` with BCE-with-logits, so ``predict`` (sigmoid) returns adequacy / 100.

    With validation pairs (``val_queries``, ``val_docs``, ``val_scores``) training runs up to ``epochs`` epochs,
    evaluates the validation criterion ``evals_per_epoch`` times an epoch (at equal step intervals, the last at
    the epoch's end), stops after ``patience`` evaluations without improvement and keeps the best weights ("to
    convergence"); with one evaluation an epoch, ``patience`` counts epochs. The criterion is the validation
    BCE (lower is better), or, when ``val_groups`` (one query id per validation pair) is given, the mean
    per-query Spearman correlation between predicted and true scores (higher is better: the ranking quality a
    reranker is compared on). The criterion's curve is ``ce.validation_curve_`` (one value per evaluation), the
    BCE's ``ce.validation_bce_``; the best evaluation is ``ce.best_epoch_`` (1-based, in evaluations: epochs
    when ``evals_per_epoch`` is 1) and ``ce.converged_`` says whether training stopped because the criterion
    stopped improving (rather than at the epoch cap): ``patience`` evaluations without improvement before the
    cap. The learning rate warms up over the first tenth of the first epoch, then stays constant; the optimiser
    is AdamW (PyTorch's fused implementation).

    ``bf16="auto"`` (the default) uses it only where this CPU runs bfloat16 faster than float32
    (:func:`neurips25.pretrained.precision.choose_cpu_dtype`: a cached probe, logged; the choice is in
    ``ce.bf16_`` and in the run's provenance). ``bf16=True`` trains and validates in bfloat16 mixed precision on
    the CPU (``torch.autocast``: matrix products in bfloat16, master weights, optimiser state, norms and softmax
    in float32; the head in float32), about 1.6x faster per step on CPUs with AVX512-BF16 and 13-46x slower on
    CPUs without native bf16; score such a model with ``cross_encoder_scores(ce, ..., bf16=ce.bf16_)`` to rank
    as during validation.
    """
    import torch

    from neurips25.extras import require

    st = require("sentence_transformers", "lm")
    from neurips25.pretrained import minilm_dir

    queries, docs = list(queries), list(docs)
    s = as_scores(scores, "scores", len(queries))
    if len(docs) != len(queries):
        raise ValueError(f"`queries` and `docs` must have the same length; got {len(queries)} and {len(docs)}")
    has_val = val_queries is not None
    if has_val:
        val_queries, val_docs = list(val_queries), list(val_docs)
        vs = as_scores(val_scores, "val_scores", len(val_queries))
        if len(val_docs) != len(val_queries):
            raise ValueError(f"`val_queries` and `val_docs` must have the same length; got {len(val_queries)} and "
                             f"{len(val_docs)}")
        if val_groups is not None:
            val_groups = np.asarray(val_groups)
            if val_groups.shape != (len(val_queries),):
                raise ValueError(f"`val_groups` must hold one query id per validation pair ({len(val_queries)}); "
                                 f"got shape {val_groups.shape}")
    epochs, patience = positive_int(epochs, "epochs"), positive_int(patience, "patience")
    evals_per_epoch = positive_int(evals_per_epoch, "evals_per_epoch")
    bf16 = resolve_bf16(bf16)
    torch.manual_seed(positive_int(seed, "seed", 0))
    ce = st.CrossEncoder(str(model_path or minilm_dir()), num_labels=1, max_length=positive_int(max_length,
                         "max_length", 8), device="cpu")
    model, tok = ce.model, ce.processor
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01, fused=True)
    n = len(queries)
    per_epoch = int(np.ceil(n / batch_size))
    warm = max(1, per_epoch // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda i: min(1.0, (i + 1) / warm))
    y = torch.as_tensor(s / 100.0, dtype=torch.float32)
    gen = np.random.default_rng(seed)

    def feats(qs, ds):
        return tok(qs, ds, truncation=True, max_length=max_length, padding=True, return_tensors="pt")

    def val_logits() -> torch.Tensor:
        return torch.from_numpy(_logits(ce, val_queries, val_docs, 32, bf16)).float()

    from neurips25.eareranker.metrics import spearman_within

    n_evals = epochs * evals_per_epoch
    ce.validation_curve_, ce.validation_bce_, ce.best_epoch_, ce.converged_ = [], [], n_evals, False
    ce.bf16_ = bf16
    sign = -1.0 if val_groups is not None else 1.0  # the criterion, as "lower is better"
    best, best_state, stale = np.inf, None, 0

    def evaluate() -> bool:
        """One validation checkpoint; True when training should stop (patience exhausted)."""
        nonlocal best, best_state, stale
        lg = val_logits()
        bce = torch.nn.functional.binary_cross_entropy_with_logits(
            lg, torch.as_tensor(vs / 100.0, dtype=torch.float32)).item()
        v = bce if val_groups is None else spearman_within(lg.numpy().astype(np.float64), vs, val_groups)
        ce.validation_bce_.append(bce)
        ce.validation_curve_.append(v)
        if sign * v < best - 1e-4:
            best, stale, ce.best_epoch_ = sign * v, 0, len(ce.validation_curve_)
            best_state = {k: t.detach().clone() for k, t in model.state_dict().items()}
            return False
        stale += 1
        return stale >= patience

    stop = False
    for ep in range(epochs):
        perm = gen.permutation(n)
        batches = [perm[i:i + batch_size] for i in range(0, n, batch_size)]
        # evaluation points inside the epoch: after these batch counts (the last one at the epoch's end)
        marks = {int(np.ceil(len(batches) * (j + 1) / evals_per_epoch)) for j in range(evals_per_epoch)}
        model.train()
        for b, idx in enumerate(progress(batches, desc=f"cross-encoder epoch {ep + 1}") if progress else batches):
            with _MixedPrecision(model, bf16):
                logits = model(**feats([queries[i] for i in idx], [docs[i] for i in idx])).logits.reshape(-1)
            loss = torch.nn.functional.binary_cross_entropy_with_logits(logits.float(), y[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            if has_val and b + 1 in marks:
                stop = evaluate()
                model.train()
                if stop:
                    ce.converged_ = True
                    break
        if stop:
            break
    if best_state is not None:
        model.load_state_dict(best_state)
    model.eval()
    return ce
