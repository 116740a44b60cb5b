"""inverse3d (#52): the objective-guided sampler with the diffusers schedulers; LatentDiT as a torch module."""

import torch
from contract_fixtures import LOW_PRECISION, assert_close, compiled_matches_eager, forward_in_dtype
from contract_table import row

C, ISSUE = "inverse3d", 52


class _ExactGaussianPrior(torch.nn.Module):
    """Oracle noise predictor for data ~ N(0, I): eps*(z_t, t) = sqrt(1 - a_bar_t) z_t (a valid DiT stand-in)."""

    latent_shape = (3, 2, 2, 1)

    def __init__(self, alphas_cumprod):
        super().__init__()
        self.register_buffer("a_bar", alphas_cumprod)  # a buffer, so the module has (and `.to` moves) a dtype

    def forward(self, z, t):
        return (1 - self.a_bar[t]).sqrt().to(z.dtype).view(-1, 1, 1, 1, 1) * z


def _scheduler(kind):
    import diffusers

    from neurips25.inverse3d import make_scheduler

    if kind in ("ddim", "ddpm"):
        return make_scheduler(kind)
    cls = {"euler": diffusers.EulerDiscreteScheduler, "dpm": diffusers.DPMSolverMultistepScheduler}[kind]
    return cls(num_train_timesteps=1000)


def _samples_prior(kind, steps=25):
    def check(tmp_path):
        from neurips25.inverse3d import ObjectiveGuidedSampler

        sched = _scheduler(kind)
        s = ObjectiveGuidedSampler(_ExactGaussianPrior(sched.alphas_cumprod), sched, None, 0.0,
                                   num_inference_steps=steps)
        z = s.sample(1000, generator=torch.Generator().manual_seed(0))
        # the exact prior's samples are N(0, 1): a few ODE / ancestral steps contract the spread a little, not more
        assert 0.85 < float(z.std()) < 1.05 and abs(float(z.mean())) < 0.06, (float(z.mean()), float(z.std()))

    return check


def _repeatable(kind):
    def check(tmp_path):
        from neurips25.inverse3d import ObjectiveGuidedSampler

        sched = _scheduler(kind)
        s = ObjectiveGuidedSampler(_ExactGaussianPrior(sched.alphas_cumprod), sched, None, 0.0,
                                   num_inference_steps=5)
        a = s.sample(4, generator=torch.Generator().manual_seed(3))
        b = s.sample(4, generator=torch.Generator().manual_seed(3))
        assert torch.equal(a, b)

    return check


row(C, "diffusers", "DDIMScheduler (docs): unguided exact prior samples N(0, 1)")(_samples_prior("ddim"))
row(C, "diffusers", "DDIMScheduler (docs): the same generator seed gives the same samples")(_repeatable("ddim"))
row(C, "diffusers", "DDPMScheduler (docs): unguided exact prior samples N(0, 1) (100 ancestral steps)")(
    _samples_prior("ddpm", steps=100))
row(C, "diffusers", "DDPMScheduler (docs): the same generator seed gives the same samples")(_repeatable("ddpm"))
row(C, "diffusers", "EulerDiscreteScheduler (init_noise_sigma, scale_model_input): samples N(0, 1)")(
    _samples_prior("euler"))
row(C, "diffusers", "DPMSolverMultistepScheduler: samples N(0, 1)")(_samples_prior("dpm"))


def _dit():
    from neurips25.inverse3d import LatentDiT

    torch.manual_seed(0)
    return LatentDiT((3, 4, 4, 2), dim=16, depth=1, heads=2, patch=2).eval()


def _dit_inputs(dtype, device):
    g = torch.Generator().manual_seed(1)
    return torch.randn(2, 3, 4, 4, 2, generator=g).to(device, dtype), torch.tensor([10, 500], device=device)


@row(C, "torch", "LatentDiT float64 forward follows the input dtype")
def _dit_f64(tmp_path):
    forward_in_dtype(_dit(), _dit_inputs, torch.float64)


@row(C, "torch", "LatentDiT bfloat16 forward runs and returns bfloat16")
def _dit_bf16(tmp_path):
    forward_in_dtype(_dit(), _dit_inputs, LOW_PRECISION)


@row(C, "torch", "LatentDiT on cuda follows the input device", device="cuda")
def _dit_cuda(tmp_path):
    forward_in_dtype(_dit(), _dit_inputs, torch.float32, device="cuda")


@row(C, "torch", "LatentDiT torch.compile matches eager")
def _dit_compile(tmp_path):
    compiled_matches_eager(_dit(), _dit_inputs(torch.float32, "cpu"))


@row(C, "torch", "sampler follows the DiT's dtype (float64 DiT gives float64 latents)")
def _sampler_f64(tmp_path):
    from neurips25.inverse3d import ObjectiveGuidedSampler, make_scheduler

    sched = make_scheduler("ddim")
    s = ObjectiveGuidedSampler(_ExactGaussianPrior(sched.alphas_cumprod.double()), sched, None, 0.0, 5)
    z = s.sample(4, generator=torch.Generator().manual_seed(0))
    assert z.dtype == torch.float64


@row(C, "torch", "LatentDiT state_dict through a file: equal outputs")
def _dit_state(tmp_path):
    from contract_fixtures import state_dict_round_trip

    a, b = _dit(), _dit()
    torch.manual_seed(5)
    b = type(b)((3, 4, 4, 2), dim=16, depth=1, heads=2, patch=2).eval()
    state_dict_round_trip(a, b, tmp_path / "dit.pt")
    with torch.no_grad():
        assert_close(b(*_dit_inputs(torch.float32, "cpu")), a(*_dit_inputs(torch.float32, "cpu")))


@row(C, "diffusers", "a stock DDIMScheduler() / DDPMScheduler() (clip_sample=True, made for images in [-1, 1]) is "
     "refused by name, naming clip_sample; the same scheduler with clip_sample=False samples N(0, 1)")
def _clipping_scheduler(tmp_path):
    import diffusers
    import pytest

    from neurips25.inverse3d import ObjectiveGuidedSampler

    for cls in (diffusers.DDIMScheduler, diffusers.DDPMScheduler):
        sched = cls()
        with pytest.raises(ValueError, match=rf"`scheduler` must not clip.*{cls.__name__} has clip_sample=True"):
            ObjectiveGuidedSampler(_ExactGaussianPrior(sched.alphas_cumprod), sched, None, 0.0, 5)
    sched = diffusers.DDIMScheduler.from_config(diffusers.DDIMScheduler().config, clip_sample=False)
    z = ObjectiveGuidedSampler(_ExactGaussianPrior(sched.alphas_cumprod), sched, None, 0.0, 25).sample(
        1000, generator=torch.Generator().manual_seed(0))
    assert 0.85 < float(z.std()) < 1.05, float(z.std())


@row(C, "torch", "an objective returning a scalar (the batch mean) instead of (B,) is refused by name")
def _scalar_objective(tmp_path):
    import pytest

    from neurips25.inverse3d import ObjectiveGuidedSampler, make_scheduler

    sched = make_scheduler("ddim")
    s = ObjectiveGuidedSampler(_ExactGaussianPrior(sched.alphas_cumprod), sched,
                               lambda z: ((z - 1) ** 2).sum((1, 2, 3, 4)).mean(), 1.0, 3)
    with pytest.raises(ValueError, match=r"`objective` must return one value per latent, shape \(B,\) = \(4,\); "
                                         r"got shape \(\)"):
        s.sample(4, generator=torch.Generator().manual_seed(0))
