"""AnthropicChatModel on the wire: request bodies, messages, streams, caching, errors."""

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
    RateLimitError,
)
from toolrelay.messages import (
    AssistantMessage,
    SystemMessage,
    ToolCall,
    ToolResponse,
    ToolResponseMessage,
    UserMessage,
)
from toolrelay.models import ChunkMerger
from toolrelay.models._anthropic import DEFAULT_MAX_TOKENS, LOCAL_API_KEY, AnthropicChatModel
from toolrelay.models._anthropic_wire import count_breakpoints
from toolrelay.models._metadata import CACHE_READ_TOKENS, CACHE_WRITE_TOKENS, STOP_SEQUENCE
from toolrelay.prompt import ChatOptions, Prompt
from toolrelay.tools import FunctionTool, tool

from ._wire import MockServer, anthropic_sse, error_reply, httpx, json_reply

pytest.importorskip("anthropic", reason=needs_extra("anthropic"))


@tool(name="refund.find_failed_orders")
def find_failed_orders(day: str = "yesterday") -> list[str]:
    """Find failed refunds of a day."""
    return ["RF-1", "RF-2"]


@tool(name="refund.retry")
def retry_refund(refund_id: str) -> str:
    """Retry one failed refund."""
    return f"{refund_id} retried"


FIND = FunctionTool.from_function(find_failed_orders)
RETRY = FunctionTool.from_function(retry_refund)


def message(
    *blocks: dict[str, Any],
    stop_reason: str = "end_turn",
    usage: dict[str, Any] | None = None,
    stop_sequence: str | None = None,
) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": list(blocks),
        "stop_reason": stop_reason,
        "stop_sequence": stop_sequence,
        "usage": usage or {"input_tokens": 10, "output_tokens": 4},
    }


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def tool_use(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments}


def make_model(server: MockServer, **kwargs: Any) -> AnthropicChatModel:
    kwargs.setdefault("max_retries", 0)
    return AnthropicChatModel(
        "claude-test", api_key="sk-ant-test", http_client=server.http_client(), **kwargs
    )


def prompt(*messages: Any, **options: Any) -> Prompt:
    return Prompt(messages=messages or (UserMessage(text="hi"),), options=ChatOptions(**options))


# --- request bodies ---------------------------------------------------------------------------


async def test_lone_surrogates_in_the_history_are_sent_as_replacement_characters() -> None:
    # A model's half emoji ("\\ud83d" in its JSON) echoed back by a tool: UTF-8 cannot encode
    # it, so it goes out as U+FFFD; a high and low surrogate side by side go out as their emoji.
    server = MockServer(json_reply(message(text("ok"))))
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
    assert sent.count('"c_"') == 2  # Anthropic's id characters; the call and answer still pair


async def test_request_has_system_tools_and_required_max_tokens() -> None:
    server = MockServer(json_reply(message(text("ok"))))
    model = make_model(server, cache_history=False)
    await model.call(
        prompt(
            SystemMessage(text="You triage refunds."),
            UserMessage(text="Fix yesterday's refunds"),
            tools=(FIND, RETRY),
            temperature=0.0,
        )
    )
    request = server.requests[0]
    assert request.url.path == "/v1/messages"
    # Older SDKs send the key as x-api-key, newer ones as a bearer token.
    assert "sk-ant-test" in (
        request.headers.get("x-api-key"),
        request.headers.get("authorization", "").removeprefix("Bearer "),
    )
    body = server.body
    assert body["model"] == "claude-test"
    assert body["max_tokens"] == DEFAULT_MAX_TOKENS
    assert body["temperature"] == 0.0
    assert body["system"] == "You triage refunds."
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Fix yesterday's refunds"}]}
    ]
    assert [t["name"] for t in body["tools"]] == ["refund__find_failed_orders", "refund__retry"]
    assert body["tools"][1]["input_schema"]["required"] == ["refund_id"]
    assert all("$schema" not in tool["input_schema"] for tool in body["tools"])
    assert body["tools"][0]["description"] == "Find failed refunds of a day."
    assert count_breakpoints(body) == 0  # no caching asked for
    assert "tool_choice" not in body
    assert "stream" not in body


async def test_tool_use_and_tool_result_blocks_with_is_error() -> None:
    server = MockServer(json_reply(message(text("done"))))
    history = (
        UserMessage(text="Retry them"),
        AssistantMessage(
            text="Retrying.",
            tool_calls=(
                ToolCall(id="toolu_1", name="refund.retry", arguments='{"refund_id": "RF-1"}'),
                ToolCall(id="toolu_2", name="refund.retry", arguments="{not json"),
                ToolCall(id="toolu_3", name="refund.retry", arguments='{"refund_id": NaN}'),
            ),
        ),
        ToolResponseMessage(
            responses=(
                ToolResponse(id="toolu_1", name="refund.retry", data="RF-1 retried"),
                ToolResponse(id="toolu_2", name="refund.retry", data="bad JSON", is_error=True),
                ToolResponse(id="toolu_3", name="refund.retry", data="NaN", is_error=True),
            )
        ),
        UserMessage(text="And?"),
    )
    await make_model(server, cache_history=False).call(prompt(*history, tools=(RETRY,)))

    messages = server.body["messages"]
    assert messages[1] == {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Retrying."},
            {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "refund__retry",
                "input": {"refund_id": "RF-1"},
            },
            # Unusable arguments go back as an empty object; the result says what failed. A
            # NaN is not JSON either: it would make the whole request body invalid.
            {"type": "tool_use", "id": "toolu_2", "name": "refund__retry", "input": {}},
            {"type": "tool_use", "id": "toolu_3", "name": "refund__retry", "input": {}},
        ],
    }
    # Tool results and the next user text share one user turn, results first.
    assert messages[2] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "RF-1 retried"},
            {
                "type": "tool_result",
                "tool_use_id": "toolu_2",
                "content": "bad JSON",
                "is_error": True,
            },
            {"type": "tool_result", "tool_use_id": "toolu_3", "content": "NaN", "is_error": True},
            {"type": "text", "text": "And?"},
        ],
    }
    assert len(messages) == 3


async def test_ids_anthropic_would_reject_are_rewritten_consistently() -> None:
    server = MockServer(json_reply(message(text("done"))))
    history = (
        UserMessage(text="go"),
        AssistantMessage(
            tool_calls=(
                ToolCall(id="call:1", name="refund.retry", arguments='{"refund_id": "A"}'),
                ToolCall(id="", name="refund.retry", arguments='{"refund_id": "B"}'),
            )
        ),
        ToolResponseMessage(
            responses=(
                ToolResponse(id="call:1", name="refund.retry", data="a"),
                ToolResponse(id="", name="refund.retry", data="b"),
            )
        ),
    )
    await make_model(server).call(prompt(*history, tools=(RETRY,)))
    messages = server.body["messages"]
    uses = [b["id"] for b in messages[1]["content"]]
    results = [b["tool_use_id"] for b in messages[2]["content"]]
    assert uses == results
    assert uses[0] == "call_1"
    assert all(i and i.replace("_", "").replace("-", "").isalnum() for i in uses)
    assert len(set(uses)) == 2


async def test_prompt_caching_marks_the_last_tool_and_the_system_text() -> None:
    reply = message(
        text("ok"),
        usage={
            "input_tokens": 12,
            "output_tokens": 7,
            "cache_read_input_tokens": 900,
            "cache_creation_input_tokens": 100,
        },
    )
    server = MockServer(json_reply(reply))
    model = make_model(server, cache_prompt=True)
    response = await model.call(
        prompt(
            SystemMessage(text="Stable instructions."), UserMessage(text="q"), tools=(FIND, RETRY)
        )
    )
    body = server.body
    assert body["system"] == [
        {"type": "text", "text": "Stable instructions.", "cache_control": {"type": "ephemeral"}}
    ]
    assert "cache_control" not in body["tools"][0]
    assert body["tools"][1]["cache_control"] == {"type": "ephemeral"}
    # prompt_tokens counts every input token; the cache split is in the metadata.
    assert response.usage.prompt_tokens == 1012
    assert response.usage.completion_tokens == 7
    assert response.usage.total_tokens == 1019
    assert response.metadata[CACHE_READ_TOKENS] == 900
    assert response.metadata[CACHE_WRITE_TOKENS] == 100


@pytest.mark.parametrize(
    ("extras", "expected"),
    [
        ({"tool_choice": "auto"}, {"type": "auto"}),
        ({"tool_choice": "required"}, {"type": "any"}),
        ({"tool_choice": "none"}, {"type": "none"}),
        ({"tool_choice": "refund.retry"}, {"type": "tool", "name": "refund__retry"}),
        ({"parallel_tool_calls": False}, {"type": "auto", "disable_parallel_tool_use": True}),
        (
            {"tool_choice": "required", "parallel_tool_calls": False},
            {"type": "any", "disable_parallel_tool_use": True},
        ),
        ({"tool_choice": {"type": "any"}}, {"type": "any"}),
    ],
)
async def test_tool_choice_mapping(extras: dict[str, Any], expected: dict[str, Any]) -> None:
    server = MockServer(json_reply(message(text("ok"))))
    await make_model(server).call(prompt(tools=(RETRY,), extras={**extras, "top_k": 5}))
    assert server.body["tool_choice"] == expected
    assert server.body["top_k"] == 5


# --- responses --------------------------------------------------------------------------------


async def test_response_maps_text_tool_use_and_stop_reason() -> None:
    reply = message(
        text("I'll look."),
        tool_use("toolu_9", "refund__find_failed_orders", {"day": "2024-05-01"}),
        tool_use("toolu_10", "unknown_tool", {}),
        stop_reason="tool_use",
    )
    response = await make_model(MockServer(json_reply(reply))).call(prompt(tools=(FIND,)))
    generation = response.generations[0]
    assert generation.message.text == "I'll look."
    assert generation.finish_reason == "tool_use"
    assert generation.message.tool_calls == (
        ToolCall(id="toolu_9", name="refund.find_failed_orders", arguments='{"day": "2024-05-01"}'),
        ToolCall(id="toolu_10", name="unknown_tool", arguments="{}"),
    )
    assert response.usage.total_tokens == 14
    assert response.metadata["id"] == "msg_1"
    assert CACHE_READ_TOKENS not in response.metadata


async def test_stop_sequence_is_kept_in_the_generation_metadata() -> None:
    reply = message(text("a"), stop_reason="stop_sequence", stop_sequence="###")
    response = await make_model(MockServer(json_reply(reply))).call(prompt())
    assert response.generations[0].metadata[STOP_SEQUENCE] == "###"


# --- streams ----------------------------------------------------------------------------------


def stream_events(*middle: dict[str, Any], stop_reason: str = "tool_use") -> list[dict[str, Any]]:
    return [
        {
            "type": "message_start",
            "message": message(
                usage={"input_tokens": 20, "output_tokens": 1, "cache_read_input_tokens": 300}
            )
            | {"content": [], "stop_reason": None},
        },
        {"type": "ping"},
        *middle,
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": 33},
        },
        {"type": "message_stop"},
    ]


async def test_stream_assembles_input_json_deltas_into_calls() -> None:
    events = stream_events(
        {"type": "content_block_start", "index": 0, "content_block": text("")},
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": "Look"},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "text_delta", "text": "ing."},
        },
        {"type": "content_block_stop", "index": 0},
        {
            "type": "content_block_start",
            "index": 1,
            "content_block": tool_use("toolu_a", "refund__retry", {}),
        },
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": ""},
        },
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": '{"refund_'},
        },
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "input_json_delta", "partial_json": 'id": "RF-7"}'},
        },
        {"type": "content_block_stop", "index": 1},
        {
            "type": "content_block_start",
            "index": 2,
            "content_block": tool_use("toolu_b", "refund__find_failed_orders", {}),
        },
        {"type": "content_block_stop", "index": 2},
    )
    server = MockServer(anthropic_sse(*events))
    chunks = [c async for c in make_model(server).stream(prompt(tools=(FIND, RETRY)))]
    assert server.body["stream"] is True

    merger = ChunkMerger()
    for c in chunks:
        merger.add(c)
    response = merger.response()
    generation = response.generations[0]
    assert generation.message.text == "Looking."
    assert generation.finish_reason == "tool_use"
    assert generation.message.tool_calls == (
        ToolCall(id="toolu_a", name="refund.retry", arguments='{"refund_id": "RF-7"}'),
        ToolCall(id="toolu_b", name="refund.find_failed_orders", arguments=""),
    )
    assert response.usage.prompt_tokens == 320
    assert response.usage.completion_tokens == 33
    assert response.metadata[CACHE_READ_TOKENS] == 300
    assert response.metadata["model"] == "claude-test"
    assert sum(c.usage.total_tokens for c in chunks) == 353


async def test_stream_error_event_becomes_a_model_api_error() -> None:
    events = [
        {"type": "message_start", "message": message() | {"content": []}},
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    ]
    with pytest.raises(ModelAPIError, match="Overloaded"):
        async for _ in make_model(MockServer(anthropic_sse(*events))).stream(prompt()):
            pass


# --- errors and retries -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "error", "attempts"),
    [
        (400, ModelAPIError, 1),
        (401, AuthenticationError, 1),
        (429, RateLimitError, 3),
        (529, ModelAPIError, 3),  # overloaded: retried like a 5xx
    ],
)
async def test_error_statuses_after_retries(
    status: int, error: type[ModelAPIError], attempts: int
) -> None:
    server = MockServer(error_reply(status, "denied", kind="api_error"))
    with pytest.raises(error) as info:
        await make_model(server, max_retries=2).call(prompt())
    assert type(info.value) is error
    assert info.value.status_code == status
    assert info.value.provider == "anthropic"
    assert server.attempts == attempts


async def test_retry_then_success_and_connection_errors() -> None:
    server = MockServer(error_reply(429), json_reply(message(text("ok"))))
    assert (await make_model(server, max_retries=1).call(prompt())).text == "ok"
    assert server.attempts == 2

    down = MockServer(httpx.ConnectError("refused"))
    with pytest.raises(ModelConnectionError, match=r"connection to anthropic at http\S+/messages"):
        await make_model(down, max_retries=0).call(prompt())
    assert down.attempts == 1


# --- through the client's tool loop -----------------------------------------------------------


async def test_client_tool_loop_over_the_messages_api() -> None:
    first = json_reply(
        message(tool_use("toolu_1", "refund__retry", {"refund_id": "RF-3"}), stop_reason="tool_use")
    )
    second = json_reply(message(text("RF-3 was retried.")))
    server = MockServer(first, second)
    client = ChatClient.builder(make_model(server)).default_tools(retry_refund).build()
    answer = (await client.prompt("Retry RF-3").acall()).content()

    assert answer == "RF-3 was retried."
    followup = server.bodies[1]["messages"]
    assert followup[1]["content"][0]["name"] == "refund__retry"
    result = followup[2]["content"][0]
    assert result["type"] == "tool_result"
    assert result["tool_use_id"] == "toolu_1"
    assert result["content"] == "RF-3 retried"
    assert "is_error" not in result


def test_credentials_from_the_environment_or_a_configuration_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ConfigurationError, match="ANTHROPIC_API_KEY"):
        AnthropicChatModel("claude-test")
    # A compatible server or proxy needs no key: a placeholder is sent.
    assert AnthropicChatModel("m", base_url="http://127.0.0.1:9").client.api_key == LOCAL_API_KEY
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-env")
    assert AnthropicChatModel("claude-test").client.api_key == "sk-ant-env"
