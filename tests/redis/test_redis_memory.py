"""RedisChatMemoryRepository: exact round trips, replace, atomic appends, windows, expiry."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from toolrelay.exceptions import ConfigurationError, StorageError, StorageUnavailableError
from toolrelay.memory import ChatMemoryRepository, MessageWindowChatMemory
from toolrelay.memory._window import STORED_WINDOWS
from toolrelay.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    UserMessage,
)
from toolrelay.redis import RedisChatMemoryRepository
from toolrelay.redis._memory import PRUNE_BATCH
from toolrelay.testing import every_message_kind

EVERY_KIND = every_message_kind()


@pytest.fixture
async def repo(redis_url: str, prefix: str) -> AsyncIterator[RedisChatMemoryRepository]:
    async with RedisChatMemoryRepository(redis_url, prefix=prefix) as value:
        yield value


def test_it_is_a_chat_memory_repository(redis_url: str) -> None:
    assert isinstance(RedisChatMemoryRepository(redis_url), ChatMemoryRepository)


async def test_every_message_kind_round_trips(repo: RedisChatMemoryRepository) -> None:
    await repo.save_all("c1", EVERY_KIND)
    assert await repo.find_by_conversation_id("c1") == EVERY_KIND
    assert await repo.find_by_conversation_id("unknown") == []


async def test_save_all_replaces_and_an_empty_save_forgets(
    repo: RedisChatMemoryRepository,
) -> None:
    await repo.save_all("c1", EVERY_KIND)
    await repo.save_all("c1", [UserMessage(text="only")])
    assert await repo.find_by_conversation_id("c1") == [UserMessage(text="only")]
    await repo.save_all("c1", [])
    assert await repo.find_by_conversation_id("c1") == []
    assert await repo.find_conversation_ids() == []


async def test_conversation_ids_are_sorted_and_deletes_forget(
    repo: RedisChatMemoryRepository,
) -> None:
    for cid in ["b", "ä", "a", "B"]:
        await repo.save_all(cid, [UserMessage(text=cid)])
    assert await repo.find_conversation_ids() == sorted(["b", "ä", "a", "B"])
    await repo.delete_by_conversation_id("a")
    await repo.delete_by_conversation_id("never")
    assert await repo.find_conversation_ids() == sorted(["b", "ä", "B"])


async def test_conversation_ids_utf8_cannot_encode_are_kept_exactly(
    repo: RedisChatMemoryRepository,
) -> None:
    half, other = "c-\ud83d", "c-\ude00"  # lone surrogates: UTF-8 cannot encode them
    await repo.save_all(half, EVERY_KIND)
    assert await repo.append(other, EVERY_KIND[:2], keep_last=1) == 1
    assert await repo.find_conversation_ids() == sorted([half, other])
    assert await repo.find_by_conversation_id(half) == EVERY_KIND
    assert await repo.find_last(other, 5) == EVERY_KIND[1:2]
    await repo.delete_by_conversation_id(half)
    assert await repo.find_conversation_ids() == [other]


async def test_long_conversations_are_saved_whole(repo: RedisChatMemoryRepository) -> None:
    messages: list[Message] = [UserMessage(text=f"m{i}") for i in range(2500)]
    await repo.save_all("c1", messages)
    assert await repo.find_by_conversation_id("c1") == messages
    assert await repo.append("c1", messages) == 5000


async def test_append_and_window_queries(repo: RedisChatMemoryRepository) -> None:
    assert await repo.append("c1", EVERY_KIND[:2]) == 2
    assert await repo.append("c1", EVERY_KIND[2:]) == len(EVERY_KIND)
    assert await repo.append("c1", []) == len(EVERY_KIND)
    assert await repo.find_by_conversation_id("c1") == EVERY_KIND
    assert await repo.find_last("c1", 2) == EVERY_KIND[-2:]
    assert await repo.find_last("c1", 100) == EVERY_KIND
    assert await repo.find_last("c1", 0) == []
    assert await repo.count("c1") == len(EVERY_KIND)
    assert await repo.find_conversation_ids() == ["c1"]


async def test_append_can_keep_only_the_last_messages(repo: RedisChatMemoryRepository) -> None:
    for i in range(10):
        await repo.append("c1", [UserMessage(text=str(i))], keep_last=3)
    assert await repo.find_by_conversation_id("c1") == [UserMessage(text=t) for t in "789"]
    with pytest.raises(ConfigurationError):
        await repo.append("c1", [UserMessage(text="x")], keep_last=0)


async def test_concurrent_appends_keep_every_batch_whole_and_in_order(
    redis_url: str, prefix: str
) -> None:
    repos = [RedisChatMemoryRepository(redis_url, prefix=prefix) for _ in range(4)]

    async def writer(w: int) -> None:
        for turn in range(10):
            batch: list[Message] = [
                UserMessage(text=f"w{w}-t{turn}-q"),
                AssistantMessage(text=f"w{w}-t{turn}-a"),
            ]
            await repos[w % 4].append("shared", batch)

    await asyncio.gather(*(writer(w) for w in range(8)))
    texts = [getattr(m, "text", None) for m in await repos[0].find_by_conversation_id("shared")]
    assert len(texts) == 8 * 10 * 2
    for position in range(0, len(texts), 2):
        question, answer = texts[position], texts[position + 1]
        assert question is not None
        assert answer == question[:-1] + "a"  # batches stay whole
    for w in range(8):
        own = [t for t in texts if t is not None and t.startswith(f"w{w}-")]
        assert own == [f"w{w}-t{t}-{k}" for t in range(10) for k in "qa"]
    for r in repos:
        await r.aclose()


async def test_the_message_window_memory_runs_on_it(repo: RedisChatMemoryRepository) -> None:
    memory = MessageWindowChatMemory(repo, max_messages=3)
    await memory.add("c1", [SystemMessage(text="sys"), UserMessage(text="1")])
    await memory.add("c1", [AssistantMessage(text="2"), UserMessage(text="3")])
    assert await memory.get("c1") == [
        SystemMessage(text="sys"),
        AssistantMessage(text="2"),
        UserMessage(text="3"),
    ]
    await memory.clear("c1")
    assert await repo.find_by_conversation_id("c1") == []


async def test_window_memories_of_several_workers_lose_no_message(
    redis_url: str, prefix: str
) -> None:
    repos = [RedisChatMemoryRepository(redis_url, prefix=prefix) for _ in range(4)]
    # one memory per worker: their in-process locks cannot see each other
    memories = [MessageWindowChatMemory(r, max_messages=100) for r in repos]

    async def turn(worker: int, n: int) -> None:
        memory = memories[worker]
        await memory.add("shared", [UserMessage(text=f"w{worker}-{n}-q")])
        await memory.add("shared", [AssistantMessage(text=f"w{worker}-{n}-a")])

    await asyncio.gather(*(turn(w, n) for w in range(4) for n in range(10)))
    texts = {getattr(m, "text", None) for m in await memories[0].get("shared")}
    assert len(texts) == 80  # a read-trim-save from each worker would overwrite the others
    for r in repos:
        await r.aclose()


async def test_appending_keeps_a_bounded_store_and_a_whole_window(
    repo: RedisChatMemoryRepository,
) -> None:
    memory = MessageWindowChatMemory(repo, max_messages=3)
    for n in range(20):
        await memory.add("c1", [UserMessage(text=f"q{n}"), AssistantMessage(text=f"a{n}")])
    assert await repo.count("c1") == 3 * STORED_WINDOWS
    assert [getattr(m, "text", None) for m in await memory.get("c1")] == ["a18", "q19", "a19"]


async def test_ttl_expires_conversations_and_their_ids(redis_url: str, prefix: str) -> None:
    raw = Redis.from_url(redis_url)
    async with (
        RedisChatMemoryRepository(redis_url, prefix=prefix, ttl=0.5) as brief,
        RedisChatMemoryRepository(redis_url, prefix=prefix, ttl=60) as lasting,
        RedisChatMemoryRepository(redis_url, prefix=prefix) as forever,
    ):
        await brief.append("gone", [UserMessage(text="x")])
        await brief.save_all("saved", [UserMessage(text="y")])
        await lasting.append("kept", [UserMessage(text="z")])
        await forever.save_all("always", [UserMessage(text="w")])
        assert 0 < await raw.pttl(brief.key_of("gone")) <= 500
        assert 0 < await raw.pttl(lasting.key_of("kept")) <= 60_000
        assert await raw.pttl(forever.key_of("always")) == -1
        assert await brief.find_conversation_ids() == ["always", "gone", "kept", "saved"]
        await asyncio.sleep(0.6)
        assert await brief.find_by_conversation_id("gone") == []
        assert await brief.find_conversation_ids() == ["always", "kept"]
        # The listing removed the expired ids: nothing of those conversations is left.
        assert await raw.zrange(brief._ids_key, 0, -1) == [b"kept", b"always"]
        assert sorted(await raw.keys(f"{prefix}*")) == sorted(
            [
                brief._ids_key.encode(),
                lasting.key_of("kept").encode(),
                f"{prefix}memory-batches:kept".encode(),
                forever.key_of("always").encode(),
            ]
        )
    await raw.aclose()


async def test_a_write_without_ttl_keeps_a_conversation_until_deleted(
    redis_url: str, prefix: str
) -> None:
    raw = Redis.from_url(redis_url)
    async with (
        RedisChatMemoryRepository(redis_url, prefix=prefix, ttl=60) as lasting,
        RedisChatMemoryRepository(redis_url, prefix=prefix) as forever,
    ):
        await lasting.append("c1", [UserMessage(text="x")])
        await forever.append("c1", [UserMessage(text="y")])
        assert await raw.pttl(forever.key_of("c1")) == -1
        assert await raw.zscore(forever._ids_key, "c1") == float("inf")
    await raw.aclose()


async def test_pruning_expired_ids_is_bounded_per_call(redis_url: str, prefix: str) -> None:
    raw = Redis.from_url(redis_url)
    expired = 2 * PRUNE_BATCH + 50
    async with (
        RedisChatMemoryRepository(redis_url, prefix=prefix, ttl=1) as brief,
        RedisChatMemoryRepository(redis_url, prefix=prefix, ttl=60) as lasting,
    ):
        await asyncio.gather(
            *(brief.append(f"c{n}", [UserMessage(text="x")]) for n in range(expired))
        )
        ids = brief._ids_key
        assert await raw.zcard(ids) == expired
        await asyncio.sleep(1.1)  # every one of them expires at once
        # Each call removes at most one batch of expired ids, however many there are.
        await lasting.append("live", [UserMessage(text="y")])
        assert await raw.zcard(ids) == expired - PRUNE_BATCH + 1
        assert await lasting.find_conversation_ids() == ["live"]
        assert await raw.zcard(ids) == expired - 2 * PRUNE_BATCH + 1
        await lasting.delete_by_conversation_id("never")
        assert await raw.zcard(ids) == 1
        assert await raw.zrange(ids, 0, -1) == [b"live"]
    await raw.aclose()


async def test_foreign_data_is_a_storage_error(
    repo: RedisChatMemoryRepository, redis_url: str
) -> None:
    raw = Redis.from_url(redis_url)
    await raw.rpush(repo.key_of("c1"), '{"role": "wizard"}')
    await raw.aclose()
    with pytest.raises(StorageError, match="c1"):
        await repo.find_by_conversation_id("c1")


async def test_unreachable_redis_is_a_clear_error(free_port: int) -> None:
    repo = RedisChatMemoryRepository(f"redis://127.0.0.1:{free_port}/0", timeout=1)
    with pytest.raises(StorageUnavailableError, match="chat memory"):
        await repo.append("c1", [UserMessage(text="x")])
    await repo.aclose()


async def test_a_conversation_may_be_called_ids(repo: RedisChatMemoryRepository) -> None:
    await repo.save_all("ids", [UserMessage(text="x")])
    await repo.append("other", [UserMessage(text="y")])
    assert await repo.find_conversation_ids() == ["ids", "other"]
    assert await repo.find_by_conversation_id("ids") == [UserMessage(text="x")]
