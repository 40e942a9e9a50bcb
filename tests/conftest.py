"""Settings and server fixtures shared by the whole test suite.

Tests that need Redis take the ``redis_url`` fixture (and ``prefix`` for their keys): it skips
unless TOOLRELAY_TEST_REDIS_URL names a server (.ci/services.sh starts one). Tests that count
a server's clients, kill or restart it take ``redis_servers`` and start servers of their own
(TOOLRELAY_TEST_REDIS_SERVER names the binary).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from tests.redis_servers import RedisServer, redis_binary, start_redis

# skip_policy: the needs_key marker and --no-skips; pytester: for the tests of skip_policy.
pytest_plugins = ["tests.skip_policy", "pytester"]

# Property tests check behaviour, never speed: no per-example deadline, so a busy CI machine
# cannot turn a slow example into a failure. HYPOTHESIS_PROFILE=thorough runs more examples.
settings.register_profile("default", deadline=None)
settings.register_profile("thorough", deadline=None, max_examples=1000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


REDIS_URL = os.environ.get("TOOLRELAY_TEST_REDIS_URL")


@pytest.fixture
def redis_url() -> str:
    pytest.importorskip(
        "redis.asyncio", reason="needs the redis extra: pip install 'toolrelay[redis]'"
    )
    if not REDIS_URL:
        pytest.skip("set TOOLRELAY_TEST_REDIS_URL to a Redis server (.ci/services.sh starts one)")
    return REDIS_URL


@pytest.fixture
async def prefix(redis_url: str) -> AsyncIterator[str]:
    """A key prefix of the test's own; its keys are deleted afterwards."""
    from redis.asyncio import Redis

    value = f"toolrelay-test:{uuid.uuid4().hex}:"
    yield value
    client = Redis.from_url(redis_url)
    try:
        keys = [key async for key in client.scan_iter(match=f"{value}*", count=1000)]
        for start in range(0, len(keys), 1000):
            await client.delete(*keys[start : start + 1000])
    finally:
        await client.aclose()


@pytest.fixture
def redis_servers(tmp_path: Path) -> Iterator[Callable[..., RedisServer]]:
    """Starts private redis-servers: ``redis_servers("--appendonly", "yes")``; all are
    killed at the end of the test."""
    binary = redis_binary()
    if not binary:
        pytest.skip("needs a redis-server binary (TOOLRELAY_TEST_REDIS_SERVER or on PATH)")
    started: list[RedisServer] = []

    def start(*settings: str) -> RedisServer:
        server = start_redis(binary, tmp_path, *settings)
        started.append(server)
        return server

    yield start
    for server in started:
        if server.process is not None and server.process.poll() is None:
            server.kill()
