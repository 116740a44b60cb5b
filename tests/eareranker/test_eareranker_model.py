"""EmbeddingExpansion and the EAReranker network: token oracle, causal READ, batch invariance, bad shapes."""

import pytest
import torch

from neurips25.eareranker import EAReranker, EmbeddingExpansion, PairMLP


def test_expansion_tokens_match_oracle():
    torch.manual_seed(0)
    exp = EmbeddingExpansion(12, n_chunks=3, d_model=5, mode="chunk")
    q, x = torch.randn(2, 12), torch.randn(2, 12)
    tok = exp(q, x)
    assert tok.shape == (2, 12, 5)  # 4 segments x 3 chunks
    segs = [q, x, q * x, (q - x).abs()]
    for s, v in enumerate(segs):
        for t in range(3):
            want = exp.lift[s](v[:, 4 * t:4 * t + 4]) + exp.position[t] + exp.segment[s]
            torch.testing.assert_close(tok[:, s * 3 + t], want)


def test_lift_tokens_match_oracle():
    # the whole-vector lift: every token is a slice of W_seg v + b_seg, so each token sees the whole vector
    torch.manual_seed(0)
    exp = EmbeddingExpansion(12, n_chunks=3, d_model=5)
    q, x = torch.randn(2, 12), torch.randn(2, 12)
    tok = exp(q, x)
    assert tok.shape == (2, 12, 5) and exp.mode == "lift"
    for s, v in enumerate([q, x, q * x, (q - x).abs()]):
        full = v @ exp.lift[s].weight.T + exp.lift[s].bias  # (2, 15)
        for t in range(3):
            torch.testing.assert_close(tok[:, s * 3 + t], full[:, 5 * t:5 * t + 5] + exp.position[t] + exp.segment[s])
    q2 = q.clone()
    q2[:, -1] += 1.0  # the last feature reaches the first token (a chunk layout would not let it)
    assert not torch.allclose(exp(q2, x)[:, 0], tok[:, 0])


def test_one_token_per_vector_without_interactions():
    exp = EmbeddingExpansion(8, n_chunks=1, d_model=4, interactions=False)
    assert exp(torch.zeros(3, 8), torch.zeros(3, 8)).shape == (3, 2, 4) and exp.n_tokens == 2


def test_n_chunks_must_divide():
    with pytest.raises(ValueError, match="`n_chunks` must divide the embedding dimension d_in=384"):
        EmbeddingExpansion(384, n_chunks=7, d_model=8, mode="chunk")
    with pytest.raises(ValueError, match="`mode`"):
        EmbeddingExpansion(384, n_chunks=4, d_model=8, mode="slice")
    assert EmbeddingExpansion(384, n_chunks=7, d_model=8).n_tokens == 28  # the lift needs no divisibility
    with pytest.raises(ValueError, match="`n_heads` must divide"):
        EAReranker(16, n_chunks=4, d_model=10, n_heads=4)


def test_read_token_sees_every_chunk_and_batch_invariance():
    torch.manual_seed(0)
    m = EAReranker(16, n_chunks=4, d_model=16, n_layers=2, n_heads=2, dropout=0.0).eval()
    q, x = torch.randn(5, 16), torch.randn(5, 16)
    with torch.no_grad():
        lg, sc = m(q, x)
        x2 = x.clone()
        x2[:, 0] += 1.0  # first chunk of the document: READ (last) must see it through the causal mask
        assert not torch.allclose(m(q, x2)[1], sc)
        for i in range(5):  # a pair's score does not depend on its batch mates
            torch.testing.assert_close(m(q[i:i + 1], x[i:i + 1])[1], sc[i:i + 1], atol=1e-5, rtol=1e-5)
    assert lg.shape == (5, 6) and bool(((sc >= 0) & (sc <= 100)).all())


def test_shape_mismatch_and_mlp():
    m = EAReranker(16, n_chunks=4, d_model=8, n_layers=1, n_heads=2)
    with pytest.raises(ValueError, match=r"shape \(B, 16\)"):
        m(torch.zeros(2, 16), torch.zeros(2, 12))
    lg, sc = PairMLP(16, hidden=8)(torch.zeros(3, 16), torch.zeros(3, 16))
    assert lg.shape == (3, 6) and sc.shape == (3,)
