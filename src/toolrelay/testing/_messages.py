"""A conversation holding every kind of message, for round-trip tests of chat memory stores."""

from __future__ import annotations

from toolrelay.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolChangeMessage,
    ToolResponse,
    ToolResponseMessage,
    UserMessage,
)

__all__ = ["every_message_kind"]


def every_message_kind() -> list[Message]:
    """A fresh list of messages that a repository must give back exactly as saved.

    System, user (with non-ASCII text), assistant with two tool calls (one without
    arguments), tool responses (one an error), an assistant message without text, another
    whose tool call has empty arguments, a tool exchange whose every text holds lone
    surrogates (half an emoji, as a model's JSON can escape it; UTF-8 cannot encode them),
    a tool change (a definition with nested schema and non-ASCII text; then a retirement
    with a new addition), and a final answer.
    """
    half = "\ud83d"  # a lone high surrogate
    pair = "\ud83d\ude00"  # a high and a low surrogate as two code points
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
        UserMessage(text=f"smile {half} and {pair}"),
        AssistantMessage(
            text=half,
            tool_calls=(
                ToolCall(id=f"c4{half}", name=f"x{half}", arguments=f'{{"q": "{pair}{half}"}}'),
            ),
        ),
        ToolResponseMessage(
            responses=(ToolResponse(id=f"c4{half}", name=f"x{half}", data=f"got {pair}"),)
        ),
        ToolChangeMessage(
            added=(
                {
                    "name": "refund.status",
                    "description": "Status of a refund — 退款状态",
                    "input_schema": {
                        "type": "object",
                        "properties": {"refund_id": {"type": "string", "description": pair}},
                        "required": ["refund_id"],
                    },
                },
            )
        ),
        ToolChangeMessage(
            added=({"name": "noargs", "input_schema": {"type": "object", "properties": {}}},),
            removed=("refund.retry",),
        ),
        AssistantMessage(text="Done: paid 12.50 €."),
    ]
