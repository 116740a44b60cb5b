"""Chain-of-thought traces built from executed, verified operations, and LoRA fine-tuning on them.

ChemCoTBench's CoT data set writes each reasoning step as a modular chemical operation. Here a trace for
an editing item is produced by running the operation (:mod:`~neurips25.chemcot.ops`) and checking its
result with the official count check, so every step in a trace is true by construction. The steps sit in a
think block, the way reasoning models answer and the official parser reads (it keeps what follows
``"</think>\\n\\n"``)::

    <think>
    Step 1: count <group> in the input: <k>.
    Step 2: <add|delete|substitute> one <group> -> <SMILES>.
    Step 3: check: <group> count <k> -> <k +/- 1>.
    </think>

    {"output": "<SMILES>"}

:func:`answer_only` gives the same item's answer without the steps (the control arm).

:func:`lora_finetune` trains a PEFT LoRA adapter on (prompt, trace) pairs with the loss on the trace tokens
only (the prompt rendered with the model's chat template).
"""

from __future__ import annotations

import json
import numbers

from neurips25.chemcot.ops import count_group
from neurips25.chemcot.tasks import Item


def edit_trace(item: Item) -> str | None:
    """A verified step-by-step trace answering an editing item (``None`` when it has no reference)."""
    meta = item.meta
    src, ref = meta.get("source"), meta.get("reference")
    if item.task != "mol_edit" or not src or not ref:
        return None
    lines = []
    if item.subtask == "add":
        g = meta["added_group"]
        k = count_group(src, g)
        lines = [f"Step 1: count {g} in the input: {k}.", f"Step 2: add one {g} -> {ref}.",
                 f"Step 3: check: {g} count {k} -> {count_group(ref, g)}."]
    elif item.subtask == "delete":
        g = meta["removed_group"]
        k = count_group(src, g)
        lines = [f"Step 1: count {g} in the input: {k}.", f"Step 2: delete one {g} -> {ref}.",
                 f"Step 3: check: {g} count {k} -> {count_group(ref, g)}."]
    elif item.subtask == "sub":
        old, new = meta["removed_group"], meta["added_group"]
        lines = [f"Step 1: count {old} and {new} in the input: {count_group(src, old)}, {count_group(src, new)}.",
                 f"Step 2: replace one {old} by {new} -> {ref}.",
                 f"Step 3: check: {old} {count_group(ref, old)}, {new} {count_group(ref, new)}."]
    else:
        return None
    return "<think>\n" + "\n".join(lines) + "\n</think>\n\n" + json.dumps({"output": ref})


def answer_only(item: Item) -> str | None:
    """The same item's answer without the steps (the answer-only control of the CoT LoRA claim)."""
    ref = item.meta.get("reference")
    if item.task != "mol_edit" or not item.meta.get("source") or not ref:
        return None
    return json.dumps({"output": ref})


def lora_finetune(model, tokenizer, pairs: list[tuple[str, str]], steps: int = 20, batch_size: int = 4,
                  lr: float = 1e-3, r: int = 8, alpha: int = 16, seed: int = 0, max_length: int = 320):
    """Fine-tune a LoRA adapter (PEFT) on ``(prompt, completion)`` pairs; returns the PEFT model (eval mode).

    Parameters
    ----------
    model : PreTrainedModel
        A causal LM (not modified in place beyond PEFT's wrapping: pass a fresh copy).
    tokenizer : PreTrainedTokenizer
        With a chat template.
    pairs : list of (str, str)
        User prompt and the assistant completion to learn.
    steps, batch_size, lr : int, int, float
        AdamW steps, pairs per step (cycled in a seeded order), learning rate.
    r, alpha : int
        LoRA rank and scaling on the attention and MLP projections.
    """
    import torch
    from peft import LoraConfig, get_peft_model

    if not pairs:
        raise ValueError("`pairs` must be a non-empty list of (prompt, completion)")
    for nm, v in (("steps", steps), ("batch_size", batch_size), ("r", r)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
            raise ValueError(f"`{nm}` must be a positive integer; got {v!r}")
    torch.manual_seed(seed)
    cfg = LoraConfig(r=r, lora_alpha=alpha, lora_dropout=0.0, task_type="CAUSAL_LM",
                     target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"])
    peft_model = get_peft_model(model, cfg)
    peft_model.train()
    opt = torch.optim.AdamW([p for p in peft_model.parameters() if p.requires_grad], lr=lr)
    encoded = []
    for prompt, completion in pairs:
        head = tokenizer.apply_chat_template([{"role": "user", "content": prompt}], tokenize=False,
                                             add_generation_prompt=True)
        h = tokenizer(head, add_special_tokens=False).input_ids
        c = tokenizer(completion + (tokenizer.eos_token or ""), add_special_tokens=False).input_ids
        ids = (h + c)[-max_length:]
        labels = ([-100] * len(h) + c)[-max_length:]
        encoded.append((ids, labels))
    g = torch.Generator().manual_seed(seed)
    order: list[int] = []
    losses = []
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    for _ in range(int(steps)):
        if len(order) < batch_size:
            order += torch.randperm(len(encoded), generator=g).tolist()
        idx, order = order[:batch_size], order[batch_size:]
        width = max(len(encoded[i][0]) for i in idx)
        ids = torch.full((len(idx), width), pad, dtype=torch.long)
        lab = torch.full((len(idx), width), -100, dtype=torch.long)
        att = torch.zeros((len(idx), width), dtype=torch.long)
        for row, i in enumerate(idx):
            a, b = encoded[i]
            ids[row, : len(a)] = torch.tensor(a)
            lab[row, : len(b)] = torch.tensor(b)
            att[row, : len(a)] = 1
        loss = peft_model(input_ids=ids, attention_mask=att, labels=lab).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    peft_model.eval()
    peft_model.train_losses = losses
    return peft_model
