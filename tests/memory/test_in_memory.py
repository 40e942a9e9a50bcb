from __future__ import annotations

from toolrelay.memory import ChatMemoryRepository, InMemoryChatMemoryRepository
from toolrelay.messages import UserMessage


async def test_save_find_and_delete() -> None:
    repository = InMemoryChatMemoryRepository()
    assert isinstance(repository, ChatMemoryRepository)
    assert await repository.find_by_conversation_id("none") == []
    await repository.save_all("b", [UserMessage(text="1")])
    await repository.save_all("a", [UserMessage(text="2")])
    assert await repository.find_conversation_ids() == ["a", "b"]
    await repository.save_all("a", [])
    assert await repository.find_conversation_ids() == ["b"]
    await repository.delete_by_conversation_id("b")
    await repository.delete_by_conversation_id("unknown")
    assert await repository.find_conversation_ids() == []


async def test_returned_lists_are_copies() -> None:
    repository = InMemoryChatMemoryRepository()
    await repository.save_all("c", [UserMessage(text="1")])
    found = await repository.find_by_conversation_id("c")
    found.append(UserMessage(text="2"))
    assert await repository.find_by_conversation_id("c") == [UserMessage(text="1")]
