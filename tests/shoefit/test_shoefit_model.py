"""ShoeFitTransformer, pipeline, data and metrics: shapes, the cache, invariances, save/load, bad inputs."""

import numpy as np
import pytest
import torch
from diffusers import FlowMatchEulerDiscreteScheduler

from neurips25.shoefit import (
    MVShoesLite,
    ShoeFitPipeline,
    ShoeFitTransformer,
    contamination_slope,
    masked_psnr,
    rectified_flow_loss,
    side_color_accuracy,
)

CFG = dict(sample_size=16, patch_size=4, num_layers=2, num_attention_heads=2, attention_head_dim=16,
           axes_dims_rope=(4, 6, 6))


@pytest.fixture(scope="module")
def data():
    return MVShoesLite(4, seed=0, res=16, split="test")


def _randomise_modulation(model, std=0.1):
    for blk in model.blocks:
        proc = blk.attn.processor
        torch.nn.init.normal_(proc.to_mod.weight if proc.mode == "modulate" else proc.to_bg.weight, std=std)
        if proc.mode == "gated_add":
            torch.nn.init.constant_(proc.gate, 0.5)


def test_forward_shape_cache_and_view_permutation(data):
    torch.manual_seed(0)
    model = ShoeFitTransformer(**CFG, layered=True).eval()
    _randomise_modulation(model)
    z, t = torch.randn(4, 3, 16, 16), torch.full((4,), 0.4)
    with torch.no_grad():
        v = model(z, data.model_image, data.mask, data.ref_views, t)
        assert v.shape == (4, 3, 16, 16) and torch.isfinite(v).all()
        cached = model(z, data.model_image, data.mask, t=t, ref_cache=model.encode_reference(data.ref_views))
        assert (v - cached).abs().max() <= 1e-5
        perm = [3, 1, 0, 2]
        with_ids = model(z, data.model_image, data.mask, data.ref_views[:, perm], t, view_ids=[p + 1 for p in perm])
        alone = model(z, data.model_image, data.mask, data.ref_views[:, perm], t)
    assert (v - with_ids).abs().max() <= 1e-5  # views are a set once their ids travel with them
    assert (v - alone).abs().max() > 1e-4  # without the ids the view axis tells them apart


def test_shared_2d_ids_make_views_a_set(data):
    torch.manual_seed(0)
    model = ShoeFitTransformer(**CFG, share_view_ids=True).eval()
    z, t = torch.randn(4, 3, 16, 16), torch.full((4,), 0.4)
    with torch.no_grad():
        a = model(z, data.model_image, data.mask, data.ref_views, t)
        b = model(z, data.model_image, data.mask, data.ref_views[:, [2, 3, 0, 1]], t)
    assert (a - b).abs().max() <= 1e-5  # all views at v = 1: order carries no information


def test_target_does_not_leak_into_reference_stream(data):
    torch.manual_seed(0)
    model = ShoeFitTransformer(**CFG).eval()
    c1 = model.encode_reference(data.ref_views)
    c2 = model.encode_reference(data.ref_views.clone())
    assert all(torch.equal(a[0], b[0]) for a, b in zip(c1["kv"], c2["kv"]))
    # the reference stream is independent of t and of the target: changing them leaves the cache valid
    z = torch.randn(4, 3, 16, 16)
    with torch.no_grad():
        for t in (0.1, 0.9):
            assert torch.allclose(model(z, data.model_image, data.mask, data.ref_views, torch.full((4,), t)),
                                  model(z, data.model_image, data.mask, t=torch.full((4,), t), ref_cache=c1),
                                  atol=1e-5)


def test_training_reduces_loss_and_pipeline_save_load(tmp_path, data):
    torch.manual_seed(0)
    model = ShoeFitTransformer(**CFG, layered=True)
    train = MVShoesLite(16, seed=1, res=16)
    batch = {k: getattr(train, k) for k in ("target", "model_image", "mask", "ref_views")}
    opt = torch.optim.Adam(model.parameters(), 3e-3)
    losses = []
    for _ in range(30):
        loss = rectified_flow_loss(model, batch, torch.Generator().manual_seed(0))
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    assert losses[-1] < 0.7 * losses[0]
    assert any(p.grad is not None and p.grad.abs().sum() > 0 for p in model.blocks[0].attn.processor.parameters())
    pipe = ShoeFitPipeline(model.eval(), FlowMatchEulerDiscreteScheduler())
    pipe.set_progress_bar_config(disable=True)
    out = pipe(data.ref_views, data.model_image, data.mask, 3, generator=torch.Generator().manual_seed(0))
    assert out.shape == (4, 3, 16, 16) and out.abs().max() <= 1
    known = data.mask == 0
    assert torch.equal(out.masked_select(known.expand_as(out)), data.model_image.masked_select(known.expand_as(out)))
    pipe.save_pretrained(tmp_path / "p")
    again = ShoeFitPipeline.from_pretrained(tmp_path / "p")
    again.set_progress_bar_config(disable=True)
    lat = torch.randn(4, 3, 16, 16)
    a = pipe(data.ref_views, data.model_image, data.mask, 3, latents=lat)
    b = again(data.ref_views, data.model_image, data.mask, 3, latents=lat)
    c = pipe(data.ref_views, data.model_image, data.mask, 3, latents=lat, cache_reference=False)
    assert (a - b).abs().max() <= 1e-6 and (a - c).abs().max() <= 1e-5
    assert again.transformer.config.layered is True


def test_model_bad_inputs(data):
    model = ShoeFitTransformer(**CFG)
    z, t = torch.randn(4, 3, 16, 16), torch.full((4,), 0.5)
    with pytest.raises(ValueError, match="sums to 20 but the attention head size is 16"):
        ShoeFitTransformer(**{**CFG, "axes_dims_rope": (4, 8, 8)})
    with pytest.raises(ValueError, match=r"ref_views must have shape \(B, V, 3, 16, 16\)"):
        model(z, data.model_image, data.mask, torch.randn(4, 4, 3, 24, 24), t)
    with pytest.raises(ValueError, match="ref_views has batch 2 but the target has 4"):
        model(z, data.model_image, data.mask, data.ref_views[:2], t)
    with pytest.raises(ValueError, match=r"mask must have shape \(B, 1, 16, 16\)"):
        model(z, data.model_image, data.mask[:, :, :8], data.ref_views, t)
    with pytest.raises(ValueError, match="noisy_target contains NaN"):
        model(z * float("nan"), data.model_image, data.mask, data.ref_views, t)
    with pytest.raises(ValueError, match=r"t must be a scalar or shape \(4,\) with values in \[0, 1\]"):
        model(z, data.model_image, data.mask, data.ref_views, torch.full((4,), 3.0))
    with pytest.raises(ValueError, match=r"view_ids must hold one finite id per reference view \(4\); got 3"):
        model(z, data.model_image, data.mask, data.ref_views, t, view_ids=[1, 2, 3])
    with pytest.raises(ValueError, match="multiple of patch_size"):
        ShoeFitTransformer(**{**CFG, "sample_size": 18})
    pipe = ShoeFitPipeline(model, FlowMatchEulerDiscreteScheduler())
    with pytest.raises(ValueError, match="num_inference_steps must be a positive integer"):
        pipe(data.ref_views, data.model_image, data.mask, 0)
    # the pipeline has no noisy_target argument: a numpy model image is named as what it is (was "noisy_target")
    with pytest.raises(ValueError, match=r"^model_image must have shape"):
        pipe(data.ref_views, data.model_image.numpy(), data.mask, 2)


def test_dataset_is_deterministic_and_side_poses_hide_view0(data):
    again = MVShoesLite(4, seed=0, res=16, split="test")
    assert torch.equal(again.target, data.target) and torch.equal(again.ref_views, data.ref_views)
    assert data.ref_views.shape == (4, 4, 3, 16, 16) and data.ref_views.min() >= -1 and data.ref_views.max() <= 1
    assert set(data.visible_side.tolist()) <= {1, 3}
    az = data.azimuth.numpy() % 360
    assert np.all(((az >= 60) & (az <= 120)) | ((az >= 240) & (az <= 300)))
    assert torch.all(data.model_image * data.mask == 0)  # the shoe region is hidden in the model image
    assert (data.mask.sum((1, 2, 3)) > 5).all()
    with pytest.raises(ValueError, match="views must be <= 4"):
        MVShoesLite(2, views=5)
    with pytest.raises(ValueError, match=r"env_strength must be \(lo, hi\)"):
        MVShoesLite(2, env_strength=(0.5, 0.1))
    assert len(MVShoesLite(np.int64(2), seed=np.int64(3), res=16)) == 2


def test_metrics_oracles():
    data = MVShoesLite(4, seed=0, res=16, split="test", reflect_max=0)  # matte: the side shows its palette colour
    gt, m = data.target, data.mask
    assert torch.all(masked_psnr(gt, gt, m) >= 99)
    noisy = gt + 0.2 * m  # error 0.1 in [0, 1] units inside the mask: PSNR exactly 20 dB
    assert torch.allclose(masked_psnr(noisy, gt, m), torch.full((4,), 20.0), atol=1e-3)
    assert contamination_slope(gt, gt, data.bg_mean, m) == 0.0
    copy = gt * (1 - m) + m * (0.5 * gt + 0.5 * (data.bg_mean[:, :, None, None] * 2 - 1))
    assert contamination_slope(copy, gt, data.bg_mean, m) > 0.2
    acc = side_color_accuracy(gt, data.side_label, data.visible_side, data.side_color_id)
    assert float(np.nanmean(acc.numpy())) == 1.0
    grey = torch.zeros_like(gt)
    assert float(np.nanmean(side_color_accuracy(grey, data.side_label, data.visible_side,
                                                data.side_color_id).numpy())) < 1.0
    with pytest.raises(ValueError, match=r"mask must have shape \(B, 1, H, W\)"):
        masked_psnr(gt, gt, m[:, 0])


def test_masked_psnr_value_range():
    """[0, 1] images read as [-1, 1] scored 6 dB too high, silently (before value_range and its checks)."""
    data = MVShoesLite(4, seed=0, res=16, split="test")
    gt, m = data.target, data.mask
    noisy = gt + 0.2 * m
    ref = masked_psnr(noisy, gt, m)
    gt01, noisy01 = (gt + 1) / 2, (noisy + 1) / 2
    assert torch.allclose(masked_psnr(noisy01, gt01, m, value_range=(0, 1)), ref, atol=1e-4)
    with pytest.warns(UserWarning, match=r"pass value_range=\(0, 1\)"):
        wrong = masked_psnr(noisy01, gt01, m)
    assert torch.allclose(wrong - ref, torch.full((4,), 6.0206), atol=1e-3)
    with pytest.raises(ValueError, match=r"gt must hold finite values in value_range=\(0, 1\)"):
        masked_psnr(noisy, gt, m, value_range=(0, 1))
    with pytest.raises(ValueError, match="value_range must be"):
        masked_psnr(noisy, gt, m, value_range=(1, np.float64(0)))
    assert torch.allclose(masked_psnr(noisy, gt, m, value_range=(np.float32(-1), np.int64(1))), ref)


def test_images_outside_minus_one_one_are_refused_by_name(data):
    # issue #59: 0-255 images gave a loss of 9,418 and the pipeline took them, both silently
    model = ShoeFitTransformer(**CFG)
    batch = {k: getattr(data, k) for k in ("target", "model_image", "mask", "ref_views")}
    to255 = {k: (v + 1) * 127.5 if k != "mask" else v for k, v in batch.items()}
    with pytest.raises(ValueError, match=r"batch\['target'\] must hold images in \[-1, 1\].*got values in "
                                         r"\[[0-9.]+, 255\]"):
        rectified_flow_loss(model, to255)
    with pytest.raises(ValueError, match=r"batch\['model_image'\] must hold images in \[-1, 1\]"):
        rectified_flow_loss(model, {**batch, "model_image": to255["model_image"]})
    with pytest.raises(ValueError, match=r"ref_views must hold images in \[-1, 1\]"):
        rectified_flow_loss(model, batch, ref_views=to255["ref_views"])
    pipe = ShoeFitPipeline(model.eval(), FlowMatchEulerDiscreteScheduler())
    pipe.set_progress_bar_config(disable=True)
    with pytest.raises(ValueError, match=r"^model_image must hold images in \[-1, 1\].*got values in "
                                         r"\[[0-9.]+, [0-9.]+\]"):
        pipe(data.ref_views, to255["model_image"], data.mask, 1)
    with pytest.raises(ValueError, match=r"^ref_views must hold images in \[-1, 1\]"):
        pipe(to255["ref_views"], data.model_image, data.mask, 1)
    # [0, 1] images lie inside the range but read as a washed-out [-1, 1] image: a warning names the conversion
    to01 = {k: (v + 1) / 2 if k != "mask" else v for k, v in batch.items()}
    with pytest.warns(UserWarning, match=r"no value below 0.*\[0, 1\].*2 \* x - 1"):
        pipe(to01["ref_views"], to01["model_image"], data.mask, 1)
    with pytest.warns(UserWarning, match=r"no value below 0.*\[0, 1\].*2 \* x - 1"):
        rectified_flow_loss(model, to01)
    import warnings

    with warnings.catch_warnings():  # images in [-1, 1] pass without a warning
        warnings.simplefilter("error")
        assert torch.isfinite(rectified_flow_loss(model, batch, torch.Generator().manual_seed(0)))
        pipe(data.ref_views, data.model_image, data.mask, 1)


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_loss_of_a_low_precision_model_and_psnr_of_low_precision_images(data, dtype):
    # issue #59 probes: the loss of a bfloat16 / float16 model failed with "mat1 and mat2 must have the same dtype"
    # (its noise and flow time are drawn in float32); float16 masked_psnr of a perfect prediction was inf, not 100
    torch.manual_seed(0)
    model = ShoeFitTransformer(**CFG, layered=True)
    batch = {k: getattr(data, k) for k in ("target", "model_image", "mask", "ref_views")}
    ref = rectified_flow_loss(model, batch, torch.Generator().manual_seed(0))
    low = model.to(dtype)
    for b in (batch, {k: v.to(dtype) for k, v in batch.items()}):
        loss = rectified_flow_loss(low, b, torch.Generator().manual_seed(0))
        assert loss.dtype == torch.float32 and abs(float(loss.detach()) - float(ref)) < 0.05 * float(ref)
        loss.backward()
        assert all(p.grad is None or torch.isfinite(p.grad.float()).all() for p in low.parameters())
    gt = data.target.to(dtype)
    assert torch.equal(masked_psnr(gt, gt, data.mask.to(dtype)), torch.full((4,), 100.0))
    noise = torch.randn(data.target.shape, generator=torch.Generator().manual_seed(1))
    noisy = (data.target + 0.1 * noise).clamp(-1, 1)
    assert torch.allclose(masked_psnr(noisy.to(dtype), gt, data.mask), masked_psnr(noisy, data.target, data.mask),
                          atol=0.3)
