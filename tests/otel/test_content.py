"""Messages as the semantic conventions' JSON, for content capture."""

from __future__ import annotations

import json

from toolrelay.messages import (
    AssistantMessage,
    ChatResponse,
    Generation,
    SystemMessage,
    ToolCall,
    ToolChangeMessage,
    ToolResponse,
    ToolResponseMessage,
    UserMessage,
)
from toolrelay.otel._content import input_messages, output_messages


def test_every_message_kind_becomes_a_role_with_parts() -> None:
    messages = (
        SystemMessage(text="Be brief."),
        UserMessage(text="Weather in Paris?"),
        AssistantMessage(
            text="Checking.",
            tool_calls=(
                ToolCall(id="c1", name="weather", arguments='{"city": "Paris"}'),
                ToolCall(id="c2", name="time", arguments=""),
                ToolCall(id="c3", name="broken", arguments="{not json"),
            ),
        ),
        ToolResponseMessage(responses=(ToolResponse(id="c1", name="weather", data="sunny"),)),
        ToolChangeMessage(added=({"name": "forecast", "input_schema": {}},), removed=("time",)),
    )

    assert json.loads(input_messages(messages)) == [
        {"role": "system", "parts": [{"type": "text", "content": "Be brief."}]},
        {"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]},
        {
            "role": "assistant",
            "parts": [
                {"type": "text", "content": "Checking."},
                {
                    "type": "tool_call",
                    "id": "c1",
                    "name": "weather",
                    "arguments": {"city": "Paris"},
                },
                {"type": "tool_call", "id": "c2", "name": "time", "arguments": {}},
                {"type": "tool_call", "id": "c3", "name": "broken", "arguments": "{not json"},
            ],
        },
        {
            "role": "tool",
            "parts": [{"type": "tool_call_response", "id": "c1", "response": "sunny"}],
        },
        {
            "role": "system",
            "parts": [{"type": "tool_changes", "added": ["forecast"], "removed": ["time"]}],
        },
    ]


def test_output_messages_carry_each_generations_finish_reason() -> None:
    response = ChatResponse(
        generations=(
            Generation(message=AssistantMessage(text="Sunny, 21 °C."), finish_reason="stop"),
            Generation(message=AssistantMessage(text="Rain.")),
        )
    )

    text = output_messages(response)

    assert "21 °C" in text  # kept readable, not escaped
    assert json.loads(text) == [
        {
            "role": "assistant",
            "parts": [{"type": "text", "content": "Sunny, 21 °C."}],
            "finish_reason": "stop",
        },
        {
            "role": "assistant",
            "parts": [{"type": "text", "content": "Rain."}],
            "finish_reason": "unknown",
        },
    ]
