"""Tiny models shared by the SCM tests."""

import pytest
import torch

from neurips25.scm import StreamingContentMonitor, tiny_decoder


@pytest.fixture
def decoder():
    return tiny_decoder(40, hidden_size=16, n_layers=2, n_heads=2, seed=0)


@pytest.fixture
def monitor(decoder):
    torch.manual_seed(0)
    return StreamingContentMonitor(decoder, alpha=0.5, gamma=1.0).eval()


@pytest.fixture
def causal_lm():
    transformers = pytest.importorskip("transformers")
    cfg = transformers.LlamaConfig(vocab_size=40, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                                   num_attention_heads=2, num_key_value_heads=2, tie_word_embeddings=False)
    torch.manual_seed(0)
    return transformers.LlamaForCausalLM(cfg).eval()
