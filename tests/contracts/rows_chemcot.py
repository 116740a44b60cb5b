"""chemcot (#46): the official ``openai`` client against the chemcot OpenAI-compatible server."""

import contextlib

from contract_table import not_applicable, row

C, ISSUE = "chemcot", 46
REPLY = "Step 1: add a hydroxyl. Step 2: check the ring. Final answer: CCO"


def _responder(messages, seed=None, **params):
    # deterministic, and a different reply per seed so `n` choices can be told apart
    return REPLY if seed in (None, 0) else f"{REPLY} (draw {seed})"


@contextlib.contextmanager
def _client():
    import openai

    from neurips25.chemcot import serve

    url, stop = serve(_responder, model_name="chem-test")
    try:
        yield openai.OpenAI(base_url=url, api_key="unused", max_retries=0, timeout=10)
    finally:
        stop()


MSG = [{"role": "user", "content": "Add a hydroxyl group to ethane."}]


@row(C, "openai", "client.models.list() and models.retrieve() name the served model")
def _models(tmp_path):
    with _client() as client:
        assert [m.id for m in client.models.list()] == ["chem-test"]
        assert client.models.retrieve("chem-test").id == "chem-test"


@row(C, "openai", "chat.completions.create returns the responder's answer, finish_reason stop")
def _chat(tmp_path):
    with _client() as client:
        r = client.chat.completions.create(model="chem-test", messages=MSG)
    assert r.choices[0].message.content == REPLY and r.choices[0].finish_reason == "stop"
    assert r.object == "chat.completion"


@row(C, "openai", "stream=True: SSE chunks whose deltas concatenate to the non-streamed answer")
def _stream(tmp_path):
    with _client() as client:
        whole = client.chat.completions.create(model="chem-test", messages=MSG).choices[0].message.content
        chunks = list(client.chat.completions.create(model="chem-test", messages=MSG, stream=True))
    assert len(chunks) > 2, f"{len(chunks)} chunks"
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == whole


@row(C, "openai", "stream=True with stream_options.include_usage: a final usage chunk equal to the non-streamed")
def _stream_usage(tmp_path):
    with _client() as client:
        u = client.chat.completions.create(model="chem-test", messages=MSG).usage
        chunks = list(client.chat.completions.create(model="chem-test", messages=MSG, stream=True,
                                                     stream_options={"include_usage": True}))
    assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens == u.total_tokens


@row(C, "openai", "n=3: three choices, indexed 0..2, drawn with distinct seeds")
def _n(tmp_path):
    with _client() as client:
        r = client.chat.completions.create(model="chem-test", messages=MSG, n=3, seed=0)
    assert [c.index for c in r.choices] == [0, 1, 2]
    assert len({c.message.content for c in r.choices}) == 3


@row(C, "openai", "stop: the reply is cut before the stop string, finish_reason stop")
def _stop(tmp_path):
    with _client() as client:
        r = client.chat.completions.create(model="chem-test", messages=MSG, stop=["Step 2"])
    assert r.choices[0].message.content == REPLY.split("Step 2")[0] and r.choices[0].finish_reason == "stop"


@row(C, "openai", "max_completion_tokens: the reply is cut to the budget, finish_reason length, usage counts it")
def _budget(tmp_path):
    with _client() as client:
        r = client.chat.completions.create(model="chem-test", messages=MSG, max_completion_tokens=4)
    assert r.choices[0].finish_reason == "length" and REPLY.startswith(r.choices[0].message.content)
    assert r.usage.completion_tokens == 4 and len(r.choices[0].message.content) < len(REPLY)


@row(C, "openai", "usage: prompt + completion = total, completion grows with the reply")
def _usage(tmp_path):
    with _client() as client:
        full = client.chat.completions.create(model="chem-test", messages=MSG).usage
        cut = client.chat.completions.create(model="chem-test", messages=MSG, max_completion_tokens=3).usage
    assert full.prompt_tokens > 0 and full.total_tokens == full.prompt_tokens + full.completion_tokens
    assert cut.completion_tokens == 3 < full.completion_tokens and cut.prompt_tokens == full.prompt_tokens


@row(C, "openai", "errors in OpenAI's error JSON: the client raises BadRequestError / NotFoundError with the message")
def _errors(tmp_path):
    import openai
    import pytest

    with _client() as client:
        with pytest.raises(openai.BadRequestError) as err:
            client.chat.completions.create(model="chem-test", messages=MSG, tools=[
                {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}])
        assert "tools" in err.value.message and err.value.body.get("param") in ("tools", None)
        with pytest.raises(openai.BadRequestError, match="n"):
            client.chat.completions.create(model="chem-test", messages=MSG, n=0)
        with pytest.raises(openai.NotFoundError, match="chat/completions"):
            client.completions.create(model="chem-test", prompt="hi")


not_applicable(C, "torch", "dtype / bfloat16 / torch.compile",
               "chemcot's components are RDKit operations, an HTTP server and clients; no torch module is public")
