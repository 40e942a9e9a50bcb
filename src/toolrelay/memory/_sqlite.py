"""A chat memory repository in a SQLite file (stdlib ``sqlite3``, run in a worker thread).

Each message is one row holding its JSON form (:func:`toolrelay.memory._base.message_to_json`),
so every message type, tool calls and tool responses included, comes back exactly as saved.
Text that UTF-8 cannot encode (a lone surrogate from a model) is kept as bytes and comes back
exactly too (:mod:`toolrelay._storable`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

import platformdirs

from toolrelay._sqlite import SqliteStore
from toolrelay._storable import from_store, to_store
from toolrelay.memory._base import message_from_json, message_to_json
from toolrelay.messages import Message

__all__ = ["SqliteChatMemoryRepository", "default_database_path"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS chat_memory (
    conversation_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    message TEXT NOT NULL,
    PRIMARY KEY (conversation_id, position)
)
"""


def default_database_path() -> Path:
    """``chat_memory.sqlite3`` in the user's data directory for toolrelay."""
    return Path(platformdirs.user_data_dir("toolrelay")) / "chat_memory.sqlite3"


class SqliteChatMemoryRepository(SqliteStore):
    """Stores conversations in one SQLite database.

    Args:
        path: The database file; ``":memory:"`` for a private in-memory database. Defaults to
            :func:`default_database_path`. Missing parent folders are created.

    One connection is opened lazily and shared; every statement runs in a worker thread under
    a lock, and each save is one transaction, so concurrent conversations never mix and a
    reader never sees a half-saved conversation. Use as an (async) context manager or call
    :meth:`close` when done.

    Raises:
        StorageError: (from any method) the database cannot be opened, read or written.
    """

    def __init__(self, path: str | Path | None = None) -> None:
        super().__init__(
            default_database_path() if path is None else path,
            schema=_SCHEMA,
            label="chat memory",
        )

    async def find_conversation_ids(self) -> list[str]:
        """Every conversation id that has messages, sorted."""

        def work(db: sqlite3.Connection) -> list[str]:
            rows = db.execute("SELECT DISTINCT conversation_id FROM chat_memory")
            return sorted(from_store(row[0]) for row in rows)

        return await self._run(work)

    async def find_by_conversation_id(self, conversation_id: str) -> list[Message]:
        """The stored messages, oldest first (empty when unknown)."""

        def work(db: sqlite3.Connection) -> list[str]:
            rows = db.execute(
                "SELECT message FROM chat_memory WHERE conversation_id = ? ORDER BY position",
                (to_store(conversation_id),),
            )
            return [from_store(row[0]) for row in rows]

        return [message_from_json(text) for text in await self._run(work)]

    async def save_all(self, conversation_id: str, messages: Sequence[Message]) -> None:
        """Replace the conversation with ``messages`` in one transaction."""
        key = to_store(conversation_id)
        rows = [(key, i, to_store(message_to_json(m))) for i, m in enumerate(messages)]

        def work(db: sqlite3.Connection) -> None:
            # One unit of work is one transaction: never half a conversation.
            db.execute("DELETE FROM chat_memory WHERE conversation_id = ?", (key,))
            db.executemany(
                "INSERT INTO chat_memory (conversation_id, position, message) VALUES (?, ?, ?)",
                rows,
            )

        await self._run(work)

    async def delete_by_conversation_id(self, conversation_id: str) -> None:
        """Forget the conversation."""

        def work(db: sqlite3.Connection) -> None:
            db.execute(
                "DELETE FROM chat_memory WHERE conversation_id = ?", (to_store(conversation_id),)
            )

        await self._run(work)
