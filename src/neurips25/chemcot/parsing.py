"""Answer extraction robust to reasoning models; never raises.

ChemCoTBench prompts ask for a JSON object (``{"output": "CCO"}``, ``{"count": 2}``, ...). Real answers
arrive wrapped: ``<think>...</think>`` blocks (DeepSeek-R1 style, sometimes unclosed), Markdown code
fences, prose around the object, trailing commas, single quotes. The official parser strips fences by
string replacement and calls ``json.loads``, so a wrapped answer scores zero. :func:`extract_answer`:

1. drops think blocks (and everything before a stray ``</think>``);
2. tries every ``{...}`` object in the text, last first (the final answer comes last), each through
   ``json.loads`` and then a lenient repair (trailing commas, single quotes, Python literals);
3. looks the key up case- and punctuation-insensitively, with aliases (``output``, ``answer``, ...);
4. falls back to a ``key: value`` regex, and for SMILES answers to the last SMILES-looking token;
5. coerces to the requested kind (``smiles``, ``int``, ``yesno``, ``text``) or returns ``None``.
"""

from __future__ import annotations

import ast
import json
import numbers
import re
from typing import Any

_THINK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.S | re.I)
_FENCE = re.compile(r"```[a-zA-Z]*")
_ALIASES = ("output", "answer", "final answer", "result", "final target molecule", "target molecule",
            "smiles", "product", "major product")
_SMILES_TOKEN = re.compile(r"[A-Za-z0-9@+\-\[\]\(\)=#$%/\\.:*]{2,}")
KINDS = ("smiles", "int", "yesno", "text")


def strip_reasoning(text: str) -> str:
    """Remove think blocks and code fences; an unclosed ``<think>`` hides nothing after a later ``</think>``."""
    text = _THINK.sub(" ", text)
    low = text.lower()
    for tag in ("</think>", "</thinking>", "</reasoning>"):
        i = low.rfind(tag)
        if i >= 0:
            text, low = text[i + len(tag):], low[i + len(tag):]
    for tag in ("<think>", "<thinking>", "<reasoning>"):
        i = low.find(tag)
        if i >= 0 and "{" in text[:i]:  # an answer before an unclosed think block: keep the answer
            text = text[:i]
        elif i >= 0:
            text = text[:i] + text[i + len(tag):]
        low = text.lower()
    return _FENCE.sub(" ", text)


def _objects(text: str) -> list[str]:
    """Balanced ``{...}`` spans, outermost, in order of appearance."""
    out, depth, start, in_str, quote = [], 0, None, False, ""
    for i, ch in enumerate(text):
        if in_str:
            if ch == quote and text[i - 1] != "\\":
                in_str = False
            continue
        if ch in "\"" and depth > 0:
            in_str, quote = True, ch
        elif ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                out.append(text[start:i + 1])
    return out


def _loads(obj: str) -> dict | None:
    try:
        val = json.loads(obj)
        return val if isinstance(val, dict) else None
    except (ValueError, RecursionError):
        pass
    fixed = re.sub(r",\s*([}\]])", r"\1", obj)
    try:
        val = json.loads(fixed)
        return val if isinstance(val, dict) else None
    except (ValueError, RecursionError):
        pass
    try:
        val = ast.literal_eval(fixed.replace("true", "True").replace("false", "False").replace("null", "None"))
        return val if isinstance(val, dict) else None
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def _norm(key: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", str(key).lower()).strip()


def _lookup(d: dict, key: str) -> Any:
    want = _norm(key)
    normed = {_norm(k): v for k, v in d.items()}
    if want in normed:
        return normed[want]
    for alias in _ALIASES:
        if alias in normed:
            return normed[alias]
    if len(d) == 1:
        return next(iter(d.values()))
    return None


def _coerce(value: Any, kind: str) -> Any:
    if value is None:
        return None
    if isinstance(value, list) and value:
        value = value[0]
    if kind == "int":
        if isinstance(value, bool):
            return None
        if isinstance(value, numbers.Real):
            return int(round(value)) if value == value else None
        m = re.search(r"-?\d+", str(value))
        return int(m.group()) if m else None
    if kind == "yesno":
        if isinstance(value, bool):
            return "yes" if value else "no"
        s = str(value).strip().lower()
        if re.match(r"^(yes|true|y)\b", s):
            return "yes"
        if re.match(r"^(no|false|n)\b", s):
            return "no"
        return None
    s = str(value).strip().strip("`'\" ")
    if not s:
        return None
    if kind == "smiles":
        s = s.split()[0].rstrip(".,;")
    return s


def extract_answer(text: Any, key: str = "output", kind: str = "text") -> Any:
    """The answer under ``key`` in a model's reply, coerced to ``kind``; ``None`` when not found.

    Parameters
    ----------
    text : str
        The raw reply (anything else gives ``None``).
    key : str
        JSON key the prompt asked for (matched case- and punctuation-insensitively, with aliases).
    kind : {"smiles", "int", "yesno", "text"}
        ``yesno`` answers are ``"yes"`` / ``"no"``; ``int`` takes the first integer.

    Examples
    --------
    >>> extract_answer('<think>hmm {"output": "x"}</think> ```json\\n{"output": "CCO",}\\n```', "output", "smiles")
    'CCO'
    """
    try:
        if not isinstance(text, str) or kind not in KINDS:
            return None
        body = strip_reasoning(text)
        for obj in reversed(_objects(body)):
            d = _loads(obj)
            if d is not None:
                val = _coerce(_lookup(d, key), kind)
                if val is not None:
                    return val
        keys = "|".join(re.escape(k) for k in dict.fromkeys((key, *_ALIASES)))
        found = list(re.finditer(rf"[\"']?(?:{keys})[\"']?\s*[:=]\s*[\"']?([^\"'\n,}}]+)", body, re.I))
        m = found[-1] if found else None
        if m is not None:
            val = _coerce(m.group(1), kind)
            if val is not None:
                return val
        if kind == "yesno":
            words = re.findall(r"\b(yes|no)\b", body.lower())
            return words[-1] if words else None
        if kind == "int":
            nums = re.findall(r"-?\d+", body)
            return int(nums[-1]) if nums else None
        if kind == "smiles":
            return _last_smiles(body)
        return None
    except Exception:  # noqa: BLE001 - parsing a model's reply must never crash an evaluation
        return None


def _last_smiles(body: str) -> str | None:
    from rdkit import Chem

    for tok in reversed(_SMILES_TOKEN.findall(body)):
        tok = tok.rstrip(".,:")
        # plain words parse as SMILES too ("No" is nobelium): take letters-only tokens only when they
        # look like an aliphatic chain (CCO, CCN)
        looks = not tok.isalpha() or re.fullmatch(r"[CNOS]{2,}", tok) is not None
        if looks and any(c.isalpha() for c in tok) and Chem.MolFromSmiles(tok) is not None:
            return tok
    return None
