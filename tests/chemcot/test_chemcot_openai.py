"""The local server through the official ``openai`` client: models, chat, streaming, n, stop, budgets, usage, errors."""

import pytest

openai = pytest.importorskip("openai")

from neurips25.chemcot import RuleBasedSolver, serve  # noqa: E402
from neurips25.chemcot.server import text_pieces  # noqa: E402

REPLY = "Hello world, this is a reply. STOP here, then more text."
USER = [{"role": "user", "content": "say hello"}]


@pytest.fixture(scope="module")
def client():
    url, stop = serve(lambda messages, **params: REPLY, model_name="echo")
    yield openai.OpenAI(base_url=url, api_key="unused", max_retries=0, timeout=30)
    stop()


def test_models_and_chat(client):
    assert [m.id for m in client.models.list()] == ["echo"]
    r = client.chat.completions.create(model="echo", messages=USER)
    assert r.choices[0].message.content == REPLY and r.choices[0].finish_reason == "stop"
    assert r.usage.completion_tokens == len(text_pieces(REPLY)) > 0  # real counts, not zeros
    assert r.usage.total_tokens == r.usage.prompt_tokens + r.usage.completion_tokens


def test_stream_chunks_concatenate_to_the_plain_answer(client):
    plain = client.chat.completions.create(model="echo", messages=USER).choices[0].message.content
    chunks = list(client.chat.completions.create(model="echo", messages=USER, stream=True,
                                                 stream_options={"include_usage": True}))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert len(chunks) > 3 and text == plain
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == len(text_pieces(plain))


def test_n_stop_and_max_completion_tokens(client):
    r = client.chat.completions.create(model="echo", messages=USER, n=3, stop=["STOP"])
    assert len(r.choices) == 3 and all(c.message.content == "Hello world, this is a reply. " for c in r.choices)
    r = client.chat.completions.create(model="echo", messages=USER, max_completion_tokens=3)
    assert r.choices[0].message.content == "Hello world," and r.choices[0].finish_reason == "length"
    assert r.usage.completion_tokens == 3
    r = client.chat.completions.create(model="echo", messages=USER, max_tokens=4)
    assert r.usage.completion_tokens == 4


def test_errors_are_openai_shaped_and_name_the_field(client):
    with pytest.raises(openai.BadRequestError, match="unsupported field\\(s\\): foo"):
        client.chat.completions.create(model="echo", messages=USER, extra_body={"foo": 1})
    with pytest.raises(openai.BadRequestError, match="unsupported value of `logprobs`"):
        client.chat.completions.create(model="echo", messages=USER, logprobs=True)
    with pytest.raises(openai.BadRequestError, match="`temperature` must be a number in \\[0, 2\\]"):
        client.chat.completions.create(model="echo", messages=USER, temperature=3)
    with pytest.raises(openai.BadRequestError, match="`messages` must be a non-empty list"):
        client.chat.completions.create(model="echo", messages=[])
    with pytest.raises(openai.NotFoundError, match="/v1/completions .* is not served here"):
        client.completions.create(model="echo", prompt="hi")
    try:
        client.chat.completions.create(model="echo", messages=USER, n=99)
    except openai.BadRequestError as err:
        assert err.body["param"] == "n" and err.body["type"] == "invalid_request_error"


def test_a_solver_behind_the_official_client():
    from neurips25.chemcot import generate_suite

    items = generate_suite("nci", 1, seed=0, pool_size=60, subtasks=("add", "ring_count"))
    url, stop = serve(RuleBasedSolver(seed=0), model_name="rule")
    try:
        c = openai.OpenAI(base_url=url, api_key="unused", max_retries=0)
        for it in items:
            r = c.chat.completions.create(model="rule", messages=[{"role": "user", "content": it.prompt}])
            assert r.choices[0].message.content.startswith("{")
    finally:
        stop()
