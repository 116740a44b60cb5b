import pytest
import torch


def tiny_llama(impl="eager", layers=2, seed=0):
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    cfg = LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=layers,
                      num_attention_heads=4, num_key_value_heads=2, attn_implementation=impl)
    return LlamaForCausalLM(cfg).eval()


@pytest.fixture
def llama():
    return tiny_llama()


@pytest.fixture
def ids():
    return torch.randint(6, 64, (2, 12), generator=torch.Generator().manual_seed(1))
