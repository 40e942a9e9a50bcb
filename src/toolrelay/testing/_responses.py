"""Concise constructors for model responses, and the splitting of a response into chunks.

``text_response("Done.")`` and ``tool_call_response(("refund.retry", {"order_id": "A1"}))``
build the :class:`~toolrelay.messages.ChatResponse` a model would return. Tool calls built
from ``(name, arguments)`` pairs get an empty id; the test models fill it in
(``call_1``, ``call_2``, ... in the order the model emits them), so scripts stay short and
ids stay unique across rounds. Pass a :class:`~toolrelay.messages.ToolCall` to choose the id.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from itertools import zip_longest
from typing import Any, TypeAlias

from toolrelay.messages import AssistantMessage, ChatResponse, Generation, ToolCall, Usage
from toolrelay.models._chunks import TOOL_CALL_INDEXES

__all__ = [
    "CallSpec",
    "UsageSpec",
    "make_usage",
    "split_response",
    "text_response",
    "tool_call_response",
]

UsageSpec: TypeAlias = Usage | tuple[int, int] | None
"""A :class:`Usage`, or ``(prompt_tokens, completion_tokens)`` with the total computed."""

CallSpec: TypeAlias = ToolCall | tuple[str, Mapping[str, Any] | str]
"""A complete :class:`ToolCall`, or ``(name, arguments)`` with arguments as a dict or JSON text."""


def make_usage(usage: UsageSpec) -> Usage:
    """Turn a :data:`UsageSpec` into a :class:`Usage` (``None`` → zero usage)."""
    if usage is None:
        return Usage()
    if isinstance(usage, Usage):
        return usage
    prompt_tokens, completion_tokens = usage
    return Usage(
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        total_tokens=prompt_tokens + completion_tokens,
    )


def text_response(
    text: str,
    *,
    usage: UsageSpec = None,
    finish_reason: str | None = "stop",
    metadata: Mapping[str, Any] | None = None,
) -> ChatResponse:
    """A response with one generation holding ``text``."""
    return ChatResponse(
        generations=(Generation(message=AssistantMessage(text=text), finish_reason=finish_reason),),
        usage=make_usage(usage),
        metadata=metadata or {},
    )


def _tool_call(spec: CallSpec) -> ToolCall:
    if isinstance(spec, ToolCall):
        return spec
    name, arguments = spec
    text = arguments if isinstance(arguments, str) else json.dumps(dict(arguments))
    return ToolCall(id="", name=name, arguments=text)


def tool_call_response(
    *calls: CallSpec,
    text: str | None = None,
    usage: UsageSpec = None,
    finish_reason: str | None = "tool_calls",
    metadata: Mapping[str, Any] | None = None,
) -> ChatResponse:
    """A response with one generation asking for ``calls`` (and optionally saying ``text``).

    Example:
        >>> r = tool_call_response(("weather", {"city": "Paris"}), usage=(12, 5))
        >>> r.generations[0].message.tool_calls[0].arguments
        '{"city": "Paris"}'
    """
    message = AssistantMessage(text=text, tool_calls=tuple(_tool_call(c) for c in calls))
    return ChatResponse(
        generations=(Generation(message=message, finish_reason=finish_reason),),
        usage=make_usage(usage),
        metadata=metadata or {},
    )


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def _generation_chunks(generation: Generation, size: int) -> list[Generation]:
    message = generation.message
    parts: list[Generation] = []
    if message.text is not None:
        parts.extend(
            Generation(message=AssistantMessage(text=piece))
            for piece in _pieces(message.text, size)
        )
    for index, call in enumerate(message.tool_calls):
        for number, piece in enumerate(_pieces(call.arguments, size)):
            first = number == 0
            fragment = ToolCall(
                id=call.id if first else "", name=call.name if first else "", arguments=piece
            )
            parts.append(
                Generation(
                    message=AssistantMessage(tool_calls=(fragment,)),
                    metadata={TOOL_CALL_INDEXES: (index,)},
                )
            )
    if not parts:
        parts.append(Generation(message=AssistantMessage()))
    # The generation's own metadata rides on the first chunk, its finish reason on the last.
    head = parts[0]
    parts[0] = Generation(
        message=head.message,
        finish_reason=head.finish_reason,
        metadata={**generation.metadata, **head.metadata},
    )
    last = parts[-1]
    parts[-1] = Generation(
        message=last.message, finish_reason=generation.finish_reason, metadata=last.metadata
    )
    return parts


def split_response(response: ChatResponse, chunk_size: int = 4) -> list[ChatResponse]:
    """Split ``response`` into stream chunks as a provider would send them.

    Text is cut every ``chunk_size`` characters; each tool call becomes fragments carrying
    ``chunk_size`` characters of its arguments, only the first one with the id and name
    (the representation :class:`~toolrelay.models.ChunkMerger` merges). Response metadata
    rides on the first chunk and the usage on the last. ``merge_chunks(split_response(r)) == r``
    for any response whose tool calls all have ids.
    """
    if chunk_size < 1:
        raise ValueError("chunk_size must be at least 1")
    per_generation = [_generation_chunks(g, chunk_size) for g in response.generations]
    empty = Generation(message=AssistantMessage())
    rows = [tuple(row) for row in zip_longest(*per_generation, fillvalue=empty)] or [()]
    chunks = []
    for number, row in enumerate(rows):
        chunks.append(
            ChatResponse(
                generations=row,
                usage=response.usage if number == len(rows) - 1 else Usage(),
                metadata=response.metadata if number == 0 else {},
            )
        )
    return chunks
