"""The EAReranker network: a causal pre-LN decoder over expanded embedding tokens, with bin and score heads.

Stated by the paper: a decoder-only transformer predicts adequacy from embedding vectors alone. Reconstructed
(configurable): the token layout ``[expanded tokens..., READ]`` with a causal mask (the READ token, last, sees
every token), the depth/width, and the two heads read at the READ position: ``n_bins`` bin logits and a score
``100 * sigmoid(.)`` on the rubric's 0-100 scale.
"""

from __future__ import annotations

import torch
from torch import nn

from neurips25.eareranker.checks import positive_int
from neurips25.eareranker.expansion import EmbeddingExpansion


class EAReranker(nn.Module):
    """Adequacy of a (query, document) pair from their embeddings only.

    Parameters
    ----------
    d_in : int
        Embedding dimension.
    n_chunks : int, default 8
        T of :class:`EmbeddingExpansion` (1 = one token per vector).
    d_model, n_layers, n_heads, dim_feedforward, dropout
        Decoder size (pre-LN ``nn.TransformerEncoderLayer`` blocks under a causal mask).
    n_bins : int, default 6
    interactions : bool, default True
        q*x and |q-x| segments in the expansion.
    expansion : {"lift", "chunk"}, default "lift"
        :class:`EmbeddingExpansion` mode (whole-vector lift, or per-chunk lift).

    Shapes
    ------
    ``forward(q, x)``: (B, d), (B, d) -> (bin logits (B, n_bins), score (B,) in [0, 100]).

    Examples
    --------
    >>> m = EAReranker(384, n_chunks=4, d_model=32, n_layers=1, n_heads=2)
    >>> logits, score = m(torch.randn(3, 384), torch.randn(3, 384))
    >>> tuple(logits.shape), tuple(score.shape)
    ((3, 6), (3,))
    """

    def __init__(self, d_in: int, n_chunks: int = 8, d_model: int = 128, n_layers: int = 2, n_heads: int = 4,
                 dim_feedforward: int = 256, dropout: float = 0.1, n_bins: int = 6, interactions: bool = True,
                 expansion: str = "lift"):
        super().__init__()
        d_model, n_heads = positive_int(d_model, "d_model"), positive_int(n_heads, "n_heads")
        if d_model % n_heads:
            raise ValueError(f"`n_heads` must divide d_model={d_model}; got n_heads={n_heads}")
        self.expand = EmbeddingExpansion(d_in, n_chunks, d_model, interactions, expansion)
        self.read = nn.Parameter(torch.randn(1, 1, d_model) * 0.02)
        layer = nn.TransformerEncoderLayer(d_model, n_heads, positive_int(dim_feedforward, "dim_feedforward"),
                                           float(dropout), batch_first=True, norm_first=True, activation="gelu")
        self.decoder = nn.TransformerEncoder(layer, positive_int(n_layers, "n_layers"), enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d_model)
        self.bin_head = nn.Linear(d_model, positive_int(n_bins, "n_bins", 2))
        self.score_head = nn.Linear(d_model, 1)
        n = self.expand.n_tokens + 1
        self.register_buffer("causal_mask", torch.triu(torch.full((n, n), float("-inf")), diagonal=1),
                             persistent=False)

    def forward(self, q: torch.Tensor, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        tokens = self.expand(q, x)  # (B, S*T, d_model)
        h = torch.cat([tokens, self.read.expand(tokens.shape[0], -1, -1)], dim=1)  # READ last
        h = self.decoder(h, mask=self.causal_mask, is_causal=True)
        r = self.norm(h[:, -1])  # (B, d_model) at READ
        return self.bin_head(r), 100.0 * torch.sigmoid(self.score_head(r).squeeze(-1))


class PairMLP(nn.Module):
    """Baseline: an MLP on ``[q, x, q*x, |q-x|]`` with the same two heads (sized to match EAReranker)."""

    def __init__(self, d_in: int, hidden: int = 256, n_layers: int = 2, dropout: float = 0.1, n_bins: int = 6):
        super().__init__()
        layers, width = [], 4 * positive_int(d_in, "d_in")
        for _ in range(positive_int(n_layers, "n_layers")):
            layers += [nn.Linear(width, hidden), nn.GELU(), nn.Dropout(float(dropout))]
            width = hidden
        self.body = nn.Sequential(*layers)
        self.bin_head = nn.Linear(hidden, positive_int(n_bins, "n_bins", 2))
        self.score_head = nn.Linear(hidden, 1)

    def forward(self, q: torch.Tensor, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        r = self.body(torch.cat([q, x, q * x, (q - x).abs()], dim=1))
        return self.bin_head(r), 100.0 * torch.sigmoid(self.score_head(r).squeeze(-1))
