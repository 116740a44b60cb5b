"""A tiny Hugging Face causal LM and a word-level tokenizer, both built offline.

No small causal-LM weights ship in any installable package here, so the policy is a ``LlamaForCausalLM``
from a tiny config (about 0.7M parameters at the defaults) trained from scratch, with a ``tokenizers``
WordLevel ``PreTrainedTokenizerFast``. Every other part of this package (SFT, GRPO, the influence analysis)
only uses the standard interface (``model(input_ids, attention_mask, position_ids).logits``,
``model.generate``), so it runs unchanged on a real pretrained HF model.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

SPECIAL = {"pad": "<pad>", "bos": "<bos>", "eos": "<eos>", "unk": "<unk>"}


def build_tokenizer(words: Sequence[str]):
    """A whitespace word-level ``PreTrainedTokenizerFast`` over ``words`` plus ``<pad> <bos> <eos> <unk>``.

    Padding side is left, as generation needs. The tokenizer adds ``<bos>`` (``add_bos_token=True``), so
    rollouts and SFT pairs start with it (:func:`~neurips25.behavior_injection.grpo.bos_prefix`).
    """
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    words = list(dict.fromkeys(str(w) for w in words))
    if not words or any(not w or any(c.isspace() for c in w) for w in words):
        raise ValueError("`words` must be non-empty strings without whitespace")
    vocab = {w: i for i, w in enumerate([*SPECIAL.values(), *words])}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token=SPECIAL["unk"]))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok = PreTrainedTokenizerFast(tokenizer_object=core, pad_token=SPECIAL["pad"], bos_token=SPECIAL["bos"],
                                  eos_token=SPECIAL["eos"], unk_token=SPECIAL["unk"], add_bos_token=True)
    tok.padding_side = "left"
    return tok


def tiny_llama(vocab_size: int, d_model: int = 128, n_layers: int = 4, n_heads: int = 4, max_len: int = 320,
               seed: int = 0, tokenizer=None):
    """A freshly initialised ``LlamaForCausalLM`` of the given size (float32, eval mode off).

    Parameters
    ----------
    vocab_size : int
    d_model, n_layers, n_heads : int
        Width, depth, heads (``d_model`` divisible by ``n_heads``); MLP width is ``2 * d_model``.
    max_len : int
        Context length (``max_position_embeddings``); rollouts longer than it are refused.
    seed : int
        Seeds the initialisation.
    tokenizer : PreTrainedTokenizerFast, optional
        Sets pad / bos / eos token ids in the config and generation config.
    """
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    for name, v in (("vocab_size", vocab_size), ("d_model", d_model), ("n_layers", n_layers),
                    ("n_heads", n_heads), ("max_len", max_len)):
        if not isinstance(v, numbers.Integral) or v < 1:
            raise ValueError(f"`{name}` must be a positive int, got {v!r}")
    if d_model % n_heads:
        raise ValueError(f"`d_model` ({d_model}) must be divisible by `n_heads` ({n_heads})")
    ids = {}
    if tokenizer is not None:
        # no pad_token_id in the config: it would make the embedding's pad row gradient-free (padding_idx),
        # while a policy may sample <pad> mid-completion and the tied output row must then learn
        ids = dict(bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id)
    cfg = LlamaConfig(vocab_size=int(vocab_size), hidden_size=int(d_model), intermediate_size=2 * int(d_model),
                      num_hidden_layers=int(n_layers), num_attention_heads=int(n_heads),
                      num_key_value_heads=int(n_heads), max_position_embeddings=int(max_len),
                      tie_word_embeddings=True, attn_implementation="sdpa", **ids)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        model = LlamaForCausalLM(cfg)
    if tokenizer is not None:
        model.generation_config.pad_token_id = tokenizer.pad_token_id
        model.generation_config.bos_token_id = tokenizer.bos_token_id
        model.generation_config.eos_token_id = tokenizer.eos_token_id
    return model
