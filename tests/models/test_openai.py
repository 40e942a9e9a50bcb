"""OpenAIChatModel on the wire: request bodies, responses, streams, errors and retries."""

from __future__ import annotations

import json
from typing import Any, Literal

import pytest

from tests.extras import needs_extra
from toolrelay.client import ChatClient
from toolrelay.exceptions import (
    AuthenticationError,
    ConfigurationError,
    ModelAPIError,
    ModelConnectionError,
    RateLimitError,
    ToolsNotSupportedError,
)
from toolrelay.messages import (
    AssistantMessage,
    ChatResponse,
    SystemMessage,
    ToolCall,
    ToolResponse,
    ToolResponseMessage,
    UserMessage,
)
from toolrelay.models import ChunkMerger
from toolrelay.models._metadata import CACHE_READ_TOKENS, REASONING_TOKENS
from toolrelay.models._openai import LOCAL_API_KEY, OpenAIChatModel
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.tools import FunctionTool, tool

from ._wire import MockServer, error_reply, httpx, json_reply, openai_sse

pytest.importorskip("openai", reason=needs_extra("openai"))


@tool(name="weather.current")
def current_weather(city: str, unit: Literal["c", "f"] = "c") -> dict[str, Any]:
    """Current weather of a city.

    Args:
        city: The city.
        unit: Celsius or Fahrenheit.
    """
    return {"city": city, "temperature": 21 if unit == "c" else 70, "unit": unit}


@tool
def local_time(city: str) -> str:
    """Local time of a city."""
    return f"12:00 in {city}"


WEATHER = FunctionTool.from_function(current_weather)
TIME = FunctionTool.from_function(local_time)


def completion(
    content: str | None = None,
    *,
    tool_calls: list[dict[str, Any]] | None = None,
    finish_reason: str = "stop",
    usage: dict[str, Any] | None = None,
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-test",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        "usage": usage or {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13},
    }


def wire_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def chunk(
    delta: dict[str, Any] | None = None,
    *,
    finish_reason: str | None = None,
    index: int = 0,
    usage: dict[str, Any] | None = None,
    no_choices: bool = False,
) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": "chatcmpl-2",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-test",
        "choices": []
        if no_choices
        else [{"index": index, "delta": delta or {}, "finish_reason": finish_reason}],
    }
    if usage is not None:
        data["usage"] = usage
    return data


def make_model(server: MockServer, **kwargs: Any) -> OpenAIChatModel:
    kwargs.setdefault("max_retries", 0)
    return OpenAIChatModel(
        "gpt-test", api_key="sk-test", http_client=server.http_client(), **kwargs
    )


def prompt(*messages: Any, **options: Any) -> Prompt:
    return Prompt(messages=messages or (UserMessage(text="hi"),), options=ChatOptions(**options))


# --- request bodies ---------------------------------------------------------------------------


async def test_lone_surrogates_in_the_history_are_sent_as_replacement_characters() -> None:
    # A model's half emoji ("\\ud83d" in its JSON) echoed back by a tool: UTF-8 cannot encode
    # it, so it goes out as U+FFFD; a high and low surrogate side by side go out as their emoji.
    server = MockServer(json_reply(completion("ok")))
    model = make_model(server)
    call = ToolCall(id="c\ud83d", name="refund.retry", arguments='{"refund_id": "\ud83d"}')
    await model.call(
        prompt(
            UserMessage(text="hi \ud83d and \ud83d\ude00"),
            AssistantMessage(tool_calls=(call,)),
            ToolResponseMessage(
                responses=(ToolResponse(id="c\ud83d", name="refund.retry", data="x\udc00"),)
            ),
        )
    )
    sent = json.dumps(server.body, ensure_ascii=False)
    assert "hi \ufffd and \U0001f600" in sent
    assert "\ud83d" not in sent
    assert sent.count("c\ufffd") == 2  # the call and its answer still pair


async def test_tools_are_sent_as_function_tools_under_provider_safe_names() -> None:
    server = MockServer(json_reply(completion("ok")))
    model = make_model(server)
    await model.call(prompt(tools=(WEATHER, TIME), temperature=0.2, max_tokens=50))

    body = server.body
    assert server.requests[0].url.path == "/v1/chat/completions"
    assert server.requests[0].headers["authorization"] == "Bearer sk-test"
    assert body["model"] == "gpt-test"
    assert body["temperature"] == 0.2
    # OpenAI's own API gets max_completion_tokens (its reasoning models reject max_tokens).
    assert body["max_completion_tokens"] == 50
    assert "max_tokens" not in body
    assert "stream" not in body
    assert [t["type"] for t in body["tools"]] == ["function", "function"]
    weather = body["tools"][0]["function"]
    assert weather["name"] == "weather__current"
    assert weather["description"].startswith("Current weather of a city.")
    assert weather["parameters"]["type"] == "object"
    assert weather["parameters"]["required"] == ["city"]
    assert weather["parameters"]["properties"]["unit"]["enum"] == ["c", "f"]
    assert "$schema" not in weather["parameters"]  # the dialect marker only costs tokens
    assert "strict" not in weather
    assert body["tools"][1]["function"]["name"] == "local_time"
    assert "tool_choice" not in body
    assert "parallel_tool_calls" not in body


async def test_history_with_tool_calls_and_results_is_sent_in_openai_roles() -> None:
    server = MockServer(json_reply(completion("done")))
    model = make_model(server)
    history = (
        SystemMessage(text="Be brief."),
        UserMessage(text="Weather and time in Paris?"),
        AssistantMessage(
            text="Checking.",
            tool_calls=(
                ToolCall(id="call_a", name="weather.current", arguments='{"city": "Paris"}'),
                ToolCall(id="call_b", name="local_time", arguments=""),
            ),
        ),
        ToolResponseMessage(
            responses=(
                ToolResponse(id="call_a", name="weather.current", data='{"temperature": 21}'),
                ToolResponse(
                    id="call_b", name="local_time", data="Invalid arguments", is_error=True
                ),
            )
        ),
    )
    await model.call(prompt(*history, tools=(WEATHER, TIME)))

    messages = server.body["messages"]
    assert messages[0] == {"role": "system", "content": "Be brief."}
    assert messages[1] == {"role": "user", "content": "Weather and time in Paris?"}
    assert messages[2] == {
        "role": "assistant",
        "content": "Checking.",
        "tool_calls": [
            wire_call("call_a", "weather__current", '{"city": "Paris"}'),
            # Blank arguments go out as an empty object: servers parse them again.
            wire_call("call_b", "local_time", "{}"),
        ],
    }
    assert messages[3] == {
        "role": "tool",
        "tool_call_id": "call_a",
        "content": '{"temperature": 21}',
    }
    # No is_error flag in Chat Completions: the content says it failed.
    assert messages[4] == {
        "role": "tool",
        "tool_call_id": "call_b",
        "content": "ERROR: Invalid arguments",
    }
    assert len(messages) == 5


async def test_empty_and_repeated_call_ids_are_made_unique_and_paired() -> None:
    server = MockServer(json_reply(completion("done")))
    model = make_model(server, error_prefix="[failed] ")
    history = (
        UserMessage(text="go"),
        AssistantMessage(
            tool_calls=(
                ToolCall(id="", name="local_time", arguments='{"city": "A"}'),
                ToolCall(id="same", name="local_time", arguments='{"city": "B"}'),
                ToolCall(id="same", name="local_time", arguments='{"city": "C"}'),
            )
        ),
        ToolResponseMessage(
            responses=(
                ToolResponse(id="", name="local_time", data="a"),
                ToolResponse(id="same", name="local_time", data="b"),
                ToolResponse(id="same", name="local_time", data="c", is_error=True),
            )
        ),
    )
    await model.call(prompt(*history, tools=(TIME,)))

    messages = server.body["messages"]
    # No text next to the calls: "" rather than null, which some compatible servers reject.
    assert messages[1]["content"] == ""
    ids = [c["id"] for c in messages[1]["tool_calls"]]
    assert len(set(ids)) == 3
    assert all(ids)
    assert ids[1] == "same"
    assert [(m["tool_call_id"], m["content"]) for m in messages[2:]] == [
        (ids[0], "a"),
        (ids[1], "b"),
        (ids[2], "[failed] c"),
    ]


async def test_a_made_up_tool_name_in_the_history_cannot_break_the_next_request() -> None:
    server = MockServer(json_reply(completion("ok")))
    history = (
        UserMessage(text="go"),
        AssistantMessage(tool_calls=(ToolCall(id="c1", name="get weather!", arguments="{}"),)),
        ToolResponseMessage(
            responses=(
                ToolResponse(id="c1", name="get weather!", data="Unknown tool", is_error=True),
            )
        ),
    )
    await make_model(server).call(prompt(*history, tools=(TIME,)))
    assert server.body["messages"][1]["tool_calls"][0]["function"]["name"] == "get_weather_"


async def test_tool_choice_and_parallel_calls_from_defaults_and_request() -> None:
    server = MockServer(json_reply(completion("ok")))
    model = make_model(server, tool_choice="required", parallel_tool_calls=False)
    await model.call(prompt(tools=(WEATHER,)))
    assert server.body["tool_choice"] == "required"
    assert server.body["parallel_tool_calls"] is False

    extras = {"tool_choice": "weather.current", "parallel_tool_calls": True, "seed": 7}
    await model.call(prompt(tools=(WEATHER,), extras=extras))
    body = server.body
    assert body["tool_choice"] == {"type": "function", "function": {"name": "weather__current"}}
    assert body["parallel_tool_calls"] is True
    # Other extras go into the body unchanged.
    assert body["seed"] == 7

    # Without tools, OpenAI rejects both fields: they are left out.
    await model.call(prompt())
    assert "tool_choice" not in server.body
    assert "parallel_tool_calls" not in server.body
    assert "tools" not in server.body


async def test_strict_mode_requires_every_property_and_drops_the_nulls_it_added() -> None:
    reply = completion(
        tool_calls=[wire_call("call_1", "weather__current", '{"city": "Oslo", "unit": null}')],
        finish_reason="tool_calls",
    )
    server = MockServer(json_reply(reply))
    model = make_model(server, strict_tools=True)
    response = await model.call(prompt(tools=(WEATHER,)))

    function = server.body["tools"][0]["function"]
    assert function["strict"] is True
    parameters = function["parameters"]
    assert parameters["required"] == ["city", "unit"]
    assert parameters["additionalProperties"] is False
    assert parameters["properties"]["unit"]["type"] == ["string", "null"]
    assert None in parameters["properties"]["unit"]["enum"]
    assert "default" not in parameters["properties"]["unit"]

    call = response.generations[0].message.tool_calls[0]
    assert json.loads(call.arguments) == {"city": "Oslo"}
    # The tool's default applies instead of a null it would reject.
    result = await WEATHER.call(call.arguments, None)
    assert json.loads(result) == {"city": "Oslo", "temperature": 21, "unit": "c"}


async def test_strict_mode_refuses_a_tool_it_cannot_express_before_sending() -> None:
    @tool
    def tag(labels: dict[str, int]) -> str:
        """Tag an order."""
        return ""

    server = MockServer(json_reply(completion("ok")))
    model = make_model(server, strict_tools=True)
    with pytest.raises(ConfigurationError, match=r"tool 'tag': strict mode cannot express"):
        await model.call(prompt(tools=(FunctionTool.from_function(tag),)))
    assert server.attempts == 0


async def test_custom_base_url_gets_max_tokens_and_no_key_is_needed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server = MockServer(json_reply(completion("ok")))
    model = OpenAIChatModel(
        "local", base_url="http://127.0.0.1:9/v1", http_client=server.http_client()
    )
    await model.call(prompt(max_tokens=5))
    assert str(server.requests[0].url) == "http://127.0.0.1:9/v1/chat/completions"
    assert server.requests[0].headers["authorization"] == f"Bearer {LOCAL_API_KEY}"
    assert server.body["max_tokens"] == 5


def test_base_url_and_key_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:8080/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    model = OpenAIChatModel("m")
    assert model.base_url.startswith("http://localhost:8080/v1")
    assert model.client.api_key == "sk-env"
    assert model.max_tokens_param == "max_tokens"


def test_openai_without_a_key_is_a_configuration_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY"):
        OpenAIChatModel("gpt-test")


async def test_a_model_without_tool_support_refuses_tools_before_sending() -> None:
    server = MockServer(json_reply(completion("ok")))
    model = make_model(server, supports_tools=False)
    with pytest.raises(ToolsNotSupportedError):
        await model.call(prompt(tools=(WEATHER,)))
    assert server.attempts == 0


# --- responses --------------------------------------------------------------------------------


async def test_response_maps_text_calls_usage_and_token_details() -> None:
    reply = completion(
        "Let me check.",
        tool_calls=[
            wire_call("call_1", "weather__current", '{"city": "Paris"}'),
            wire_call("", "local_time", '{"city": "Paris"}'),
            wire_call("call_3", "no_such_tool", "{}"),
        ],
        finish_reason="tool_calls",
        usage={
            "prompt_tokens": 100,
            "completion_tokens": 20,
            "total_tokens": 120,
            "prompt_tokens_details": {"cached_tokens": 64},
            "completion_tokens_details": {"reasoning_tokens": 5},
        },
    )
    model = make_model(MockServer(json_reply(reply)))
    response = await model.call(prompt(tools=(WEATHER, TIME)))

    generation = response.generations[0]
    assert generation.message.text == "Let me check."
    assert generation.finish_reason == "tool_calls"
    assert generation.message.tool_calls == (
        ToolCall(id="call_1", name="weather.current", arguments='{"city": "Paris"}'),
        ToolCall(id="call_1", name="local_time", arguments='{"city": "Paris"}'),
        ToolCall(id="call_3", name="no_such_tool", arguments="{}"),
    )
    assert response.usage.prompt_tokens == 100
    assert response.usage.completion_tokens == 20
    assert response.usage.total_tokens == 120
    assert response.metadata[CACHE_READ_TOKENS] == 64
    assert response.metadata[REASONING_TOKENS] == 5
    assert response.metadata["id"] == "chatcmpl-1"
    assert response.metadata["model"] == "gpt-test"


async def test_arguments_sent_as_an_object_by_a_lenient_server_become_json_text() -> None:
    reply = completion(tool_calls=[wire_call("c1", "local_time", "{}")], finish_reason="tool_calls")
    reply["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"] = {"city": "Oslo"}
    response = await make_model(MockServer(json_reply(reply))).call(prompt(tools=(TIME,)))
    (call,) = response.generations[0].message.tool_calls
    assert json.loads(call.arguments) == {"city": "Oslo"}


# --- streams ----------------------------------------------------------------------------------


async def test_stream_merges_split_tool_call_deltas_and_reads_the_usage_only_chunk() -> None:
    stream = openai_sse(
        chunk({"role": "assistant", "content": ""}),
        chunk({"content": "On it"}),
        chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "call_a",
                        "type": "function",
                        "function": {"name": "weather__current", "arguments": ""},
                    }
                ]
            }
        ),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"ci'}}]}),
        chunk(
            {
                "tool_calls": [
                    {
                        "index": 1,
                        "id": "call_b",
                        "type": "function",
                        "function": {"name": "local_time", "arguments": '{"city":'},
                    }
                ]
            }
        ),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'ty": "Rome"}'}}]}),
        # A server repeating the id on later deltas continues the same call.
        chunk(
            {"tool_calls": [{"index": 1, "id": "call_b", "function": {"arguments": ' "Rome"}'}}]}
        ),
        chunk({}, finish_reason="tool_calls"),
        chunk(
            no_choices=True,
            usage={
                "prompt_tokens": 40,
                "completion_tokens": 12,
                "total_tokens": 52,
                "prompt_tokens_details": {"cached_tokens": 32},
            },
        ),
    )
    server = MockServer(stream)
    model = make_model(server)
    chunks = [c async for c in model.stream(prompt(tools=(WEATHER, TIME)))]

    assert server.body["stream"] is True
    assert server.body["stream_options"] == {"include_usage": True}
    merger = ChunkMerger()
    for c in chunks:
        merger.add(c)
    response = merger.response()
    generation = response.generations[0]
    assert generation.message.text == "On it"
    assert generation.finish_reason == "tool_calls"
    assert generation.message.tool_calls == (
        ToolCall(id="call_a", name="weather.current", arguments='{"city": "Rome"}'),
        ToolCall(id="call_b", name="local_time", arguments='{"city": "Rome"}'),
    )
    assert response.usage.total_tokens == 52
    assert response.metadata[CACHE_READ_TOKENS] == 32
    # Usage arrives once, on the last chunk.
    assert [c.usage.total_tokens for c in chunks].count(52) == 1
    assert chunks[-1].usage.total_tokens == 52


async def test_stream_where_every_call_has_index_0_keeps_the_calls_apart() -> None:
    whole = '{"city": "Oslo"}'
    stream = openai_sse(
        chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "call_x",
                        "function": {"name": "local_time", "arguments": whole},
                    }
                ]
            }
        ),
        chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "call_y",
                        "function": {"name": "local_time", "arguments": whole},
                    }
                ]
            }
        ),
        chunk(
            {"tool_calls": [{"index": 0, "function": {"arguments": ""}}]},
            finish_reason="tool_calls",
        ),
    )
    model = make_model(MockServer(stream), stream_usage=False)
    merger = ChunkMerger()
    async for c in model.stream(prompt(tools=(TIME,))):
        merger.add(c)
    calls = merger.response().generations[0].message.tool_calls
    assert [(c.id, c.name, c.arguments) for c in calls] == [
        ("call_x", "local_time", whole),
        ("call_y", "local_time", whole),
    ]


async def test_stream_without_ids_gets_stable_ids() -> None:
    stream = openai_sse(
        chunk(
            {
                "tool_calls": [
                    {"index": 0, "function": {"name": "local_time", "arguments": '{"city"'}}
                ]
            }
        ),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": ': "Oslo"}'}}]}),
        chunk({}, finish_reason="tool_calls"),
    )
    server = MockServer(stream)
    model = make_model(server, stream_usage=False)
    merger = ChunkMerger()
    async for c in model.stream(prompt(tools=(TIME,))):
        merger.add(c)
    assert "stream_options" not in server.body
    assert merger.response().generations[0].message.tool_calls == (
        ToolCall(id="call_0", name="local_time", arguments='{"city": "Oslo"}'),
    )


async def test_strict_stream_sends_whole_cleaned_calls_at_the_end() -> None:
    stream = openai_sse(
        chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "c1",
                        "function": {"name": "weather__current", "arguments": '{"city": "Oslo", '},
                    }
                ]
            }
        ),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"unit": null}'}}]}),
        chunk({}, finish_reason="tool_calls"),
    )
    model = make_model(MockServer(stream), strict_tools=True)
    chunks = [c async for c in model.stream(prompt(tools=(WEATHER,)))]
    assert not any(c.has_tool_calls for c in chunks[:-1])
    merger = ChunkMerger()
    for c in chunks:
        merger.add(c)
    generation = merger.response().generations[0]
    assert generation.finish_reason == "tool_calls"
    assert generation.message.tool_calls == (
        ToolCall(id="c1", name="weather.current", arguments='{"city": "Oslo"}'),
    )


# --- errors and retries -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "error", "attempts"),
    [
        (400, ModelAPIError, 1),  # not retried
        (401, AuthenticationError, 1),
        (403, AuthenticationError, 1),
        (429, RateLimitError, 3),  # retried: max_retries=2 means 3 attempts
        (500, ModelAPIError, 3),
    ],
)
async def test_error_statuses_become_toolrelay_errors_after_the_sdk_retries(
    status: int, error: type[ModelAPIError], attempts: int
) -> None:
    server = MockServer(error_reply(status, "nope"))
    model = make_model(server, max_retries=2)
    with pytest.raises(error) as info:
        await model.call(prompt())
    assert type(info.value) is error
    assert info.value.status_code == status
    assert info.value.provider == "openai"
    assert "nope" in str(info.value)
    assert type(info.value.__cause__).__module__.startswith("openai")
    assert server.attempts == attempts


async def test_a_retried_failure_that_recovers_returns_the_answer() -> None:
    server = MockServer(error_reply(500), error_reply(429), json_reply(completion("finally")))
    model = make_model(server, max_retries=2)
    response = await model.call(prompt())
    assert response.text == "finally"
    assert server.attempts == 3


async def test_no_retries_when_max_retries_is_zero() -> None:
    server = MockServer(error_reply(429))
    with pytest.raises(RateLimitError):
        await make_model(server, max_retries=0).call(prompt())
    assert server.attempts == 1


async def test_connection_failures_become_model_connection_errors() -> None:
    server = MockServer(httpx.ConnectError("refused"))
    model = make_model(server, max_retries=1)
    with pytest.raises(ModelConnectionError) as info:
        await model.call(prompt())
    assert info.value.provider == "openai"
    assert "connection to openai at http" in str(info.value)
    assert "/chat/completions failed" in str(info.value)  # the URL it could not reach
    assert server.attempts == 2


async def test_stream_errors_become_toolrelay_errors() -> None:
    server = MockServer(error_reply(401))
    with pytest.raises(AuthenticationError):
        async for _ in make_model(server).stream(prompt()):
            pass

    broken = openai_sse(chunk({"content": "Hel"}), {"error": {"message": "overloaded"}})
    chunks: list[ChatResponse] = []

    async def consume() -> None:
        async for c in make_model(MockServer(broken)).stream(prompt()):
            chunks.append(c)

    with pytest.raises(ModelAPIError, match="overloaded") as info:
        await consume()
    assert info.value.status_code is None
    assert chunks[0].text == "Hel"


# --- through the client's tool loop -----------------------------------------------------------


@pytest.mark.parametrize("streaming", [False, True])
async def test_client_tool_loop_runs_a_dotted_tool_and_sends_the_result(streaming: bool) -> None:
    if streaming:
        first = openai_sse(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_w",
                            "function": {"name": "weather__current", "arguments": '{"city": '},
                        }
                    ]
                }
            ),
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": '"Paris"}'}}]}),
            chunk({}, finish_reason="tool_calls"),
            chunk(
                no_choices=True,
                usage={"prompt_tokens": 30, "completion_tokens": 5, "total_tokens": 35},
            ),
        )
        second = openai_sse(
            chunk({"content": "Sunny, "}),
            chunk({"content": "21 °C."}, finish_reason="stop"),
            chunk(
                no_choices=True,
                usage={"prompt_tokens": 50, "completion_tokens": 6, "total_tokens": 56},
            ),
        )
    else:
        first = json_reply(
            completion(
                tool_calls=[wire_call("call_w", "weather__current", '{"city": "Paris"}')],
                finish_reason="tool_calls",
                usage={"prompt_tokens": 30, "completion_tokens": 5, "total_tokens": 35},
            )
        )
        second = json_reply(
            completion(
                "Sunny, 21 °C.",
                usage={"prompt_tokens": 50, "completion_tokens": 6, "total_tokens": 56},
            )
        )
    server = MockServer(first, second)
    client = ChatClient.builder(make_model(server)).default_tools(current_weather).build()
    request = client.prompt("Weather in Paris?")
    if streaming:
        texts = [t async for t in request.stream().content()]
        answer = "".join(texts)
    else:
        answer = (await request.acall()).content()

    assert answer == "Sunny, 21 °C."
    assert server.attempts == 2
    followup = server.bodies[1]["messages"]
    assert followup[-2]["tool_calls"][0]["function"]["name"] == "weather__current"
    assert followup[-1]["role"] == "tool"
    assert followup[-1]["tool_call_id"] == "call_w"
    assert json.loads(followup[-1]["content"]) == {"city": "Paris", "temperature": 21, "unit": "c"}
