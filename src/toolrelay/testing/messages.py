"""A conversation holding every kind of message, for round-trip tests of chat memory stores."""

from __future__ import annotations

from toolrelay.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolResponse,
    ToolResponseMessage,
    UserMessage,
)

__all__ = ["every_message_kind"]


def every_message_kind() -> list[Message]:
    """A fresh list of messages that a repository must give back exactly as saved.

    System, user (with non-ASCII text), assistant with two tool calls (one without
    arguments), tool responses (one an error), an assistant message without text, another
    whose tool call has empty arguments, and a final answer.
    """
    return [
        SystemMessage(text="Be exact."),
        UserMessage(text="Retry refund R1 — 退款失败 ✓"),
        AssistantMessage(
            text="Retrying.",
            tool_calls=(
                ToolCall(id="c1", name="refund.retry", arguments='{"order": "R1"}'),
                ToolCall(id="c2", name="noargs"),
            ),
        ),
        ToolResponseMessage(
            responses=(
                ToolResponse(id="c1", name="refund.retry", data='{"status": "OK"}'),
                ToolResponse(id="c2", name="noargs", data="boom", is_error=True),
            )
        ),
        AssistantMessage(text=None),
        AssistantMessage(text=None, tool_calls=(ToolCall(id="c3", name="x", arguments=""),)),
        AssistantMessage(text="Done: paid 12.50 €."),
    ]
