"""Baselines EAReranker is compared against.

- :class:`CosineBaseline`: relevance only. cos(q, x) mapped to an adequacy score by isotonic regression fitted
  on training pairs (a monotone map, i.e. fitted bin thresholds on the cosine); ranks by cosine.
- :func:`finetune_cross_encoder`: the plaintext reranker, a sentence-transformers ``CrossEncoder`` whose
  encoder starts from the shipped all-MiniLM-L6-v2 weights (a fresh 1-logit head), fine-tuned on the same
  text pairs with a binary cross-entropy on ``score / 100``.
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


def finetune_cross_encoder(queries, docs, scores, *, max_length: int = 256, epochs: int = 1, batch_size: int = 16,
                           lr: float = 4e-5, seed: int = 0, model_path=None, progress=None):
    """Fine-tune a MiniLM ``CrossEncoder`` on text pairs; returns the ``CrossEncoder`` (``predict``/``rank``).

    ``queries[i]``, ``docs[i]`` are the texts of pair i and ``scores[i]`` its adequacy in [0, 100]; the head is
    trained on ``score / 100`` with BCE-with-logits, so ``predict`` (sigmoid) returns adequacy / 100.
    """
    import torch

    from neurips25.extras import require

    st = require("sentence_transformers", "lm")
    from neurips25.pretrained import minilm_dir

    queries, docs = list(queries), list(docs)
    s = as_scores(scores, "scores", len(queries))
    if len(docs) != len(queries):
        raise ValueError(f"`queries` and `docs` must have the same length; got {len(queries)} and {len(docs)}")
    torch.manual_seed(positive_int(seed, "seed", 0))
    ce = st.CrossEncoder(str(model_path or minilm_dir()), num_labels=1, max_length=positive_int(max_length,
                         "max_length", 8), device="cpu")
    model, tok = ce.model, ce.processor
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    n = len(queries)
    steps = positive_int(epochs, "epochs") * int(np.ceil(n / batch_size))
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda i: min(1.0, (i + 1) / max(1, steps // 10))
                                              * max(0.0, 1 - i / steps))
    y = torch.as_tensor(s / 100.0, dtype=torch.float32)
    gen = np.random.default_rng(seed)
    batches = [perm[i:i + batch_size] for _ in range(epochs) for perm in [gen.permutation(n)]
               for i in range(0, n, batch_size)]
    model.train()
    for idx in (progress(batches, desc="cross-encoder fine-tune") if progress else batches):
        feats = tok([queries[i] for i in idx], [docs[i] for i in idx], truncation=True, max_length=max_length,
                    padding=True, return_tensors="pt")
        logits = model(**feats).logits.squeeze(-1)
        loss = torch.nn.functional.binary_cross_entropy_with_logits(logits, y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
    model.eval()
    return ce
