"""Multi-view RoPE and LayeredRefAttnProcessor: oracles against diffusers, invariances, bad inputs."""

import numpy as np
import pytest
import torch
from diffusers import FluxTransformer2DModel
from diffusers.models.transformers.transformer_flux import FluxAttention, FluxAttnProcessor, FluxPosEmbed

from neurips25.shoefit import LayeredRefAttnProcessor, MultiViewRoPE, multiview_rope_ids


def test_ids_layout_view_axis_first_and_last():
    img, ref = multiview_rope_ids(3, 2, 2)
    assert img.shape == (4, 3) and ref.shape == (12, 3)
    assert img[:, 0].eq(0).all() and ref[:, 0].tolist() == [1] * 4 + [2] * 4 + [3] * 4
    assert ref[5, 1:].tolist() == [0.0, 1.0]  # row-major (row, col) within a view
    _, shared = multiview_rope_ids(3, 2, 2, share_views=True)
    assert shared[:, 0].eq(1).all()
    _, last = multiview_rope_ids(3, 2, 2, view_axis="last")
    assert torch.equal(last[:, 2], ref[:, 0]) and torch.equal(last[:, :2], ref[:, 1:])
    assert multiview_rope_ids(np.int64(2), 2, 2)[1].shape == (8, 3)


@pytest.mark.parametrize("axes", [(4, 6, 6), (8, 12, 12), (16, 56, 56)])
def test_rope_equals_diffusers_flux_pos_embed(axes):
    img, ref = multiview_rope_ids(4, 5, 3)
    ids = torch.cat([ref, img])
    ours = MultiViewRoPE(10000, axes, head_dim=sum(axes))(ids)
    theirs = FluxPosEmbed(10000, list(axes))(ids)
    for a, b in zip(ours, theirs):
        assert a.shape == b.shape and torch.allclose(a, b, atol=1e-6)


def test_rope_bad_axes_and_ids():
    with pytest.raises(ValueError, match="sums to 20 but the attention head size is 24"):
        MultiViewRoPE(axes_dim=(4, 8, 8), head_dim=24)
    with pytest.raises(ValueError, match="even positive"):
        MultiViewRoPE(axes_dim=(3, 8, 8))
    with pytest.raises(ValueError, match=r"shape \(num_tokens, 3\)"):
        MultiViewRoPE(axes_dim=(8, 8, 8))(torch.zeros(5, 2))
    with pytest.raises(ValueError, match="num_views must be an integer >= 1"):
        multiview_rope_ids(0, 2, 2)
    with pytest.raises(ValueError, match="view_axis must be one of"):
        multiview_rope_ids(2, 2, 2, view_axis="middle")


def _tiny_flux():
    torch.manual_seed(0)
    return FluxTransformer2DModel(patch_size=1, in_channels=8, num_layers=1, num_single_layers=1,
                                  attention_head_dim=16, num_attention_heads=2, joint_attention_dim=24,
                                  pooled_projection_dim=8, axes_dims_rope=(4, 6, 6)).eval()


def _flux_inputs(g):
    img_ids = multiview_rope_ids(1, 4, 4)[0]
    return (torch.randn(2, 16, 8, generator=g), torch.randn(2, 5, 24, generator=g), torch.randn(2, 8, generator=g),
            torch.tensor([0.2, 0.9]), img_ids, torch.zeros(5, 3))


def test_layered_processor_is_a_drop_in_at_init_and_differs_once_trained():
    flux, g = _tiny_flux(), torch.Generator().manual_seed(1)
    args = _flux_inputs(g)
    shoe = (torch.rand(2, 16, generator=g) > 0.5).float()
    with torch.no_grad():
        flux.set_attn_processor(FluxAttnProcessor())
        stock = flux(*args, return_dict=False)[0]
        flux.set_attn_processor(LayeredRefAttnProcessor(32))
        layered = flux(*args, return_dict=False, joint_attention_kwargs={"shoe_mask": shoe})[0]
        assert (stock - layered).abs().max() <= 1e-6
        proc = LayeredRefAttnProcessor(32)
        torch.nn.init.normal_(proc.to_mod.weight, std=0.1)
        flux.set_attn_processor(proc)
        moved = flux(*args, return_dict=False, joint_attention_kwargs={"shoe_mask": shoe})[0]
        assert (stock - moved).abs().max() > 1e-4
        # only shoe tokens are modulated in the double-stream layer: without a shoe token nothing changes
        flux.set_attn_processor(proc)
        none = flux(*args, return_dict=False, joint_attention_kwargs={"shoe_mask": torch.zeros(2, 16)})[0]
        assert (stock - none).abs().max() <= 1e-6


def _attn():
    torch.manual_seed(0)
    return FluxAttention(query_dim=32, added_kv_proj_dim=32, dim_head=16, heads=2, out_dim=32, context_pre_only=False,
                         bias=True, eps=1e-6)


def test_modulation_uses_only_background_tokens_and_scales_the_reference_output():
    attn, g = _attn(), torch.Generator().manual_seed(2)
    h, e = torch.randn(1, 6, 32, generator=g), torch.randn(1, 4, 32, generator=g)
    shoe = torch.tensor([[1.0, 1, 0, 0, 0, 0]])
    proc = LayeredRefAttnProcessor(32)
    torch.nn.init.normal_(proc.to_mod.weight, std=0.2)
    attn.set_processor(proc)
    out, _ = attn(h, e, shoe_mask=shoe)
    # shoe rows read the background: moving a background token changes them
    h2 = h.clone()
    h2[0, 4] += 1.0  # a background token
    out2, _ = attn(h2, e, shoe_mask=shoe)
    assert (out2[0, :2] - out[0, :2]).abs().max() > 1e-5
    attn.set_processor(FluxAttnProcessor())
    plain, _ = attn(h, e)
    assert torch.allclose(out[0, 2:], plain[0, 2:], atol=1e-6)  # background rows: plain attention
    # gamma = -1, beta = 0 removes the reference output on shoe rows (multiplicative modulation)
    kill = LayeredRefAttnProcessor(32)
    torch.nn.init.zeros_(kill.to_mod.weight)
    with torch.no_grad():
        kill.to_mod.bias[:32] = -1.0
    attn.set_processor(kill)
    killed, _ = attn(h, e, shoe_mask=shoe)
    assert killed[0, :2].abs().max() <= 1e-6


def test_gated_add_is_exact_at_init():
    attn, g = _attn(), torch.Generator().manual_seed(3)
    h, e = torch.randn(2, 6, 32, generator=g), torch.randn(2, 4, 32, generator=g)
    attn.set_processor(FluxAttnProcessor())
    plain = attn(h, e)
    attn.set_processor(LayeredRefAttnProcessor(32, mode="gated_add"))
    ours = attn(h, e, shoe_mask=torch.ones(2, 6) * torch.tensor([1.0, 1, 0, 0, 0, 0]))
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(plain, ours))


def test_one_way_reference_ignores_the_target_and_cache_matches():
    attn, g = _attn(), torch.Generator().manual_seed(4)
    h, e = torch.randn(1, 6, 32, generator=g), torch.randn(1, 4, 32, generator=g)
    attn.set_processor(LayeredRefAttnProcessor(32, one_way=True))
    kv = []
    out, ref = attn(h, e, ref_kv_out=kv)
    out2, ref2 = attn(h + 1.0, e)
    assert torch.allclose(ref, ref2, atol=1e-6)  # the reference stream never reads the target
    cached, none = attn(h, None, ref_kv=kv[0])
    assert none is None and torch.allclose(out, cached, atol=1e-6)


def test_processor_bad_inputs():
    with pytest.raises(ValueError, match="mode must be one of"):
        LayeredRefAttnProcessor(32, mode="add")
    with pytest.raises(ValueError, match="dim must be a positive integer"):
        LayeredRefAttnProcessor(0)
    attn = _attn()
    h, e = torch.randn(2, 6, 32), torch.randn(2, 4, 32)
    attn.set_processor(LayeredRefAttnProcessor(32))
    with pytest.raises(ValueError, match=r"shoe_mask must have shape \(batch, num_target_tokens\) = \(2, 6\)"):
        attn(h, e, shoe_mask=torch.ones(2, 5))
    with pytest.raises(ValueError, match=r"values in \[0, 1\]"):
        attn(h, e, shoe_mask=torch.full((2, 6), 2.0))
    attn.set_processor(LayeredRefAttnProcessor(64))
    with pytest.raises(ValueError, match="build it with dim=32"):
        attn(h, e)
