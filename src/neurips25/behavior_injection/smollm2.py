"""A pretrained policy for BRIDGE: SmolLM2-135M-Instruct (``neurips25.pretrained``) with LoRA adapters.

The paper fine-tunes open pretrained LMs; here the pretrained LM that ships offline is SmolLM2-135M-Instruct
(a ``LlamaForCausalLM``, 30 layers, hidden 576). :func:`lora_policy` wraps it (or any causal LM) in PEFT LoRA on
every attention and MLP projection; SFT (:func:`~neurips25.behavior_injection.sft.sft_train`) and GRPO
(:class:`~neurips25.behavior_injection.grpo.GRPO`) then train the adapters only. LoRA was chosen over full
fine-tuning from the measured CPU cost (docs/behavior_injection.md, "Cost").
"""

from __future__ import annotations

import numbers

from neurips25.extras import require

LM_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


def lora_policy(model, rank: int = 16, alpha: float | None = None, targets=LM_TARGETS, seed: int = 0):
    """``model`` wrapped in PEFT LoRA (rank ``rank``, scale ``alpha / rank``, default alpha = 2 rank) on the
    projections named in ``targets``; only the adapters train. B starts at 0, so the policy starts as ``model``.

    Examples
    --------
    >>> from neurips25.eva.llm import tiny_llama
    >>> pm = lora_policy(tiny_llama(0), rank=2)
    >>> sum(p.numel() for p in pm.parameters() if p.requires_grad) > 0
    True
    """
    peft = require("peft", "lm")
    torch = require("torch", "lm")
    if isinstance(rank, bool) or not isinstance(rank, numbers.Integral) or rank < 1:
        raise ValueError(f"`rank` must be a positive int, got {rank!r}")
    alpha = 2.0 * int(rank) if alpha is None else alpha
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or float(alpha) <= 0:
        raise ValueError(f"`alpha` must be a number > 0, got {alpha!r}")
    torch.manual_seed(int(seed))  # LoRA's A is drawn at random (Kaiming); B = 0
    cfg = peft.LoraConfig(r=int(rank), lora_alpha=float(alpha), target_modules=list(targets), lora_dropout=0.0,
                          task_type="CAUSAL_LM")
    pm = peft.get_peft_model(model, cfg)
    pm.eval()
    return pm
