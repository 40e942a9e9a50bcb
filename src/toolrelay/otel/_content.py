"""Messages as the semantic conventions' JSON (``gen_ai.input.messages`` and friends).

Used only when content capture is enabled. Each message is ``{"role", "parts"}``; a part is
``{"type": "text", "content"}``, ``{"type": "tool_call", "id", "name", "arguments"}`` or
``{"type": "tool_call_response", "id", "response"}``; output messages add ``finish_reason``.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from typing import Any

from toolrelay.exceptions import InvalidJsonError
from toolrelay.messages import (
    AssistantMessage,
    ChatResponse,
    Message,
    SystemMessage,
    ToolCall,
    ToolChangeMessage,
    ToolResponseMessage,
    UserMessage,
)
from toolrelay.tools._arguments import load_json

_UNKNOWN_FINISH = "unknown"


def input_messages(messages: Sequence[Message]) -> str:
    """The messages sent to a model, as JSON text."""
    return _json([_message(m) for m in messages])


def output_messages(response: ChatResponse) -> str:
    """A response's generations as output messages, as JSON text."""
    return _json(
        [
            {
                **_assistant(g.message),
                "finish_reason": g.finish_reason or _UNKNOWN_FINISH,
            }
            for g in response.generations
        ]
    )


def _message(message: Message) -> dict[str, Any]:
    match message:
        case SystemMessage(text=text):
            return {"role": "system", "parts": [_text(text)]}
        case UserMessage(text=text):
            return {"role": "user", "parts": [_text(text)]}
        case AssistantMessage():
            return _assistant(message)
        case ToolResponseMessage(responses=responses):
            return {
                "role": "tool",
                "parts": [
                    {"type": "tool_call_response", "id": r.id, "response": r.data}
                    for r in responses
                ],
            }
        case ToolChangeMessage():
            # The convention has no part for it: a part of its own naming the tools.
            change = {"type": "tool_changes", "added": list(message.added_names)}
            return {"role": "system", "parts": [{**change, "removed": list(message.removed)}]}
    raise AssertionError(f"unknown message type {type(message).__name__}")  # pragma: no cover


def _assistant(message: AssistantMessage) -> dict[str, Any]:
    parts = [_text(message.text)] if message.text else []
    parts.extend(_tool_call(call) for call in message.tool_calls)
    return {"role": "assistant", "parts": parts}


def _tool_call(call: ToolCall) -> dict[str, Any]:
    arguments: Any = call.arguments  # kept as the model wrote it when it is not JSON
    with contextlib.suppress(InvalidJsonError):
        arguments = load_json(call.name, call.arguments) if call.arguments.strip() else {}
    return {"type": "tool_call", "id": call.id, "name": call.name, "arguments": arguments}


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "content": text}


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)
