"""Behavior injection (BRIDGE): preparing language models for reinforcement learning.

Cen, Yao, Han, Liu, Zhao, "Behavior Injection: Preparing Language Models for Reinforcement Learning",
NeurIPS 2025 (arXiv 2505.18917).

Idea. One GRPO step on query q changes the objective on query q' by ``eta <grad J(q'), grad J(q)>``; with
binary rewards and group-normalised advantages ``grad J(q) = sqrt(alpha (1 - alpha)) (g+ - g-)``, so RL
learns most from queries whose rollout accuracy alpha is near 1/2 and whose successes and failures
transfer to other queries (data co-influence). BRIDGE makes an SFT model "RL-ready" by augmenting the SFT
chains of thought, written as DAGs of intermediate quantities, with exploration (try a locked node, notice
the missing input, back off) and exploitation (gather known values, solve a ready node) steps that are
correct in context and leave the final answer unchanged.

Here: a mini-iGSM task with exact-match reward, a Countdown-style task with a derivation verifier, reasoning-gym's
Countdown and GSM-Symbolic with their verifiers (``RGCountdown``, ``RGGSMSymbolic``), the augmentation, SFT and GRPO
for any Hugging Face causal LM (a tiny ``LlamaForCausalLM`` built offline, or SmolLM2-135M-Instruct with LoRA:
``lora_policy``), the influence analysis (``rl_readiness``) and a cross-check of the GRPO loss against TRL's
``GRPOTrainer``. Reconstructed (the full text was not available): the template wording, the way the
probability p is applied per step, the length-normalised score gradients. See docs/behavior_injection.md.
"""

from neurips25.behavior_injection.augment import (
    BehaviorInjector,
    StepTemplates,
    exploit_step,
    explore_step,
    filler_like,
    inject_behaviors,
)
from neurips25.behavior_injection.countdown import Countdown, verify_derivation
from neurips25.behavior_injection.dag import ReasoningDAG
from neurips25.behavior_injection.grpo import (
    GRPO,
    completion_logprobs,
    group_advantages,
    grpo_objective,
    sample_rollouts,
    score_rollouts,
)
from neurips25.behavior_injection.influence import (
    Group,
    co_influence,
    first_order_check,
    frac_zero_std,
    influence_identity_error,
    informativeness,
    mean_score_gradients,
    rl_readiness,
    rollout_accuracy,
    sample_groups,
)
from neurips25.behavior_injection.model import build_tokenizer, tiny_llama
from neurips25.behavior_injection.rg_tasks import RGCountdown, RGGSMSymbolic, countdown_graph, extract_answer
from neurips25.behavior_injection.sft import sft_train
from neurips25.behavior_injection.smollm2 import lora_policy
from neurips25.behavior_injection.tasks import MiniIGSM, Problem, exact_match_reward, parse_answer, parse_solution
from neurips25.behavior_injection.trl_check import advantage_scale, build_trl_trainer, trl_loss_crosscheck

__all__ = [
    "BehaviorInjector", "inject_behaviors", "explore_step", "exploit_step", "filler_like", "ReasoningDAG",
    "GRPO", "group_advantages", "grpo_objective", "completion_logprobs", "sample_rollouts", "score_rollouts",
    "Group", "sample_groups", "rollout_accuracy", "informativeness", "frac_zero_std", "mean_score_gradients",
    "influence_identity_error", "co_influence", "first_order_check", "rl_readiness", "build_tokenizer",
    "tiny_llama", "sft_train", "MiniIGSM", "Problem", "exact_match_reward", "parse_answer", "parse_solution",
    "Countdown", "verify_derivation", "trl_loss_crosscheck", "build_trl_trainer", "advantage_scale",
    "StepTemplates", "RGCountdown", "RGGSMSymbolic", "countdown_graph", "extract_answer", "lora_policy",
]
