"""OpenAIResponsesModel on the wire: request bodies, responses, streams, usage and errors."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.extras import needs_extra
from toolrelay.client import ChatClient
from toolrelay.exceptions import (
    AuthenticationError,
    ConfigurationError,
    ModelAPIError,
    ModelConnectionError,
    ModelResponseError,
    RateLimitError,
    ToolsNotSupportedError,
)
from toolrelay.messages import (
    AssistantMessage,
    ChatResponse,
    ToolCall,
    ToolChangeMessage,
    ToolResponse,
    ToolResponseMessage,
    UserMessage,
)
from toolrelay.models import ChunkMerger
from toolrelay.models._base import tool_channels
from toolrelay.models._metadata import CACHE_READ_TOKENS, REASONING_TOKENS, REFUSAL
from toolrelay.models._openai_responses import OpenAIResponsesModel
from toolrelay.prompt import ChatOptions, Prompt

from ._responses_bodies import TIME, WEATHER, current_weather
from ._wire import MockServer, error_reply, httpx, json_reply, responses_sse

pytest.importorskip("openai", reason=needs_extra("openai"))

USAGE = {
    "input_tokens": 100,
    "input_tokens_details": {"cached_tokens": 64},
    "output_tokens": 20,
    "output_tokens_details": {"reasoning_tokens": 5},
    "total_tokens": 120,
}


def response(
    *output: dict[str, Any],
    status: str = "completed",
    usage: dict[str, Any] | None = None,
    **fields: Any,
) -> dict[str, Any]:
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 1,
        "model": "gpt-test",
        "status": status,
        "output": list(output),
        "usage": usage or USAGE,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        **fields,
    }


def message(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": "msg_1",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def function_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": f"fc_{call_id}",
        "call_id": call_id,
        "name": name,
        "arguments": arguments,
        "status": "completed",
    }


def event(kind: str, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "sequence_number": 0, **fields}


def added(index: int, item: dict[str, Any]) -> dict[str, Any]:
    return event("response.output_item.added", output_index=index, item=item)


def arguments_delta(index: int, delta: str) -> dict[str, Any]:
    return event(
        "response.function_call_arguments.delta",
        output_index=index,
        item_id=f"fc_{index}",
        delta=delta,
    )


def text_delta(text: str, index: int = 0) -> dict[str, Any]:
    return event(
        "response.output_text.delta",
        output_index=index,
        item_id="msg_1",
        content_index=0,
        delta=text,
        logprobs=[],
    )


def completed(*output: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return event("response.completed", response=response(*output, **fields))


def make_model(server: MockServer, **kwargs: Any) -> OpenAIResponsesModel:
    kwargs.setdefault("max_retries", 0)
    return OpenAIResponsesModel(
        "gpt-test", api_key="sk-test", http_client=server.http_client(), **kwargs
    )


def prompt(*messages: Any, **options: Any) -> Prompt:
    return Prompt(messages=messages or (UserMessage(text="hi"),), options=ChatOptions(**options))


async def merged(model: OpenAIResponsesModel, request: Prompt) -> tuple[ChatResponse, list[Any]]:
    chunks = [c async for c in model.stream(request)]
    merger = ChunkMerger()
    for c in chunks:
        merger.add(c)
    return merger.response(), chunks


# --- requests ---------------------------------------------------------------------------------


async def test_a_call_posts_the_whole_history_to_responses_without_storing_it() -> None:
    server = MockServer(json_reply(response(message("ok"))))
    await make_model(server).call(prompt(tools=(WEATHER,), temperature=0.2, max_tokens=50))

    request = server.requests[0]
    assert request.url.path == "/v1/responses"
    assert request.headers["authorization"] == "Bearer sk-test"
    body = server.body
    assert body["input"] == [{"role": "user", "content": "hi"}]
    assert body["store"] is False
    assert body["temperature"] == 0.2
    assert body["max_output_tokens"] == 50
    assert "stream" not in body
    # Flat function tools, always with strict (the API's default is strict).
    (weather,) = body["tools"]
    assert set(weather) == {"type", "name", "description", "parameters", "strict"}
    assert weather["name"] == "weather__current"
    assert weather["strict"] is False
    assert "$schema" not in weather["parameters"]
    assert "tool_choice" not in body
    assert "parallel_tool_calls" not in body


async def test_store_can_be_asked_for() -> None:
    server = MockServer(json_reply(response(message("ok"))))
    await make_model(server, store=True).call(prompt())
    assert server.body["store"] is True


async def test_call_ids_are_made_consistent_and_failed_outputs_are_prefixed() -> None:
    server = MockServer(json_reply(response(message("done"))))
    history = (
        UserMessage(text="go"),
        AssistantMessage(
            tool_calls=(
                ToolCall(id="", name="local_time", arguments='{"city": "A"}'),
                ToolCall(id="same", name="get time!", arguments='{"city": "B"}'),
                ToolCall(id="same", name="local_time", arguments='{"city": "C"}'),
            )
        ),
        ToolResponseMessage(
            responses=(
                ToolResponse(id="", name="local_time", data="a"),
                ToolResponse(id="same", name="get time!", data="Unknown tool", is_error=True),
                ToolResponse(id="same", name="local_time", data="c"),
            )
        ),
    )
    await make_model(server, error_prefix="[failed] ").call(prompt(*history, tools=(TIME,)))

    items = server.body["input"]
    calls, outputs = items[1:4], items[4:]
    ids = [c["call_id"] for c in calls]
    assert len(set(ids)) == 3
    assert all(ids)
    # A made-up name cannot break the request: it is made provider-safe.
    assert calls[1]["name"] == "get_time_"
    assert [(o["call_id"], o["output"]) for o in outputs] == [
        (ids[0], "a"),
        (ids[1], "[failed] Unknown tool"),
        (ids[2], "c"),
    ]


async def test_tool_choice_and_parallel_calls_from_defaults_and_request() -> None:
    server = MockServer(json_reply(response(message("ok"))))
    model = make_model(server, tool_choice="required", parallel_tool_calls=False)
    await model.call(prompt(tools=(WEATHER,)))
    assert server.body["tool_choice"] == "required"
    assert server.body["parallel_tool_calls"] is False

    extras = {"tool_choice": "weather.current", "parallel_tool_calls": True, "top_p": 0.5}
    await model.call(prompt(tools=(WEATHER,), extras=extras))
    assert server.body["tool_choice"] == {"type": "function", "name": "weather__current"}
    assert server.body["parallel_tool_calls"] is True
    assert server.body["top_p"] == 0.5  # other extras go into the body unchanged

    raw = {"type": "allowed_tools", "mode": "auto", "tools": [{"type": "function", "name": "x"}]}
    await model.call(prompt(tools=(WEATHER,), extras={"tool_choice": raw}))
    assert server.body["tool_choice"] == raw

    # The default applies to requests with tools only.
    await model.call(prompt())
    assert not {"tool_choice", "parallel_tool_calls", "tools"} & server.body.keys()


async def test_a_tool_choice_the_request_cannot_honour_is_refused_before_sending() -> None:
    server = MockServer(json_reply(response(message("ok"))))
    model = make_model(server)
    with pytest.raises(ConfigurationError, match="not one of the request's tools"):
        await model.call(prompt(tools=(TIME,), extras={"tool_choice": "weather.current"}))
    with pytest.raises(ConfigurationError, match="offers no tools"):
        await model.call(prompt(extras={"tool_choice": "required"}))
    assert server.attempts == 0


async def test_strict_mode_requires_every_property_and_drops_the_nulls_it_added() -> None:
    reply = response(function_call("call_1", "weather__current", '{"city": "Oslo", "unit": null}'))
    server = MockServer(json_reply(reply))
    answer = await make_model(server, strict_tools=True).call(prompt(tools=(WEATHER,)))

    (weather,) = server.body["tools"]
    assert weather["strict"] is True
    assert weather["parameters"]["required"] == ["city", "unit"]
    (call,) = answer.generations[0].message.tool_calls
    assert json.loads(call.arguments) == {"city": "Oslo"}


_STATUS = {
    "name": "refund.status",
    "description": "Status of a refund.",
    "input_schema": {
        "type": "object",
        "properties": {"refund_id": {"type": "string"}, "note": {"type": "string"}},
        "required": ["refund_id"],
    },
}


def test_every_responses_model_renders_the_native_channel_first() -> None:
    model = OpenAIResponsesModel("gpt-test", api_key="sk-test")
    assert tool_channels(model) == ("native", "proxy", "rewrite")
    assert tool_channels(model, "gpt-5-mini") == ("native", "proxy", "rewrite")


async def test_a_tool_change_is_an_additional_tools_item_where_it_stands() -> None:
    reply = response(function_call("call_1", "refund__status", '{"refund_id": "RF-1"}'))
    server = MockServer(json_reply(reply))
    change = ToolChangeMessage(added=(_STATUS,))
    retired = ToolChangeMessage(removed=("weather.current",))
    answer = await make_model(server).call(
        prompt(UserMessage(text="why?"), change, retired, tools=(TIME,))
    )

    user, added = server.body["input"]  # a change that only removes sends nothing
    assert user == {"role": "user", "content": "why?"}
    assert added["type"] == "additional_tools"
    assert added["role"] == "developer"
    (status,) = added["tools"]
    assert status["type"] == "function"
    assert status["name"] == "refund__status"
    assert status["strict"] is False
    assert [t["name"] for t in server.body["tools"]] == ["local_time"]
    (call,) = answer.generations[0].message.tool_calls
    assert call.name == "refund.status"  # read back like the request's own tools


async def test_tools_a_change_added_are_strict_and_cleaned_in_strict_mode() -> None:
    reply = response(function_call("call_1", "refund__status", '{"refund_id": "R", "note": null}'))
    server = MockServer(json_reply(reply))
    model = make_model(server, strict_tools=True)
    change = ToolChangeMessage(added=(_STATUS,))
    answer = await model.call(prompt(UserMessage(text="why?"), change, tools=(TIME,)))

    added = server.body["input"][1]["tools"][0]
    assert added["strict"] is True
    assert set(added["parameters"]["required"]) == {"refund_id", "note"}
    (call,) = answer.generations[0].message.tool_calls
    assert json.loads(call.arguments) == {"refund_id": "R"}


async def test_a_tool_removed_then_added_again_is_sent_again() -> None:
    server = MockServer(json_reply(response(message("ok"))))
    changes = (
        ToolChangeMessage(added=(_STATUS,)),
        ToolChangeMessage(removed=("refund.status",)),
        ToolChangeMessage(added=(_STATUS,)),
    )
    await make_model(server).call(prompt(UserMessage(text="why?"), *changes, tools=(TIME,)))

    kinds = [item.get("type") for item in server.body["input"]]
    assert kinds == [None, "additional_tools", "additional_tools"]


async def test_a_model_without_tool_support_refuses_tools_before_sending() -> None:
    server = MockServer(json_reply(response(message("ok"))))
    with pytest.raises(ToolsNotSupportedError):
        await make_model(server, supports_tools=False).call(prompt(tools=(WEATHER,)))
    assert server.attempts == 0


def test_openai_without_a_key_is_a_configuration_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ConfigurationError, match="OPENAI_API_KEY"):
        OpenAIResponsesModel("gpt-test")
    local = OpenAIResponsesModel("qwen3", base_url="http://localhost:8000/v1")
    assert local.base_url.startswith("http://localhost:8000/v1")
    assert local.name == "openai:qwen3"


# --- responses --------------------------------------------------------------------------------


async def test_response_maps_text_calls_usage_and_cached_tokens() -> None:
    reply = response(
        {"type": "reasoning", "id": "rs_1", "summary": []},
        message("Let me check."),
        function_call("call_1", "weather__current", '{"city": "Paris"}'),
        function_call("call_2", "no_such_tool", "{}"),
    )
    answer = await make_model(MockServer(json_reply(reply))).call(prompt(tools=(WEATHER, TIME)))

    (generation,) = answer.generations
    assert generation.message.text == "Let me check."
    assert generation.message.tool_calls == (
        ToolCall(id="call_1", name="weather.current", arguments='{"city": "Paris"}'),
        ToolCall(id="call_2", name="no_such_tool", arguments="{}"),
    )
    assert generation.finish_reason == "completed"
    assert answer.usage.prompt_tokens == 100
    assert answer.usage.completion_tokens == 20
    assert answer.usage.total_tokens == 120
    assert answer.metadata[CACHE_READ_TOKENS] == 64
    assert answer.metadata[REASONING_TOKENS] == 5
    assert answer.metadata["id"] == "resp_1"
    assert answer.metadata["model"] == "gpt-test"


async def test_an_incomplete_response_says_why_and_a_refusal_is_kept() -> None:
    refusal = {
        "type": "message",
        "id": "msg_2",
        "role": "assistant",
        "status": "incomplete",
        "content": [{"type": "refusal", "refusal": "I can't help with that."}],
    }
    reply = response(
        refusal,
        status="incomplete",
        incomplete_details={"reason": "content_filter"},
        usage={"input_tokens": 10, "output_tokens": 2, "total_tokens": 12},
    )
    answer = await make_model(MockServer(json_reply(reply))).call(prompt())
    (generation,) = answer.generations
    assert generation.finish_reason == "content_filter"
    assert generation.message.text is None
    assert generation.metadata[REFUSAL] == "I can't help with that."
    # No details reported: no metadata claims zero cached tokens.
    assert CACHE_READ_TOKENS not in answer.metadata


async def test_a_failed_or_empty_response_is_an_error() -> None:
    failed = response(status="failed", error={"code": "server_error", "message": "went wrong"})
    with pytest.raises(ModelAPIError, match="server_error: went wrong") as info:
        await make_model(MockServer(json_reply(failed))).call(prompt())
    assert info.value.status_code is None
    with pytest.raises(ModelResponseError, match="without any output"):
        await make_model(MockServer(json_reply({"id": "resp_1", "status": "completed"}))).call(
            prompt()
        )


# --- streams ----------------------------------------------------------------------------------


async def test_stream_merges_text_and_interleaved_argument_deltas() -> None:
    stream = responses_sse(
        event("response.created", response=response(status="in_progress", usage={})),
        added(0, {"type": "message", "id": "msg_1", "role": "assistant", "content": []}),
        text_delta("On "),
        text_delta("it"),
        added(1, function_call("call_a", "weather__current", "")),
        arguments_delta(1, '{"ci'),
        added(2, function_call("call_b", "local_time", "")),
        arguments_delta(2, '{"city":'),
        arguments_delta(1, 'ty": "Rome"}'),
        arguments_delta(2, ' "Rome"}'),
        event(
            "response.output_item.done",
            output_index=1,
            item=function_call("call_a", "weather__current", '{"city": "Rome"}'),
        ),
        completed(
            message("On it"),
            function_call("call_a", "weather__current", '{"city": "Rome"}'),
            function_call("call_b", "local_time", '{"city": "Rome"}'),
        ),
    )
    server = MockServer(stream)
    answer, chunks = await merged(make_model(server), prompt(tools=(WEATHER, TIME)))

    assert server.body["stream"] is True
    (generation,) = answer.generations
    assert generation.message.text == "On it"
    assert generation.finish_reason == "completed"
    # The done item repeats the arguments the deltas brought: they are not added twice.
    assert generation.message.tool_calls == (
        ToolCall(id="call_a", name="weather.current", arguments='{"city": "Rome"}'),
        ToolCall(id="call_b", name="local_time", arguments='{"city": "Rome"}'),
    )
    assert answer.usage.total_tokens == 120
    assert answer.metadata[CACHE_READ_TOKENS] == 64
    assert answer.metadata["id"] == "resp_1"
    # The usage arrives once, on the last chunk; the id on the first.
    assert [c.usage.total_tokens for c in chunks].count(120) == 1
    assert chunks[-1].usage.total_tokens == 120
    assert [c for c in chunks if "id" in c.metadata] == [chunks[0]]


async def test_stream_without_argument_deltas_takes_the_finished_item() -> None:
    whole = '{"city": "Oslo"}'
    stream = responses_sse(
        added(0, function_call("call_x", "local_time", "")),
        event(
            "response.output_item.done",
            output_index=0,
            item=function_call("call_x", "local_time", whole),
        ),
        completed(function_call("call_x", "local_time", whole)),
    )
    answer, _ = await merged(make_model(MockServer(stream)), prompt(tools=(TIME,)))
    assert answer.generations[0].message.tool_calls == (
        ToolCall(id="call_x", name="local_time", arguments=whole),
    )


async def test_strict_stream_sends_the_cleaned_arguments_when_the_item_is_done() -> None:
    arguments = '{"city": "Oslo", "unit": null}'
    stream = responses_sse(
        added(0, function_call("c1", "weather__current", "")),
        arguments_delta(0, arguments[:10]),
        arguments_delta(0, arguments[10:]),
        event(
            "response.output_item.done",
            output_index=0,
            item=function_call("c1", "weather__current", arguments),
        ),
        completed(function_call("c1", "weather__current", arguments)),
    )
    model = make_model(MockServer(stream), strict_tools=True)
    answer, chunks = await merged(model, prompt(tools=(WEATHER,)))
    assert not any(c.message.tool_calls[0].arguments for c in _calls(chunks[:-2]))
    assert answer.generations[0].message.tool_calls == (
        ToolCall(id="c1", name="weather.current", arguments='{"city": "Oslo"}'),
    )


def _calls(chunks: list[ChatResponse]) -> list[Any]:
    return [g for c in chunks for g in c.generations if g.message.tool_calls]


async def test_an_incomplete_stream_ends_with_its_reason() -> None:
    stream = responses_sse(
        text_delta("Once upon"),
        event(
            "response.incomplete",
            response=response(
                message("Once upon"),
                status="incomplete",
                incomplete_details={"reason": "max_output_tokens"},
            ),
        ),
    )
    answer, _ = await merged(make_model(MockServer(stream)), prompt(max_tokens=2))
    assert answer.text == "Once upon"
    assert answer.generations[0].finish_reason == "max_output_tokens"


# --- errors -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "error", "attempts"),
    [
        (400, ModelAPIError, 1),
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
    with pytest.raises(error) as info:
        await make_model(server, max_retries=2).call(prompt())
    assert type(info.value) is error
    assert info.value.status_code == status
    assert info.value.provider == "openai"
    assert "nope" in str(info.value)
    assert type(info.value.__cause__).__module__.startswith("openai")
    assert server.attempts == attempts


async def test_connection_failures_become_model_connection_errors() -> None:
    server = MockServer(httpx.ConnectError("refused"))
    with pytest.raises(ModelConnectionError, match="/responses failed"):
        await make_model(server, max_retries=1).call(prompt())
    assert server.attempts == 2


@pytest.mark.parametrize(
    "failure",
    [
        event("error", code="server_error", message="overloaded", param=None),
        event(
            "response.failed",
            response=response(
                status="failed", error={"code": "server_error", "message": "overloaded"}
            ),
        ),
    ],
    ids=["error event", "failed response"],
)
async def test_stream_failures_become_toolrelay_errors(failure: dict[str, Any]) -> None:
    chunks: list[ChatResponse] = []

    async def consume(server: MockServer) -> None:
        async for c in make_model(server).stream(prompt()):
            chunks.append(c)

    with pytest.raises(AuthenticationError):
        await consume(MockServer(error_reply(401)))
    with pytest.raises(ModelAPIError, match="server_error: overloaded") as info:
        await consume(MockServer(responses_sse(text_delta("Hel"), failure)))
    assert info.value.status_code is None
    assert chunks[0].text == "Hel"


# --- through the client's tool loop -----------------------------------------------------------


@pytest.mark.parametrize("streaming", [False, True])
async def test_client_tool_loop_runs_a_tool_and_sends_its_output(streaming: bool) -> None:
    call = function_call("call_w", "weather__current", '{"city": "Paris"}')
    if streaming:
        first = responses_sse(
            added(0, {**call, "arguments": ""}),
            arguments_delta(0, '{"city": '),
            arguments_delta(0, '"Paris"}'),
            completed(call),
        )
        second = responses_sse(text_delta("Sunny, "), text_delta("21 °C."), completed())
    else:
        first = json_reply(response(call))
        second = json_reply(response(message("Sunny, 21 °C.")))
    server = MockServer(first, second)
    client = ChatClient.builder(make_model(server)).default_tools(current_weather).build()
    request = client.prompt("Weather in Paris?")
    if streaming:
        answer = "".join([t async for t in request.stream().content()])
    else:
        answer = (await request.acall()).content()

    assert answer == "Sunny, 21 °C."
    items = server.bodies[1]["input"]
    assert items[-2] == {
        "type": "function_call",
        "call_id": "call_w",
        "name": "weather__current",
        "arguments": '{"city": "Paris"}',
    }
    assert items[-1]["type"] == "function_call_output"
    assert items[-1]["call_id"] == "call_w"
    assert json.loads(items[-1]["output"]) == {"city": "Paris", "temperature": 21, "unit": "c"}
