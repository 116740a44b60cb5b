"""Chat clients: an OpenAI-compatible HTTP client (stdlib only) and a wrapper for in-process callables.

:class:`OpenAIChatClient` posts ``{"model", "messages", "temperature", "max_tokens"}`` to
``{base_url}/chat/completions`` -- what vLLM, llama.cpp's server, Ollama and OpenAI itself accept -- and
returns ``choices[0].message.content``, falling back to ``reasoning_content`` when the content is empty
(reasoning servers put the whole answer there when the content budget runs out). A streamed reply
(``text/event-stream``) is joined from its ``data:`` chunks. Timeouts, connection errors, HTTP 429 / 5xx and
undecodable bodies are retried with exponential backoff; after the last try :class:`ChatError` is raised,
which :func:`neurips25.chemcot.harness.evaluate` records as a failed item without stopping the run.
"""

from __future__ import annotations

import json
import math
import numbers
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Protocol, runtime_checkable


class ChatError(RuntimeError):
    """A request that failed after every retry (the message says why)."""


@runtime_checkable
class ChatClient(Protocol):
    """Anything with ``complete(messages) -> str``."""

    def complete(self, messages: list[dict]) -> str: ...


def _check_messages(messages) -> list[dict]:
    if not isinstance(messages, (list, tuple)) or not messages:
        raise ValueError("`messages` must be a non-empty list of {'role', 'content'} dicts")
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or "role" not in m or "content" not in m:
            raise ValueError(f"`messages[{i}]` must be a dict with 'role' and 'content'; got {m!r}")
    return list(messages)


class OpenAIChatClient:
    """Client of an OpenAI-compatible ``/chat/completions`` endpoint.

    Parameters
    ----------
    base_url : str
        Up to and including the version, e.g. ``"http://127.0.0.1:8000/v1"``.
    model : str
        Model name sent with every request.
    api_key : str, optional
        Sent as ``Authorization: Bearer ...`` when given.
    temperature : float
        Sampling temperature (0 = greedy; ChemCoTBench evaluates greedily).
    max_tokens : int
        Completion budget per request.
    timeout : float
        Seconds per attempt.
    retries : int
        Extra attempts after the first (0 = no retry).
    backoff : float
        First retry delay in seconds, doubled each time.
    """

    def __init__(self, base_url: str, model: str, api_key: str | None = None, temperature: float = 0.0,
                 max_tokens: int = 512, timeout: float = 60.0, retries: int = 2, backoff: float = 0.5):
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise ValueError(f"`base_url` must be an http(s) URL such as http://127.0.0.1:8000/v1; got {base_url!r}")
        if not isinstance(model, str) or not model:
            raise ValueError(f"`model` must be a non-empty string; got {model!r}")
        if isinstance(temperature, bool) or not isinstance(temperature, numbers.Real) or not 0 <= temperature <= 2:
            raise ValueError(f"`temperature` must be in [0, 2]; got {temperature!r}")
        for nm, v, lo in (("max_tokens", max_tokens, 1), ("retries", retries, 0)):
            if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < lo:
                raise ValueError(f"`{nm}` must be an integer >= {lo}; got {v!r}")
        for nm, v in (("timeout", timeout), ("backoff", backoff)):
            if (isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v) or v < 0
                    or (nm == "timeout" and v == 0)):
                raise ValueError(f"`{nm}` must be a positive number of seconds; got {v!r}")
        self.base_url = base_url.rstrip("/")
        self.model, self.api_key = model, api_key
        self.temperature, self.max_tokens = float(temperature), int(max_tokens)
        self.timeout, self.retries, self.backoff = float(timeout), int(retries), float(backoff)

    def __repr__(self) -> str:
        return f"OpenAIChatClient({self.base_url!r}, model={self.model!r})"

    def _request(self, payload: dict) -> str:
        req = urllib.request.Request(self.base_url + "/chat/completions", data=json.dumps(payload).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
        if self.api_key:
            req.add_header("Authorization", f"Bearer {self.api_key}")
        with urllib.request.urlopen(req, timeout=self.timeout) as resp:  # noqa: S310 - user-given endpoint
            body = resp.read().decode("utf-8", errors="replace")
            ctype = resp.headers.get("Content-Type", "")
        if "event-stream" in ctype or body.lstrip().startswith("data:"):
            return _join_stream(body)
        return _content(json.loads(body))

    def complete(self, messages: list[dict], **overrides) -> str:
        """The assistant's reply text to ``messages``; raises :class:`ChatError` after all retries."""
        payload = {"model": self.model, "messages": _check_messages(messages), "temperature": self.temperature,
                   "max_tokens": self.max_tokens, "stream": False}
        payload.update(overrides)
        last = ""
        for attempt in range(self.retries + 1):
            try:
                return self._request(payload)
            except urllib.error.HTTPError as err:
                last = f"HTTP {err.code} {err.reason}{_error_message(err)}"
                if err.code < 500 and err.code != 429:
                    break  # a client error will not heal by retrying
            except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as err:
                last = f"{type(err).__name__}: {getattr(err, 'reason', err)}"
            except (ValueError, KeyError, IndexError, TypeError) as err:
                last = f"malformed response: {type(err).__name__}: {err}"
            if attempt < self.retries:
                time.sleep(self.backoff * 2 ** attempt)
        raise ChatError(f"{self.base_url}/chat/completions failed after {attempt + 1} attempt(s): {last}")

    def list_models(self) -> list[str]:
        """Model ids from ``GET {base_url}/models``."""
        with urllib.request.urlopen(self.base_url + "/models", timeout=self.timeout) as resp:  # noqa: S310
            data = json.loads(resp.read().decode())
        return [m["id"] for m in data.get("data", [])]


def _error_message(err: urllib.error.HTTPError) -> str:
    """``": <message>"`` from an OpenAI-shaped error body (``{"error": {"message": ...}}``), else ``""``."""
    try:
        body = json.loads(err.read().decode("utf-8", errors="replace"))
        msg = body["error"]["message"] if isinstance(body.get("error"), dict) else body.get("error")
        return f": {msg}" if msg else ""
    except Exception:  # noqa: BLE001 - the status line alone is still a usable error
        return ""


def _content(data: dict) -> str:
    msg = data["choices"][0]["message"]
    content = msg.get("content")
    if isinstance(content, list):  # content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    if not content:
        content = msg.get("reasoning_content") or ""
    if not isinstance(content, str):
        raise TypeError(f"message content must be a string; got {type(content).__name__}")
    return content


def _join_stream(body: str) -> str:
    parts, reasoning = [], []
    for line in body.splitlines():
        line = line.strip()
        if not line.startswith("data:"):
            continue
        chunk = line[5:].strip()
        if chunk == "[DONE]":
            break
        delta = json.loads(chunk)["choices"][0].get("delta", {})
        parts.append(delta.get("content") or "")
        reasoning.append(delta.get("reasoning_content") or "")
    return "".join(parts) or "".join(reasoning)


class CallableClient:
    """Wrap ``fn(messages) -> str`` (a solver, a stub) as a :class:`ChatClient` for in-process runs."""

    def __init__(self, fn: Callable[[list[dict]], str], name: str = "callable"):
        if not callable(fn):
            raise TypeError(f"`fn` must be callable; got {type(fn).__name__}")
        self.fn, self.name = fn, name

    def complete(self, messages: list[dict], **_) -> str:
        out = self.fn(_check_messages(messages))
        if not isinstance(out, str):
            raise ChatError(f"{self.name} returned {type(out).__name__}, not str")
        return out

    def __repr__(self) -> str:
        return f"CallableClient({self.name!r})"
