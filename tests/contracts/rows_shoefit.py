"""shoefit (#51): LayeredRefAttnProcessor on a stock diffusers FluxTransformer2DModel; ShoeFit's own model."""

import torch
from contract_fixtures import LOW_PRECISION, assert_close, flux_transformer, pickle_round_trip
from contract_table import not_applicable, row

C, ISSUE = "shoefit", 51
H = W = 4  # latent grid of the tiny FLUX: 16 image tokens


def _flux_inputs(dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    n = H * W
    ids = torch.stack(torch.meshgrid(torch.zeros(1), torch.arange(float(H)), torch.arange(float(W)), indexing="ij"), -1)
    shoe = torch.zeros(1, n)
    shoe[:, 5:11] = 1.0
    return dict(hidden_states=torch.randn(1, n, 4, generator=g, dtype=dtype),
                encoder_hidden_states=torch.randn(1, 3, 16, generator=g, dtype=dtype),
                pooled_projections=torch.randn(1, 8, generator=g, dtype=dtype),
                timestep=torch.tensor([0.5], dtype=dtype), img_ids=ids.reshape(-1, 3), txt_ids=torch.zeros(3, 3),
                joint_attention_kwargs={"shoe_mask": shoe}, return_dict=False)


def _install_per_layer(flux):
    from neurips25.shoefit import install_layered_ref_attention

    return install_layered_ref_attention(flux)


def _train(procs, seed=1):
    """Stand-in for training: the zero-initialised modulation gets non-zero weights."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in procs.values():
            for w in p.parameters():
                w.copy_(torch.randn(w.shape, generator=g) * 0.2)


@row(C, "diffusers", "processors installed per layer: at initialisation equal to the stock FluxAttnProcessor")
def _identity_at_init(tmp_path):
    flux = flux_transformer()
    inputs = _flux_inputs()
    with torch.no_grad():
        ref = flux(**{**inputs, "joint_attention_kwargs": None})[0]
        procs = _install_per_layer(flux)
        out = flux(**inputs)[0]
    assert len({id(p) for p in procs.values()}) == len(procs) == len(flux.attn_processors)
    assert_close(out, ref, atol=1e-5, what="FLUX output with zero-initialised layered processors")


@row(C, "diffusers", "trained per-layer processors change the output, on shoe tokens only")
def _trained_local(tmp_path):
    flux = flux_transformer()
    inputs = _flux_inputs()
    with torch.no_grad():
        ref = flux(**{**inputs, "joint_attention_kwargs": None})[0]
        _train(_install_per_layer(flux))
        out = flux(**inputs)[0]
    assert (out - ref).abs().max() > 1e-3


@row(C, "diffusers", "bfloat16 forward with per-layer processors runs and returns bfloat16")
def _bf16(tmp_path):
    flux = flux_transformer()
    _train(_install_per_layer(flux))
    flux = flux.to(LOW_PRECISION)
    with torch.no_grad():
        out = flux(**_flux_inputs(LOW_PRECISION))[0]
    assert out.dtype == LOW_PRECISION and torch.isfinite(out.float()).all()


@row(C, "diffusers", "save_pretrained / load_layered_ref_attention keeps the trained per-layer processor weights "
     "(by value)")
def _save_load(tmp_path):
    from neurips25.shoefit import load_layered_ref_attention

    flux = flux_transformer()
    procs = _install_per_layer(flux)
    _train(procs)
    inputs = _flux_inputs()
    with torch.no_grad():
        ref = flux(**inputs)[0]
    flux.save_pretrained(tmp_path)
    again = load_layered_ref_attention(tmp_path).eval()
    for name, p in procs.items():
        q = again.attn_processors[name]
        assert q is not p and all(torch.equal(a, b) for a, b in zip(p.state_dict().values(), q.state_dict().values()))
    with torch.no_grad():
        out = again(**inputs)[0]
    assert_close(out, ref, atol=1e-6, what="FLUX output after save_pretrained / from_pretrained")


def _shoefit_model(layered=True, seed=0):
    from neurips25.shoefit import ShoeFitTransformer

    torch.manual_seed(seed)
    m = ShoeFitTransformer(sample_size=8, patch_size=4, num_layers=1, num_attention_heads=2, attention_head_dim=8,
                           axes_dims_rope=(2, 2, 4), layered=layered).eval()
    with torch.no_grad():  # trained: the zero-initialised modulation gets weights
        for n, p in m.named_parameters():
            if "to_mod" in n or "gate" in n or "to_bg" in n:
                p.copy_(torch.randn(p.shape, generator=torch.Generator().manual_seed(len(n))) * 0.2)
    return m


def _shoefit_inputs(dtype=torch.float32):
    g = torch.Generator().manual_seed(0)
    mask = torch.zeros(1, 1, 8, 8, dtype=dtype)
    mask[..., 2:6, 2:6] = 1
    image = lambda *shape: (torch.rand(shape, generator=g) * 2 - 1).to(dtype)  # images are in [-1, 1]
    return (torch.randn(1, 3, 8, 8, generator=g).to(dtype), image(1, 3, 8, 8), mask, image(1, 2, 3, 8, 8),
            torch.tensor([0.3], dtype=dtype))


@row(C, "diffusers", "ShoeFitTransformer (layered) save_pretrained / from_pretrained equal by value")
def _own_save_load(tmp_path):
    from neurips25.shoefit import ShoeFitTransformer

    m = _shoefit_model()
    with torch.no_grad():
        ref = m(*_shoefit_inputs())
    m.save_pretrained(tmp_path)
    again = ShoeFitTransformer.from_pretrained(tmp_path).eval()
    sa, sb = m.state_dict(), again.state_dict()
    assert sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa), "weights changed"
    with torch.no_grad():  # same weights; float32 kernels may reorder sums (2e-7 seen)
        assert_close(again(*_shoefit_inputs()), ref, atol=1e-6, what="ShoeFitTransformer output after the round trip")


@row(C, "diffusers", "ShoeFitTransformer (layered) bfloat16 forward runs and returns bfloat16")
def _own_bf16(tmp_path):
    m = _shoefit_model().to(LOW_PRECISION)
    with torch.no_grad():
        out = m(*_shoefit_inputs(LOW_PRECISION))
    assert out.dtype == LOW_PRECISION and torch.isfinite(out.float()).all()


@row(C, "accelerate", "processors installed under an enable_model_cpu_offload-style hook: the hook stays, the "
     "forward runs through it")
def _offload_hook(tmp_path):
    from accelerate import cpu_offload_with_hook

    flux = flux_transformer()
    flux, hook = cpu_offload_with_hook(flux, execution_device="cpu")
    before = flux._hf_hook
    _train(_install_per_layer(flux))
    assert flux._hf_hook is before and hasattr(flux, "_old_forward"), "the offload hook was removed"
    with torch.no_grad():
        out = flux(**_flux_inputs())[0]
    assert torch.isfinite(out).all()
    hook.offload()


@row(C, "diffusers", "ShoeFitPipeline with FlowMatchEulerDiscreteScheduler (the docs' scheduler): seeded, "
     "repeatable, known region pasted")
def _pipeline(tmp_path):
    from diffusers import FlowMatchEulerDiscreteScheduler

    from neurips25.shoefit import ShoeFitPipeline

    pipe = ShoeFitPipeline(_shoefit_model(), FlowMatchEulerDiscreteScheduler())
    z, image, mask, refs, _ = _shoefit_inputs()
    a = pipe(refs, image, mask, num_inference_steps=3, generator=torch.Generator().manual_seed(4))
    b = pipe(refs, image, mask, num_inference_steps=3, generator=torch.Generator().manual_seed(4))
    assert torch.equal(a, b)
    assert torch.equal(a * (1 - mask), image * (1 - mask))


@row(C, "diffusers", "rectified_flow_loss and ShoeFitPipeline refuse 0..255 images by name (range expected, range "
     "seen); [0, 1] images warn")
def _image_range(tmp_path):
    import warnings

    import pytest
    from diffusers import FlowMatchEulerDiscreteScheduler

    from neurips25.shoefit import ShoeFitPipeline, rectified_flow_loss

    m = _shoefit_model()
    z, image, mask, refs, _ = _shoefit_inputs()
    batch = {"target": image, "model_image": image * (1 - mask), "mask": mask, "ref_views": refs}
    expected = r"batch\['target'\] must hold images in \[-1, 1\].*got values in \[[0-9.]+, 2"
    with pytest.raises(ValueError, match=expected):
        rectified_flow_loss(m, {**batch, "target": (image + 1) * 127.5})
    pipe = ShoeFitPipeline(m, FlowMatchEulerDiscreteScheduler())
    with pytest.raises(ValueError, match=r"^ref_views must hold images in \[-1, 1\]"):
        pipe((refs + 1) * 127.5, image, mask, num_inference_steps=1)
    with pytest.warns(UserWarning, match=r"\[0, 1\]"):
        pipe((refs + 1) / 2, (image + 1) / 2, mask, num_inference_steps=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pipe(refs, image, mask, num_inference_steps=1)
        rectified_flow_loss(m, batch)


@row(C, "torch", "LayeredRefAttnProcessor pickles / deep-copies with its weights")
def _pickle(tmp_path):
    from neurips25.shoefit import LayeredRefAttnProcessor

    p = LayeredRefAttnProcessor(16)
    _train({"p": p})
    q = pickle_round_trip(p)
    assert all(torch.equal(a, b) for a, b in zip(p.state_dict().values(), q.state_dict().values()))


not_applicable(C, "torch", "torch.compile", "diffusers' attention dispatch with a custom processor is not a "
               "compile target the docs claim; FLUX users compile the stock transformer")
