"""A repository that keeps conversations in a dict, for tests and single-process apps."""

from __future__ import annotations

from collections.abc import Sequence

from toolrelay.messages import Message

__all__ = ["InMemoryChatMemoryRepository"]


class InMemoryChatMemoryRepository:
    """Keeps each conversation as a tuple of (immutable) messages in a dict.

    Every operation is a single dict access with no ``await`` in between, so concurrent tasks
    on one event loop never see a half-written conversation.
    """

    def __init__(self) -> None:
        self._conversations: dict[str, tuple[Message, ...]] = {}

    async def find_conversation_ids(self) -> list[str]:
        """Every conversation id that has messages, sorted."""
        return sorted(cid for cid, messages in self._conversations.items() if messages)

    async def find_by_conversation_id(self, conversation_id: str) -> list[Message]:
        """The stored messages, oldest first (empty when unknown)."""
        return list(self._conversations.get(conversation_id, ()))

    async def save_all(self, conversation_id: str, messages: Sequence[Message]) -> None:
        """Replace the conversation with ``messages``; an empty sequence forgets it."""
        if messages:
            self._conversations[conversation_id] = tuple(messages)
        else:
            self._conversations.pop(conversation_id, None)

    async def delete_by_conversation_id(self, conversation_id: str) -> None:
        """Forget the conversation."""
        self._conversations.pop(conversation_id, None)
