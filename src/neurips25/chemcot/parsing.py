"""Answer extraction: the official-style strict parser (the default) and a lenient one (opt-in); never raises.

ChemCoTBench prompts ask for a JSON object (``{"output": "CCO"}``, ``{"count": 2}``, ...). Two parsers, named:

- ``"official"`` (:func:`parse_official`, the default of every score placed beside the paper's rows): what the
  official ``tranform_str_to_json`` does -- keep what follows the last ``"</think>\\n\\n"``, take what follows
  a ```` ```json\\n ```` fence (dropping ``"\\n```"``), delete newlines, ``json.loads``, read the key exactly.
  A reply it cannot read scores as a failed answer, as in the official scores.
- ``"lenient"`` (:func:`parse_lenient`, opt-in): robust to reasoning models --

  1. drops think blocks (and everything before a stray ``</think>``) and code fences;
  2. tries every ``{...}`` object in the text, last first, each through ``json.loads`` and then a lenient
     repair (trailing commas, single quotes, Python literals);
  3. looks the key up case- and punctuation-insensitively, with aliases (``output``, ``answer``, ...);
  4. falls back to a ``key: value`` regex, then to the last SMILES-looking token / yes-no word / integer --
     but never in a refusal ("Sorry, I cannot modify CCO." gives ``None``, not ``CCO``), never to a plain word
     ("No" is nobelium), and never when several different integers are named ("maybe 2 or 3").

Both coerce to the requested kind (``smiles``, ``int``, ``yesno``, ``choice``, ``text``) or return ``None``.
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
KINDS = ("smiles", "int", "yesno", "choice", "text")
PARSERS = ("official", "lenient")
_REFUSAL = re.compile(r"\b(sorry|cannot|can't|can not|unable|not able|apologi[sz]e|as an ai|i'm afraid|"
                      r"no idea|don't know|do not know|not possible|impossible)\b", re.I)


def is_refusal(text: str) -> bool:
    """True when ``text`` reads as a refusal or a non-answer (the lenient fallbacks then give nothing)."""
    return isinstance(text, str) and _REFUSAL.search(text) is not None


def _looks_like_smiles(tok: str) -> bool:
    """A token worth trying as SMILES: not a plain word, unless an aliphatic chain such as CCO / CCN."""
    return (not tok.isalpha() or re.fullmatch(r"[CNOS]{2,}", tok) is not None) and any(c.isalpha() for c in tok)


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
    """Lenient coercion of a found value to ``kind``."""
    if value is None:
        return None
    if isinstance(value, list) and value:
        value = value[0]
    if kind == "int":
        if isinstance(value, bool):
            return None
        if isinstance(value, numbers.Real):
            return int(round(value)) if value == value else None
        found = set(re.findall(r"-?\d+", str(value)))
        return int(found.pop()) if len(found) == 1 else None
    if kind == "yesno":
        if isinstance(value, bool):
            return "yes" if value else "no"
        s = str(value).strip().lower()
        if re.match(r"^(yes|true|y)\b", s):
            return "yes"
        if re.match(r"^(no|false|n)\b", s):
            return "no"
        return None
    if kind == "choice":
        m = re.match(r"^\s*\(?([A-Za-z])\b", str(value))
        return m.group(1).upper() if m else None
    s = str(value).strip().strip("`'\" ")
    if not s:
        return None
    if kind == "smiles":
        if is_refusal(s):
            return None
        toks = [t.rstrip(".,;") for t in s.split()]
        if len(toks) == 1:
            return toks[0] or None
        hits = [t for t in toks if _looks_like_smiles(t) and _valid(t)]
        return hits[0] if hits else None
    return s


def _valid(tok: str) -> bool:
    from rdkit import Chem

    return Chem.MolFromSmiles(tok) is not None


def _coerce_strict(value: Any, kind: str) -> Any:
    """The official-style coercion: the value as given, typed, nothing searched for."""
    if value is None or isinstance(value, (dict, list)):
        return None
    if kind == "int":
        if isinstance(value, bool):
            return None
        if isinstance(value, numbers.Integral):
            return int(value)
        if isinstance(value, numbers.Real):
            return int(value) if value == int(value) else None
        s = str(value).strip()
        return int(s) if re.fullmatch(r"-?\d+", s) else None
    s = str(value).strip()
    if not s:
        return None
    if kind == "yesno":
        return s.lower() if s.lower() in ("yes", "no") else None
    if kind == "choice":
        return s[0].upper() if s[0].isalpha() else None
    return s


def parse_official(text: Any, key: str = "output", kind: str = "text") -> Any:
    """The official-style strict parser (``tranform_str_to_json`` + an exact key read); ``None`` when unreadable.

    Examples
    --------
    >>> parse_official('<think>x</think>\\n\\n{"output": "CCO"}', "output", "smiles")
    'CCO'
    >>> parse_official('Sure! {"output": "CCO"}', "output", "smiles") is None
    True
    """
    try:
        if not isinstance(text, str) or kind not in KINDS:
            return None
        s = text
        if "</think>\n\n" in s:
            s = s.split("</think>\n\n")[-1]
        if "```json\n" in s:
            s = s.split("```json\n")[1].replace("\n```", "")
        s = s.replace("\n    ", "").replace("\n", "")
        obj = json.loads(s)
        if not isinstance(obj, dict) or key not in obj:
            return None
        return _coerce_strict(obj[key], kind)
    except Exception:  # noqa: BLE001 - an unreadable reply is a failed answer, never a crash
        return None


def extract_answer(text: Any, key: str = "output", kind: str = "text", parser: str = "official") -> Any:
    """The answer under ``key`` in a model's reply, coerced to ``kind``; ``None`` when not found.

    Parameters
    ----------
    text : str
        The raw reply (anything else gives ``None``).
    key : str
        JSON key the prompt asked for.
    kind : {"smiles", "int", "yesno", "choice", "text"}
        ``yesno`` answers are ``"yes"`` / ``"no"``; ``choice`` a capital letter.
    parser : {"official", "lenient"}
        :func:`parse_official` (default) or :func:`parse_lenient`.

    Raises
    ------
    ValueError
        For an unknown ``parser`` or ``kind`` (the reply itself never makes it raise).

    Examples
    --------
    >>> reply = '<think>hmm {"output": "x"}</think> ```json\\n{"output": "CCO",}\\n```'
    >>> extract_answer(reply, "output", "smiles") is None, extract_answer(reply, "output", "smiles", "lenient")
    (True, 'CCO')
    """
    if parser not in PARSERS:
        raise ValueError(f"`parser` must be one of {', '.join(PARSERS)}; got {parser!r}")
    if kind not in KINDS:
        raise ValueError(f"`kind` must be one of {', '.join(KINDS)}; got {kind!r}")
    return parse_official(text, key, kind) if parser == "official" else parse_lenient(text, key, kind)


def parse_lenient(text: Any, key: str = "output", kind: str = "text") -> Any:
    """The lenient parser (see the module docstring); ``None`` when nothing answer-like is found.

    Examples
    --------
    >>> parse_lenient('<think>hmm {"output": "x"}</think> ```json\\n{"output": "CCO",}\\n```', "output", "smiles")
    'CCO'
    >>> parse_lenient("Sorry, I cannot modify CCO.", "output", "smiles") is None
    True
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
        if is_refusal(body):
            return None
        if kind == "yesno":
            words = set(re.findall(r"\b(yes|no)\b", body.lower()))
            return words.pop() if len(words) == 1 else None
        if kind == "int":
            nums = set(re.findall(r"-?\d+", body))
            return int(nums.pop()) if len(nums) == 1 else None
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
        if _looks_like_smiles(tok) and Chem.MolFromSmiles(tok) is not None:
            return tok
    return None
