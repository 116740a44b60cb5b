"""Supervised fine-tuning on (prompt, completion) pairs: next-token loss on completion tokens only."""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import numpy as np


def encode_pairs(tokenizer, prompts: Sequence[str], completions: Sequence[str]) -> list[tuple[list[int], int]]:
    """``(ids, n_prompt)`` per pair, ``ids = bos_prefix + prompt completion <eos>`` (the prompt prefix of
    :func:`~neurips25.behavior_injection.grpo.bos_prefix`, as the rollouts use)."""
    from neurips25.behavior_injection.grpo import bos_prefix

    if len(prompts) != len(completions):
        raise ValueError(f"`prompts` and `completions` must have the same length, got {len(prompts)} and "
                         f"{len(completions)}")
    p_ids = tokenizer(list(prompts), add_special_tokens=False)["input_ids"]
    c_ids = tokenizer(list(completions), add_special_tokens=False)["input_ids"]
    unk = getattr(tokenizer, "unk_token_id", None)
    prefix = bos_prefix(tokenizer)
    end = [] if tokenizer.eos_token_id is None else [tokenizer.eos_token_id]
    out = []
    for i, (p, c) in enumerate(zip(p_ids, c_ids)):
        if unk is not None and (unk in p or unk in c):
            raise ValueError(f"pair {i} has words outside the tokenizer's vocabulary")
        out.append(([*prefix, *p, *c, *end], len(prefix) + len(p)))
    return out


def sft_train(model, tokenizer, prompts: Sequence[str], completions: Sequence[str], steps: int,
              batch_size: int = 32, lr: float = 1e-3, warmup: int = 50, seed: int = 0, desc: str = "SFT",
              weight_decay: float = 0.01, callback=None) -> list[float]:
    """Train ``model`` in place for ``steps`` AdamW steps on random mini-batches; returns the loss per step.

    The loss is the mean cross-entropy over completion tokens (the prompt is context only); the learning
    rate warms up linearly over ``warmup`` steps then decays by cosine to 10 %. ``callback(step, model)``,
    when given, runs after every step (in eval mode is up to the callback).
    """
    import torch

    from neurips25.repro import progress

    for name, v in (("steps", steps), ("batch_size", batch_size)):
        if not isinstance(v, numbers.Integral) or v < 1:
            raise ValueError(f"`{name}` must be a positive int, got {v!r}")
    from neurips25.behavior_injection.grpo import refuse_float16

    refuse_float16(model, "model")
    data = encode_pairs(tokenizer, prompts, completions)
    max_len = model.config.max_position_embeddings
    too_long = [i for i, (ids, _) in enumerate(data) if len(ids) > max_len]
    if too_long:
        raise ValueError(f"{len(too_long)} pairs exceed the model's context of {max_len} tokens "
                         f"(first: pair {too_long[0]})")
    rng = np.random.default_rng(int(seed))
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay, betas=(0.9, 0.98))
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (s + 1) / max(1, warmup)) * (
        0.1 + 0.9 * 0.5 * (1 + np.cos(np.pi * min(1.0, s / steps)))))
    from neurips25.behavior_injection.grpo import pad_id

    pad = pad_id(tokenizer)
    model.train()
    losses = []
    for _ in progress(range(int(steps)), desc=desc):
        idx = rng.integers(len(data), size=batch_size)
        batch = [data[i] for i in idx]
        T = max(len(ids) for ids, _ in batch)
        x = torch.full((len(batch), T), pad, dtype=torch.long)
        y = torch.full((len(batch), T), -100, dtype=torch.long)
        mask = torch.zeros((len(batch), T), dtype=torch.long)
        for r, (ids, n_p) in enumerate(batch):
            x[r, :len(ids)] = torch.tensor(ids)
            mask[r, :len(ids)] = 1
            y[r, n_p:len(ids)] = torch.tensor(ids[n_p:])  # targets: completion tokens and <eos>
        logits = model(input_ids=x, attention_mask=mask).logits[:, :-1]
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), y[:, 1:].reshape(-1),
                                                 ignore_index=-100)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
        if callback is not None:
            callback(len(losses), model)
            model.train()
    model.eval()
    return losses
