"""Tool changes on the Anthropic wire: which models, where they go, what is sent and how."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.extras import needs_extra
from toolrelay.messages import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolChangeMessage,
    ToolResponse,
    ToolResponseMessage,
    UserMessage,
)
from toolrelay.models._anthropic import (
    TOOL_CHANGE_MODELS,
    AnthropicChatModel,
    accepts_tool_changes,
)
from toolrelay.models._anthropic_wire import INLINE_TOOLS_BETA, messages_to_anthropic
from toolrelay.models._base import tool_channels
from toolrelay.prompt import ChatOptions, Prompt

from ._wire import MockServer, json_reply

pytest.importorskip("anthropic", reason=needs_extra("anthropic"))

CHANGE = ToolChangeMessage(
    added=({"name": "refund.retry", "description": "Retry.", "input_schema": {"type": "object"}},),
    removed=("refund.status",),
)
SEARCHED = (
    UserMessage(text="retry RF-1"),
    AssistantMessage(tool_calls=(ToolCall(id="t1", name="tool_search", arguments="{}"),)),
    ToolResponseMessage(responses=(ToolResponse(id="t1", name="tool_search", data="[]"),)),
)


def roles(messages: list[dict[str, Any]]) -> list[str]:
    return [m["role"] for m in messages]


@pytest.mark.parametrize(
    ("model", "accepts"),
    [
        ("claude-opus-5", True),
        ("claude-opus-4-8", True),
        ("claude-opus-4-8-20260115", True),  # a dated snapshot of a listed model
        ("claude-opus-5-5", True),
        ("claude-sonnet-5", False),  # refuses tool changes
        ("claude-sonnet-4-5", False),
        ("claude-haiku-5-5", False),
        ("claude-opus-5-fast", False),
    ],
)
def test_the_listed_models_and_their_snapshots_accept_tool_changes(
    model: str, accepts: bool
) -> None:
    assert accepts_tool_changes(model) is accepts
    adapter = AnthropicChatModel(model, api_key="sk-ant-test")
    expected = ("native", "proxy", "rewrite") if accepts else ("proxy", "rewrite")
    assert tool_channels(adapter) == expected
    # The request's model decides, as the body's model does.
    assert tool_channels(adapter, "claude-sonnet-5") == ("proxy", "rewrite")
    assert tool_channels(adapter, "claude-opus-5")[0] == "native"


def test_every_listed_model_is_one_the_sdk_names() -> None:
    from typing import get_args

    from anthropic.types import ModelParam

    named = set(get_args(get_args(ModelParam)[0]))
    assert named >= TOOL_CHANGE_MODELS


def test_a_change_becomes_a_system_message_of_removals_then_additions() -> None:
    wire = messages_to_anthropic([*SEARCHED, CHANGE], tool_changes=True)
    assert roles(wire) == ["user", "assistant", "user", "system"]
    assert wire[-1]["content"] == [
        {"type": "tool_removal", "tool": {"type": "tool_reference", "name": "refund__status"}},
        {
            "type": "tool_addition",
            "tool": {
                "type": "tool_definition",
                "definition": {
                    "name": "refund__retry",
                    "description": "Retry.",
                    "input_schema": {"type": "object"},
                },
            },
        },
    ]


def test_a_model_without_tool_changes_never_gets_one() -> None:
    wire = messages_to_anthropic([*SEARCHED, CHANGE])
    assert roles(wire) == ["user", "assistant", "user"]
    assert "tool_addition" not in json.dumps(wire)


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        # First in the conversation: after the first user turn.
        ([CHANGE, UserMessage(text="hi")], ["user", "system"]),
        # After an assistant turn: after the next user turn.
        (
            [UserMessage(text="a"), AssistantMessage(text="b"), CHANGE, UserMessage(text="c")],
            ["user", "assistant", "user", "system"],
        ),
        # Before a user turn: after it (the two user turns are one).
        (
            [*SEARCHED, CHANGE, UserMessage(text="and?"), AssistantMessage(text="ok")],
            ["user", "assistant", "user", "system", "assistant"],
        ),
        # Two changes in a row are one section.
        ([*SEARCHED, CHANGE, CHANGE], ["user", "assistant", "user", "system"]),
        # Between a user and an assistant turn: where it is.
        (
            [UserMessage(text="a"), CHANGE, AssistantMessage(text="b")],
            ["user", "system", "assistant"],
        ),
        # No user turn after it (a prefilled answer last): left out.
        ([UserMessage(text="a"), AssistantMessage(text="b"), CHANGE], ["user", "assistant"]),
    ],
)
def test_a_change_goes_where_the_api_takes_a_system_message(
    messages: list[Message], expected: list[str]
) -> None:
    assert roles(messages_to_anthropic(messages, tool_changes=True)) == expected


def test_consecutive_changes_are_sent_whole_as_one_section() -> None:
    wire = messages_to_anthropic([*SEARCHED, CHANGE, CHANGE], tool_changes=True)
    assert (
        wire[-1]["content"]
        == messages_to_anthropic([*SEARCHED, CHANGE], tool_changes=True)[-1]["content"] * 2
    )


def reply() -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-opus-5",
        "content": [{"type": "text", "text": "ok"}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


async def test_a_body_with_tool_changes_goes_to_the_beta_endpoint_with_its_header() -> None:
    server = MockServer(json_reply(reply()))
    model = AnthropicChatModel(
        "claude-opus-5", api_key="sk-ant-test", http_client=server.http_client(), max_retries=0
    )
    await model.call(Prompt(messages=(*SEARCHED, CHANGE), options=ChatOptions()))
    request = server.requests[-1]
    assert request.headers["anthropic-beta"] == INLINE_TOOLS_BETA
    assert "betas" not in server.body  # the SDK sends them as the header
    assert roles(server.body["messages"])[-1] == "system"

    await model.call(Prompt(messages=SEARCHED, options=ChatOptions()))
    assert "anthropic-beta" not in server.requests[-1].headers


async def test_a_request_to_another_model_leaves_the_change_out() -> None:
    server = MockServer(json_reply(reply()))
    model = AnthropicChatModel(
        "claude-opus-5", api_key="sk-ant-test", http_client=server.http_client(), max_retries=0
    )
    options = ChatOptions(model="claude-sonnet-5")
    await model.call(Prompt(messages=(*SEARCHED, CHANGE), options=options))
    assert roles(server.body["messages"]) == ["user", "assistant", "user"]
    assert "anthropic-beta" not in server.requests[-1].headers
