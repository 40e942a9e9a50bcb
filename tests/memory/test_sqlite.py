from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from toolrelay.exceptions import StorageError
from toolrelay.memory import (
    ChatMemoryRepository,
    MessageWindowChatMemory,
    SqliteChatMemoryRepository,
)
from toolrelay.memory import _sqlite as sqlite_module
from toolrelay.memory._sqlite import default_database_path
from toolrelay.messages import (
    UserMessage,
)
from toolrelay.testing import every_message_kind

EVERY_KIND = every_message_kind()


async def test_every_message_type_round_trips_exactly(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    with SqliteChatMemoryRepository(path) as repository:
        assert isinstance(repository, ChatMemoryRepository)
        await repository.save_all("c1", EVERY_KIND)
    # A fresh connection reads what the first one wrote.
    async with SqliteChatMemoryRepository(path) as reopened:
        assert await reopened.find_by_conversation_id("c1") == EVERY_KIND


async def test_save_replaces_and_delete_forgets() -> None:
    async with SqliteChatMemoryRepository(":memory:") as repository:
        await repository.save_all("b", EVERY_KIND[:2])
        await repository.save_all("a", EVERY_KIND)
        await repository.save_all("a", EVERY_KIND[-1:])
        assert await repository.find_by_conversation_id("a") == EVERY_KIND[-1:]
        assert await repository.find_conversation_ids() == ["a", "b"]
        await repository.delete_by_conversation_id("b")
        assert await repository.find_conversation_ids() == ["a"]
        assert await repository.find_by_conversation_id("b") == []


async def test_conversation_ids_utf8_cannot_encode_are_kept_exactly(tmp_path: Path) -> None:
    half, other = "c-\ud83d", "c-\ude00"  # lone surrogates: UTF-8 cannot encode them
    with SqliteChatMemoryRepository(tmp_path / "m.db") as repository:
        await repository.save_all(half, EVERY_KIND)
        await repository.save_all(other, EVERY_KIND[:1])
        await repository.save_all("plain", EVERY_KIND[:2])
        assert await repository.find_conversation_ids() == sorted([half, other, "plain"])
        assert await repository.find_by_conversation_id(half) == EVERY_KIND
        await repository.delete_by_conversation_id(other)
        assert await repository.find_by_conversation_id(other) == []
        assert await repository.find_conversation_ids() == sorted([half, "plain"])


async def test_concurrent_conversations_do_not_mix(tmp_path: Path) -> None:
    repository = SqliteChatMemoryRepository(tmp_path / "m.db")
    memory = MessageWindowChatMemory(repository, max_messages=50)

    async def talk(conversation: str) -> None:
        for n in range(10):
            await memory.add(conversation, [UserMessage(text=f"{conversation}-{n}")])

    await asyncio.gather(*(talk(f"c{i}") for i in range(5)))
    for i in range(5):
        assert await memory.get(f"c{i}") == [UserMessage(text=f"c{i}-{n}") for n in range(10)]
    repository.close()


def test_the_default_path_is_in_the_user_data_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        sqlite_module.platformdirs, "user_data_dir", lambda app: str(tmp_path / app)
    )
    assert default_database_path() == tmp_path / "toolrelay" / "chat_memory.sqlite3"
    repository = SqliteChatMemoryRepository()
    assert repository.path == tmp_path / "toolrelay" / "chat_memory.sqlite3"


async def test_missing_folders_are_created(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "m.db"
    async with SqliteChatMemoryRepository(path) as repository:
        await repository.save_all("c", EVERY_KIND[:1])
    assert path.exists()


async def test_database_failures_are_storage_errors(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    repository = SqliteChatMemoryRepository(blocker / "m.db")
    with pytest.raises(StorageError, match=r"m\.db") as caught:
        await repository.find_conversation_ids()
    assert caught.value.__cause__ is not None

    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"this is not a sqlite database" * 100)
    with pytest.raises(StorageError):
        await SqliteChatMemoryRepository(garbage).find_conversation_ids()
