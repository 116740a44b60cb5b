"""Streaming: the delay-k stopping rule, a KV-cached session, and a ``generate`` stopping criterion.

Delay-k (official ``test/test_qwen_partial.py``): each new response token gets ``p_t = softmax(g(h_t))[1]``;
it counts as harmful when ``p_t >= tau``; the response is flagged, and generation stopped, once the running
count of harmful tokens reaches ``k``. A session costs one backbone step per token (KV cache), so
the monitoring cost per token does not grow with the prefix.
"""

from __future__ import annotations

import numbers
import warnings
from typing import NamedTuple

import numpy as np
import torch

from neurips25.scm.backbone import call_backbone


class DelayKPolicy:
    """Stop once ``k`` tokens have scored ``p_harm >= threshold``.

    Parameters
    ----------
    k : int >= 1
        Harmful-token count that triggers the stop.
    threshold : float in (0, 1)
        ``tau``: a token is harmful when its probability reaches it.

    Examples
    --------
    >>> DelayKPolicy(2, 0.5).first_stop([0.1, 0.7, 0.2, 0.9, 0.9])
    4
    """

    def __init__(self, k: int = 1, threshold: float = 0.5):
        if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
            raise ValueError(f"`k` must be an integer >= 1; got {k!r}")
        if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real) or not 0.0 < float(threshold) < 1.0:
            raise ValueError(f"`threshold` must be in (0, 1); got {threshold!r}")
        self.k, self.threshold = int(k), float(threshold)

    def __repr__(self) -> str:
        return f"DelayKPolicy(k={self.k}, threshold={self.threshold:g})"

    def first_stop(self, probs) -> int:
        """1-based position of the token at which the rule fires on a whole score sequence; 0 if never."""
        p = np.asarray(probs, dtype=float)
        if p.ndim != 1:
            raise ValueError(f"`probs` must be 1-D; got shape {p.shape}")
        hits = np.cumsum(p >= self.threshold)
        idx = np.flatnonzero(hits >= self.k)
        return int(idx[0]) + 1 if idx.size else 0


class StepResult(NamedTuple):
    """What :meth:`StreamSession.step` returns for one token."""

    p_harm: float
    harmful_count: int
    stop: bool


class ScoreTally:
    """The running record of one watched response: every token's ``p_harm``, the harmful count, the stop."""

    def __init__(self, policy: DelayKPolicy):
        self.policy = policy
        self.probs: list[float] = []
        self.harmful_count = 0
        self.stopped_at = 0  # 1-based response position where the policy fired, 0 while it has not
        self.ended = False  # the answer ended by EOS (under generate): nothing after it is scored

    def record(self, p: float) -> StepResult:
        self.probs.append(float(p))
        if p >= self.policy.threshold:
            self.harmful_count += 1
        if not self.stopped_at and self.harmful_count >= self.policy.k:
            self.stopped_at = len(self.probs)
        return StepResult(float(p), self.harmful_count, bool(self.stopped_at))


class StreamSession(ScoreTally):
    """Incremental scoring of one response: the prompt is encoded once, then one cached step per token.

    Build it with :meth:`StreamingContentMonitor.start`. ``step(token_id)`` feeds one response token and returns
    ``(p_harm, harmful_count, stop)``; ``probs`` holds every score so far. ``stop`` latches once the policy fires.
    """

    def __init__(self, monitor, prompt_ids, policy: DelayKPolicy | None = None):
        if monitor.backbone is None:
            raise ValueError("streaming needs a monitor with a backbone (this one is heads-only)")
        if policy is None:
            policy = DelayKPolicy()
        if not isinstance(policy, DelayKPolicy):
            raise TypeError(f"`policy` must be a DelayKPolicy; got {type(policy).__name__}")
        ids = torch.as_tensor(prompt_ids)
        if ids.ndim == 2 and ids.shape[0] == 1:
            ids = ids[0]
        if ids.numel() == 0:
            raise ValueError("`prompt_ids` is empty: the session needs at least one prompt token")
        if ids.ndim != 1 or ids.dtype not in (torch.int64, torch.int32):
            raise ValueError(f"`prompt_ids` must be a 1-D sequence of token ids; got shape {tuple(ids.shape)} "
                             f"{ids.dtype}")
        super().__init__(policy)
        self.monitor = monitor
        param = next(monitor.backbone.parameters(), None)
        self._device = param.device if param is not None else torch.device("cpu")  # e.g. input_ids on CUDA
        with torch.no_grad():
            _, self._cache = call_backbone(monitor.backbone, ids.long()[None].to(self._device), use_cache=True)
        if self._cache is None:
            raise ValueError("`backbone` returned no KV cache; streaming needs `use_cache=True` support")

    @torch.no_grad()
    def step(self, token_id) -> StepResult:
        """Score one more response token (O(1) in the prefix length apart from attention over the cache)."""
        if isinstance(token_id, torch.Tensor):
            if token_id.numel() != 1:
                raise ValueError(f"`token_id` must be one token; got shape {tuple(token_id.shape)}")
            token_id = int(token_id.item())
        if isinstance(token_id, bool) or not isinstance(token_id, numbers.Integral) or token_id < 0:
            raise ValueError(f"`token_id` must be a non-negative integer; got {token_id!r}")
        vocab = getattr(getattr(self.monitor.backbone, "config", None), "vocab_size", None)
        if isinstance(vocab, numbers.Integral) and token_id >= vocab:
            raise ValueError(f"`token_id` {token_id} is outside the backbone's vocabulary ({vocab} tokens)")
        was_training = self.monitor.training
        self.monitor.eval()
        h, self._cache = call_backbone(self.monitor.backbone, torch.tensor([[int(token_id)]], device=self._device),
                                       cache=self._cache, use_cache=True)
        head = self.monitor.token_head
        logits = head(h[0, -1].to(head.weight.dtype))  # float32 heads on a half-precision backbone
        self.monitor.train(was_training)
        return self.record(float(logits.softmax(-1)[1]))


def _eos_ids(value) -> list[int] | None:
    """``eos_token_id`` as a list of ints (None: not known; ``[]``: the generator has none)."""
    if value is None:
        return None
    if isinstance(value, torch.Tensor):
        value = value.reshape(-1).tolist()
    items = [value] if isinstance(value, numbers.Integral) else value
    try:
        items = list(items)
    except TypeError:
        items = [items]
    if any(isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 0 for v in items):
        raise ValueError(f"`eos_token_id` must be a non-negative int, a list of them, or None; got {value!r}")
    return [int(v) for v in items]


def _decoder(model):
    """``(layers, final norm, embeddings)`` of a Llama-style decoder or its ``...ForCausalLM`` wrapper."""
    base = getattr(model, "model", model)
    layers, norm = getattr(base, "layers", None), getattr(base, "norm", None)
    if not isinstance(layers, torch.nn.ModuleList) or norm is None:
        return None
    return layers, norm, getattr(base, "embed_tokens", None)


def _same_weights(a, b) -> bool:
    sa, sb = a.state_dict(), b.state_dict()
    return list(sa) == list(sb) and all(sa[k].shape == sb[k].shape and torch.equal(sa[k], sb[k]) for k in sa)


def shares_layers(monitor, generator) -> bool:
    """Whether ``monitor``'s backbone is ``generator``'s first ``n`` layers (with its embeddings and final norm),
    weight for weight: the condition for reading the generator's own hidden states (:class:`SharedBackboneTap`)."""
    mon_parts, gen_parts = _decoder(getattr(monitor, "backbone", None)), _decoder(generator)
    if mon_parts is None or gen_parts is None:
        return False
    (m_layers, m_norm, m_emb), (g_layers, g_norm, g_emb) = mon_parts, gen_parts
    n = len(m_layers)
    return (n <= len(g_layers) and _same_weights(m_norm, g_norm)
            and (m_emb is None or g_emb is None or _same_weights(m_emb, g_emb))
            and all(_same_weights(a, b) for a, b in zip(m_layers, g_layers[:n])))


class SharedBackboneTap:
    """Reads the generator's own hidden states at the monitor's last layer: no second backbone pass.

    A monitor whose (frozen) backbone is the first ``n`` layers of the generating LM would recompute, for every
    new token, what the generator has just computed. This tap hooks the generator's layer ``n``, applies the
    monitor's final norm and token head to its output, and so costs two small matrix products per token.
    Refused (ValueError) unless the monitor's embeddings, layers and norm equal the generator's first ``n``
    layers weight for weight (a LoRA or fine-tuned monitor backbone must run its own session instead).

    Each generator forward leaves one captured chunk ``(batch, length, hidden)``; :meth:`take` returns the
    scores of the positions it covers. The chunk ends where the forward's input ended, so its positions are
    known with or without the generator's KV cache (with it a chunk is the one new token; without it, the whole
    sequence again, of which only the unscored tail is read).
    """

    def __init__(self, monitor, generator):
        mon_parts, gen_parts = _decoder(getattr(monitor, "backbone", None)), _decoder(generator)
        if mon_parts is None or gen_parts is None:
            raise ValueError("`generator` sharing needs Llama-style decoders (`.layers` and `.norm`) in both the "
                             "monitor's backbone and the generator")
        (m_layers, m_norm, _), (g_layers, _, _) = mon_parts, gen_parts
        n = len(m_layers)
        if not shares_layers(monitor, generator):
            raise ValueError(f"`generator` does not share the monitor's backbone: its first {n} layers, embeddings "
                             "and final norm must equal the monitor's weight for weight (pass generator=None to "
                             "run the monitor's own backbone)")
        self.monitor, self.norm = monitor, m_norm
        self._chunks: list[torch.Tensor] = []
        self._hook = g_layers[n - 1].register_forward_hook(self._capture)

    @property
    def closed(self) -> bool:
        return self._hook is None

    def _capture(self, module, inputs, output) -> None:
        h = output[0] if isinstance(output, tuple) else output
        self._chunks.append(h.detach())

    def discard_stale(self) -> None:
        """At the start of a ``generate``: keep only the latest chunk (its prefill); drop stray forwards."""
        del self._chunks[:-1]

    @torch.no_grad()
    def take(self, first: int, end: int, batch: int) -> torch.Tensor:
        """``(batch, end - first)`` token probabilities of positions ``[first, end)`` from the one chunk captured
        since the last call, which must end at ``end`` (the generator's last forward input)."""
        chunks, self._chunks = self._chunks, []
        if len(chunks) != 1:
            raise RuntimeError(f"the generator ran {len(chunks)} forward passes between two stopping checks; the "
                               "shared tap follows one forward per new token (greedy or sampled decoding; not "
                               "assisted or speculative decoding)")
        h = chunks[0]
        if h.shape[0] != batch:
            raise ValueError(f"the generator ran {h.shape[0]} rows but `input_ids` has {batch}")
        start = end - h.shape[1]
        if first < start:
            raise RuntimeError(f"positions {first}..{start - 1} were never run through the tapped layer (the "
                               f"chunk covers {start}..{end - 1}): was the criterion attached after generation "
                               "started?")
        sel = h[:, first - start:]
        head = self.monitor.token_head
        return head(self.norm(sel).to(head.weight.dtype)).softmax(-1)[..., 1].float()

    def close(self) -> None:
        """Remove the hook from the generator (idempotent)."""
        if self._hook is not None:
            self._hook.remove()
            self._hook = None
        self._chunks = []


class SCMStoppingCriteria:
    """``transformers`` stopping criterion: stop each row of ``generate`` once the monitor flags its answer.

    Parameters
    ----------
    monitor : StreamingContentMonitor
        The trained monitor (its backbone must share the generator's tokenizer).
    policy : DelayKPolicy
        The (k, tau) rule, chosen on validation data.
    prompt_length : int
        Number of prompt tokens in ``input_ids`` (everything after them is the answer being watched). It may
        be shorter than the prompt (a prefill is then watched as answer), never longer: ValueError at the first
        step of ``generate``.
    generator : PreTrainedModel, optional
        The generating LM, when the monitor's frozen backbone is its first ``n`` layers (the usual set-up: a
        monitor reading layer ``n`` of the model it guards). The monitor then reads the generator's own hidden
        states through a forward hook (:class:`SharedBackboneTap`) instead of running its backbone again:
        the monitoring cost per token falls from ``n / L`` of a decoding step to two small matrix products.
        A token's hidden state exists only once the generator has run it, i.e. in the forward pass that
        produces the next token, so the stop comes one token later than with ``generator=None`` (the scores
        themselves are the same). Use it as a context manager, or call :meth:`close`, to remove the hook.
    pad_token_id : int, optional
        Own-backbone mode with a left-padded batch: leading ``pad_token_id`` tokens of each row's prompt are
        dropped before the monitor reads it (the shared tap needs nothing: the generator masks the padding).
    eos_token_id : int or list of int, optional
        The generator's end-of-sequence ids (``[]``: it has none). A row that emits one has ended: neither the
        EOS nor the padding ``generate`` appends after it is scored, and the row is not reported as stopped
        unless the policy fired before. Default: ``generator.generation_config.eos_token_id`` when
        ``generator`` is given (:meth:`StreamingContentMonitor.guard` always fills it from its generator).
        Without EOS ids a batch of more than one row warns once: a row that ends by EOS would be scored on
        padding.

    Notes
    -----
    The contract (tests/scm/test_scm_hook.py):

    - **one score per generated token**, with or without the generator's KV cache (``use_cache=False``): the
      own-backbone session feeds each new token once; the tap reads only the unscored tail of each forward.
    - **batched**: returns one bool per row, as transformers' criteria do, so ``generate`` finishes each row on
      its own (the stopped row is padded while the others go on); ``sessions[b]`` holds row ``b``'s scores
      (``probs``, ``harmful_count``, ``stopped_at``) and ``stopped_rows`` the flags. A stopped row is not
      scored further. ``session`` is the single row's tally at batch 1.
    - **reuse**: a ``generate`` whose prompt differs from the last one's (or whose length does not extend it by
      one token) starts fresh sessions; :meth:`reset` forces it. A ``generate`` on the previous output (same
      prompt, one token longer) continues the watched answer.
    - greedy or sampled decoding only: beam search (rows whose earlier tokens change between steps) is refused
      with a ValueError, as is a ``prompt_length`` longer than the prompt.
    - **cut**: the criterion carries an ``eos_token_id`` attribute, which is how transformers' ``generate``
      decides to pad rows that are done; so a flagged row is padded from its stop on even when the generation
      config has no EOS id (``generate`` then needs a ``pad_token_id``: pass one, or set the generation
      config's; :meth:`StreamingContentMonitor.guard` warns when the generator has neither).

    Examples
    --------
    >>> with SCMStoppingCriteria(monitor, DelayKPolicy(2, 0.7), ids.shape[1], generator=lm) as crit:  # doctest: +SKIP
    ...     out = lm.generate(ids, stopping_criteria=[crit], max_new_tokens=64)
    """

    def __init__(self, monitor, policy: DelayKPolicy, prompt_length: int, generator=None, pad_token_id=None,
                 eos_token_id=None):
        if isinstance(prompt_length, bool) or not isinstance(prompt_length, numbers.Integral) or prompt_length < 1:
            raise ValueError(f"`prompt_length` must be an integer >= 1; got {prompt_length!r}")
        if not isinstance(policy, DelayKPolicy):
            raise TypeError(f"`policy` must be a DelayKPolicy; got {type(policy).__name__}")
        if pad_token_id is not None and (isinstance(pad_token_id, bool) or not isinstance(pad_token_id,
                                                                                          numbers.Integral)):
            raise ValueError(f"`pad_token_id` must be an integer or None; got {pad_token_id!r}")
        self.monitor, self.policy, self.prompt_length = monitor, policy, int(prompt_length)
        self.pad_token_id = None if pad_token_id is None else int(pad_token_id)
        if eos_token_id is None and generator is not None:
            eos_token_id = getattr(getattr(generator, "generation_config", None), "eos_token_id", None)
            eos_token_id = [] if eos_token_id is None else eos_token_id  # known: the generator has no EOS
        #: EOS ids this criterion watches. Its presence (even None) also makes transformers' ``generate`` pad the
        #: rows that are done, so a flagged row is cut without an EOS id in the generation config.
        self.eos_token_id = _eos_ids(eos_token_id)
        self._warned_no_eos = False
        self.sessions: list[ScoreTally] = []
        self._last: torch.Tensor | None = None  # input_ids of the previous step
        self._scored_to = 0  # shared tap: positions scored so far (the same for every row)
        self.tap = SharedBackboneTap(monitor, generator) if generator is not None else None

    @property
    def session(self) -> ScoreTally | None:
        """The tally of a batch-1 ``generate`` (None before the first step); for a batch read ``sessions``."""
        if len(self.sessions) > 1:
            raise ValueError(f"the last generate ran {len(self.sessions)} rows: read `sessions[b]` for row b")
        return self.sessions[0] if self.sessions else None

    @property
    def stopped_rows(self) -> torch.Tensor:
        """One bool per row of the last ``generate``: did the monitor cut it."""
        return torch.tensor([bool(s.stopped_at) for s in self.sessions], dtype=torch.bool)

    @property
    def stopped(self) -> bool:
        """Whether the monitor cut any row of the last ``generate``."""
        return bool(self.stopped_rows.any()) if self.sessions else False

    def reset(self) -> None:
        """Forget the last ``generate``; the next step starts fresh sessions."""
        self.sessions, self._last, self._scored_to = [], None, 0

    def _is_new_generate(self, ids: torch.Tensor) -> bool:
        last, p = self._last, self.prompt_length
        return (last is None or ids.shape[0] != last.shape[0] or ids.shape[1] != last.shape[1] + 1
                or not torch.equal(ids[:, :p], last[:, :p]))

    def _begin(self, ids: torch.Tensor) -> None:
        n_prompt = ids.shape[1] - 1  # the first step of generate sees the prompt plus one new token
        if self.prompt_length > n_prompt:
            raise ValueError(f"`prompt_length` ({self.prompt_length}) is longer than the prompt in `input_ids` "
                             f"({n_prompt} tokens before the first generated one): the monitor would watch "
                             "nothing of the answer")
        if self.tap is None:
            self.sessions = [self.monitor.start(self._strip(row[: self.prompt_length]), self.policy) for row in ids]
        else:
            self.tap.discard_stale()
            self.sessions = [ScoreTally(self.policy) for _ in range(ids.shape[0])]
            self._scored_to = self.prompt_length

    def _strip(self, prompt: torch.Tensor) -> torch.Tensor:
        if self.pad_token_id is None:
            return prompt
        real = (prompt != self.pad_token_id).nonzero()
        if real.numel() == 0:
            raise ValueError(f"a prompt row is all `pad_token_id` ({self.pad_token_id})")
        return prompt[int(real[0, 0]):]

    def __call__(self, input_ids: torch.LongTensor, scores=None, **kwargs) -> torch.BoolTensor:
        if not isinstance(input_ids, torch.Tensor) or input_ids.ndim != 2:
            raise ValueError(f"`input_ids` must be a (batch, length) tensor; got {getattr(input_ids, 'shape', None)}")
        if self.tap is not None and self.tap.closed:
            raise RuntimeError("this SCMStoppingCriteria was closed; make a new one for each generate call")
        ids = input_ids.detach()
        if self._is_new_generate(ids):
            self._begin(ids)
        elif not torch.equal(ids[:, :-1], self._last):
            raise ValueError("the rows' earlier tokens changed between two steps (beam search reorders its rows): "
                             "the monitor follows greedy or sampled decoding only")
        self._last = ids.clone()
        if self.eos_token_id is None and ids.shape[0] > 1 and not self._warned_no_eos:
            self._warned_no_eos = True
            warnings.warn("SCMStoppingCriteria has no `eos_token_id`: in a batch, a row that ends by EOS is padded "
                          "by generate and would go on being scored (and flagged) on its padding; pass "
                          "eos_token_id= or build the criterion with monitor.guard(generator, ...)", stacklevel=2)
        eos = set(self.eos_token_id or ())
        if self.tap is None:
            for row, sess in zip(ids, self.sessions):
                if sess.stopped_at or sess.ended:
                    continue
                fed = self.prompt_length + len(sess.probs)
                for tok in row[fed:].tolist():
                    if tok in eos:
                        sess.ended = True
                        break
                    if sess.step(tok).stop:
                        break
        else:
            end = ids.shape[1] - 1  # the newest token has not been run by the generator yet
            first = self._scored_to
            probs = self.tap.take(first, end, ids.shape[0]).tolist()
            self._scored_to = end
            for row, toks, sess in zip(probs, ids[:, first:end].tolist(), self.sessions):
                for p, tok in zip(row, toks):
                    if sess.stopped_at or sess.ended:
                        break
                    if tok in eos:
                        sess.ended = True
                        break
                    if sess.record(p).stop:
                        break
        return self.stopped_rows.to(input_ids.device)

    def close(self) -> None:
        """Remove the generator hook of a shared-backbone criterion (no-op otherwise)."""
        if self.tap is not None:
            self.tap.close()

    def __enter__(self) -> SCMStoppingCriteria:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
