"""Chat memory contracts: a :class:`ChatMemory` decides what to keep, a repository stores it.

A conversation is identified by a string id, passed to the client's advisors as the
:data:`CONVERSATION_ID` parameter (``client.prompt().conversation("c1")``). Repositories
store every message type, tool calls and tool responses included, and give back exactly
what was saved; the SQLite and Redis ones keep each message as its JSON text
(:func:`message_to_json`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from toolrelay.messages import Message, message_from_dict, message_to_dict

__all__ = [
    "CONVERSATION_ID",
    "AppendingRepository",
    "ChatMemory",
    "ChatMemoryRepository",
    "message_from_json",
    "message_to_json",
]

CONVERSATION_ID = "conversation_id"
"""The advisor parameter (request context key) naming the conversation."""


@runtime_checkable
class ChatMemoryRepository(Protocol):
    """Stores whole conversations; the policy of what to keep lives in :class:`ChatMemory`."""

    async def find_conversation_ids(self) -> list[str]:
        """Every conversation id that has messages, sorted."""
        ...

    async def find_by_conversation_id(self, conversation_id: str) -> list[Message]:
        """The stored messages of a conversation, oldest first (empty when unknown)."""
        ...

    async def save_all(self, conversation_id: str, messages: Sequence[Message]) -> None:
        """Replace the stored messages of a conversation with ``messages``."""
        ...

    async def delete_by_conversation_id(self, conversation_id: str) -> None:
        """Forget a conversation (no error when it is unknown)."""
        ...


@runtime_checkable
class AppendingRepository(Protocol):
    """A repository that can also add messages at the end of a conversation atomically.

    Several workers appending to one conversation then never lose each other's messages, as
    a read-modify-save could (e.g. ``RedisChatMemoryRepository``).
    """

    async def append(
        self, conversation_id: str, messages: Sequence[Message], *, keep_last: int | None = None
    ) -> int:
        """Add ``messages`` in one piece; then keep only the last ``keep_last`` messages.

        Returns:
            How many messages the conversation holds now.
        """
        ...


@runtime_checkable
class ChatMemory(Protocol):
    """What the memory advisor needs: append to a conversation, read it back, clear it."""

    async def add(self, conversation_id: str, messages: Sequence[Message]) -> None:
        """Append ``messages`` to the conversation (the memory may then drop old ones)."""
        ...

    async def get(self, conversation_id: str) -> list[Message]:
        """The messages to send along with the next request, oldest first."""
        ...

    async def clear(self, conversation_id: str) -> None:
        """Forget the conversation."""
        ...


def message_to_json(message: Message) -> str:
    """Serialise a message to JSON text (non-ASCII kept as is)."""
    return json.dumps(message_to_dict(message), ensure_ascii=False)


def message_from_json(text: str) -> Message:
    """Parse JSON text written by :func:`message_to_json`."""
    return message_from_dict(json.loads(text))
