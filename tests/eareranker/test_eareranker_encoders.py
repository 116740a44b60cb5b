"""Encoders: the hashed bag of words is deterministic; the shipped MiniLM embeds a handful of texts offline."""

import numpy as np
import pytest

from neurips25.eareranker import HashedBowEncoder, MiniLMEncoder


def test_hashed_bow():
    e = HashedBowEncoder(dim=32)
    a = e(["Alpha beta, gamma.", "alpha beta gamma", "delta"])
    np.testing.assert_allclose(a[0], a[1])  # punctuation and case do not matter
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, rtol=1e-6)
    with pytest.raises(TypeError, match="not one string"):
        e("a single string")


def test_minilm_handful_of_texts():
    pytest.importorskip("sentence_transformers")
    enc = MiniLMEncoder(max_seq_length=64)
    texts = ["Who founded Korvelle Systems?", "Korvelle Systems was founded in 1987 by Ana Tirel.",
             "The weather was mild with light rain."]
    e = enc(texts)
    assert e.shape == (3, 384) and np.allclose(np.linalg.norm(e, axis=1), 1.0, atol=1e-5)
    assert e[0] @ e[1] > e[0] @ e[2]  # the real model: the answer is closer than an unrelated sentence
    long = " ".join(["Korvelle Systems was founded in 1987."] * 80)
    chunked = MiniLMEncoder(max_seq_length=64, chunk_words=50)
    chunked._model = enc.model  # share the loaded model
    assert chunked([long]).shape == (1, 384)
