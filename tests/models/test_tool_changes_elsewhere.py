"""Adapters without a native channel leave a tool change out: never sent as text, no crash."""

from __future__ import annotations

import pytest

from tests.extras import needs_extra
from toolrelay.messages import (
    AssistantMessage,
    ToolCall,
    ToolChangeMessage,
    ToolResponse,
    ToolResponseMessage,
    UserMessage,
)
from toolrelay.models._base import DEFAULT_TOOL_CHANNELS, tool_channels
from toolrelay.models._constrained import render_messages
from toolrelay.models._openai_wire import messages_to_openai

CHANGE = ToolChangeMessage(
    added=({"name": "secret.tool", "description": "Never sent.", "input_schema": {}},),
    removed=("old.tool",),
)
HISTORY = (
    UserMessage(text="hi"),
    AssistantMessage(tool_calls=(ToolCall(id="c1", name="tool_search", arguments="{}"),)),
    ToolResponseMessage(responses=(ToolResponse(id="c1", name="tool_search", data="[]"),)),
)


def test_chat_completions_leave_a_tool_change_out() -> None:
    assert messages_to_openai([*HISTORY, CHANGE]) == messages_to_openai(HISTORY)


def test_a_chat_template_leaves_a_tool_change_out() -> None:
    rendered = render_messages([*HISTORY, CHANGE], [])
    assert rendered == render_messages(HISTORY, [])
    assert "secret" not in str(rendered)


def test_a_model_declaring_nothing_renders_the_proxy_and_rewrite_channels() -> None:
    class Plain:
        supports_tools = True

    assert tool_channels(Plain()) == DEFAULT_TOOL_CHANNELS == ("proxy", "rewrite")


def test_chat_completions_models_take_the_proxy_channel_under_auto() -> None:
    pytest.importorskip("openai", reason=needs_extra("openai"))
    from toolrelay.models import OpenAIChatModel

    assert tool_channels(OpenAIChatModel("gpt-4.1-mini", api_key="sk-test")) == ("proxy", "rewrite")
