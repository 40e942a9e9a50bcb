"""The Anthropic adapter's request bodies fit the installed SDK's own request types.

Each body :meth:`AnthropicChatModel.request_body` builds is walked against
``anthropic.types.message_create_params.MessageCreateParamsNonStreaming`` (or ``...Streaming``)
by ``tests/models/_sdk_types.py``: no key the SDK does not declare, every required key, every
value of its declared type, down to each content block and its ``cache_control``. The body's
``extra_body`` (the request's ``ChatOptions.extras`` and ``temperature``) is the one part the
SDK does not type: it is what the user asked to send as is. toolrelay's messages hold no images,
so the adapter sends none.
"""

from __future__ import annotations

import typing
from typing import Any

import pytest

from tests.extras import needs_extra
from toolrelay.messages import (
    AssistantMessage,
    SystemMessage,
    ToolCall,
    ToolResponse,
    ToolResponseMessage,
    UserMessage,
)
from toolrelay.models._anthropic_wire import UNCACHEABLE_BLOCKS, count_breakpoints
from toolrelay.prompt import ChatOptions, Prompt

from . import _anthropic_loop
from ._sdk_types import type_errors

anthropic_types = pytest.importorskip("anthropic.types", reason=needs_extra("anthropic"))
from anthropic.types import content_block_param, message_create_params  # noqa: E402

SEARCH, RETRY = _anthropic_loop.SEARCH, _anthropic_loop.RETRY


def sdk_errors(body: dict[str, Any]) -> list[str]:
    params = (
        message_create_params.MessageCreateParamsStreaming
        if body.get("stream")
        else message_create_params.MessageCreateParamsNonStreaming
    )
    return type_errors({k: v for k, v in body.items() if k != "extra_body"}, params)


def prompt(*messages: Any, **options: Any) -> Prompt:
    return Prompt(messages=messages, options=ChatOptions(**options))


HISTORY = (
    SystemMessage(text="You triage refunds."),
    UserMessage(text="Retry RF-1 and RF-2"),
    AssistantMessage(
        text="Retrying both.",
        tool_calls=(
            ToolCall(id="toolu_1", name="refund.retry", arguments='{"refund_id": "RF-1"}'),
            ToolCall(id="toolu_2", name="refund.retry", arguments="{not json"),
        ),
    ),
    ToolResponseMessage(
        responses=(
            ToolResponse(id="toolu_1", name="refund.retry", data="RF-1 retried"),
            ToolResponse(id="toolu_2", name="refund.retry", data="bad JSON", is_error=True),
        )
    ),
    AssistantMessage(
        tool_calls=(ToolCall(id="toolu_3", name="refund.retry", arguments='{"refund_id": "2"}'),)
    ),
    ToolResponseMessage(responses=(ToolResponse(id="toolu_3", name="refund.retry", data=""),)),
    UserMessage(text="And?"),
)

CASES: dict[str, tuple[dict[str, Any], Prompt]] = {
    "plain": ({"cache_history": False}, prompt(UserMessage(text="hi"))),
    "plain, history cached": ({}, prompt(UserMessage(text="hi"))),
    "tools and system": (
        {"cache_prompt": True},
        prompt(SystemMessage(text="Be brief."), UserMessage(text="hi"), tools=(SEARCH, RETRY)),
    ),
    "tool loop history": ({"cache_prompt": True}, prompt(*HISTORY, tools=(RETRY,))),
    "tool choice, no parallel calls": (
        {"tool_choice": "refund.retry", "parallel_tool_calls": False},
        prompt(UserMessage(text="go"), tools=(RETRY,), temperature=0.2, max_tokens=50),
    ),
    "required tool, extras": (
        {},
        prompt(UserMessage(text="go"), tools=(RETRY,), extras={"tool_choice": "required"}),
    ),
}


@pytest.mark.parametrize("stream", [False, True], ids=["create", "stream"])
@pytest.mark.parametrize("case", list(CASES))
def test_request_bodies_fit_the_sdk_request_types(case: str, stream: bool) -> None:
    kwargs, request = CASES[case]
    body = _anthropic_loop.model(**kwargs).request_body(request, stream=stream)
    assert sdk_errors(body) == []


def test_tool_loop_bodies_fit_the_sdk_request_types() -> None:
    bodies = _anthropic_loop.bodies()
    assert [count_breakpoints(b) for b in bodies] == [3, 4, 4]
    for body in bodies:
        assert sdk_errors(body) == []


def test_the_checker_catches_what_the_sdk_does_not_allow() -> None:
    # The walk is strict enough to matter: unknown keys, a breakpoint where the API takes
    # none, missing and mistyped fields.
    body = _anthropic_loop.bodies()[2]
    block = body["messages"][0]["content"][0]
    block["citation"] = []
    body["messages"][1]["content"].insert(
        0,
        {"type": "thinking", "thinking": "hm", "signature": "s", "cache_control": {"type": "x"}},
    )
    del body["tools"][0]["input_schema"]
    body["max_tokens"] = "many"
    *errors, tool_error = sdk_errors(body)
    assert errors == [
        "body.max_tokens: 'many' is not an integer",
        "body.messages[0].content[0]: unknown key 'citation' for TextBlockParam",
        "body.messages[1].content[0]: unknown key 'cache_control' for ThinkingBlockParam",
    ]
    # A tool without a schema is none of the SDK's tool types (custom, server tools...).
    assert tool_error.startswith("body.tools[0]: ")
    assert "matches none of ToolParam, " in tool_error


def test_uncacheable_blocks_are_those_the_sdk_gives_no_cache_control() -> None:
    blocks = typing.get_args(content_block_param.ContentBlockParam)
    without = set()
    for block in blocks:
        hints = typing.get_type_hints(block)
        if "cache_control" not in hints:
            (kind,) = typing.get_args(hints["type"])
            without.add(kind)
    assert without == UNCACHEABLE_BLOCKS
