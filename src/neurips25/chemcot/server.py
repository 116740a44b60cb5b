"""A local OpenAI-compatible server: ``POST /v1/chat/completions`` and ``GET /v1/models`` (stdlib only).

:func:`serve` puts any responder behind real HTTP on 127.0.0.1, so the harness -- and any tool built on the
official ``openai`` client -- runs end to end exactly as against vLLM / llama.cpp / Ollama. What it speaks:

- ``stream: true`` -> Server-Sent Events (``chat.completion.chunk`` objects, then ``data: [DONE]``); the
  chunks' ``delta.content`` concatenate to exactly the non-streamed answer; ``stream_options.include_usage``
  adds the final usage chunk;
- ``max_completion_tokens`` (newer SDKs send only this) or ``max_tokens``; ``stop`` (a string or up to 4);
  ``n`` choices (sampled with seeds ``seed``, ``seed + 1``, ...); ``temperature``, ``top_p``, ``seed``;
- ``usage`` with real token counts: the responder's tokenizer where it has one (``count_tokens``), else a
  word / punctuation count, said so in the ``system_fingerprint``;
- OpenAI-shaped errors (``{"error": {"message", "type", "param", "code"}}``) with the right status, and a
  400 naming every request field it does not support (``tools``, ``logprobs``, a non-zero penalty, ...);
- ``POST /v1/completions`` (legacy text completions) is not served: a 404 whose message says so.

A responder is ``fn(messages, **params) -> str``; one with a ``chat(messages, **params) -> dict`` method
(``text``, ``prompt_tokens``, ``completion_tokens``, ``finish_reason``) reports its own counts. Provided:

- any solver of :mod:`neurips25.chemcot.solvers` (``solver(messages)``);
- :class:`TransformersResponder`: a transformers causal LM with its chat template, temperature and a token
  budget, micro-batching concurrent requests into one left-padded ``generate`` call (so 4 client workers are
  served by batched decoding instead of 4 serial ones).

A responder without its own budget gets the reply cut to ``max_tokens`` server tokens (``finish_reason``
``"length"``). ``noise`` (:class:`Noise`) perturbs replies deterministically per prompt: think blocks, code
fences, an invalid SMILES in place of the answer -- to check that parsing and metrics survive them.
``fault`` lets a test make the server return 500s, garbage or hang.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import numbers
import queue
import re
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np

Responder = Callable[..., str]

#: request fields the server honours
SUPPORTED_FIELDS = frozenset({"model", "messages", "temperature", "top_p", "max_tokens", "max_completion_tokens",
                              "stream", "stream_options", "n", "stop", "seed", "user", "metadata", "store"})
#: fields accepted only at their neutral value (the value that changes nothing)
NEUTRAL_FIELDS = {"presence_penalty": (0, 0.0, None), "frequency_penalty": (0, 0.0, None),
                  "logprobs": (False, None), "top_logprobs": (0, None), "logit_bias": (None,),
                  "tools": (None,), "tool_choice": (None, "none"), "parallel_tool_calls": (None, True, False),
                  "response_format": (None, {"type": "text"}), "service_tier": (None, "auto", "default")}
_PIECE = re.compile(r"\s*(?:[A-Za-z0-9]+|[^A-Za-z0-9\s])|\s+")


def text_pieces(text: str) -> list[str]:
    """The server's own tokens (a word or one punctuation mark, with its leading space); they join to ``text``."""
    return _PIECE.findall(text)


class RequestError(ValueError):
    """A bad request: the 400 (or other status) the client gets, OpenAI-shaped."""

    def __init__(self, message: str, param: str | None = None, status: int = 400,
                 kind: str = "invalid_request_error", code: str | None = None):
        super().__init__(message)
        self.param, self.status, self.kind, self.code = param, status, kind, code

    def body(self) -> bytes:
        return json.dumps({"error": {"message": str(self), "type": self.kind, "param": self.param,
                                     "code": self.code}}).encode()


def _int_field(req: dict, name: str, lo: int, hi: int | None = None) -> int | None:
    v = req.get(name)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < lo or (hi is not None and v > hi):
        rng = f">= {lo}" if hi is None else f"in [{lo}, {hi}]"
        raise RequestError(f"`{name}` must be an integer {rng}; got {v!r}", name)
    return int(v)


def parse_request(req) -> dict:
    """Validate a chat-completions request body; returns the normalised parameters or raises RequestError."""
    if not isinstance(req, dict):
        raise RequestError(f"the request body must be a JSON object; got {type(req).__name__}")
    unknown = sorted(k for k in req if k not in SUPPORTED_FIELDS and k not in NEUTRAL_FIELDS)
    if unknown:
        raise RequestError(f"unsupported field(s): {', '.join(unknown)}; this server supports "
                           f"{', '.join(sorted(SUPPORTED_FIELDS))}", unknown[0], code="unsupported_parameter")
    for k, neutral in NEUTRAL_FIELDS.items():
        if k in req and req[k] not in neutral and not (k == "logit_bias" and req[k] == {}) \
                and not (k == "tools" and req[k] == []):
            raise RequestError(f"unsupported value of `{k}`: {req[k]!r} (only {neutral[0]!r} is accepted)", k,
                               code="unsupported_parameter")
    messages = req.get("messages")
    if not isinstance(messages, list) or not messages:
        raise RequestError("`messages` must be a non-empty list of {role, content} objects", "messages")
    norm = []
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or m.get("role") not in ("system", "developer", "user", "assistant", "tool"):
            raise RequestError(f"`messages[{i}]` must be an object with a role in system / developer / user / "
                               f"assistant / tool; got {m!r}", f"messages[{i}]")
        content = m.get("content")
        if isinstance(content, list):  # content parts: keep the text parts
            if not all(isinstance(c, dict) and c.get("type") == "text" for c in content):
                raise RequestError(f"`messages[{i}].content`: only text parts are supported", f"messages[{i}]")
            content = "".join(str(c.get("text", "")) for c in content)
        if not isinstance(content, str):
            raise RequestError(f"`messages[{i}].content` must be a string or text parts; got {content!r}",
                               f"messages[{i}]")
        norm.append({"role": m["role"], "content": content})
    temp = req.get("temperature", 0.0)
    if temp is None:
        temp = 0.0
    if isinstance(temp, bool) or not isinstance(temp, numbers.Real) or not 0 <= temp <= 2 or not math.isfinite(temp):
        raise RequestError(f"`temperature` must be a number in [0, 2]; got {temp!r}", "temperature")
    top_p = req.get("top_p", 1.0)
    if top_p is None:
        top_p = 1.0
    if isinstance(top_p, bool) or not isinstance(top_p, numbers.Real) or not 0 < top_p <= 1:
        raise RequestError(f"`top_p` must be a number in (0, 1]; got {top_p!r}", "top_p")
    a, b = _int_field(req, "max_tokens", 1), _int_field(req, "max_completion_tokens", 1)
    if a is not None and b is not None and a != b:
        raise RequestError(f"`max_tokens` ({a}) and `max_completion_tokens` ({b}) disagree; send one",
                           "max_completion_tokens")
    n = _int_field(req, "n", 1, 16)
    seed = _int_field(req, "seed", 0)
    stop = req.get("stop")
    if isinstance(stop, str):
        stop = [stop]
    if stop is not None and (not isinstance(stop, list) or len(stop) > 4
                             or not all(isinstance(x, str) and x for x in stop)):
        raise RequestError(f"`stop` must be a non-empty string or a list of up to 4; got {req.get('stop')!r}", "stop")
    stream = req.get("stream", False)
    if stream is None:
        stream = False
    if not isinstance(stream, bool):
        raise RequestError(f"`stream` must be true or false; got {stream!r}", "stream")
    opts = req.get("stream_options") or {}
    if not isinstance(opts, dict) or set(opts) - {"include_usage"}:
        raise RequestError(f"`stream_options` supports only include_usage; got {opts!r}", "stream_options")
    budget = b if b is not None else a
    return {"messages": norm, "temperature": float(temp), "top_p": float(top_p), "max_tokens": budget, "n": n or 1,
            "seed": seed, "stop": stop or [], "stream": stream,
            "include_usage": bool(opts.get("include_usage")), "model": req.get("model")}


def _apply_stop(text: str, stop: list[str]) -> tuple[str, bool]:
    cut = min((i for i in (text.find(s) for s in stop) if i >= 0), default=-1)
    return (text[:cut], True) if cut >= 0 else (text, False)


@dataclasses.dataclass(frozen=True)
class Noise:
    """Deterministic per-prompt perturbations of a reply.

    ``think``: probability of a ``<think>...</think>`` preamble (with a decoy JSON object inside);
    ``fence``: probability of a Markdown ```json fence with prose around it; ``invalid``: probability that the
    answer's value is replaced by an invalid SMILES (``"C1CC(("``); ``seed`` varies the draws.
    """

    think: float = 0.0
    fence: float = 0.0
    invalid: float = 0.0
    seed: int = 0

    def __post_init__(self):
        for nm in ("think", "fence", "invalid"):
            v = getattr(self, nm)
            if not isinstance(v, numbers.Real) or not 0 <= v <= 1:
                raise ValueError(f"`{nm}` must be a probability in [0, 1]; got {v!r}")

    def draws(self, prompt: str) -> np.ndarray:
        h = int.from_bytes(hashlib.sha256(prompt.encode()).digest()[:8], "little")
        return np.random.default_rng([self.seed, h]).random(3)

    def apply(self, prompt: str, reply: str) -> str:
        u = self.draws(prompt)
        if u[2] < self.invalid:
            reply = re.sub(r'(:\s*)"[^"]*"', r'\1"C1CC(("', reply, count=1)
        if u[1] < self.fence:
            reply = f"Here is the answer.\n```json\n{reply}\n```\nDone."
        if u[0] < self.think:
            reply = f"<think>Let me reason step by step. A first guess: {{\"output\": \"CCCC\"}}.</think>\n{reply}"
        return reply


def _prompt_of(messages) -> str:
    return "\n".join(str(m.get("content", "")) for m in messages if isinstance(m, dict))


def _complete(srv, p: dict, index: int) -> dict:
    """One choice: call the responder, apply noise, stop and the budget; count tokens."""
    params = {"temperature": p["temperature"], "top_p": p["top_p"], "max_tokens": p["max_tokens"]}
    if p["seed"] is not None or p["n"] > 1:
        params["seed"] = (p["seed"] or 0) + index
    params = {k: v for k, v in params.items() if v is not None}
    responder = srv.responder
    counts = None
    if callable(getattr(responder, "chat", None)):
        out = responder.chat(p["messages"], **params)
        text, counts = out["text"], out
    else:
        text = responder(p["messages"], **params)
    if not isinstance(text, str):
        raise TypeError(f"the responder returned {type(text).__name__}, not str")
    if srv.noise is not None:
        text = srv.noise.apply(_prompt_of(p["messages"]), text)
    finish = counts.get("finish_reason", "stop") if counts else "stop"
    count = getattr(responder, "count_tokens", None)
    count = count if callable(count) else (lambda t: len(text_pieces(t)))
    if counts is None and p["max_tokens"] is not None:  # a responder without a budget: cut at the server's tokens
        pieces = text_pieces(text)
        if len(pieces) > p["max_tokens"]:
            text, finish = "".join(pieces[: p["max_tokens"]]), "length"
    text, stopped = _apply_stop(text, p["stop"])
    if stopped:
        finish = "stop"
    completion = count(text) if (counts is None or stopped or srv.noise is not None) else counts["completion_tokens"]
    prompt = counts["prompt_tokens"] if counts else count(_prompt_of(p["messages"]))
    return {"text": text, "finish_reason": finish, "prompt_tokens": int(prompt), "completion_tokens": int(completion)}


class _Handler(BaseHTTPRequestHandler):
    server_version = "neurips25-chemcot/2"
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # keep test and CLI output clean
        pass

    def _send(self, code: int, body: bytes, ctype: str = "application/json"):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _error(self, err: RequestError):
        return self._send(err.status, err.body())

    def _route(self) -> str:
        return self.path.split("?", 1)[0].rstrip("/")

    def do_GET(self):
        if self._route() in ("/v1/models", "/models"):
            data = {"object": "list", "data": [{"id": self.server.model_name, "object": "model", "created": 0,
                                                 "owned_by": "neurips25"}]}
            return self._send(200, json.dumps(data).encode())
        if self._route() in ("/v1/models/" + self.server.model_name, "/models/" + self.server.model_name):
            data = {"id": self.server.model_name, "object": "model", "created": 0, "owned_by": "neurips25"}
            return self._send(200, json.dumps(data).encode())
        return self._error(RequestError(f"no route GET {self.path}; this server has GET /v1/models and POST "
                                        "/v1/chat/completions", status=404, code="unknown_url"))

    def do_POST(self):
        route = self._route()
        n = int(self.headers.get("Content-Length", 0) or 0)
        raw = self.rfile.read(n) if n else b""
        if route in ("/v1/completions", "/completions"):
            return self._error(RequestError("POST /v1/completions (legacy text completions) is not served here; "
                                            "use POST /v1/chat/completions with a messages list", status=404,
                                            code="unknown_url"))
        if route not in ("/v1/chat/completions", "/chat/completions"):
            return self._error(RequestError(f"no route POST {self.path}; this server has POST /v1/chat/completions",
                                            status=404, code="unknown_url"))
        try:
            try:
                req = json.loads(raw.decode() or "{}")
            except ValueError as err:
                raise RequestError(f"the request body is not valid JSON: {err}") from err
            p = parse_request(req)
        except RequestError as err:
            return self._error(err)
        srv = self.server
        with srv.lock:
            srv.requests += 1
            count = srv.requests
        fault = srv.fault(count) if srv.fault else None
        if fault == "500":
            return self._error(RequestError("injected failure", status=500, kind="server_error"))
        if fault == "garbage":
            return self._send(200, b"<html>not json", "text/html")
        if fault == "hang":
            time.sleep(srv.hang_s)
        try:
            choices = [_complete(srv, p, i) for i in range(p["n"])]
        except RequestError as err:  # the responder refused the request (e.g. longer than the model's context)
            return self._error(err)
        except Exception as err:  # noqa: BLE001 - a responder failure is the client's 500, not a dead server
            return self._error(RequestError(f"{type(err).__name__}: {err}", status=500, kind="server_error"))
        usage = {"prompt_tokens": choices[0]["prompt_tokens"],
                 "completion_tokens": sum(c["completion_tokens"] for c in choices)}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        head = {"id": f"chatcmpl-{count}", "created": int(time.time()), "model": p["model"] or srv.model_name,
                "system_fingerprint": srv.fingerprint}
        if p["stream"]:
            return self._stream(head, choices, usage if p["include_usage"] else None)
        body = dict(head, object="chat.completion", usage=usage, choices=[
            {"index": i, "message": {"role": "assistant", "content": c["text"]}, "logprobs": None,
             "finish_reason": c["finish_reason"]} for i, c in enumerate(choices)])
        return self._send(200, json.dumps(body).encode())

    def _stream(self, head: dict, choices: list[dict], usage: dict | None):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

        def event(choice_list, **extra):
            data = dict(head, object="chat.completion.chunk", choices=choice_list, **extra)
            self.wfile.write(b"data: " + json.dumps(data).encode() + b"\n\n")

        for i, c in enumerate(choices):
            event([{"index": i, "delta": {"role": "assistant", "content": ""}, "logprobs": None,
                    "finish_reason": None}])
            for piece in text_pieces(c["text"]):
                event([{"index": i, "delta": {"content": piece}, "logprobs": None, "finish_reason": None}])
            event([{"index": i, "delta": {}, "logprobs": None, "finish_reason": c["finish_reason"]}])
        if usage is not None:
            event([], usage=usage)
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


class _Server(ThreadingHTTPServer):
    """socketserver's listen backlog is 5: with more concurrent clients than that, while a model's decoding keeps
    the accept loop from running, the kernel resets the extra connections ("Connection reset by peer")."""

    daemon_threads = True
    request_queue_size = 1024


def serve(responder: Responder, host: str = "127.0.0.1", port: int = 0, model_name: str = "local",
          noise: Noise | None = None, fault: Callable[[int], str | None] | None = None,
          hang_s: float = 5.0) -> tuple[str, Callable[[], None]]:
    """Serve ``responder`` in a background thread; returns ``(base_url, stop)``.

    Parameters
    ----------
    responder : callable
        ``responder(messages, temperature=..., max_tokens=..., ...) -> str`` (or with a ``chat`` method, see
        the module docstring).
    host, port : str, int
        Bind address; ``port=0`` picks a free port.
    model_name : str
        Reported by ``/v1/models``.
    noise : Noise, optional
        Reply perturbations.
    fault : callable, optional
        ``fault(request_number) -> "500" | "garbage" | "hang" | None``.

    Returns
    -------
    (str, callable)
        ``http://host:port/v1`` and a function that shuts the server down.
    """
    if not callable(responder):
        raise TypeError(f"`responder` must be callable; got {type(responder).__name__}")
    if noise is not None and not isinstance(noise, Noise):
        raise TypeError(f"`noise` must be a Noise; got {type(noise).__name__}")
    httpd = _Server((host, int(port)), _Handler)
    httpd.responder, httpd.noise, httpd.fault, httpd.hang_s = responder, noise, fault, float(hang_s)
    httpd.model_name, httpd.requests, httpd.lock = model_name, 0, threading.Lock()
    tokenizer_named = callable(getattr(responder, "count_tokens", None))
    httpd.fingerprint = "neurips25-" + ("tokenizer-counts" if tokenizer_named else "word-piece-counts")
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()

    def stop():
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)
        closer = getattr(responder, "close", None)
        if callable(closer):
            closer()

    return f"http://{host}:{httpd.server_address[1]}/v1", stop


class TransformersResponder:
    """A transformers causal LM as a responder, batching concurrent requests.

    Parameters
    ----------
    model : PreTrainedModel
        Causal LM in eval mode.
    tokenizer : PreTrainedTokenizer
        With a chat template (the prompt is rendered with ``add_generation_prompt=True``).
    max_batch : int
        Requests decoded together at most.
    wait_s : float
        How long the batcher waits for more requests after the first one.
    min_new_tokens : int
        Tokens generated before EOS is allowed (SmolLM2's Q4 weights often close the turn at once).
    default_max_tokens : int
        Used when a request gives no ``max_tokens``.
    seed : int
        Seeds sampling when ``temperature > 0`` and a request gives no ``seed``.
    context_length : int, optional
        Tokens the model attends to (default: ``model.config.max_position_embeddings``). A request whose prompt
        (plus an explicit ``max_tokens``) does not fit is refused with a 400 ``context_length_exceeded`` before
        any decoding; without an explicit budget the reply is cut where the context ends.

    Notes
    -----
    Sampling is per request: each row of a micro-batch draws its tokens from its own ``torch.Generator`` seeded
    with the request's ``seed``, so a seeded request returns the same reply alone or batched with others (up to
    the left padding's float rounding, as for greedy replies), and requests with different temperatures,
    ``top_p`` or seeds share one ``generate`` call.
    """

    def __init__(self, model, tokenizer, max_batch: int = 4, wait_s: float = 0.05, min_new_tokens: int = 1,
                 default_max_tokens: int = 128, seed: int = 0, context_length: int | None = None):
        if isinstance(max_batch, bool) or not isinstance(max_batch, numbers.Integral) or max_batch < 1:
            raise ValueError(f"`max_batch` must be an integer >= 1; got {max_batch!r}")
        if context_length is None:
            context_length = getattr(getattr(model, "config", None), "max_position_embeddings", None)
        if context_length is not None and (isinstance(context_length, bool)
                                           or not isinstance(context_length, numbers.Integral) or context_length < 2):
            raise ValueError(f"`context_length` must be an integer >= 2 or None; got {context_length!r}")
        self.context_length = None if context_length is None else int(context_length)
        self.model, self.tok = model, tokenizer
        self.max_batch, self.wait_s = int(max_batch), float(wait_s)
        self.min_new_tokens, self.default_max_tokens, self.seed = int(min_new_tokens), int(default_max_tokens), seed
        if self.tok.pad_token is None:
            self.tok.pad_token = self.tok.eos_token
        self._q: queue.Queue = queue.Queue()
        self._stop = threading.Event()
        self.batches: list[int] = []  # sizes of the batches decoded (for the benchmark)
        self._worker = threading.Thread(target=self._loop, daemon=True)
        self._worker.start()

    def __call__(self, messages, temperature: float = 0.0, max_tokens: int | None = None, **params) -> str:
        return self.chat(messages, temperature=temperature, max_tokens=max_tokens, **params)["text"]

    def chat(self, messages, temperature: float = 0.0, max_tokens: int | None = None, seed: int | None = None,
             top_p: float = 1.0, **_) -> dict:
        """The reply with its token counts: ``text``, ``prompt_tokens``, ``completion_tokens``, ``finish_reason``."""
        budget = int(max_tokens or self.default_max_tokens)
        if self.context_length is not None:
            n_prompt = len(self._encode_prompt(messages))
            ctx = self.context_length
            if n_prompt >= ctx:
                raise RequestError(f"This model's maximum context length is {ctx} tokens; the messages take "
                                   f"{n_prompt} tokens. Shorten the messages.", "messages",
                                   code="context_length_exceeded")
            if max_tokens is not None and n_prompt + budget > ctx:
                raise RequestError(f"This model's maximum context length is {ctx} tokens; you requested "
                                   f"{n_prompt + budget} tokens ({n_prompt} in the messages, {budget} in the "
                                   "completion). Shorten the messages or lower max_tokens.", "max_tokens",
                                   code="context_length_exceeded")
            budget = min(budget, ctx - n_prompt)
        slot = {"messages": messages, "temperature": float(temperature or 0.0), "max_tokens": budget,
                "top_p": float(top_p or 1.0), "seed": self.seed if seed is None else int(seed),
                "done": threading.Event()}
        self._q.put(slot)
        slot["done"].wait()
        if "error" in slot:
            raise RuntimeError(slot["error"])
        return slot["result"]

    def _encode_prompt(self, messages) -> list[int]:
        text = self.tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        return self.tok(text).input_ids

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` under the model's tokenizer."""
        return len(self.tok(text, add_special_tokens=False).input_ids)

    def close(self):
        self._stop.set()
        self._q.put(None)
        self._worker.join(timeout=5)

    def _loop(self):
        while not self._stop.is_set():
            first = self._q.get()
            if first is None:
                return
            batch = [first]
            deadline = time.monotonic() + self.wait_s
            while len(batch) < self.max_batch:
                left = deadline - time.monotonic()
                try:
                    nxt = self._q.get(timeout=max(left, 0.0)) if left > 0 else self._q.get_nowait()
                except queue.Empty:
                    break
                if nxt is None:
                    self._stop.set()
                    break
                batch.append(nxt)
            # one generate call for the whole micro-batch: each row samples with its own settings and generator
            try:
                results = self.generate([s["messages"] for s in batch], [s["temperature"] for s in batch],
                                        [s["max_tokens"] for s in batch], top_p=[s["top_p"] for s in batch],
                                        seed=[s["seed"] for s in batch], with_counts=True)
                for s, r in zip(batch, results):
                    s["result"] = r
            except Exception as err:  # noqa: BLE001 - reported to each waiting request
                for s in batch:
                    s["error"] = f"{type(err).__name__}: {err}"
            for s in batch:
                s["done"].set()

    def generate(self, conversations: list, temperature, max_tokens: list[int], top_p=1.0,
                 seed=None, with_counts: bool = False) -> list:
        """Decode a batch of conversations (left padding); each reply cut at its own ``max_tokens``.

        ``temperature``, ``top_p`` and ``seed`` are one value for every row or a list with one per row. A row with
        ``temperature > 0`` samples from its own ``torch.Generator`` seeded with its seed (``self.seed`` when
        None), so its reply does not depend on the other rows of the batch. Returns the texts, or with
        ``with_counts`` dicts with the text and its token counts.
        """
        import torch

        n = len(conversations)

        def per_row(v, name):
            v = list(v) if isinstance(v, (list, tuple)) else [v] * n
            if len(v) != n:
                raise ValueError(f"`{name}` must be one value or one per conversation ({n}); got {len(v)}")
            return v

        temps, tops = [float(t or 0.0) for t in per_row(temperature, "temperature")], per_row(top_p, "top_p")
        seeds = [self.seed if sd is None else int(sd) for sd in per_row(seed, "seed")]
        self.batches.append(n)
        prompts = [self.tok.apply_chat_template(c, tokenize=False, add_generation_prompt=True) for c in conversations]
        self.tok.padding_side = "left"
        enc = self.tok(prompts, return_tensors="pt", padding=True)
        kw = dict(max_new_tokens=max(max_tokens), min_new_tokens=min(self.min_new_tokens, min(max_tokens)),
                  pad_token_id=self.tok.pad_token_id, do_sample=False)
        if any(t > 0 for t in temps):
            from transformers import LogitsProcessorList

            kw["logits_processor"] = LogitsProcessorList([_RowSampler(temps, tops, seeds, enc["input_ids"].device)])
        with torch.no_grad():
            out = self.model.generate(**enc, **kw)
        new = out[:, enc["input_ids"].shape[1]:]
        stops = {t for t in (self.tok.eos_token_id, self.tok.pad_token_id) if t is not None}
        results = []
        for row, m, att in zip(new, max_tokens, enc["attention_mask"]):
            ids = row[:m].tolist()
            n_gen = next((k for k, t in enumerate(ids) if t in stops), None)
            finish = "stop" if n_gen is not None else "length"
            ids = ids if n_gen is None else ids[:n_gen]
            text = self.tok.decode(ids, skip_special_tokens=True)
            results.append({"text": text, "prompt_tokens": int(att.sum()), "completion_tokens": len(ids),
                            "finish_reason": finish})
        return results if with_counts else [r["text"] for r in results]


class _RowSampler:
    """A logits processor that samples each row's next token with the row's own temperature, top-p and generator.

    It runs last (after min-length and the like) under greedy ``generate``: a sampled row's scores become 0 at
    the drawn token and -inf elsewhere, so the argmax is the draw; a row at temperature 0 is left as it is.
    """

    def __init__(self, temperatures, top_ps, seeds, device):
        import torch

        self.temps, self.top_ps = list(temperatures), [float(p) for p in top_ps]
        self.gens = [torch.Generator(device=device).manual_seed(int(sd)) if t > 0 else None
                     for t, sd in zip(self.temps, seeds)]

    def __call__(self, input_ids, scores):
        import torch

        scores = scores.clone()
        for i, (t, p, g) in enumerate(zip(self.temps, self.top_ps, self.gens)):
            if g is None:
                continue
            probs = torch.softmax(scores[i].float() / t, dim=-1)
            if p < 1.0:  # nucleus: the smallest set of most likely tokens whose mass reaches p
                sp, si = torch.sort(probs, descending=True)
                drop = (torch.cumsum(sp, 0) - sp) >= p
                probs[si[drop]] = 0.0
                probs = probs / probs.sum()
            tok = torch.multinomial(probs, 1, generator=g)
            row = torch.full_like(scores[i], float("-inf"))
            row[tok] = 0.0
            scores[i] = row
        return scores


def load_causal_lm(model: str, dtype=None):
    """(model, tokenizer) for ``"smollm2"``, a ``.gguf`` file, or a local transformers directory (offline).

    ``dtype``: None keeps the loaded weights' dtype; ``"auto"`` casts to bfloat16 only where this CPU runs it
    faster than float32, else float32 (:func:`neurips25.pretrained.precision.choose_cpu_dtype`, probed once per
    process and logged); ``"bfloat16"`` / ``"float32"`` cast as asked.
    """
    lm, tok = _load_causal_lm(model)
    if dtype is not None:
        from neurips25.pretrained.precision import choose_cpu_dtype

        lm = lm.to(choose_cpu_dtype(dtype))
    return lm, tok


def _load_causal_lm(model: str):
    from pathlib import Path

    from neurips25.extras import require

    if model == "smollm2":
        from neurips25.pretrained import load_smollm2, load_smollm2_tokenizer

        return load_smollm2(), load_smollm2_tokenizer()
    p = Path(model)
    if p.suffix == ".gguf":
        from neurips25.pretrained import load_smollm2, load_smollm2_tokenizer

        return load_smollm2(p), load_smollm2_tokenizer(p)
    if not p.is_dir():
        raise FileNotFoundError(f"`model` must be 'smollm2', a .gguf file or a transformers model directory; "
                                f"got {model!r}")
    transformers = require("transformers", "lm")
    tok = transformers.AutoTokenizer.from_pretrained(str(p), local_files_only=True)
    lm = transformers.AutoModelForCausalLM.from_pretrained(str(p), local_files_only=True).eval()
    return lm, tok
