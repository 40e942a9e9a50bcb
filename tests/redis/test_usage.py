"""RedisUsageLog: the usage log's contract in Redis, shared by workers, safe to repeat."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from redis import exceptions as redis_errors
from redis.asyncio import Redis

from tests.redis_servers import RedisServer
from tests.search.test_usage import MakeLog, UsageLogContract, entry
from toolrelay.exceptions import ConfigurationError, StorageUnavailableError
from toolrelay.redis import RedisUsageLog
from toolrelay.search._usage import UsageLog


class TestRedisUsageLog(UsageLogContract):
    @pytest.fixture
    async def make(self, redis_url: str, prefix: str) -> AsyncIterator[MakeLog]:
        made: list[RedisUsageLog] = []

        def build(**bounds: Any) -> UsageLog:
            made.append(RedisUsageLog(redis_url, prefix=prefix, **bounds))
            return made[-1]

        yield build
        for log in made:
            await log.aclose()


@pytest.fixture
async def workers(redis_url: str, prefix: str) -> AsyncIterator[Callable[..., RedisUsageLog]]:
    """Builds logs on the same server and prefix, as separate workers do."""
    made: list[RedisUsageLog] = []

    def build(**bounds: Any) -> RedisUsageLog:
        made.append(RedisUsageLog(redis_url, prefix=prefix, **bounds))
        return made[-1]

    yield build
    for log in made:
        await log.aclose()


async def test_two_workers_see_and_add_to_each_others_records(
    workers: Callable[..., RedisUsageLog],
) -> None:
    first, second = workers(), workers()
    await asyncio.gather(
        *(
            (first if i % 2 else second).record([entry("money back", "refund", "acme", ago=i + 1)])
            for i in range(20)
        )
    )
    await second.record([entry("track it", "track", "acme")])
    assert [(e.query, e.count) for e in await first.entries("acme")] == [
        ("track it", 1),
        ("money back", 20),
    ]
    assert (await first.entries("acme"))[1].last_used == (await second.entries("acme"))[1].last_used


async def test_eviction_under_a_small_max_entries_covers_every_workers_entries(
    workers: Callable[..., RedisUsageLog],
) -> None:
    first, second = workers(max_entries=3), workers(max_entries=3)
    await first.record([entry(f"q{i}", "t", "acme", ago=100 - i) for i in range(0, 10, 2)])
    await second.record([entry(f"q{i}", "t", "globex", ago=100 - i) for i in range(1, 10, 2)])
    assert [e.query for e in await first.entries(None)] == ["q9", "q8", "q7"]
    assert [e.query for e in await second.entries("acme")] == ["q8"]
    await first.record([entry("q0", "t", "acme")])
    assert [e.query for e in await second.entries(None)] == ["q0", "q9", "q8"]


class _LosesOneReply(Redis):
    """A client whose next script runs on the server while its reply is lost."""

    lose_next = False

    async def evalsha(self, *args: Any, **kwargs: Any) -> Any:
        reply = await super().evalsha(*args, **kwargs)
        if self.lose_next:
            self.lose_next = False
            raise redis_errors.ConnectionError("connection lost before the reply")
        return reply


async def test_a_record_repeated_after_a_lost_reply_is_counted_once(
    redis_url: str, prefix: str
) -> None:
    client = _LosesOneReply.from_url(redis_url)
    log = RedisUsageLog(client, prefix=prefix)
    try:
        await log.record([entry("money back", "refund", "acme")])
        client.lose_next = True
        await log.record([entry("money back", "refund", "acme", count=2)])
        assert not client.lose_next  # the reply was lost and the record sent again
        assert [e.count for e in await log.entries("acme")] == [3]
    finally:
        await client.aclose()


async def test_a_restarted_redis_is_used_again_by_the_same_log(
    redis_servers: Callable[..., RedisServer],
) -> None:
    server = redis_servers("--appendonly", "yes")
    async with RedisUsageLog(server.url, timeout=5) as log:
        await log.record([entry("money back", "refund", ago=1)])
        server.stop()
        server.start()
        await log.record([entry("money back", "refund")])
        assert [e.count for e in await log.entries("")] == [2]


async def test_unreachable_redis_is_a_clear_error(free_port: int) -> None:
    log = RedisUsageLog(f"redis://127.0.0.1:{free_port}/0", timeout=1)
    with pytest.raises(StorageUnavailableError, match="usage log"):
        await log.entries("acme")
    await log.aclose()


def test_bad_settings_and_repr(redis_url: str) -> None:
    with pytest.raises(ConfigurationError, match="timeout"):
        RedisUsageLog(redis_url, timeout=0)
    log = RedisUsageLog("redis://user:secret@localhost:6379/0", max_entries=50)
    assert "secret" not in repr(log)
    assert "localhost:6379/0" in repr(log)
    assert "max_entries=50" in repr(log)


async def test_evicted_expired_and_dropped_entries_leave_nothing_in_redis(
    workers: Callable[..., RedisUsageLog], redis_url: str, prefix: str
) -> None:
    log = workers(max_entries=3, max_age=60)
    await log.record([entry(f"q{i}", f"t{i % 2}", f"s{i % 4}", ago=50 - i) for i in range(10)])
    await log.record([entry("stale", "t0", "s9", ago=120)])  # evicted at once: the oldest
    raw = Redis.from_url(redis_url)
    try:
        stem = f"{prefix}usage:"
        for column in ("scope", "query", "tool", "count"):
            assert await raw.hlen(f"{stem}{column}") == 3
        assert await raw.zcard(f"{stem}recent") == 3
        per_scope = [key async for key in raw.scan_iter(match=f"{stem}in:*")]
        assert sum([await raw.zcard(key) for key in per_scope]) == 3
        await raw.zadd(f"{stem}recent", {(await raw.zrange(f"{stem}recent", 0, 0))[0]: 1.0})
        assert len(await log.entries(None)) == 2  # the one made old expired on read
        assert await raw.hlen(f"{stem}query") == 2
        assert await log.retain({"t0"}) + await log.retain(set()) == 2
        assert [key async for key in raw.scan_iter(match=f"{prefix}*")] == [
            f"{stem}batches".encode()
        ]
    finally:
        await raw.aclose()
