"""Streaming Content Monitor (SCM): stop an LLM's harmful answer a few tokens in.

Li et al. "From Judgment to Interference: Early Stopping LLM Harmful Outputs via Streaming Content
Monitoring". NeurIPS 2025 (arXiv:2506.09996).

Idea: full-detection moderators judge a complete answer, so used on a stream they either wait for the end or
are applied to prefixes they were never trained on. SCM puts two heads on one causal LM backbone: a token
head ``g(h_t)`` trained on fine-grained labels (content words of harmful sentences) that judges every prefix,
and a response head ``f(h_last)`` trained on response labels; a logic-consistency term ties them
("response harmful => some token harmful"):

    L = alpha CE(g) + (1 - alpha) CE(f) + gamma * -log(1 - p_r + p_r * max_t p_t)

At inference each new token is scored once (KV cache) and the answer is stopped when ``k`` tokens have scored
``p_t >= tau`` (delay-k; ``k, tau`` chosen on validation data).

Reconstructed (paper text not read; official code and summaries used): alpha (swept), the function-word list
in place of POS tagging, the synthetic data; see docs/scm.md.

Needs the ``lm`` extra (torch, transformers; peft for LoRA).
"""

from neurips25.scm.annotate import FUNCTION_WORDS, fine_grained_labels, majority_vote, token_labels_from_spans
from neurips25.scm.backbone import tiny_decoder, truncate_layers
from neurips25.scm.continuations import label_continuation, own_continuations
from neurips25.scm.data import (
    Encoded,
    HarmSample,
    StreamHarmSynth,
    benign_prompts,
    encode_samples,
    harmbench_behaviors,
    make_splits,
    opener_rule,
    planted_pattern,
    split_prompts,
)
from neurips25.scm.evaluate import (
    f1_scores,
    full_detection_report,
    partial_detection_report,
    select_k,
    stop_positions,
)
from neurips25.scm.losses import logic_consistency_loss, scm_loss
from neurips25.scm.model import SCMOutput, StreamingContentMonitor
from neurips25.scm.stream import (
    DelayKPolicy,
    SCMStoppingCriteria,
    ScoreTally,
    SharedBackboneTap,
    StepResult,
    StreamSession,
)
from neurips25.scm.train import (
    HiddenSet,
    cache_hidden_states,
    score_hidden,
    score_samples,
    train_end_to_end,
    train_heads,
)

__all__ = [
    "FUNCTION_WORDS", "fine_grained_labels", "majority_vote", "token_labels_from_spans",
    "tiny_decoder", "truncate_layers", "label_continuation", "own_continuations",
    "Encoded", "HarmSample", "StreamHarmSynth", "encode_samples", "harmbench_behaviors", "planted_pattern",
    "benign_prompts", "make_splits", "opener_rule", "split_prompts",
    "f1_scores", "full_detection_report", "partial_detection_report", "select_k", "stop_positions",
    "logic_consistency_loss", "scm_loss",
    "SCMOutput", "StreamingContentMonitor",
    "DelayKPolicy", "SCMStoppingCriteria", "ScoreTally", "SharedBackboneTap", "StepResult", "StreamSession",
    "HiddenSet", "cache_hidden_states", "score_hidden", "score_samples", "train_end_to_end", "train_heads",
]
