"""How a streamed answer is carried in chunks, and how the chunks merge back into one answer.

A stream is a sequence of :class:`~toolrelay.messages.ChatResponse` chunks:

- The generation at position ``i`` of every chunk belongs to candidate ``i``.
- ``message.text`` is a text delta; the answer's text is the concatenation.
- ``message.tool_calls`` hold *fragments* of tool calls. ``Generation.metadata`` under
  :data:`TOOL_CALL_INDEXES` holds one integer per fragment naming the call it belongs to
  (``(0, 1)`` for a chunk with a fragment of call 0 and one of call 1). A call's first
  fragment carries its ``id`` and ``name``; later fragments may leave both empty. The
  ``arguments`` of a call are the concatenation of its fragments' ``arguments``.
- Without indexes, a fragment whose ``id`` was seen before continues that call; one with a
  ``name`` or an unseen ``id`` starts a new call; anything else continues the latest call.
  So a complete, non-streamed response is also a valid one-chunk stream.
- ``finish_reason`` is taken from the last chunk that sets it; usage is summed over chunks
  (adapters usually put the whole usage on the last chunk); metadata merges, later chunks win.
- A call that never received an id gets ``call_<index>``, so every merger of the same
  chunks agrees on it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from toolrelay.messages import AssistantMessage, ChatResponse, Generation, ToolCall, Usage

__all__ = ["TOOL_CALL_INDEXES", "ChunkMerger", "merge_chunks", "without_text"]

TOOL_CALL_INDEXES = "tool_call_indexes"
"""``Generation.metadata`` key: the call index of each tool-call fragment in the chunk."""


@dataclass(kw_only=True)
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass(kw_only=True)
class _PartialGeneration:
    text: list[str] = field(default_factory=list)
    has_text: bool = False
    calls: dict[int, _PartialCall] = field(default_factory=dict)
    latest: int | None = None
    finish_reason: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    def add(self, generation: Generation) -> None:
        message = generation.message
        if message.text is not None:
            self.has_text = True
            self.text.append(message.text)
        indexes = generation.metadata.get(TOOL_CALL_INDEXES)
        for position, fragment in enumerate(message.tool_calls):
            if indexes is not None and position < len(indexes):
                index = int(indexes[position])
            else:
                index = self._guess_index(fragment)
            self._add_fragment(index, fragment)
        if generation.finish_reason is not None:
            self.finish_reason = generation.finish_reason
        self.metadata.update(
            (key, value) for key, value in generation.metadata.items() if key != TOOL_CALL_INDEXES
        )

    def _guess_index(self, fragment: ToolCall) -> int:
        if fragment.id:
            for index, call in self.calls.items():
                if call.id == fragment.id:
                    return index
        if fragment.id or fragment.name or self.latest is None:
            return max(self.calls, default=-1) + 1
        return self.latest

    def _add_fragment(self, index: int, fragment: ToolCall) -> None:
        call = self.calls.setdefault(index, _PartialCall())
        # Providers differ on whether later fragments repeat the id and name; keep the first.
        if fragment.id and not call.id:
            call.id = fragment.id
        if fragment.name and not call.name:
            call.name = fragment.name
        if fragment.arguments:
            call.arguments.append(fragment.arguments)
        self.latest = index

    def build(self) -> Generation:
        calls = tuple(
            ToolCall(
                id=call.id or f"call_{index}",
                name=call.name,
                arguments="".join(call.arguments),
            )
            for index, call in sorted(self.calls.items())
        )
        text = "".join(self.text) if self.has_text else None
        return Generation(
            message=AssistantMessage(text=text, tool_calls=calls),
            finish_reason=self.finish_reason,
            metadata=self.metadata,
        )


class ChunkMerger:
    """Accumulates stream chunks and rebuilds the complete response.

    Example:
        >>> merger = ChunkMerger()
        >>> async for chunk in model.stream(prompt):  # doctest: +SKIP
        ...     merger.add(chunk)
        >>> response = merger.response()  # doctest: +SKIP
    """

    def __init__(self) -> None:
        self._generations: list[_PartialGeneration] = []
        self._usage = Usage()
        self._metadata: dict[str, Any] = {}
        self._chunks = 0

    @property
    def chunk_count(self) -> int:
        """How many chunks were added."""
        return self._chunks

    def add(self, chunk: ChatResponse) -> None:
        """Fold one chunk into the answer."""
        self._chunks += 1
        for position, generation in enumerate(chunk.generations):
            while len(self._generations) <= position:
                self._generations.append(_PartialGeneration())
            self._generations[position].add(generation)
        self._usage = self._usage + chunk.usage
        self._metadata.update(chunk.metadata)

    def response(self) -> ChatResponse:
        """The complete response of the chunks added so far."""
        return ChatResponse(
            generations=tuple(g.build() for g in self._generations),
            usage=self._usage,
            metadata=self._metadata,
        )


def merge_chunks(chunks: Iterable[ChatResponse]) -> ChatResponse:
    """Merge a whole stream's chunks into one response (see the module docs for the rules)."""
    merger = ChunkMerger()
    for chunk in chunks:
        merger.add(chunk)
    return merger.response()


def without_text(response: ChatResponse) -> ChatResponse:
    """``response`` without its generations' text (the closing chunk of a streamed answer)."""
    return dataclasses.replace(
        response,
        generations=tuple(
            Generation(
                message=AssistantMessage(tool_calls=g.message.tool_calls),
                finish_reason=g.finish_reason,
                metadata=g.metadata,
            )
            for g in response.generations
        ),
    )
