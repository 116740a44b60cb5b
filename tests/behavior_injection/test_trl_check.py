"""Our GRPO loss and gradient equal TRL's GRPOTrainer loss (loss_type="grpo") on the same batch."""

import pytest
import torch

pytest.importorskip("trl")

from neurips25.behavior_injection import sample_rollouts  # noqa: E402
from neurips25.behavior_injection.grpo import completion_logprobs  # noqa: E402
from neurips25.behavior_injection.trl_check import (  # noqa: E402
    advantage_scale,
    build_trl_trainer,
    trl_loss_crosscheck,
)


def test_trl_loss_and_gradient_match(task, tok):
    from neurips25.behavior_injection import tiny_llama

    model = tiny_llama(len(tok), d_model=32, n_layers=2, n_heads=2, max_len=160, seed=1, tokenizer=tok)
    qs = task.samples(3)
    torch.manual_seed(0)
    ro = sample_rollouts(model, tok, [q.question for q in qs], 4, 16)
    trainer = build_trl_trainer(model, tok, [q.question for q in qs], 4)
    adv = torch.randn(12, generator=torch.Generator().manual_seed(0))
    on = trl_loss_crosscheck(model, tok, ro, adv, trainer=trainer)
    assert on["abs_diff"] < 1e-6 and on["grad_rel_diff"] < 1e-5
    with torch.no_grad():  # off-policy: ratios away from 1, some clipped
        old = completion_logprobs(model, ro.prompt_ids, ro.prompt_mask, ro.completion_ids, ro.completion_mask)
        old = old + 0.5 * torch.randn(old.shape, generator=torch.Generator().manual_seed(1))
    off = trl_loss_crosscheck(model, tok, ro, adv, old_logp=old, trainer=trainer)
    assert off["abs_diff"] < 1e-6 and off["grad_rel_diff"] < 1e-5
    # a control that must fail: the clip range differs from TRL's epsilon
    from neurips25.behavior_injection.grpo import grpo_objective
    logp = completion_logprobs(model, ro.prompt_ids, ro.prompt_mask, ro.completion_ids, ro.completion_mask)
    wrong = -grpo_objective(logp, old, adv, ro.completion_mask, clip_eps=0.05)
    assert abs(float(wrong) - off["trl"]) > 1e-4
    with pytest.raises(ValueError, match="advantages"):
        trl_loss_crosscheck(model, tok, ro, adv[:5], trainer=trainer)
    assert advantage_scale(8) == pytest.approx((7 / 8) ** 0.5)
