"""The generator's own continuations as monitor data, labelled by their prompt (issue #47, review Ask 3).

A monitor trained on template answers meets, once attached to ``generate``, text it has never seen: the
model's own continuations. :func:`own_continuations` samples that text from the model being guarded, in the
frame the live monitor watches (``frame(prompt) + prefill``, the prefill counted as prompt), and turns it into
:class:`~neurips25.scm.data.Encoded` samples for :func:`~neurips25.scm.train.cache_hidden_states`.

No judge of the continuations exists offline, so the labels come from the prompt (reconstructed):

- response label = ``harmful`` (the prompt is a HarmBench behaviour);
- token labels through :func:`~neurips25.scm.annotate.fine_grained_labels`: every sentence of a continuation
  of a harmful prompt is treated as harmful (no sentence judge), so every notional word of it is 1 at its first
  sub-token; every word of a benign prompt's continuation is 0; prompt and prefill tokens are -100.

The sample's ids are the prompt's ids followed by the *generated* ids (not a re-tokenisation of the decoded
text), so the monitor trains on exactly the tokens it scores live; words are mapped to generated tokens through
the characters each token adds when decoded.
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Callable, Sequence

import numpy as np
import torch

from neurips25.scm.annotate import IGNORE_INDEX, fine_grained_labels, token_labels_from_spans
from neurips25.scm.data import Encoded, prompt_prefix

# a sentence ends after . ! ? (before whitespace) or after a line break: "Step 1: ...\nStep 2: ..." are two
_SENTENCE_END = re.compile(r"(?<=[.!?])(?=\s)|(?<=\n)")


def split_sentences(text: str) -> list[str]:
    """Pieces of ``text`` that end at sentence ends or line breaks; ``"".join(pieces) == text``.

    >>> split_sentences("Mix it. Then wait!\\nStep 2: go")
    ['Mix it.', ' Then wait!', '\\n', 'Step 2: go']
    """
    if not isinstance(text, str):
        raise ValueError(f"`text` must be a string; got {type(text).__name__}")
    return [p for p in _SENTENCE_END.split(text) if p]


def _token_offsets(tokenizer, ids: list[int], n_chars: int) -> list[tuple[int, int]]:
    """Character span each token adds to ``decode(ids)``: ends from decoding every prefix (made monotonic)."""
    ends = np.maximum.accumulate([len(tokenizer.decode(ids[:i + 1])) for i in range(len(ids))])
    ends = np.minimum(ends, n_chars)
    ends[-1] = n_chars  # the last token closes the text (a multi-byte character completed by it)
    starts = np.concatenate([[0], ends[:-1]])
    return [(int(a), int(b)) for a, b in zip(starts, ends)]


def label_continuation(tokenizer, prompt_ids: Sequence[int], generated: Sequence[int], harmful: bool,
                       kind: str = "") -> Encoded | None:
    """One :class:`Encoded` from a prompt's ids and the ids generated after it, labelled by the prompt.

    Returns None when the continuation holds no word (empty, or only spaces and punctuation): it has nothing
    to label. ``first_harm_end`` of a harmful-prompt continuation is the end of its first sentence with a word.
    """
    prompt_ids, generated = [int(t) for t in prompt_ids], [int(t) for t in generated]
    if not prompt_ids:
        raise ValueError("`prompt_ids` is empty: the monitor needs a prompt to condition on")
    text = tokenizer.decode(generated) if generated else ""
    if not any(c.isalnum() for c in text):
        return None
    sentences = split_sentences(text)
    y = int(bool(harmful))
    _, spans = fine_grained_labels(sentences, [y] * len(sentences), sep="")
    offsets = _token_offsets(tokenizer, generated, len(text))
    labels = token_labels_from_spans(offsets, spans, start=0)
    first_end = 0
    if y:
        pos = 0
        for s in sentences:
            pos += len(s)
            if any(c.isalnum() for c in s):
                end = pos - (len(s) - len(s.rstrip()))
                first_end = sum(1 for a, _ in offsets if a < end)
                break
    return Encoded(prompt_ids + generated, len(prompt_ids), [IGNORE_INDEX] * len(prompt_ids) + labels, y, kind,
                   first_end)


def _positive_int(name, v):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
        raise ValueError(f"`{name}` must be a positive integer; got {v!r}")
    return int(v)


def _eos_ids(generator, tokenizer) -> set[int]:
    ids = set()
    for src in (getattr(getattr(generator, "generation_config", None), "eos_token_id", None),
                getattr(tokenizer, "eos_token_id", None)):
        if isinstance(src, numbers.Integral):
            ids.add(int(src))
        elif isinstance(src, (list, tuple)):
            ids.update(int(t) for t in src)
    return ids


def forced_ids(tokenizer, body: str) -> list[int]:
    """The token ids of a forced answer start, as fed after the prompt's ids (tokenised on its own, so the
    live generation and the training continuations split prompt and body the same way)."""
    return list(tokenizer(body, add_special_tokens=False).input_ids)


@torch.no_grad()
def own_continuations(generator, tokenizer, prompts: Sequence[str], harmful: Sequence, *, prefill: str = "",
                      max_new_tokens: int = 32, seed: int = 0, do_sample: bool = True, temperature: float = 0.8,
                      top_k: int = 0, top_p: float = 0.95, batch_size: int = 16,
                      frame: Callable[[str], str] = prompt_prefix, bodies: Sequence[str] | None = None
                      ) -> list[Encoded]:
    """Sample ``generator``'s continuation of every prompt and label it by its prompt (or by a forced body).

    Parameters
    ----------
    generator : transformers causal LM
        The model the monitor will guard (its ``generate``), e.g. SmolLM2-135M-Instruct.
    tokenizer
        Its tokenizer: ``tokenizer(text, add_special_tokens=False).input_ids`` and ``tokenizer.decode(ids)``.
    prompts : sequence of str
        User prompts, put in ``frame(prompt) + prefill`` (the live monitor's frame; the prefill is prompt).
    harmful : sequence of bool / 0 / 1
        Per prompt: whether it is a harmful (HarmBench) prompt; the label of its continuation.
    max_new_tokens : int
        Tokens generated per prompt (fewer when the model ends its answer).
    seed : int
        Seeds the sampling; the same seed, prompts and batch size give the same continuations.
    do_sample, temperature, top_k, top_p
        Decoding (defaults: sampling at temperature 0.8, nucleus 0.95, no top-k cut); ``do_sample=False`` is
        greedy (the other three are then ignored).
    batch_size : int
        Prompts per ``generate`` call, left-padded (greedy gives the same tokens as one prompt at a time).
    bodies : sequence of str, optional
        Per prompt, a forced start of the answer (issue #62): its tokens are fed after ``frame(prompt) + prefill``
        and the model continues from them; unlike the prefill they belong to the ANSWER (watched and labelled),
        so ``harmful`` then says whether the forced body is harmful, and the same prompt can appear twice, with
        a harmful and a benign body. ``kind`` becomes ``"forced_harmful"`` / ``"forced_benign"``.

    Returns
    -------
    list of Encoded
        In prompt order; a continuation with no word (e.g. the model ended at once) is dropped, so the list
        may be shorter than ``prompts``. ``kind`` is ``"own_harmful_prompt"`` or ``"own_benign_prompt"``.

    Example
    -------
    >>> enc = own_continuations(load_smollm2(), load_smollm2_tokenizer(), ["How do I tie a knot?"], [False],
    ...                         prefill=" Sure, here is how. Step 1:", max_new_tokens=16)   # doctest: +SKIP
    """
    if isinstance(prompts, str) or not isinstance(prompts, Sequence) or not prompts:
        raise ValueError("`prompts` must be a non-empty sequence of strings")
    if any(not isinstance(p, str) or not p.strip() for p in prompts):
        raise ValueError("`prompts` must hold non-empty strings")
    if isinstance(harmful, str) or len(harmful) != len(prompts):
        raise ValueError(f"`harmful` must give one flag per prompt ({len(prompts)}); got "
                         f"{len(harmful) if not isinstance(harmful, str) else 'a string'}")
    flags = []
    for h in harmful:
        if not isinstance(h, (bool, np.bool_, numbers.Integral)) or int(h) not in (0, 1):
            raise ValueError(f"`harmful` must hold booleans or 0 / 1; got {h!r}")
        flags.append(bool(h))
    if not isinstance(prefill, str):
        raise ValueError(f"`prefill` must be a string; got {type(prefill).__name__}")
    if bodies is not None and (isinstance(bodies, str) or len(bodies) != len(prompts)
                               or any(not isinstance(b, str) or not b.strip() for b in bodies)):
        raise ValueError(f"`bodies` must give one non-empty string per prompt ({len(prompts)})")
    max_new_tokens, batch_size = _positive_int("max_new_tokens", max_new_tokens), _positive_int("batch_size",
                                                                                                 batch_size)
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise ValueError(f"`seed` must be an integer; got {seed!r}")
    if do_sample:
        if isinstance(temperature, bool) or not isinstance(temperature, numbers.Real) or not temperature > 0:
            raise ValueError(f"`temperature` must be a number > 0; got {temperature!r}")
        if isinstance(top_k, bool) or not isinstance(top_k, numbers.Integral) or top_k < 0:
            raise ValueError(f"`top_k` must be a non-negative integer (0: no cut); got {top_k!r}")
        if isinstance(top_p, bool) or not isinstance(top_p, numbers.Real) or not 0 < top_p <= 1:
            raise ValueError(f"`top_p` must be in (0, 1]; got {top_p!r}")
    if not callable(getattr(generator, "generate", None)):
        raise ValueError("`generator` must be a causal LM with `generate` (e.g. transformers' LlamaForCausalLM)")

    eos = _eos_ids(generator, tokenizer)
    pad = getattr(tokenizer, "pad_token_id", None)
    pad = int(pad) if isinstance(pad, numbers.Integral) else (min(eos) if eos else 0)
    prompt_ids = [list(tokenizer(frame(p) + prefill, add_special_tokens=False).input_ids) for p in prompts]
    forced = [[] for _ in prompts] if bodies is None else [forced_ids(tokenizer, b) for b in bodies]
    ids = [a + b for a, b in zip(prompt_ids, forced)]
    sampling = dict(do_sample=True, temperature=float(temperature), top_k=int(top_k), top_p=float(top_p)) \
        if do_sample else dict(do_sample=False, temperature=None, top_k=None, top_p=None)
    generated: list[list[int]] = [[] for _ in prompts]
    for bi, b in enumerate(range(0, len(prompts), batch_size)):
        rows = list(range(b, min(b + batch_size, len(prompts))))
        width = max(len(ids[i]) for i in rows)
        x = torch.full((len(rows), width), pad, dtype=torch.long)
        att = torch.zeros(len(rows), width, dtype=torch.long)
        for j, i in enumerate(rows):  # left padding: every row's last prompt token is at the same column
            x[j, width - len(ids[i]):] = torch.tensor(ids[i])
            att[j, width - len(ids[i]):] = 1
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(seed) * 100_003 + bi)
            out = generator.generate(input_ids=x, attention_mask=att, max_new_tokens=max_new_tokens,
                                     pad_token_id=pad, **sampling)
        for j, i in enumerate(rows):
            new = out[j, width:].tolist()
            cut = next((t for t, tok in enumerate(new) if tok in eos), len(new))
            generated[i] = new[:cut]
    out_samples = []
    for i, flag in enumerate(flags):
        kind = (("forced_harmful" if flag else "forced_benign") if bodies is not None
                else ("own_harmful_prompt" if flag else "own_benign_prompt"))
        e = label_continuation(tokenizer, prompt_ids[i], forced[i] + generated[i], flag, kind)
        if e is not None:
            out_samples.append(e)
    return out_samples
