from __future__ import annotations

import asyncio
import itertools
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolrelay.memory import InMemoryChatMemoryRepository, MessageWindowChatMemory
from toolrelay.memory._window import DEFAULT_MAX_MESSAGES, STORED_WINDOWS, apply_window
from toolrelay.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolResponse,
    ToolResponseMessage,
    UserMessage,
)

SYS = SystemMessage(text="sys")


def user(n: int) -> UserMessage:
    return UserMessage(text=f"u{n}")


def answer(n: int) -> AssistantMessage:
    return AssistantMessage(text=f"a{n}")


def calls(n: int) -> AssistantMessage:
    return AssistantMessage(tool_calls=(ToolCall(id=f"c{n}", name="t", arguments="{}"),))


def results(n: int) -> ToolResponseMessage:
    return ToolResponseMessage(responses=(ToolResponse(id=f"c{n}", name="t", data="r"),))


def test_the_oldest_messages_go_first() -> None:
    messages = [user(1), answer(1), user(2), answer(2)]
    assert apply_window(messages, 2) == [user(2), answer(2)]
    assert apply_window(messages, 10) == messages


def test_system_messages_are_kept_in_place_and_count() -> None:
    messages = [SYS, user(1), answer(1), user(2), answer(2)]
    assert apply_window(messages, 3) == [SYS, user(2), answer(2)]
    assert apply_window([SYS, SYS, user(1)], 1) == [SYS, SYS]


def test_a_tool_exchange_is_dropped_whole() -> None:
    messages = [user(1), calls(1), results(1), answer(1)]
    # Keeping 2 would start at results(1), cut off from its request: drop the exchange too.
    assert apply_window(messages, 2) == [answer(1)]
    assert apply_window(messages, 3) == [calls(1), results(1), answer(1)]


def test_an_exchange_with_several_response_messages_stays_together() -> None:
    messages = [user(1), calls(1), results(1), results(2), answer(1)]
    assert apply_window(messages, 4) == [calls(1), results(1), results(2), answer(1)]
    assert apply_window(messages, 3) == [answer(1)]


def test_an_orphan_tool_response_at_the_start_is_dropped() -> None:
    assert apply_window([results(0), user(1), answer(1)], 10) == [user(1), answer(1)]


def test_a_pending_tool_call_at_the_end_is_kept() -> None:
    assert apply_window([user(1), answer(1), user(2), calls(2)], 2) == [user(2), calls(2)]


def message_strategy() -> st.SearchStrategy[list[Message]]:
    unit = st.sampled_from(["user", "answer", "exchange", "exchange2", "system"])

    def build(kinds: list[str]) -> list[Message]:
        out: list[Message] = []
        for n, kind in enumerate(kinds):
            if kind == "user":
                out.append(user(n))
            elif kind == "answer":
                out.append(answer(n))
            elif kind == "system":
                out.append(SYS)
            else:
                out.extend([calls(n), results(n)])
                if kind == "exchange2":
                    out.append(results(n + 1000))
        return out

    return st.lists(unit, max_size=25).map(build)


@given(messages=message_strategy(), limit=st.integers(1, 30))
def test_window_properties(messages: list[Message], limit: int) -> None:
    kept = apply_window(messages, limit)
    systems = [m for m in messages if isinstance(m, SystemMessage)]
    others = [m for m in kept if not isinstance(m, SystemMessage)]
    # Size: within the limit, unless the system messages alone exceed it.
    assert len(kept) <= max(limit, len(systems))
    # System messages all survive; the rest is a suffix of the non-system messages.
    assert [m for m in kept if isinstance(m, SystemMessage)] == systems
    non_system = [m for m in messages if not isinstance(m, SystemMessage)]
    assert others == non_system[len(non_system) - len(others) :]
    # Never starts with a tool response; every tool response follows its request.
    if others:
        assert not isinstance(others[0], ToolResponseMessage)
    for before, message in itertools.pairwise(others):
        if isinstance(message, ToolResponseMessage):
            assert isinstance(before, ToolResponseMessage) or (
                isinstance(before, AssistantMessage) and before.has_tool_calls
            )
    # Nothing is dropped that did not have to be.
    if len([*systems, *non_system]) <= limit and not (
        non_system and isinstance(non_system[0], ToolResponseMessage)
    ):
        assert kept == messages


async def test_memory_appends_and_trims_to_the_window() -> None:
    memory = MessageWindowChatMemory(max_messages=3)
    assert memory.max_messages == 3
    await memory.add("c", [user(1), answer(1)])
    await memory.add("c", [user(2), answer(2)])
    assert await memory.get("c") == [answer(1), user(2), answer(2)]
    assert await memory.repository.find_by_conversation_id("c") == [answer(1), user(2), answer(2)]
    await memory.add("c", [])
    await memory.clear("c")
    assert await memory.get("c") == []


def test_the_default_window_is_twenty() -> None:
    assert MessageWindowChatMemory().max_messages == DEFAULT_MAX_MESSAGES == 20
    with pytest.raises(ValueError, match="max_messages"):
        MessageWindowChatMemory(max_messages=0)


async def test_a_new_system_message_replaces_the_stored_ones() -> None:
    memory = MessageWindowChatMemory()
    await memory.add("c", [SYS, user(1)])
    await memory.add("c", [SystemMessage(text="new rules")])
    assert await memory.get("c") == [user(1), SystemMessage(text="new rules")]


class SlowRepository(InMemoryChatMemoryRepository):
    """Yields to the event loop between reading and writing, so lost updates would show."""

    async def find_by_conversation_id(self, conversation_id: str) -> list[Message]:
        found = await super().find_by_conversation_id(conversation_id)
        await asyncio.sleep(0)
        return found


async def test_concurrent_appends_to_one_conversation_are_not_lost() -> None:
    memory = MessageWindowChatMemory(SlowRepository(), max_messages=100)
    await asyncio.gather(*(memory.add("c", [user(n)]) for n in range(20)))
    await asyncio.gather(*(memory.add(f"other-{n}", [user(n)]) for n in range(5)))
    assert sorted(m.text for m in await memory.get("c")) == sorted(f"u{n}" for n in range(20))  # type: ignore[union-attr]
    assert await memory.repository.find_conversation_ids() == [
        "c",
        *(f"other-{n}" for n in range(5)),
    ]


class AppendingRepository(InMemoryChatMemoryRepository):
    """An in-memory repository with an atomic append, recording how it is used."""

    def __init__(self) -> None:
        super().__init__()
        self.appends: list[tuple[str, int, int | None]] = []
        self.saves = 0

    async def save_all(self, conversation_id: str, messages: Sequence[Message]) -> None:
        self.saves += 1
        await super().save_all(conversation_id, messages)

    async def append(
        self, conversation_id: str, messages: Sequence[Message], *, keep_last: int | None = None
    ) -> int:
        self.appends.append((conversation_id, len(messages), keep_last))
        stored = [*await self.find_by_conversation_id(conversation_id), *messages]
        await super().save_all(conversation_id, stored[-keep_last:] if keep_last else stored)
        return len(stored)


async def test_an_appending_repository_is_appended_to_not_rewritten() -> None:
    repository = AppendingRepository()
    memory = MessageWindowChatMemory(repository, max_messages=2)
    await memory.add("c1", [UserMessage(text="1"), AssistantMessage(text="2")])
    await memory.add("c1", [UserMessage(text="3")])
    assert repository.appends == [("c1", 2, 2 * STORED_WINDOWS), ("c1", 1, 2 * STORED_WINDOWS)]
    assert repository.saves == 0
    assert await memory.get("c1") == [AssistantMessage(text="2"), UserMessage(text="3")]
    # a new system message replaces the stored ones: read, trim and save, as before
    await memory.add("c1", [SystemMessage(text="be brief")])
    assert repository.saves == 1
    assert await memory.get("c1") == [UserMessage(text="3"), SystemMessage(text="be brief")]
