"""EAReranker: embedding-only adequacy assessment for retrieval-augmented generation (NeurIPS 2025).

"EAReranker: Efficient Embedding Adequacy Assessment for Retrieval Augmented Generation" (OpenReview
``mzxGGzeLCL``; authors not known here; no arXiv version or official code). A RAG pipeline should drop
documents that would mislead the generator. EAReranker scores the *adequacy* of a retrieved document for a
query (verifiability, coverage, completeness, structure -> a 0-100 score -> six bins) from the two embedding
vectors alone, with a small decoder-only transformer: no document text is needed at scoring time, so the
cost per pair is constant in document length, unlike a cross-encoder.

    tokens = Expand(q, x)             # each vector cut into T chunks, lifted to d_model (+ q*x, |q-x|)
    h      = CausalDecoder([tokens, READ])
    p(bin) = softmax(W_bin h_READ),   s_hat = 100 sigmoid(w_s . h_READ)
    L      = mean w_y CE + mu E_p|b - y| + lambda Huber(s_hat - s),   w_b ∝ (1/freq_b)^beta

Stated by the paper: the four dimensions, six bins, embedding-only decoder, "embedding dimension expansion",
"bin-aware weighted loss", constant memory, LACC@10 / @25. Reconstructed here (configurable, see
docs/eareranker.md): the rubric weights and bin edges, the expansion layout, the loss form, the LACC
definition (two readings) and the data (AdequacySynth; the paper's benchmarks are not known).

Example
-------
>>> import numpy as np
>>> from neurips25.eareranker import EARerankerEstimator
>>> rng = np.random.default_rng(0)
>>> Q, D = rng.normal(size=(64, 16)), rng.normal(size=(64, 16))
>>> est = EARerankerEstimator(n_chunks=4, d_model=16, n_layers=1, n_heads=2, max_steps=5)
>>> est = est.fit(Q, D, rng.uniform(0, 100, 64))
>>> len(est.rank(Q[0], D[:10], top_k=3))
3
"""

from neurips25.eareranker.baselines import CosineBaseline, cross_encoder_scores, finetune_cross_encoder
from neurips25.eareranker.data import AdequacyData, AdequacySynth
from neurips25.eareranker.encoders import HashedBowEncoder, MiniLMEncoder
from neurips25.eareranker.estimator import EARerankerEstimator
from neurips25.eareranker.expansion import EmbeddingExpansion
from neurips25.eareranker.loss import BinAwareLoss, bin_weights
from neurips25.eareranker.metrics import (
    bin_accuracy,
    lacc,
    macro_f1,
    ndcg_at_k,
    per_bin_f1,
    spearman,
    spearman_per_group,
    spearman_within,
)
from neurips25.eareranker.model import EAReranker, PairMLP
from neurips25.eareranker.rubric import AdequacyRubric

__all__ = [
    "AdequacyRubric", "EmbeddingExpansion", "EAReranker", "PairMLP", "BinAwareLoss", "bin_weights",
    "EARerankerEstimator", "AdequacySynth", "AdequacyData", "HashedBowEncoder", "MiniLMEncoder", "CosineBaseline",
    "finetune_cross_encoder", "cross_encoder_scores", "lacc", "bin_accuracy", "macro_f1", "per_bin_f1",
    "ndcg_at_k", "spearman", "spearman_per_group", "spearman_within",
]
