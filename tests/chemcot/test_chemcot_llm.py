"""TransformersResponder behind the server: chat template, batching of concurrent requests (tiny model)."""

import importlib.util
from concurrent.futures import ThreadPoolExecutor

import pytest

pytestmark = pytest.mark.skipif(
    any(importlib.util.find_spec(m) is None for m in ("torch", "transformers", "peft")),
    reason="needs the lm extra (torch, transformers, peft)")


@pytest.fixture(scope="module")
def tiny():
    import torch
    import transformers
    from tokenizers import Tokenizer, models, pre_tokenizers

    torch.manual_seed(0)
    vocab = {c: i for i, c in enumerate(["<pad>", "<eos>", *list("abcdefghijklmnopqrstuvwxyz{}\":,. 0123456789")])}
    tk = Tokenizer(models.WordLevel(vocab, unk_token="<pad>"))
    tk.pre_tokenizer = pre_tokenizers.Split("", "isolated")
    tok = transformers.PreTrainedTokenizerFast(tokenizer_object=tk, pad_token="<pad>", eos_token="<eos>")
    tok.chat_template = ("{% for m in messages %}{{ m['content'] }}{% endfor %}"
                         "{% if add_generation_prompt %}:{% endif %}")
    cfg = transformers.LlamaConfig(vocab_size=len(vocab), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                   num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                                   pad_token_id=0, eos_token_id=1, bos_token_id=1)
    return transformers.LlamaForCausalLM(cfg).eval(), tok


def test_server_batches_concurrent_requests(tiny):
    from neurips25.chemcot import OpenAIChatClient, TransformersResponder, serve

    model, tok = tiny
    responder = TransformersResponder(model, tok, max_batch=4, wait_s=0.2, default_max_tokens=5)
    url, stop = serve(responder, model_name="tiny")
    try:
        client = OpenAIChatClient(url, "tiny", max_tokens=5, timeout=60)
        prompts = ["abc", "hello world", "x", "count 3"]
        with ThreadPoolExecutor(4) as pool:
            outs = list(pool.map(lambda p: client.complete([{"role": "user", "content": p}]), prompts))
        single = responder.generate([[{"role": "user", "content": "abc"}]], 0.0, [5])[0]
    finally:
        stop()
    assert all(isinstance(o, str) for o in outs)
    assert max(responder.batches) > 1  # concurrent requests shared a generate call
    assert outs[0] == single  # left padding does not change a greedy reply


def test_lora_finetune_lowers_the_loss(tiny):
    from neurips25.chemcot.cot import lora_finetune

    model, tok = tiny
    import copy

    tuned = lora_finetune(copy.deepcopy(model), tok, [("abc", "{\"output\": \"ccc\"}")] * 4, steps=25, batch_size=2,
                          lr=1e-2, r=4, seed=0)
    assert tuned.train_losses[-1] < 0.9 * tuned.train_losses[0]  # a frozen random base learns slowly
