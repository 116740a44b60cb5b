"""A local OpenAI-compatible server: ``POST /v1/chat/completions`` and ``GET /v1/models`` (stdlib only).

:func:`serve` puts any responder behind real HTTP on 127.0.0.1, so the harness is tested end to end
exactly as against vLLM / llama.cpp / Ollama. A responder is ``fn(messages, params) -> str``; two are
provided:

- any solver of :mod:`neurips25.chemcot.solvers` (``solver(messages)``);
- :class:`TransformersResponder`: a transformers causal LM with its chat template, temperature and
  ``max_tokens``, micro-batching concurrent requests into one left-padded ``generate`` call (so 4 client
  workers are served by batched decoding instead of 4 serial ones).

``noise`` (:class:`Noise`) perturbs replies deterministically per prompt: think blocks, code fences, an
invalid SMILES in place of the answer -- to check that parsing and metrics survive them. ``fault`` lets a
test make the server return 500s, garbage or hang.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import numbers
import queue
import re
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np

Responder = Callable[..., str]


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


class _Handler(BaseHTTPRequestHandler):
    server_version = "neurips25-chemcot/1"
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # keep test and CLI output clean
        pass

    def _send(self, code: int, body: bytes, ctype: str = "application/json"):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            data = {"object": "list", "data": [{"id": self.server.model_name, "object": "model",
                                                 "owned_by": "neurips25"}]}
            return self._send(200, json.dumps(data).encode())
        return self._send(404, b'{"error": "not found"}')

    def do_POST(self):
        if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            return self._send(404, b'{"error": "not found"}')
        n = int(self.headers.get("Content-Length", 0))
        try:
            req = json.loads(self.rfile.read(n).decode() or "{}")
            messages = req["messages"]
            if not isinstance(messages, list) or not messages:
                raise ValueError("messages must be a non-empty list")
        except (ValueError, KeyError, TypeError) as err:
            return self._send(400, json.dumps({"error": f"bad request: {err}"}).encode())
        srv = self.server
        with srv.lock:
            srv.requests += 1
            count = srv.requests
        fault = srv.fault(count) if srv.fault else None
        if fault == "500":
            return self._send(500, b'{"error": "injected failure"}')
        if fault == "garbage":
            return self._send(200, b"<html>not json", "text/html")
        if fault == "hang":
            time.sleep(srv.hang_s)
        params = {k: req[k] for k in ("temperature", "max_tokens", "top_p", "seed") if k in req}
        try:
            text = srv.responder(messages, **params)
        except Exception as err:  # noqa: BLE001 - a responder failure is the client's 500, not a dead server
            return self._send(500, json.dumps({"error": f"{type(err).__name__}: {err}"}).encode())
        if srv.noise is not None:
            text = srv.noise.apply(_prompt_of(messages), text)
        body = {"id": f"chatcmpl-{count}", "object": "chat.completion", "created": int(time.time()),
                "model": req.get("model", srv.model_name),
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                             "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}}
        return self._send(200, json.dumps(body).encode())


def serve(responder: Responder, host: str = "127.0.0.1", port: int = 0, model_name: str = "local",
          noise: Noise | None = None, fault: Callable[[int], str | None] | None = None,
          hang_s: float = 5.0) -> tuple[str, Callable[[], None]]:
    """Serve ``responder`` in a background thread; returns ``(base_url, stop)``.

    Parameters
    ----------
    responder : callable
        ``responder(messages, temperature=..., max_tokens=...) -> str``.
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
    httpd = ThreadingHTTPServer((host, int(port)), _Handler)
    httpd.daemon_threads = True
    httpd.responder, httpd.noise, httpd.fault, httpd.hang_s = responder, noise, fault, float(hang_s)
    httpd.model_name, httpd.requests, httpd.lock = model_name, 0, threading.Lock()
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
        Seeds sampling when ``temperature > 0``.
    """

    def __init__(self, model, tokenizer, max_batch: int = 4, wait_s: float = 0.05, min_new_tokens: int = 1,
                 default_max_tokens: int = 128, seed: int = 0):
        if max_batch < 1:
            raise ValueError(f"`max_batch` must be >= 1; got {max_batch!r}")
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

    def __call__(self, messages, temperature: float = 0.0, max_tokens: int | None = None, **_) -> str:
        slot = {"messages": messages, "temperature": float(temperature or 0.0),
                "max_tokens": int(max_tokens or self.default_max_tokens), "done": threading.Event()}
        self._q.put(slot)
        slot["done"].wait()
        if "error" in slot:
            raise RuntimeError(slot["error"])
        return slot["text"]

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
            # one temperature per generate call: split the batch by temperature
            for temp in sorted({s["temperature"] for s in batch}):
                group = [s for s in batch if s["temperature"] == temp]
                try:
                    texts = self.generate([s["messages"] for s in group], temp, [s["max_tokens"] for s in group])
                    for s, t in zip(group, texts):
                        s["text"] = t
                except Exception as err:  # noqa: BLE001 - reported to each waiting request
                    for s in group:
                        s["error"] = f"{type(err).__name__}: {err}"
                for s in group:
                    s["done"].set()

    def generate(self, conversations: list, temperature: float, max_tokens: list[int]) -> list[str]:
        """Decode a batch of conversations (left padding); each reply cut at its own ``max_tokens``."""
        import torch

        self.batches.append(len(conversations))
        prompts = [self.tok.apply_chat_template(c, tokenize=False, add_generation_prompt=True) for c in conversations]
        self.tok.padding_side = "left"
        enc = self.tok(prompts, return_tensors="pt", padding=True)
        kw = dict(max_new_tokens=max(max_tokens), min_new_tokens=min(self.min_new_tokens, min(max_tokens)),
                  pad_token_id=self.tok.pad_token_id)
        if temperature > 0:
            torch.manual_seed(self.seed)
            kw.update(do_sample=True, temperature=temperature, top_p=1.0)
        else:
            kw.update(do_sample=False)
        with torch.no_grad():
            out = self.model.generate(**enc, **kw)
        new = out[:, enc["input_ids"].shape[1]:]
        return [self.tok.decode(row[:m], skip_special_tokens=True) for row, m in zip(new, max_tokens)]


def load_causal_lm(model: str):
    """(model, tokenizer) for ``"smollm2"``, a ``.gguf`` file, or a local transformers directory (offline)."""
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
