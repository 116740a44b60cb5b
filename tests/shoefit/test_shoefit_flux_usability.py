"""LayeredRefAttention in a stock FLUX (issue #51): low-precision dtype, per-layer install, save / load by value,
the shared-instance warning, offload hooks; and the metrics / loss on degenerate input."""

import warnings

import pytest
import torch
from diffusers import FlowMatchEulerDiscreteScheduler, FluxTransformer2DModel

from neurips25.shoefit import (
    LayeredRefAttnProcessor,
    MVShoesLite,
    ShoeFitPipeline,
    ShoeFitTransformer,
    contamination_slope,
    install_layered_ref_attention,
    load_layered_ref_attention,
    masked_psnr,
    rectified_flow_loss,
)

H = W = 4


def _flux():
    torch.manual_seed(0)  # the tiny config of tests/contracts/contract_fixtures.py (one double, one single block)
    return FluxTransformer2DModel(patch_size=1, in_channels=4, num_layers=1, num_single_layers=1,
                                  attention_head_dim=8, num_attention_heads=2, joint_attention_dim=16,
                                  pooled_projection_dim=8, guidance_embeds=False, axes_dims_rope=(2, 2, 4)).eval()


def _inputs(dtype=torch.float32):
    g = torch.Generator().manual_seed(0)
    ids = torch.stack(torch.meshgrid(torch.zeros(1), torch.arange(float(H)), torch.arange(float(W)), indexing="ij"), -1)
    shoe = torch.zeros(1, H * W)
    shoe[:, 5:11] = 1.0
    return dict(hidden_states=torch.randn(1, H * W, 4, generator=g).to(dtype),
                encoder_hidden_states=torch.randn(1, 3, 16, generator=g).to(dtype),
                pooled_projections=torch.randn(1, 8, generator=g).to(dtype), timestep=torch.tensor([0.5], dtype=dtype),
                img_ids=ids.reshape(-1, 3), txt_ids=torch.zeros(3, 3), joint_attention_kwargs={"shoe_mask": shoe},
                return_dict=False)


def _train(procs, seed=1):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in procs.values():
            for w in p.parameters():
                w.copy_(torch.randn(w.shape, generator=g) * 0.2)


def test_installer_builds_one_processor_per_layer_equal_to_stock_at_init():
    flux = _flux()
    with torch.no_grad():
        stock = flux(**{**_inputs(), "joint_attention_kwargs": None})[0]
        procs = install_layered_ref_attention(flux)
        assert set(procs) == set(flux.attn_processors) and len({id(p) for p in procs.values()}) == 2
        assert all(flux.attn_processors[n] is p for n, p in procs.items())
        assert torch.allclose(flux(**_inputs())[0], stock, atol=1e-5)
        _train(procs)
        assert (flux(**_inputs())[0] - stock).abs().max() > 1e-3
    only = install_layered_ref_attention(_flux(), layers=["transformer_blocks.0.attn.processor"], mode="gated_add")
    assert list(only) == ["transformer_blocks.0.attn.processor"] and only[list(only)[0]].mode == "gated_add"


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_low_precision_forward_keeps_the_dtype(dtype):
    # failed before #51: `has_bg.float()` promoted the background branch to float32 -> "mat1 and mat2 ... dtype"
    flux = _flux()
    procs = install_layered_ref_attention(flux)
    _train(procs)
    with torch.no_grad():
        ref = flux(**_inputs())[0]
        low = flux.to(dtype)
        out = low(**_inputs(dtype))[0]
    assert out.dtype == dtype and torch.isfinite(out.float()).all()
    assert (out.float() - ref).abs().max() < 0.1  # the same function, at low precision
    # and the processor alone, on a layer in the same dtype
    assert all(p.to_mod.weight.dtype == dtype for p in procs.values())


def test_shoefit_transformer_bf16_forward():
    m = ShoeFitTransformer(sample_size=8, patch_size=4, num_layers=1, num_attention_heads=2, attention_head_dim=8,
                           axes_dims_rope=(2, 2, 4), layered=True).eval()
    with torch.no_grad():
        for n, p in m.named_parameters():
            if "to_mod" in n:
                p.normal_(std=0.2)
        m = m.to(torch.bfloat16)
        x = torch.randn(1, 3, 8, 8, dtype=torch.bfloat16)
        mask = torch.zeros(1, 1, 8, 8, dtype=torch.bfloat16)
        mask[..., 2:6, 2:6] = 1
        refs = torch.randn(1, 2, 3, 8, 8, dtype=torch.bfloat16)
        out = m(x, x, mask, refs, torch.tensor([0.3]))
    assert out.dtype == torch.bfloat16
    x, refs = x.clamp(-1, 1), refs.clamp(-1, 1)  # the pipeline takes images in [-1, 1] (issue #59)
    image = ShoeFitPipeline(m, FlowMatchEulerDiscreteScheduler())(refs, x * (1 - mask), mask, num_inference_steps=2,
                                                                   generator=torch.Generator().manual_seed(0))
    assert image.dtype == torch.bfloat16 and torch.isfinite(image.float()).all()


def test_save_pretrained_then_loader_keeps_trained_weights_by_value(tmp_path):
    # failed before #51: a stock from_pretrained returned plain FLUX, the trained processor weights dropped
    flux = _flux()
    procs = install_layered_ref_attention(flux)
    _train(procs)
    with torch.no_grad():
        ref = flux(**_inputs())[0]
    flux.save_pretrained(tmp_path)
    stock = FluxTransformer2DModel.from_pretrained(tmp_path)
    assert not any(isinstance(p, LayeredRefAttnProcessor) for p in stock.attn_processors.values())  # why a loader
    again = load_layered_ref_attention(tmp_path).eval()
    for name, p in procs.items():
        q = again.attn_processors[name]
        assert isinstance(q, LayeredRefAttnProcessor) and q is not p and q.mode == p.mode
        assert q.to_mod.weight.abs().max() > 0
        assert all(torch.equal(a, b) for a, b in zip(p.state_dict().values(), q.state_dict().values()))
    with torch.no_grad():
        assert (again(**_inputs())[0] - ref).abs().max() <= 1e-6
    bf = load_layered_ref_attention(tmp_path, torch_dtype=torch.bfloat16)
    assert all(p.to_mod.weight.dtype == torch.bfloat16 for p in bf.attn_processors.values())
    with torch.no_grad():
        assert bf(**_inputs(torch.bfloat16))[0].dtype == torch.bfloat16


def test_loader_bad_inputs(tmp_path):
    flux = _flux()
    flux.save_pretrained(tmp_path / "plain")
    with pytest.raises(ValueError, match="holds no LayeredRefAttention processor weights"):
        load_layered_ref_attention(tmp_path / "plain")
    with pytest.raises(ValueError, match="must be a local save_pretrained directory"):
        load_layered_ref_attention(tmp_path / "missing")
    with pytest.raises(ValueError, match="must be a diffusers model with attention processors"):
        install_layered_ref_attention(torch.nn.Linear(2, 2))
    with pytest.raises(ValueError, match="are not attention processors of the transformer"):
        install_layered_ref_attention(flux, layers=["blocks.0"])
    with pytest.raises(ValueError, match="mode must be one of"):
        install_layered_ref_attention(flux, mode="add")


def test_one_instance_shared_across_layers_warns():
    # failed before #51: silent, weights tied across layers (and save_pretrained then refuses the shared tensors)
    flux = _flux()
    flux.set_attn_processor(LayeredRefAttnProcessor(flux.inner_dim))
    with pytest.warns(UserWarning, match="called by several attention layers"), torch.no_grad():
        flux(**_inputs())
    per_layer = _flux()
    install_layered_ref_attention(per_layer)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with torch.no_grad():
            per_layer(**_inputs())
            per_layer(**_inputs())  # a second call of the same layers is not sharing


def test_offload_hook_survives_install():
    from accelerate import cpu_offload_with_hook

    flux, hook = cpu_offload_with_hook(_flux(), execution_device="cpu")
    before = flux._hf_hook
    _train(install_layered_ref_attention(flux))
    assert flux._hf_hook is before and hasattr(flux, "_old_forward")
    with torch.no_grad():
        assert torch.isfinite(flux(**_inputs())[0]).all()
    hook.offload()


def test_metrics_on_degenerate_input_are_nan_not_a_score():
    # failed before #51: an empty mask scored 100 dB, a constant background a slope of 0.0 ("no leak")
    data = MVShoesLite(4, seed=0)
    gt, m = data.target, data.mask
    empty = m.clone()
    empty[1] = 0
    psnr = masked_psnr(gt + 0.2 * m, gt, empty)
    assert torch.isnan(psnr[1]) and torch.allclose(psnr[[0, 2, 3]], torch.full((3,), 20.0), atol=1e-3)
    const = data.bg_mean[:1].expand(4, 3).clone()
    copy = gt * (1 - m) + m * (0.5 * gt + 0.5 * (data.bg_mean[:, :, None, None] * 2 - 1))
    assert contamination_slope(copy, gt, const, m) != contamination_slope(copy, gt, const, m)  # NaN
    assert contamination_slope(copy, gt, data.bg_mean, m) > 0.2  # a real leak still measured
    only_one = m.clone()
    only_one[1:] = 0
    assert contamination_slope(copy, gt, data.bg_mean, only_one) != contamination_slope(copy, gt, data.bg_mean,
                                                                                         only_one)
    with pytest.raises(ValueError, match=r"mask must hold values in \[0, 1\]"):
        masked_psnr(gt, gt, m * 255)
    with pytest.raises(ValueError, match=r"mask must hold values in \[0, 1\]"):
        contamination_slope(gt, gt, data.bg_mean, m * 255)


def test_mask_range_checked_in_forward_and_loss():
    # failed before #51 for a non-layered forward and for the loss: a 0..255 mask was used silently
    data = MVShoesLite(2, seed=0)
    m = ShoeFitTransformer(sample_size=24, attention_head_dim=16, axes_dims_rope=(4, 6, 6), num_layers=1,
                           layered=False)
    batch = {"target": data.target, "model_image": data.model_image, "mask": data.mask * 255,
             "ref_views": data.ref_views}
    with pytest.raises(ValueError, match=r"batch\['mask'\] must be a tensor with values in \[0, 1\]"):
        rectified_flow_loss(m, batch)
    with pytest.raises(ValueError, match=r"mask must hold values in \[0, 1\]"):
        m(data.model_image, data.model_image, data.mask * 255, data.ref_views, 0.5)


def test_single_stream_modulation_touches_only_the_image_shoe_tokens():
    # review #22 section 4: a swapped pad side (mask on the text tokens) passed every test; trained weights here
    from diffusers.models.transformers.transformer_flux import FluxAttnProcessor

    attn = _flux().single_transformer_blocks[0].attn
    proc = LayeredRefAttnProcessor(attn.out_dim)
    _train({"p": proc})
    g = torch.Generator().manual_seed(3)
    n_txt, n_img = 3, H * W
    x = torch.randn(2, n_txt + n_img, attn.out_dim, generator=g)
    shoe = torch.zeros(2, n_img)
    shoe[:, 5:11] = 1.0
    with torch.no_grad():
        stock = FluxAttnProcessor()(attn, x)
        out = proc(attn, x, shoe_mask=shoe)
    diff = (out - stock).abs().amax(-1)  # (2, n_txt + n_img)
    assert diff[:, :n_txt].max() <= 1e-6, "text tokens were modulated"
    assert diff[:, n_txt:][shoe == 0].max() <= 1e-6 and diff[:, n_txt:][shoe == 1].min() > 1e-4
