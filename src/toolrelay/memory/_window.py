"""A chat memory that keeps the most recent messages of each conversation.

The window never splits a tool exchange: an assistant message that asked for tool calls and
the tool responses that answer it are kept or dropped together, and the kept history never
starts with a tool response whose request is gone (providers reject such a history). System
messages are always kept; a newly added system message replaces the stored ones.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Sequence

from toolrelay.memory._base import AppendingRepository, ChatMemoryRepository
from toolrelay.memory._in_memory import InMemoryChatMemoryRepository
from toolrelay.messages import AssistantMessage, Message, SystemMessage, ToolResponseMessage

__all__ = ["DEFAULT_MAX_MESSAGES", "STORED_WINDOWS", "MessageWindowChatMemory", "apply_window"]

DEFAULT_MAX_MESSAGES = 20

STORED_WINDOWS = 4
"""With an appending repository, how many windows' worth of messages stay stored: the store
cuts by count, which may split a tool exchange at the oldest end; the window applied on
reading then drops the stray half, with room to spare."""


def _units(messages: Sequence[Message]) -> list[list[int]]:
    """Indexes of the non-system messages, grouped into units that are kept or dropped whole.

    A unit is an assistant message with tool calls plus the tool responses right after it, or
    any other single message. A tool response with no request before it is a unit of its own.
    """
    units: list[list[int]] = []
    open_exchange = False
    for index, message in enumerate(messages):
        if isinstance(message, SystemMessage):
            continue
        if isinstance(message, ToolResponseMessage) and open_exchange:
            units[-1].append(index)
            continue
        units.append([index])
        open_exchange = isinstance(message, AssistantMessage) and message.has_tool_calls
    return units


def apply_window(messages: Sequence[Message], max_messages: int) -> list[Message]:
    """Keep at most ``max_messages`` messages, dropping whole units from the oldest on.

    System messages are always kept (and count towards the limit), in their places. After the
    drop, the first kept non-system message is never a tool response. The result may hold
    fewer than ``max_messages`` messages when a unit had to go whole.

    Args:
        messages: A conversation, oldest first.
        max_messages: The most messages to keep.

    Returns:
        The kept messages in their original order.
    """
    system_count = sum(isinstance(m, SystemMessage) for m in messages)
    budget = max_messages - system_count
    units = _units(messages)
    kept = sum(len(unit) for unit in units)
    start = 0
    while start < len(units) and (
        kept > budget or isinstance(messages[units[start][0]], ToolResponseMessage)
    ):
        kept -= len(units[start])
        start += 1
    dropped = {index for unit in units[:start] for index in unit}
    return [m for index, m in enumerate(messages) if index not in dropped]


class MessageWindowChatMemory:
    """Keeps the last ``max_messages`` messages of each conversation in a repository.

    Args:
        repository: Where conversations live; an in-memory one when omitted.
        max_messages: The window size (default 20), system messages included.

    Concurrent calls for one conversation on one event loop are serialised, so appends from
    parallel requests are never lost; different conversations never wait for each other.
    Across processes, a repository with an atomic ``append``
    (``AppendingRepository``, e.g. Redis) is appended to instead
    of read, trimmed and saved, so workers sharing a conversation never lose a message; it
    stores up to :data:`STORED_WINDOWS` windows and the window is applied when reading.
    """

    def __init__(
        self,
        repository: ChatMemoryRepository | None = None,
        *,
        max_messages: int = DEFAULT_MAX_MESSAGES,
    ) -> None:
        if max_messages < 1:
            raise ValueError("max_messages must be at least 1")
        self.repository: ChatMemoryRepository = repository or InMemoryChatMemoryRepository()
        self.max_messages = max_messages
        # One lock per (event loop, conversation); weak so finished conversations cost nothing.
        self._locks: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, weakref.WeakValueDictionary[str, asyncio.Lock]
        ] = weakref.WeakKeyDictionary()

    def _lock(self, conversation_id: str) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        locks = self._locks.get(loop)
        if locks is None:
            locks = self._locks[loop] = weakref.WeakValueDictionary()
        lock = locks.get(conversation_id)
        if lock is None:
            lock = locks[conversation_id] = asyncio.Lock()
        return lock

    async def add(self, conversation_id: str, messages: Sequence[Message]) -> None:
        """Append ``messages``, then trim the conversation to the window."""
        if not messages:
            return
        replaces_system = any(isinstance(m, SystemMessage) for m in messages)
        if isinstance(self.repository, AppendingRepository) and not replaces_system:
            keep = self.max_messages * STORED_WINDOWS
            await self.repository.append(conversation_id, list(messages), keep_last=keep)
            return
        async with self._lock(conversation_id):
            stored = await self.repository.find_by_conversation_id(conversation_id)
            if replaces_system:
                stored = [m for m in stored if not isinstance(m, SystemMessage)]
            combined = [*stored, *messages]
            await self.repository.save_all(
                conversation_id, apply_window(combined, self.max_messages)
            )

    async def get(self, conversation_id: str) -> list[Message]:
        """The conversation's messages within the window, oldest first."""
        stored = await self.repository.find_by_conversation_id(conversation_id)
        return apply_window(stored, self.max_messages)

    async def clear(self, conversation_id: str) -> None:
        """Forget the conversation."""
        async with self._lock(conversation_id):
            await self.repository.delete_by_conversation_id(conversation_id)
