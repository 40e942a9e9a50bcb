"""What each Redis persistence mode keeps of recorded results across a restart, and the store's
check: it refuses a server whose restart would forget executed operations."""

from __future__ import annotations

import logging
from collections.abc import Callable

import pytest

from tests.redis_servers import RedisServer
from toolrelay.exceptions import ConfigurationError
from toolrelay.execution import ReservationStatus
from toolrelay.redis import RedisIdempotencyStore
from toolrelay.redis._persistence import RedisPersistence

MODES = {
    "none": [],
    "rdb": ["--save", "3600 1"],
    "aof everysec": ["--appendonly", "yes", "--appendfsync", "everysec"],
    "aof always": ["--appendonly", "yes", "--appendfsync", "always"],
}


async def record(server: RedisServer, key: str) -> None:
    async with RedisIdempotencyStore(server.url, require_durable=False) as store:
        assert (await store.reserve(key, owner="w1", lease=60)).status is ReservationStatus.ACQUIRED
        await store.complete(key, owner="w1", result=f"refunded {key}")


async def remembered(server: RedisServer, key: str) -> bool:
    async with RedisIdempotencyStore(server.url, require_durable=False) as store:
        reservation = await store.reserve(key, owner="w2", lease=60)
        return reservation.status is ReservationStatus.COMPLETED


@pytest.mark.parametrize(
    ("mode", "durable", "after_crash", "after_shutdown"),
    [
        ("none", False, False, False),
        ("rdb", False, False, True),  # a clean shutdown saves a snapshot; a crash does not
        ("aof everysec", True, True, True),
        ("aof always", True, True, True),
    ],
)
async def test_what_each_mode_keeps_across_a_restart(
    redis_servers: Callable[..., RedisServer],
    mode: str,
    durable: bool,
    after_crash: bool,
    after_shutdown: bool,
) -> None:
    server = redis_servers(*MODES[mode])
    store = RedisIdempotencyStore(server.url)
    persistence = await store.persistence()
    assert persistence.mode == mode
    assert persistence.keeps_acknowledged_writes is durable
    if durable:
        assert await store.check_durability() == persistence
    else:
        with pytest.raises(ConfigurationError, match="restart would forget executed operations"):
            await store.reserve("refund:r-0", owner="w1", lease=60)
    await store.aclose()

    await record(server, "refund:r-1")
    server.kill()  # SIGKILL: a crash of Redis, no shutdown
    server.start()
    assert await remembered(server, "refund:r-1") is after_crash

    await record(server, "refund:r-2")
    server.stop()  # SIGTERM: a clean shutdown
    server.start()
    assert await remembered(server, "refund:r-2") is after_shutdown


async def test_a_volatile_server_is_refused_before_anything_is_reserved(
    redis_servers: Callable[..., RedisServer],
) -> None:
    server = redis_servers()
    async with RedisIdempotencyStore(server.url) as store:
        with pytest.raises(ConfigurationError, match="require_durable=False"):
            await store.reserve("refund:r-1", owner="w1", lease=60)
        with pytest.raises(ConfigurationError, match="persistence: none"):
            await store.reserve("refund:r-1", owner="w1", lease=60)  # asked again, refused again
    async with RedisIdempotencyStore(server.url, require_durable=False) as accepting:
        # Nothing was reserved by the refused attempts.
        assert (await accepting.reserve("refund:r-1", owner="w2", lease=60)).status is (
            ReservationStatus.ACQUIRED
        )


async def test_accepting_a_volatile_server_is_logged(
    redis_servers: Callable[..., RedisServer], caplog: pytest.LogCaptureFixture
) -> None:
    server = redis_servers()
    with caplog.at_level(logging.WARNING, logger="toolrelay.redis"):
        async with RedisIdempotencyStore(server.url, require_durable=False) as store:
            await store.reserve("k1", owner="w1", lease=60)
            await store.reserve("k2", owner="w1", lease=60)
    warnings = [r.getMessage() for r in caplog.records if r.name == "toolrelay.redis"]
    assert len(warnings) == 1  # once per store, not per call
    assert "keeps no append-only file (persistence: none)" in warnings[0]


def test_modes_are_named_from_what_the_server_says() -> None:
    assert RedisPersistence(append_only=True).mode == "aof"
    assert RedisPersistence(append_only=False).mode == "rdb or none"
    assert RedisPersistence(append_only=None).mode == "unknown"
    assert not RedisPersistence(append_only=None).keeps_acknowledged_writes
