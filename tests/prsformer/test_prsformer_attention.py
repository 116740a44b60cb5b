"""Neighborhood attention: NATTEN's window rule, exactness against dense masked attention, memory."""

import importlib.util

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from neurips25.prsformer import (
    NeighborhoodAttention1D,
    neighborhood_attention,
    neighborhood_indices,
    receptive_field,
    reference_neighborhood_attention,
)


def rule_by_hand(L, k, d):
    """Loop transcription of NATTEN's rule: group g = i % d, t = i // d, start clamp(t - k//2, 0, L_g - k)."""
    rows = []
    for i in range(L):
        g, t = i % d, i // d
        L_g = len(range(g, L, d))
        s = min(max(t - k // 2, 0), L_g - k)
        rows.append([g + d * (s + j) for j in range(k)])
    return rows


@pytest.mark.parametrize("L,k,d", [(5, 3, 1), (10, 3, 2), (17, 7, 2), (33, 5, 4), (12, 3, 4), (9, 9, 1)])
def test_indices_match_hand_rule(L, k, d):
    assert neighborhood_indices(L, k, d).tolist() == rule_by_hand(L, k, d)


def test_windows_shift_inward_not_padded():
    # guards the boundary: query 0 sees keys 0..k-1 (a zero-padded window would see only 0..k//2)
    idx = neighborhood_indices(20, 7)
    assert idx[0].tolist() == list(range(7))
    assert idx[19].tolist() == list(range(13, 20))
    assert idx[10].tolist() == list(range(7, 14))


@pytest.mark.parametrize("L", [17, 64, 257])
@pytest.mark.parametrize("k", [3, 7, 33])
@pytest.mark.parametrize("d", [1, 2, 4])
def test_equals_dense_masked_attention_fp32_with_grads(L, k, d):
    if L // d < k:
        pytest.skip("NATTEN's rule needs k keys per dilation group")
    gen = torch.Generator().manual_seed(L * 100 + k * 10 + d)
    q, kk, v = (torch.randn(2, 3, L, 8, generator=gen).requires_grad_() for _ in range(3))
    ours = neighborhood_attention(q, kk, v, k, d)
    ref = reference_neighborhood_attention(q, kk, v, k, d)
    assert (ours - ref).abs().max() <= 1e-5
    g = torch.randn(ours.shape, generator=gen)
    for a, b in zip(torch.autograd.grad(ours, (q, kk, v), g), torch.autograd.grad(ref, (q, kk, v), g)):
        assert (a - b).abs().max() <= 1e-5


@settings(max_examples=25, deadline=None)
@given(L=st.integers(3, 80), k_half=st.integers(0, 4), d=st.integers(1, 5), block=st.integers(1, 12))
def test_any_block_size_gives_the_same_answer(L, k_half, d, block):
    k = 2 * k_half + 1
    if L // d < k:
        return
    gen = torch.Generator().manual_seed(L + 7 * d)
    q, kk, v = (torch.randn(1, 2, L, 4, generator=gen, dtype=torch.float64) for _ in range(3))
    ours = neighborhood_attention(q, kk, v, k, d, block=block)
    assert torch.allclose(ours, reference_neighborhood_attention(q, kk, v, k, d), atol=1e-10)


def test_full_window_equals_plain_attention():
    # k == L: every query sees the whole sequence, i.e. ordinary softmax attention
    q, k, v = (torch.randn(1, 1, 9, 4, dtype=torch.float64) for _ in range(3))
    plain = torch.softmax(q @ k.transpose(-1, -2) / 2.0, -1) @ v
    assert torch.allclose(neighborhood_attention(q, k, v, 9), plain, atol=1e-12)


def test_never_saves_an_L_by_L_tensor():
    # linear memory: every tensor kept for backward is far smaller than L * L
    L, sizes = 2048, []

    def pack(t):
        sizes.append(t.numel())
        return t

    q, k, v = (torch.randn(1, 1, L, 4, requires_grad=True) for _ in range(3))
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        neighborhood_attention(q, k, v, 33, 2).sum().backward()
    assert max(sizes) < L * L / 10


@pytest.mark.parametrize("kwargs,match", [
    ({"kernel_size": 4}, "positive odd"),
    ({"kernel_size": 11}, "at least"),
    ({"kernel_size": 3, "dilation": 0}, "dilation"),
    ({"kernel_size": 5, "dilation": 3}, "at least"),
])
def test_bad_window_arguments(kwargs, match):
    q = torch.randn(1, 1, 10, 4)
    with pytest.raises(ValueError, match=match):
        neighborhood_attention(q, q, q, **kwargs)


def test_bad_tensors():
    q = torch.randn(1, 1, 10, 4)
    with pytest.raises(ValueError, match=r"\[B, H, L, D\]"):
        neighborhood_attention(q[0], q[0], q[0], 3)
    with pytest.raises(ValueError, match="share one shape"):
        neighborhood_attention(q, q[..., :2], q, 3)
    with pytest.raises(TypeError, match="floating point"):
        neighborhood_attention(q.long(), q.long(), q.long(), 3)


def test_module_matches_functional_and_rejects_natten_backend_when_missing():
    torch.manual_seed(0)
    layer = NeighborhoodAttention1D(8, 2, kernel_size=5, dilation=2, backend="torch")
    x = torch.randn(3, 30, 8)
    q, k, v = layer.qkv(x).view(3, 30, 3, 2, 4).permute(2, 0, 3, 1, 4)
    manual = reference_neighborhood_attention(q, k, v, 5, 2).transpose(1, 2).reshape(3, 30, 8)
    assert torch.allclose(layer(x), layer.proj(manual), atol=1e-5)
    with pytest.raises(ValueError, match="embed_dim"):
        NeighborhoodAttention1D(10, 3, 5)
    try:
        import natten  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="natten"):
            NeighborhoodAttention1D(8, 2, 5, backend="natten")


def test_receptive_field_grows_with_dilation():
    assert receptive_field(3, [1]) == 3
    assert receptive_field(9, [1, 4]) == 1 + 8 + 32


@pytest.mark.skipif(importlib.util.find_spec("natten") is None, reason="natten not installed")
def test_agrees_with_natten():
    import natten

    device = "cuda" if torch.cuda.is_available() else "cpu"
    q, k, v = (torch.randn(1, 64, 2, 8, device=device) for _ in range(3))  # natten layout [B, L, H, D]
    theirs = natten.na1d(q, k, v, kernel_size=7, dilation=2)
    ours = neighborhood_attention(*(x.transpose(1, 2) for x in (q, k, v)), 7, 2).transpose(1, 2)
    assert (ours - theirs).abs().max() <= 1e-4
