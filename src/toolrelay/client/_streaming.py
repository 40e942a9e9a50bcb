"""Streams through the advisor chain: forwarding text chunks and rebuilding whole answers.

A stream advisor yields :class:`ChatClientResponse` chunks whose ``chat_response`` follows
:mod:`toolrelay.models._chunks`. An advisor that turns a stream into a different answer (the
tool loop does: it hides tool-call fragments and ends with the answer of its last round) puts
the complete answer in its last chunk's context under :data:`FINAL_RESPONSE_KEY`;
:class:`StreamAggregator` then returns exactly that instead of merging the chunks, so a
streamed request and a called one end with the same response.
"""

from __future__ import annotations

from typing import Any

from toolrelay.client._requests import ChatClientResponse
from toolrelay.messages import AssistantMessage, ChatResponse, Generation
from toolrelay.models._chunks import ChunkMerger

__all__ = ["FINAL_RESPONSE_KEY", "StreamAggregator", "text_chunk"]

FINAL_RESPONSE_KEY = "toolrelay.final_response"
"""Context key of a stream's last chunk holding the complete answer as a ``ChatResponse``."""


class StreamAggregator:
    """Folds a stream of :class:`ChatClientResponse` chunks into one response."""

    def __init__(self) -> None:
        self._merger = ChunkMerger()
        self._context: dict[str, Any] = {}
        self._final: ChatResponse | None = None
        self._reports: ChatClientResponse | None = None

    def add(self, chunk: ChatClientResponse) -> None:
        """Fold one chunk in; its context entries win over earlier ones."""
        self._merger.add(chunk.chat_response)
        self._context.update(chunk.context)
        final = chunk.context.get(FINAL_RESPONSE_KEY)
        if isinstance(final, ChatResponse):
            self._final = final
        if (chunk.tool_loop, chunk.tool_search, chunk.approval) != (None, None, None):
            self._reports = chunk  # the closing chunk carries the turn's reports

    def response(self) -> ChatClientResponse:
        """The complete response: the declared final answer, or the merged chunks."""
        chat_response = self._final if self._final is not None else self._merger.response()
        context = {k: v for k, v in self._context.items() if k != FINAL_RESPONSE_KEY}
        reports = self._reports
        return ChatClientResponse(
            chat_response=chat_response,
            context=context,
            tool_loop=None if reports is None else reports.tool_loop,
            tool_search=None if reports is None else reports.tool_search,
            approval=None if reports is None else reports.approval,
        )


def text_chunk(chunk: ChatResponse) -> ChatResponse | None:
    """The text of ``chunk`` alone (no tool-call fragments, usage or finish reason).

    Returns:
        A chunk with one text-only generation per generation of ``chunk``, or ``None`` when
        ``chunk`` holds no text at all.
    """
    if not any(g.message.text for g in chunk.generations):
        return None
    return ChatResponse(
        generations=tuple(
            Generation(message=AssistantMessage(text=g.message.text)) for g in chunk.generations
        ),
        metadata=chunk.metadata,
    )
