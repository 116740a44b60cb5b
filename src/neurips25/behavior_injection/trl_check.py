"""Cross-check of our GRPO objective against TRL's ``GRPOTrainer`` loss on the same batch.

TRL (``trl.GRPOTrainer`` with ``loss_type="grpo"``) minimises, per rollout, the length-normalised sum of
``-min(rho A, clip(rho, 1-eps, 1+eps) A)`` and averages over rollouts: the negative of
:func:`~neurips25.behavior_injection.grpo.grpo_objective`. This module builds a ``GRPOTrainer`` around the
same model and tokenizer, feeds it our rollouts, advantages and ``pi_old`` log-probs, and compares the loss
and its gradient with ours. Only the loss is compared on identical advantages: TRL normalises rewards by the
sample std plus 1e-4 (``scale_rewards="group"``), ours by the population std, which rescales every advantage
of a group of ``N`` by ``sqrt((N - 1) / N)`` (reported by :func:`advantage_scale`).

TRL is optional: ``neurips25[rl]``.
"""

from __future__ import annotations

import numbers
import tempfile

import numpy as np

from neurips25.behavior_injection.grpo import Rollouts, completion_logprobs, grpo_objective


def build_trl_trainer(model, tokenizer, prompts, group_size: int, clip_eps: float = 0.2, max_new_tokens: int = 40,
                      output_dir: str | None = None):
    """A ``trl.GRPOTrainer`` around ``model`` (loss ``"grpo"``, beta 0, CPU, no logging) on ``prompts``."""
    from neurips25.extras import require

    require("trl", "rl")
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    if not isinstance(group_size, numbers.Integral) or group_size < 2:
        raise ValueError(f"`group_size` must be an int >= 2, got {group_size!r}")
    if len(prompts) == 0:
        raise ValueError("`prompts` must not be empty")
    args = GRPOConfig(output_dir=output_dir or tempfile.mkdtemp(prefix="trl_grpo_"), loss_type="grpo", beta=0.0,
                      epsilon=float(clip_eps), num_generations=int(group_size),
                      per_device_train_batch_size=int(group_size) * len(prompts), max_completion_length=int(
                          max_new_tokens), report_to=[], use_cpu=True, logging_steps=1, save_strategy="no",
                      max_steps=1, learning_rate=1e-4, temperature=1.0, top_k=0, top_p=1.0, bf16=False,
                      dataloader_num_workers=0, disable_tqdm=True)

    def reward_fn(completions, **kwargs):  # the cross-check passes its own advantages; unused there
        return [0.0] * len(completions)

    ds = Dataset.from_dict({"prompt": [str(p) for p in prompts]})
    return GRPOTrainer(model=model, reward_funcs=reward_fn, args=args, train_dataset=ds,
                       processing_class=tokenizer)


def trl_loss_crosscheck(model, tokenizer, rollouts: Rollouts, advantages, old_logp=None, clip_eps: float = 0.2,
                        trainer=None) -> dict:
    """Our GRPO loss and gradient vs TRL's ``GRPOTrainer.compute_loss`` on the same batch.

    Parameters
    ----------
    rollouts : Rollouts
        From :func:`~neurips25.behavior_injection.grpo.sample_rollouts`.
    advantages : (B,) tensor or array
        One advantage per rollout (``B = rollouts.completion_ids.shape[0]``).
    old_logp : (B, T) tensor, optional
        ``pi_old`` log-probs; default the current model's (on-policy, ``rho = 1``).
    trainer : trl.GRPOTrainer, optional
        Reused when given (building one costs about a second).

    Returns
    -------
    dict
        ``ours``, ``trl`` (losses), ``abs_diff``, ``grad_rel_diff`` (relative L2 difference of the
        parameter gradients).
    """
    import torch

    B = rollouts.completion_ids.shape[0]
    adv = torch.as_tensor(np.asarray(advantages, dtype=np.float64) if not torch.is_tensor(advantages)
                          else advantages).to(torch.float32)
    if adv.shape != (B,):
        raise ValueError(f"`advantages` must have shape ({B},), got {tuple(adv.shape)}")
    if not torch.isfinite(adv).all():
        raise ValueError("`advantages` must be finite")
    if trainer is None:
        trainer = build_trl_trainer(model, tokenizer, ["x"], max(2, rollouts.n), clip_eps)
    if old_logp is None:
        with torch.no_grad():
            old_logp = completion_logprobs(model, rollouts.prompt_ids, rollouts.prompt_mask,
                                           rollouts.completion_ids, rollouts.completion_mask)
    if tuple(old_logp.shape) != tuple(rollouts.completion_ids.shape):
        raise ValueError(f"`old_logp` must have shape {tuple(rollouts.completion_ids.shape)}, got "
                         f"{tuple(old_logp.shape)}")
    params = [p for p in model.parameters() if p.requires_grad]
    was_training = model.training
    model.train()  # no dropout in the tiny Llama; TRL's loss divides by the accumulation steps in train mode
    logp = completion_logprobs(model, rollouts.prompt_ids, rollouts.prompt_mask, rollouts.completion_ids,
                               rollouts.completion_mask)
    ours = -grpo_objective(logp, old_logp, adv, rollouts.completion_mask, clip_eps)
    g_ours = torch.autograd.grad(ours, params)
    inputs = {"prompt_ids": rollouts.prompt_ids, "prompt_mask": rollouts.prompt_mask,
              "completion_ids": rollouts.completion_ids, "completion_mask": rollouts.completion_mask,
              "advantages": adv, "old_per_token_logps": old_logp.detach()}
    trainer.current_gradient_accumulation_steps = 1
    theirs = trainer.compute_loss(model, inputs)
    g_trl = torch.autograd.grad(theirs, params)
    if not was_training:
        model.eval()
    go = torch.cat([g.reshape(-1) for g in g_ours])
    gt = torch.cat([g.reshape(-1) for g in g_trl])
    return {"ours": float(ours), "trl": float(theirs), "abs_diff": float(abs(ours - theirs)),
            "grad_rel_diff": float((go - gt).norm() / go.norm().clamp_min(1e-30))}


def advantage_scale(group_size: int) -> float:
    """Ratio of TRL's group advantages to ours for a group of ``group_size`` (ignoring TRL's +1e-4)."""
    if not isinstance(group_size, numbers.Integral) or group_size < 2:
        raise ValueError(f"`group_size` must be an int >= 2, got {group_size!r}")
    return float(np.sqrt((group_size - 1) / group_size))
