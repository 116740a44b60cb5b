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


def test_a_seeded_sampled_request_gets_the_same_reply_alone_or_batched(tiny):
    """issue #59: the seed was applied once per micro-batch, so a seeded reply changed whenever it shared one."""
    import openai

    from neurips25.chemcot import TransformersResponder, serve

    model, tok = tiny
    responder = TransformersResponder(model, tok, max_batch=8, wait_s=0.3, default_max_tokens=8)
    url, stop = serve(responder, model_name="tiny")
    try:
        client = openai.OpenAI(base_url=url, api_key="unused", max_retries=0, timeout=60)

        def ask(p, seed=7):
            r = client.chat.completions.create(model="tiny", messages=[{"role": "user", "content": p}],
                                               temperature=1.0, seed=seed, max_tokens=8)
            return r.choices[0].message.content

        prompts = ["abc", "hello", "x", "count 3", "zz", "ring", "add oh", "q"]
        alone = [ask(p) for p in prompts]
        with ThreadPoolExecutor(8) as pool:
            batched = list(pool.map(ask, prompts))
        other_seed = ask("abc", seed=8)
    finally:
        stop()
    assert max(responder.batches) > 1  # the concurrent requests did share a generate call
    assert batched == alone
    assert other_seed != alone[0]  # sampled: the seed matters


def test_a_prompt_longer_than_the_context_is_a_400_before_decoding(tiny):
    """issue #59: an over-long prompt was decoded for minutes and answered 200; now 400 context_length_exceeded."""
    import openai

    from neurips25.chemcot import TransformersResponder, serve

    model, tok = tiny  # max_position_embeddings = 256
    responder = TransformersResponder(model, tok, default_max_tokens=8)
    url, stop = serve(responder, model_name="tiny")
    try:
        client = openai.OpenAI(base_url=url, api_key="unused", max_retries=0, timeout=60)
        with pytest.raises(openai.BadRequestError, match="maximum context length is 256") as err:
            client.chat.completions.create(model="tiny", messages=[{"role": "user", "content": "a" * 300}])
        assert err.value.body["code"] == "context_length_exceeded" and err.value.body["param"] == "messages"
        with pytest.raises(openai.BadRequestError, match="250 in the messages, 10 in the completion"):
            client.chat.completions.create(model="tiny", messages=[{"role": "user", "content": "a" * 249}],
                                           max_tokens=10)
        r = client.chat.completions.create(model="tiny", messages=[{"role": "user", "content": "a" * 249}])
        assert r.usage.completion_tokens <= 6  # no explicit budget: cut where the context ends
    finally:
        stop()
    assert responder.batches == [1]  # the refused requests never reached generate


def test_load_causal_lm_dtype_auto_is_float32_where_bf16_is_slow(tiny, tmp_path, monkeypatch):
    """issue #59 / #64: bfloat16 by default was 13-46x slower on CPUs without native bf16."""
    import torch

    from neurips25.chemcot.server import load_causal_lm
    from neurips25.pretrained import precision

    model, tok = tiny
    model.save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    monkeypatch.setattr(precision, "_cache", {})
    monkeypatch.setattr(precision, "probe_bf16_speed", lambda *a, **k: 13.0)  # emulated bf16
    lm, _ = load_causal_lm(str(tmp_path), dtype="auto")
    assert next(lm.parameters()).dtype == torch.float32
    monkeypatch.setattr(precision, "_cache", {})
    monkeypatch.setattr(precision, "probe_bf16_speed", lambda *a, **k: 0.3)  # native bf16
    lm, _ = load_causal_lm(str(tmp_path), dtype="auto")
    assert next(lm.parameters()).dtype == torch.bfloat16
