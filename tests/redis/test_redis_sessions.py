"""RedisSessionStore: discovered tools per conversation, ordered, atomic, expiring."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from toolrelay._sync import run_sync
from toolrelay.exceptions import ConfigurationError, StorageUnavailableError
from toolrelay.redis import RedisSessionStore
from toolrelay.toolsearch import SessionStore, StoredTools


async def names(store: RedisSessionStore, key: str) -> tuple[str, ...]:
    return (await store.get(key)).names


@pytest.fixture
async def store(redis_url: str, prefix: str) -> AsyncIterator[RedisSessionStore]:
    async with RedisSessionStore(redis_url, prefix=prefix) as value:
        yield value


def test_it_is_a_session_store(redis_url: str) -> None:
    assert isinstance(RedisSessionStore(redis_url), SessionStore)


async def test_unknown_conversation_is_empty(store: RedisSessionStore, redis_url: str) -> None:
    assert await store.get("nobody") == StoredTools()
    assert await store.add("nobody", []) == StoredTools()
    raw = Redis.from_url(redis_url)
    assert await raw.exists(store.key_of("nobody")) == 0
    await raw.aclose()


async def test_add_appends_new_names_in_order(store: RedisSessionStore) -> None:
    assert (await store.add("c1", ["b", "a", "b"])).names == ("b", "a")
    assert (await store.add("c1", ["c", "a", "d"])).names == ("b", "a", "c", "d")
    assert await names(store, "c1") == ("b", "a", "c", "d")
    assert await names(store, "c2") == ()


async def test_replace_and_delete(store: RedisSessionStore) -> None:
    await store.add("c1", ["a", "b"])
    await store.replace("c1", ["z", "y", "z"])
    assert await names(store, "c1") == ("z", "y")
    assert (await store.add("c1", ["x"])).names == ("z", "y", "x")  # appended after a replace
    await store.replace("c1", [])
    assert await names(store, "c1") == ()
    await store.add("c1", ["a"])
    await store.delete("c1")
    await store.delete("never-there")
    assert await names(store, "c1") == ()


async def test_pinned_tools_are_kept_once_in_the_conversations_one_key(
    store: RedisSessionStore, redis_url: str
) -> None:
    assert (await store.get("c1")).pinned is None
    assert await store.pin("c1", ["p", "q", "p"]) == StoredTools(pinned=("p", "q"))
    # A concurrent first turn pinning its own keeps the first: every worker lists the same.
    assert await store.pin("c1", ["r"]) == StoredTools(pinned=("p", "q"))
    assert await store.add("c1", ["a", "p"], used=["a"]) == StoredTools(
        names=("a", "p"), used=frozenset({"a"}), pinned=("p", "q")
    )
    await store.replace("c1", ["p"])
    assert await store.get("c1") == StoredTools(
        names=("p",), used=frozenset({"a"}), pinned=("p", "q")
    )
    raw = Redis.from_url(redis_url)
    assert await raw.keys(f"{store.prefix}*") == [store.key_of("c1").encode()]
    await store.delete("c1")
    assert await store.get("c1") == StoredTools()
    # Pinning nothing is a value too, and the only member left keeps the key.
    assert await store.pin("c2", []) == StoredTools(pinned=())
    await store.replace("c2", [])
    assert await store.pin("c2", ["p"]) == StoredTools(pinned=())
    await raw.aclose()


async def test_used_tools_live_in_the_conversations_one_key(
    store: RedisSessionStore, redis_url: str
) -> None:
    assert await store.add("c1", ["a", "b"], used=["a"]) == StoredTools(
        names=("a", "b"), used=frozenset({"a"})
    )
    assert await store.add("c1", ["c"], used=["b", "a"]) == StoredTools(
        names=("a", "b", "c"), used=frozenset({"a", "b"})
    )
    await store.replace("c1", ["c", "a"])
    assert await store.get("c1") == StoredTools(names=("c", "a"), used=frozenset({"a", "b"}))
    assert (await store.add("c1", ["d"])).names == ("c", "a", "d")
    await store.replace("c1", [])
    assert await store.get("c1") == StoredTools(used=frozenset({"a", "b"}))
    raw = Redis.from_url(redis_url)
    assert await raw.keys(f"{store.prefix}*") == [store.key_of("c1").encode()]
    await store.delete("c1")
    assert await store.get("c1") == StoredTools()
    assert await raw.keys(f"{store.prefix}*") == []
    await raw.aclose()


async def test_unicode_and_many_names_round_trip(store: RedisSessionStore) -> None:
    many = [f"svc.tool_{i}_ü" for i in range(2500)]
    await store.replace("c1", many)
    assert await names(store, "c1") == tuple(many)
    assert (await store.add("c1", used=many)).used == set(many)


async def test_keys_and_names_utf8_cannot_encode_are_kept_exactly(
    store: RedisSessionStore,
) -> None:
    half, other = "c-\ud83d", "c-\ude00"  # lone surrogates: UTF-8 cannot encode them
    assert (await store.add(half, ["a\ud83d", "b", "a\ud83d"])).names == ("a\ud83d", "b")
    await store.replace(other, ["z\ude00"])
    await store.add(other, used=["z\ude00"])
    assert await names(store, half) == ("a\ud83d", "b")
    assert await store.get(other) == StoredTools(names=("z\ude00",), used=frozenset({"z\ude00"}))
    await store.delete(half)
    assert await names(store, half) == ()


async def test_concurrent_adds_keep_every_name_once_in_each_adders_order(
    redis_url: str, prefix: str
) -> None:
    stores = [RedisSessionStore(redis_url, prefix=prefix) for _ in range(4)]
    batches = [[f"t{i}", "shared", f"u{i}"] for i in range(40)]
    await asyncio.gather(*(stores[i % 4].add("c1", batch) for i, batch in enumerate(batches)))
    stored = await names(stores[0], "c1")
    assert sorted(stored) == sorted({n for batch in batches for n in batch})
    for i in range(40):
        assert stored.index(f"t{i}") < stored.index(f"u{i}")
    for s in stores:
        await s.aclose()


async def test_ttl_is_set_renewed_by_reads_and_expires(redis_url: str, prefix: str) -> None:
    store = RedisSessionStore(redis_url, prefix=prefix, ttl=60)
    raw = Redis.from_url(redis_url)
    try:
        await store.add("c1", ["a"])
        assert 0 < await raw.pttl(store.key_of("c1")) <= 60_000
        await raw.pexpire(store.key_of("c1"), 5_000)
        assert await names(store, "c1") == ("a",)
        assert await raw.pttl(store.key_of("c1")) > 5_000  # the read renewed it
        await raw.pexpire(store.key_of("c1"), 5_000)
        await store.add("c1", used=["a"])
        assert await raw.pttl(store.key_of("c1")) > 5_000  # so did adding a used tool
        await raw.pexpire(store.key_of("c1"), 5_000)
        await store.replace("c1", ["b"])
        assert await raw.pttl(store.key_of("c1")) > 5_000  # and a replace
        await raw.pexpire(store.key_of("c1"), 5_000)
        await store.pin("c1", ["p"])
        assert await raw.pttl(store.key_of("c1")) > 5_000  # and a pin
        await raw.pexpire(store.key_of("c1"), 1)
        await asyncio.sleep(0.05)
        # Names, used and pinned tools expired together.
        assert await store.get("c1") == StoredTools()
    finally:
        await raw.aclose()
        await store.aclose()


async def test_without_ttl_nothing_expires(store: RedisSessionStore, redis_url: str) -> None:
    await store.add("c1", ["a"])
    raw = Redis.from_url(redis_url)
    assert await raw.pttl(store.key_of("c1")) == -1
    await raw.aclose()


def test_bad_settings_are_rejected(redis_url: str) -> None:
    with pytest.raises(ConfigurationError):
        RedisSessionStore(redis_url, ttl=0)
    with pytest.raises(ConfigurationError):
        RedisSessionStore(redis_url, timeout=0)


def test_works_from_several_event_loops(redis_url: str, prefix: str) -> None:
    store = RedisSessionStore(redis_url, prefix=prefix)

    async def add(name: str) -> tuple[str, ...]:
        try:
            return (await store.add("c1", [name])).names
        finally:
            await store.aclose()

    assert run_sync(add("a")) == ("a",)
    assert run_sync(add("b")) == ("a", "b")


def test_repr_hides_credentials() -> None:
    store = RedisSessionStore("redis://user:secret@localhost:6379/0")
    assert "secret" not in repr(store)
    assert "localhost:6379/0" in repr(store)


async def test_unreachable_redis_is_a_clear_error(free_port: int) -> None:
    store = RedisSessionStore(f"redis://127.0.0.1:{free_port}/0", timeout=1)
    with pytest.raises(StorageUnavailableError, match="session store"):
        await store.get("c1")
    await store.aclose()
