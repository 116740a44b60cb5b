"""Latent DiT prior and objective-guided sampling on diffusers schedulers (3DID, Sec. 3.2).

Sampling targets ``p(z | J) ∝ p(z) p(J | z)`` with ``grad log p(J | z_t) ≈ -grad_{z_t} J(ẑ0(z_t))``, where
``ẑ0 = (z_t - sqrt(1 - ᾱ_t) eps) / sqrt(ᾱ_t)`` is the one-step (Tweedie) estimate. The guided noise
prediction is ``eps' = eps_phi(z_t, t) + gamma * grad_{z_t} J(ẑ0(z_t))``: the scheduler's update subtracts
``eps'``, so a positive ``gamma`` lowers ``J``. The hook edits ``model_output`` before
``scheduler.step(model_output, t, sample)``, as classifier guidance does in diffusers.

With the raw form the step that ẑ0 takes grows like ``1 / ᾱ_t`` at high noise (the gradient through
``ẑ0 = (z_t - ...) / sqrt(ᾱ_t)`` carries a ``1 / sqrt(ᾱ_t)`` and the update another), which blows up
early DDIM steps. ``scaling="tweedie"`` (default; reconstructed) multiplies the gradient by
``sqrt(ᾱ_t (1 - ᾱ_t))``: the classifier-guidance factor ``sqrt(1 - ᾱ_t)`` times the inverse Tweedie
Jacobian, so ẑ0 moves by ``gamma (1 - ᾱ_t) grad_ẑ0 J``: a bounded gradient step. ``scaling="raw"`` is
the formula as written.
"""

from __future__ import annotations

import inspect
import math
import numbers

import torch
from torch import nn

from neurips25.extras import require


def timestep_embedding(t, dim, dtype=torch.float32):
    """Sinusoidal embedding of timesteps, (B,) -> (B, dim) in ``dtype``.

    The angles are computed in float64 (float32 for a float32 result) and cast at the end, so a bfloat16
    model gets an embedding as exact as its width allows, not bfloat16 angles of up to 1,000 radians.
    """
    half = dim // 2
    work = torch.float64 if dtype == torch.float64 else torch.float32
    freqs = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=work, device=t.device) / half)
    a = t.to(work)[:, None] * freqs[None]
    return torch.cat([a.sin(), a.cos()], -1).to(dtype)


class DiTBlock(nn.Module):
    """Transformer block with adaptive LayerNorm (scale, shift, gate from the timestep), as in DiT."""

    def __init__(self, dim, heads):
        super().__init__()
        self.n1 = nn.LayerNorm(dim, elementwise_affine=False)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.n2 = nn.LayerNorm(dim, elementwise_affine=False)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.ada = nn.Linear(dim, 6 * dim)
        nn.init.zeros_(self.ada.weight)
        nn.init.zeros_(self.ada.bias)

    def forward(self, x, c):
        s1, b1, g1, s2, b2, g2 = self.ada(c).unsqueeze(1).chunk(6, -1)
        h = self.n1(x) * (1 + s1) + b1
        x = x + g1 * self.attn(h, h, h, need_weights=False)[0]
        h = self.n2(x) * (1 + s2) + b2
        return x + g2 * self.mlp(h)


class LatentDiT(nn.Module):
    """Noise predictor ``eps_phi(z_t, t)`` over triplane latents: one token per latent cell.

    Parameters
    ----------
    latent_shape : tuple (3, r, r, c)
    dim, depth, heads : int, default 72, 4, 4
        Width, blocks and heads (the paper: 72, 10, 16).
    patch : int, default 2
        Each token holds a ``patch x patch`` block of one plane (``r`` must be divisible by it).

    Notes
    -----
    Shapes: ``z`` (B, 3, r, r, c), ``t`` (B,) -> (B, 3, r, r, c).
    """

    def __init__(self, latent_shape, dim=72, depth=4, heads=4, patch=2):
        super().__init__()
        if len(latent_shape) != 4:
            raise ValueError(f"`latent_shape` must be (3, r, r, c); got {latent_shape!r}")
        if dim % heads:
            raise ValueError(f"`dim` must be divisible by `heads`; got {dim}, {heads}")
        self.latent_shape = tuple(int(s) for s in latent_shape)
        P, r, c = int(patch), self.latent_shape[1], self.latent_shape[3]
        if P < 1 or r % P or self.latent_shape[2] != r:
            raise ValueError(f"`patch` must divide the plane size r={r}; got {patch!r}")
        self.patch = P
        n_tok = self.latent_shape[0] * (r // P) ** 2
        c = c * P * P
        self.inp = nn.Linear(c, dim)
        self.pos = nn.Parameter(torch.randn(1, n_tok, dim) * 0.02)
        self.temb = nn.Sequential(nn.Linear(dim, dim), nn.SiLU(), nn.Linear(dim, dim))
        self.blocks = nn.ModuleList(DiTBlock(dim, heads) for _ in range(depth))
        self.norm = nn.LayerNorm(dim, elementwise_affine=False)
        self.out = nn.Linear(dim, c)
        self.dim = dim

    def _tokens(self, z):
        B, three, r, _, c = z.shape
        P = self.patch
        x = z.reshape(B, three, r // P, P, r // P, P, c).permute(0, 1, 2, 4, 3, 5, 6)
        return x.reshape(B, three * (r // P) ** 2, P * P * c)

    def _untokens(self, x):
        B = x.shape[0]
        three, r, _, c = self.latent_shape
        P = self.patch
        x = x.reshape(B, three, r // P, r // P, P, P, c).permute(0, 1, 2, 4, 3, 5, 6)
        return x.reshape(B, three, r, r, c)

    def forward(self, z, t):
        B = z.shape[0]
        x = self.inp(self._tokens(z)) + self.pos
        t = t.reshape(-1).expand(B) if t.numel() == 1 else t
        c = self.temb(timestep_embedding(t, self.dim, dtype=x.dtype))
        for blk in self.blocks:
            x = blk(x, c)
        return self._untokens(self.out(self.norm(x)))


def make_scheduler(kind="ddim", num_train_timesteps=1000):
    """A diffusers scheduler (``"ddpm"`` or ``"ddim"``) with the linear beta schedule and no clipping.

    Latents are standardised, not images in [-1, 1]: diffusers' default ``clip_sample=True`` would clip
    every ẑ0 estimate to [-1, 1] and shrink the samples (s.d. 0.68 on an exact N(0, I) prior).
    """
    diffusers = require("diffusers", "inverse3d")
    if kind == "ddpm":
        return diffusers.DDPMScheduler(num_train_timesteps=num_train_timesteps, clip_sample=False)
    if kind == "ddim":
        return diffusers.DDIMScheduler(num_train_timesteps=num_train_timesteps, clip_sample=False)
    raise ValueError(f"`kind` must be 'ddpm' or 'ddim'; got {kind!r}")


def train_dit(dit, latents, steps, lr=5e-4, batch=32, generator=None, num_train_timesteps=1000):
    """Standard epsilon-prediction training on (normalised) latents; returns the loss history.

    A bfloat16 DiT trains on latents cast to its dtype (the loss is taken in float32); a float16 one is refused
    (AdamW cannot train float16 weights: its eps underflows and they turn NaN)."""
    if any(p.dtype == torch.float16 for p in dit.parameters()):
        raise ValueError("`dit` has float16 parameters: AdamW's update divides by sqrt(v) + eps, both 0 in float16, "
                         "and the weights turn NaN; train in float32 or bfloat16 (cast to float16 afterwards)")
    dtype = next((p.dtype for p in dit.parameters() if p.is_floating_point()), torch.float32)
    sched = make_scheduler("ddpm", num_train_timesteps)
    opt = torch.optim.AdamW(dit.parameters(), lr=lr, weight_decay=1e-4)
    cos = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    hist = []
    for _ in range(int(steps)):
        idx = torch.randint(len(latents), (batch,), generator=generator)
        z0 = latents[idx]
        noise = torch.randn(z0.shape, generator=generator)
        t = torch.randint(0, num_train_timesteps, (batch,), generator=generator)
        zt = sched.add_noise(z0, noise, t)
        loss = ((dit(zt.to(dtype), t).float() - noise.float()) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        cos.step()
        hist.append(float(loss.detach()))
    return hist


class ObjectiveGuidedSampler:
    """Objective-guided latent diffusion sampling (guidance through the Tweedie ẑ0 estimate).

    Parameters
    ----------
    dit : nn.Module
        ``eps_phi(z_t, t)``.
    scheduler : diffusers scheduler
        An epsilon-prediction scheduler with ``alphas_cumprod``: ``DDIMScheduler``, ``DDPMScheduler``,
        ``EulerDiscreteScheduler``, ``DPMSolverMultistepScheduler`` (any other with the same interface).
        The sampler follows the diffusers loop: the start noise is scaled by ``init_noise_sigma``, the DiT
        reads ``scale_model_input(sample, t)`` (the variance-preserving ``z_t`` it was trained on, whatever
        the scheduler's parametrisation), and ``step`` gets the generator (DDPM's ancestral noise, Euler's
        churn). A scheduler predicting anything but epsilon, or clipping / thresholding ẑ0 (diffusers' default
        ``clip_sample=True`` of DDIM and DDPM, made for images in [-1, 1]), is refused by name.
    objective : callable or None
        ``J(z0) -> (B,)`` tensor, one value per latent (any other shape is refused), differentiable, lower is
        better; ``None`` = unguided sampling.
    guidance_scale : float, default 1.0
        ``gamma`` >= 0.
    num_inference_steps : int, default 50
    scaling : {"tweedie", "raw"}, default "tweedie"
        How the gradient is weighted per timestep (see the module docstring).

    Notes
    -----
    Samples come in the DiT's dtype (that of its first parameter or buffer; float32 if it has none) unless
    ``sample(dtype=...)`` says otherwise.

    Examples
    --------
    >>> import torch
    >>> from neurips25.inverse3d.diffusion import LatentDiT, ObjectiveGuidedSampler, make_scheduler
    >>> dit = LatentDiT((3, 2, 2, 2), dim=8, depth=1, heads=2, patch=1)
    >>> s = ObjectiveGuidedSampler(dit, make_scheduler(), lambda z: (z ** 2).sum((1, 2, 3, 4)), 0.5, 5)
    >>> s.sample(3, generator=torch.Generator().manual_seed(0)).shape
    torch.Size([3, 3, 2, 2, 2])
    """

    def __init__(self, dit, scheduler, objective=None, guidance_scale=1.0, num_inference_steps=50,
                 scaling="tweedie"):
        if scaling not in ("tweedie", "raw"):
            raise ValueError(f"`scaling` must be 'tweedie' or 'raw'; got {scaling!r}")
        self.scaling = scaling
        if (isinstance(guidance_scale, bool) or not isinstance(guidance_scale, numbers.Real)
                or not math.isfinite(guidance_scale)):
            raise ValueError(f"`guidance_scale` must be a finite number >= 0; got {guidance_scale!r}")
        if guidance_scale < 0:
            raise ValueError(f"`guidance_scale` must be >= 0 (a negative gamma would raise the objective); "
                             f"got {guidance_scale}")
        if objective is not None and not callable(objective):
            raise ValueError(f"`objective` must be callable or None; got {type(objective).__name__}")
        if (isinstance(num_inference_steps, bool) or not isinstance(num_inference_steps, numbers.Integral)
                or num_inference_steps < 1):
            raise ValueError(f"`num_inference_steps` must be an integer >= 1; got {num_inference_steps!r}")
        _check_scheduler(scheduler)
        self.dit, self.scheduler, self.objective = dit, scheduler, objective
        self.gamma = float(guidance_scale)
        self.num_inference_steps = int(num_inference_steps)

    def _a_bar(self, t, dtype):
        """ᾱ at a (possibly fractional: Euler's) timestep, linear in t between the training steps."""
        ac = self.scheduler.alphas_cumprod
        tf = float(t)
        i = min(int(math.floor(tf)), len(ac) - 1)
        j = min(i + 1, len(ac) - 1)
        w = tf - i
        return torch.as_tensor((1 - w) * float(ac[i]) + w * float(ac[j]), dtype=dtype)

    def guided_eps(self, z_t, t):
        """``eps' = eps + gamma * w_t * grad_{z_t} J(ẑ0(z_t))`` (and ẑ0); ``w_t = 1`` for ``scaling="raw"``.

        ``z_t`` is the variance-preserving model input (what ``scale_model_input`` returns).
        """
        a_bar = self._a_bar(t, z_t.dtype)
        tt = torch.full((z_t.shape[0],), int(round(float(t))), dtype=torch.long, device=z_t.device)
        if self.objective is None or self.gamma == 0:
            with torch.no_grad():
                eps = self.dit(z_t, tt)
            return eps, (z_t - (1 - a_bar).sqrt() * eps) / a_bar.sqrt()
        z = z_t.detach().requires_grad_(True)
        eps = self.dit(z, tt)
        z0 = (z - (1 - a_bar).sqrt() * eps) / a_bar.sqrt()
        J = self.objective(z0)
        if not isinstance(J, torch.Tensor):
            raise ValueError(f"`objective` must return a torch tensor (B,) differentiable in z0 (guidance needs its "
                             f"gradient); got {type(J).__name__}")
        if tuple(J.shape) != (z0.shape[0],):  # a batch mean would weaken every latent's guidance B-fold, silently
            raise ValueError(f"`objective` must return one value per latent, shape (B,) = ({z0.shape[0]},); got shape "
                             f"{tuple(J.shape)} (a scalar such as the batch mean divides each latent's guidance by B)")
        if not J.requires_grad:
            raise ValueError("`objective` must be differentiable in z0: its output has no gradient path to z0 "
                             "(computed under no_grad, detached, or not a function of z0)")
        (grad,) = torch.autograd.grad(J.sum(), z, allow_unused=True)
        if grad is None:
            raise ValueError("`objective` must be differentiable in z0: its output does not depend on z0")
        w = (a_bar * (1 - a_bar)).sqrt() if self.scaling == "tweedie" else 1.0
        return (eps + self.gamma * w * grad).detach(), z0.detach()

    def _dtype(self):
        for t in list(self.dit.parameters()) + list(self.dit.buffers()):
            if t.is_floating_point():
                return t.dtype
        return torch.float32

    def sample(self, n, generator=None, dtype=None):
        """Draw ``n`` latents from pure noise; returns (n, *latent_shape) in ``dtype`` (default: the DiT's)."""
        if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
            raise ValueError(f"`n` must be an integer >= 1; got {n!r}")
        dtype = self._dtype() if dtype is None else dtype
        sched = self.scheduler
        _check_scheduler(sched)  # also one swapped in after construction
        sched.set_timesteps(self.num_inference_steps)
        z = torch.randn((int(n), *self.dit.latent_shape), generator=generator, dtype=dtype)
        z = z * float(getattr(sched, "init_noise_sigma", 1.0))
        step_kw = {"generator": generator} if "generator" in inspect.signature(sched.step).parameters else {}
        for t in sched.timesteps:
            z_in = sched.scale_model_input(z, t) if hasattr(sched, "scale_model_input") else z
            eps, _ = self.guided_eps(z_in, t)
            z = sched.step(eps, t, z, **step_kw).prev_sample.to(dtype)
        return z.detach()


def _check_scheduler(scheduler):
    name = type(scheduler).__name__
    missing = [a for a in ("set_timesteps", "step", "alphas_cumprod") if not hasattr(scheduler, a)]
    if missing:
        raise ValueError(f"`scheduler` must be a diffusers-style scheduler with set_timesteps, step and "
                         f"alphas_cumprod; {name} lacks {', '.join(missing)}")
    pred = getattr(getattr(scheduler, "config", None), "prediction_type", "epsilon")
    if pred != "epsilon":
        raise ValueError(f"`scheduler` must predict epsilon (the DiT is an epsilon predictor and guidance edits "
                         f"epsilon); {name} has prediction_type={pred!r}")
    # clipping and thresholding are built for images in [-1, 1]; the latents are standardised, so they clip every ẑ0
    # estimate and shrink the samples (a stock DDIMScheduler(): s.d. 0.70 on an exact N(0, I) prior)
    for key in ("clip_sample", "thresholding"):
        if getattr(getattr(scheduler, "config", None), key, False):
            raise ValueError(f"`scheduler` must not clip ẑ0: {name} has {key}=True (made for images in [-1, 1]; the "
                             f"latents are standardised, and clipping shrinks the samples). Pass one with "
                             f"clip_sample=False, thresholding=False: {name}.from_config(scheduler.config, "
                             f"clip_sample=False, thresholding=False), or make_scheduler()")
