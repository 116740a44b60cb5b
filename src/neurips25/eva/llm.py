"""The paper's main setting, reduced: LoRA fine-tuning of a pretrained causal LM on generated arithmetic.

- :func:`word_problems`: multi-step arithmetic word problems with one integer answer (plain-text prompts
  ``"Question: ... Answer:"``, target ``" <n>\\n"``), deterministic in ``seed``.
- :func:`encode_lm`: padded causal-LM batches whose ``labels`` are ``-100`` on prompt and padding tokens, so
  the loss (and EVA's token mask) sees only the answer.
- :func:`answer_logits`: the vocabulary head applied at the answer positions only (the prompt tokens need
  no logits; the head is ~21% of SmolLM2's per-token cost).
- :func:`answer_loss_and_exact_match`: mean answer loss and exact match. Exact match is judged by teacher
  forcing: a problem counts when the argmax at every answer position (digits and the closing newline)
  is the target token, which is exactly the event that greedy decoding emits the answer and stops.
- :func:`train_lora`: AdamW on the trainable (LoRA) parameters over a fixed batch order.
"""

from __future__ import annotations

import numbers

import numpy as np
import torch

_NAMES = ("Ann", "Ben", "Carla", "Dev", "Eli", "Fay", "Gus", "Hana", "Ivo", "Jun", "Kim", "Leo")
_ITEMS = ("apples", "coins", "books", "stamps", "marbles", "pencils", "shells", "cards")


def word_problems(n: int, seed: int, n_ops: int = 2) -> tuple[list[str], list[str]]:
    """``n`` (prompt, answer) pairs: a start amount, ``n_ops`` gains or losses, the final amount asked.

    Answers stay in 0..40 (a loss never exceeds the current amount).
    """
    if not isinstance(n, numbers.Integral) or n <= 0:
        raise ValueError(f"`n` must be a positive integer, got {n!r}")
    if not isinstance(n_ops, numbers.Integral) or n_ops < 1:
        raise ValueError(f"`n_ops` must be an integer >= 1, got {n_ops!r}")
    rng = np.random.default_rng(seed)
    prompts, answers = [], []
    for _ in range(int(n)):
        who, item = _NAMES[rng.integers(len(_NAMES))], _ITEMS[rng.integers(len(_ITEMS))]
        total = int(rng.integers(2, 15))
        parts = [f"{who} has {total} {item}."]
        for _ in range(int(n_ops)):
            if total > 1 and rng.random() < 0.5:
                k = int(rng.integers(1, total))
                parts.append(f"{who} gives away {k}.")
                total -= k
            else:
                k = int(rng.integers(1, 10))
                parts.append(f"{who} gets {k} more.")
                total += k
        prompts.append("Question: " + " ".join(parts) + f" How many {item} does {who} have now? Answer:")
        answers.append(f" {total}\n")
    return prompts, answers


def gsm_symbolic_problems(n: int, seed: int) -> tuple[list[str], list[str], list[dict], object]:
    """``n`` GSM-Symbolic items from reasoning-gym (GSM8K templates with fresh numbers), generated offline:
    ``(prompts, answers, entries, dataset)`` with prompts ``"Question: ... Answer:"``, answers ``" <N>\n"`` (the
    final number, as :func:`word_problems`), the items (for the verifier) and the dataset whose ``score_answer``
    is the verifier (:func:`verifier_exact_match`). Needs the ``lm`` extra (``reasoning-gym``)."""
    from neurips25.extras import require

    if not isinstance(n, numbers.Integral) or n <= 0:
        raise ValueError(f"`n` must be a positive integer, got {n!r}")
    rg = require("reasoning_gym", "lm")
    ds = rg.create_dataset("gsm_symbolic", size=int(n), seed=int(seed))
    entries = [ds[i] for i in range(int(n))]
    tail = " Give the result as your final answer. Do not include units."
    prompts = ["Question: " + e["question"].replace(tail, "").strip() + " Answer:" for e in entries]
    answers = [f" {e['answer']}\n" for e in entries]
    return prompts, answers, entries, ds


@torch.no_grad()
def verifier_exact_match(model, tok, prompts: list[str], entries: list[dict], dataset, max_new_tokens: int = 8,
                         batch_size: int = 16) -> np.ndarray:
    """Per-item exact match by the task's verifier: greedy decoding of ``max_new_tokens`` after each prompt, the
    text up to the first newline scored by ``dataset.score_answer`` (1 only at full credit). Prompts are left
    padded; a teacher-forced exact match (:func:`answer_loss_and_exact_match`) of 1 implies a verifier hit."""
    if len(prompts) != len(entries) or not prompts:
        raise ValueError(f"`prompts` and `entries` must be non-empty and of equal length, got {len(prompts)} and "
                         f"{len(entries)}")
    pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
    model.eval()
    hits = []
    for s in range(0, len(prompts), batch_size):
        enc = [tok(p, add_special_tokens=False).input_ids for p in prompts[s:s + batch_size]]
        width = max(len(e) for e in enc)
        ids = torch.full((len(enc), width), pad, dtype=torch.long)
        mask = torch.zeros((len(enc), width), dtype=torch.long)
        for i, e in enumerate(enc):
            ids[i, width - len(e):] = torch.tensor(e)
            mask[i, width - len(e):] = 1
        out = model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=int(max_new_tokens), do_sample=False,
                             top_k=None, top_p=None, temperature=None, pad_token_id=pad,
                             eos_token_id=tok.eos_token_id)
        for row, entry in zip(tok.batch_decode(out[:, width:], skip_special_tokens=True), entries[s:s + batch_size]):
            text = row.lstrip(" ").split("\n")[0].strip()
            hits.append(float(dataset.score_answer(text, entry) >= 1.0) if text else 0.0)
    return np.array(hits)


def encode_lm(prompts: list[str], answers: list[str], tok, batch_size: int) -> list[dict[str, torch.Tensor]]:
    """Right-padded batches ``{"input_ids", "attention_mask", "labels"}``; labels -100 except the answer."""
    if len(prompts) != len(answers) or not prompts:
        raise ValueError(f"`prompts` and `answers` must be non-empty and of equal length, got "
                         f"{len(prompts)} and {len(answers)}")
    if not isinstance(batch_size, numbers.Integral) or batch_size <= 0:
        raise ValueError(f"`batch_size` must be a positive integer, got {batch_size!r}")
    pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
    batches = []
    for s in range(0, len(prompts), batch_size):
        rows, labs = [], []
        for p, a in zip(prompts[s: s + batch_size], answers[s: s + batch_size]):
            pi = tok(p, add_special_tokens=False).input_ids
            ai = tok(a, add_special_tokens=False).input_ids
            rows.append(pi + ai)
            labs.append([-100] * len(pi) + ai)
        width = max(len(r) for r in rows)
        ids = torch.full((len(rows), width), pad, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        labels = torch.full((len(rows), width), -100, dtype=torch.long)
        for i, (r, lab) in enumerate(zip(rows, labs)):
            ids[i, : len(r)] = torch.tensor(r)
            mask[i, : len(r)] = 1
            labels[i, : len(r)] = torch.tensor(lab)
        batches.append({"input_ids": ids, "attention_mask": mask, "labels": labels})
    return batches


def answer_logits(model, batch) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Next-token logits at the answer positions only: ``(logits (n, V), targets (n,), row index (n,))``.

    For a causal LM with an output head (``get_decoder`` / ``get_output_embeddings``, also through a
    ``PeftModel``), the head is applied to the answer positions alone: the same loss as the model's own
    ``labels`` loss (mean cross-entropy over tokens whose label is not -100, shifted by one), without the
    vocabulary projection of every prompt token. Other models fall back to their full ``logits``.
    """
    target = batch["labels"][:, 1:]
    keep = target != -100
    base = model.get_base_model() if hasattr(model, "get_base_model") else model
    head = base.get_output_embeddings() if hasattr(base, "get_output_embeddings") else None
    if head is not None and hasattr(base, "get_decoder"):
        hidden = base.get_decoder()(input_ids=batch["input_ids"],
                                    attention_mask=batch["attention_mask"]).last_hidden_state
        logits = head(hidden[:, :-1][keep])
    else:
        logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits[:, :-1][keep]
    return logits.float(), target[keep], keep.nonzero()[:, 0]


@torch.no_grad()
def answer_loss_and_exact_match(model, batches) -> tuple[float, float]:
    """(mean cross-entropy per answer token, share of problems whose every answer token is the argmax)."""
    model.eval()
    tot_loss, tot_tok, hits, n = 0.0, 0, 0, 0
    for b in batches:
        logits, target, rows = answer_logits(model, b)
        tot_loss += float(torch.nn.functional.cross_entropy(logits, target, reduction="sum"))
        tot_tok += len(target)
        wrong = torch.bincount(rows[logits.argmax(-1) != target], minlength=len(b["labels"]))
        hits += int((wrong == 0).sum())
        n += len(b["labels"])
    return tot_loss / tot_tok, hits / n


def train_lora(model, batches, steps: int, lr: float, order: np.ndarray) -> list[float]:
    """``steps`` AdamW steps on ``model``'s trainable parameters, batch ``order[t % len(order)]`` at step t;
    the loss is the mean cross-entropy of the answer tokens (:func:`answer_logits`)."""
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=lr)
    model.train()
    losses = []
    for t in range(steps):
        logits, target, _ = answer_logits(model, batches[int(order[t % len(order)])])
        loss = torch.nn.functional.cross_entropy(logits, target)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(float(loss.detach()))
    model.eval()
    return losses


class CharTokenizer:
    """A character-level stand-in for a tokenizer (``tok(text).input_ids``), for the smoke scale and tests."""

    pad_token_id = 0
    eos_token_id = 0

    def __init__(self, vocab_size: int = 128):
        self.vocab_size = vocab_size

    def __call__(self, text: str, add_special_tokens: bool = False):
        class _Enc:
            pass

        enc = _Enc()
        enc.input_ids = [1 + (ord(c) % (self.vocab_size - 1)) for c in text]
        return enc


def tiny_llama(seed: int, vocab_size: int = 128):
    """A random 2-layer ``LlamaForCausalLM`` (hidden 64) built from a config, with SmolLM2's module names."""
    from neurips25.extras import require

    transformers = require("transformers", "lm")
    torch.manual_seed(seed)
    cfg = transformers.LlamaConfig(vocab_size=vocab_size, hidden_size=64, intermediate_size=128,
                                   num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                                   max_position_embeddings=256)
    return transformers.LlamaForCausalLM(cfg).eval()


@torch.no_grad()
def randomise_directions(model, seed: int) -> None:
    """Control: replace every LoRA ``A`` by random orthonormal rows of the same shape (EVA's ranks and row
    norms kept, its data-driven directions removed)."""
    from neurips25.eva.init import lora_layers

    g = torch.Generator().manual_seed(seed)
    for m in lora_layers(model).values():
        w = m.lora_A["default"].weight
        if w.shape[0] == 0:
            continue
        q, _ = torch.linalg.qr(torch.randn(w.shape[1], w.shape[0], generator=g, dtype=torch.float64))
        w.copy_(q.T.to(w.dtype))
