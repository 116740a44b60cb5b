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
    similarity_path : bool, default False
        A path beside the decoder that starts from the calibrated cosine: ``y = a z + c + w . [x, q*x] sqrt(d)``
        with ``z`` the cosine of ``q`` and ``x`` standardised on the training pairs; ``score logit += y`` and
        ``bin logits_b += k (b y - sum_{j <= b} t_j)`` with ``t_j = logit(edge_j / 100)`` (k = 2), whose argmax
        is the bin that holds ``100 sigmoid(y)``. :meth:`calibrate_similarity` sets ``a, c`` by least squares
        and zeroes ``w`` and the heads, so training starts at the calibrated cosine with the bin and score
        heads agreeing, and the decoder (and ``w``, a linear term) learn the residual (issue #59: without it the
        defaults fell below the raw cosine on planted data at d = 768).

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
                 expansion: str = "lift", similarity_path: bool = False, bin_edges=None):
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
        self.similarity_path = bool(similarity_path)
        if self.similarity_path:
            nb = self.bin_head.out_features
            edges = torch.linspace(0, 100, nb + 1) if bin_edges is None else torch.as_tensor(bin_edges).float()
            if edges.shape != (nb + 1,):
                raise ValueError(f"`bin_edges` must hold n_bins + 1 = {nb + 1} edges; got {tuple(edges.shape)}")
            t = torch.logit(edges[1:nb] / 100)  # inner edges on the logit scale
            b = torch.arange(nb, dtype=torch.float32)
            # ordinal bin logits k (b y - sum_{j<=b} t_j): rows = slope on y, offset
            self.register_buffer("ordinal", self.SHARPNESS * torch.stack([b, -torch.cat([torch.zeros(1),
                                                                                         torch.cumsum(t, 0)])]))
            self.register_buffer("sim_stats", torch.tensor([0.0, 1.0]))  # mean and s.d. of the training cosines
            self.sim_affine = nn.Parameter(torch.zeros(2))  # a, c
            self.sim_linear = nn.Linear(2 * self.expand.d_in, 1)  # w on [x, q*x] sqrt(d)
        n = self.expand.n_tokens + 1
        self.register_buffer("causal_mask", torch.triu(torch.full((n, n), float("-inf")), diagonal=1),
                             persistent=False)

    def forward(self, q: torch.Tensor, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        tokens = self.expand(q, x)  # (B, S*T, d_model)
        h = torch.cat([tokens, self.read.expand(tokens.shape[0], -1, -1)], dim=1)  # READ last
        h = self.decoder(h, mask=self.causal_mask, is_causal=True)
        r = self.norm(h[:, -1])  # (B, d_model) at READ
        logits, raw = self.bin_head(r), self.score_head(r).squeeze(-1)
        if self.similarity_path:
            y = self._similarity(q, x)  # (B,) on the score's logit scale
            logits = logits + y[:, None] * self.ordinal[0] + self.ordinal[1]
            raw = raw + y
        return logits, 100.0 * torch.sigmoid(raw)

    SHARPNESS = 2.0

    def _similarity(self, q, x, z=None):
        if z is None:
            z = (torch.nn.functional.cosine_similarity(q, x, dim=-1, eps=1e-8) - self.sim_stats[0]) / self.sim_stats[1]
        lin = self.sim_linear(torch.cat([x, q * x], dim=1) * q.shape[1] ** 0.5).squeeze(-1)
        return z * self.sim_affine[0] + self.sim_affine[1] + lin

    @torch.no_grad()
    def calibrate_similarity(self, q: torch.Tensor, x: torch.Tensor, scores: torch.Tensor) -> None:
        """Start the similarity path at the calibrated cosine of the training pairs; zero ``w`` and the heads.

        ``a, c``: least squares of ``logit(score / 100)`` (scores clipped to [0.5, 99.5]) on the standardised
        cosine ``z``.
        """
        if not self.similarity_path:
            raise RuntimeError("calibrate_similarity needs similarity_path=True")
        c = torch.nn.functional.cosine_similarity(q, x, dim=-1, eps=1e-8).double()
        mean, sd = c.mean(), c.std().clamp_min(1e-6)
        z = (c - mean) / sd
        y = torch.logit(scores.double().clamp(0.5, 99.5) / 100)
        a = ((z - z.mean()) * (y - y.mean())).mean() / (z.var(unbiased=False) + 1e-12)
        self.sim_stats.copy_(torch.stack([mean, sd]).float())
        self.sim_affine.copy_(torch.stack([a, y.mean() - a * z.mean()]).float())
        for lin in (self.sim_linear, self.bin_head, self.score_head):
            lin.weight.zero_()
            lin.bias.zero_()


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
