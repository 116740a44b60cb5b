"""Embedding dimension expansion: two embedding vectors -> a sequence of tokens a decoder can attend over.

Stated by the paper: "embedding dimension expansion". Reconstructed (configurable), two readings:

- ``mode="lift"`` (the literal reading, default): each whole d-dimensional vector is lifted by one linear map
  ``R^d -> R^{T * d_model}`` per segment and reshaped into T tokens, so every token sees the whole vector;
- ``mode="chunk"``: each vector is cut into ``n_chunks`` contiguous chunks of d / T features and every chunk is
  lifted by one ``Linear(d / T, d_model)`` per segment (shared by the chunks), so a token sees a slice.

A learned position embedding (token index) plus a segment embedding (query / document / q*x / |q-x|) is added.
With ``n_chunks=1`` both reduce to one token per vector: the ablation the reproduction compares against.
"""

from __future__ import annotations

import torch
from torch import nn

from neurips25.eareranker.checks import positive_int

SEGMENTS = ("query", "document", "product", "absdiff")


class EmbeddingExpansion(nn.Module):
    """Turn a (query, document) embedding pair into ``n_segments * n_chunks`` tokens of width ``d_model``.

    ``mode="lift"``: ``q in R^d`` -> ``(W_seg q + b_seg)`` reshaped to T tokens ``u_t`` -> ``u_t + P_t + S_seg``;
    ``mode="chunk"``: chunks ``q_t in R^{d/T}`` (t = 1..T) -> tokens ``W_seg q_t + b_seg + P_t + S_seg``.
    With ``interactions=True`` ``q * x`` and ``|q - x|`` form two more segments.

    Parameters
    ----------
    d_in : int
        Embedding dimension d (384 for MiniLM).
    n_chunks : int
        T, tokens per vector; must divide ``d_in`` when ``mode="chunk"``.
    d_model : int
        Token width.
    interactions : bool, default True
        Add the q*x and |q-x| segments.
    mode : {"lift", "chunk"}, default "lift"
        Whole-vector lift or per-chunk lift (see the module docstring).

    Shapes
    ------
    ``forward(q, x)``: (B, d), (B, d) -> (B, S*T, d_model), S = 4 with interactions else 2.

    Examples
    --------
    >>> exp = EmbeddingExpansion(384, n_chunks=8, d_model=64, mode="chunk")
    >>> exp(torch.zeros(2, 384), torch.zeros(2, 384)).shape
    torch.Size([2, 32, 64])
    >>> EmbeddingExpansion(384, n_chunks=4, d_model=64)(torch.zeros(2, 384), torch.zeros(2, 384)).shape
    torch.Size([2, 16, 64])
    """

    def __init__(self, d_in: int, n_chunks: int, d_model: int, interactions: bool = True, mode: str = "lift"):
        super().__init__()
        self.d_in = positive_int(d_in, "d_in")
        self.n_chunks = positive_int(n_chunks, "n_chunks")
        self.d_model = positive_int(d_model, "d_model")
        if mode not in ("lift", "chunk"):
            raise ValueError(f"`mode` (expansion) must be 'lift' or 'chunk'; got {mode!r}")
        self.mode = mode
        if mode == "chunk" and self.d_in % self.n_chunks:
            raise ValueError(f"`n_chunks` must divide the embedding dimension d_in={self.d_in}; got "
                             f"n_chunks={self.n_chunks} (d_in % n_chunks = {self.d_in % self.n_chunks})")
        self.interactions = bool(interactions)
        self.n_segments = 4 if self.interactions else 2
        if mode == "chunk":
            self.lift = nn.ModuleList(nn.Linear(self.d_in // self.n_chunks, self.d_model)
                                      for _ in range(self.n_segments))
        else:
            self.lift = nn.ModuleList(nn.Linear(self.d_in, self.n_chunks * self.d_model)
                                      for _ in range(self.n_segments))
        self.position = nn.Parameter(torch.randn(self.n_chunks, self.d_model) * 0.02)
        self.segment = nn.Parameter(torch.randn(self.n_segments, self.d_model) * 0.02)

    @property
    def n_tokens(self) -> int:
        return self.n_segments * self.n_chunks

    def forward(self, q: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        if q.shape != x.shape or q.ndim != 2 or q.shape[1] != self.d_in:
            raise ValueError(f"`q` and `x` must both have shape (B, {self.d_in}); got {tuple(q.shape)} and "
                             f"{tuple(x.shape)}")
        parts = [q, x]
        if self.interactions:
            parts += [q * x, (q - x).abs()]
        tokens = []
        for s, v in enumerate(parts):
            if self.mode == "chunk":
                u = self.lift[s](v.reshape(v.shape[0], self.n_chunks, -1))  # (B, T, d/T) -> (B, T, d_model)
            else:
                u = self.lift[s](v).reshape(v.shape[0], self.n_chunks, self.d_model)  # (B, T, d_model)
            tokens.append(u + self.position + self.segment[s])  # (B, T, d_model)
        return torch.cat(tokens, dim=1)  # (B, S*T, d_model)
