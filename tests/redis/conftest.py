"""A Redis server for the tests of toolrelay.redis, from TOOLRELAY_TEST_REDIS_URL.

.ci/services.sh starts one and sets the variable; without it these tests skip. Each test
gets its own key prefix, and its keys are deleted afterwards.

(This folder has no ``__init__.py`` on purpose: as a package it would be importable as
``redis`` and hide the Redis client library.)
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator

import pytest

pytest.importorskip("redis", reason="needs the redis extra: pip install 'toolrelay[redis]'")

REDIS_URL = os.environ.get("TOOLRELAY_TEST_REDIS_URL")


@pytest.fixture
def redis_url() -> str:
    if not REDIS_URL:
        pytest.skip("set TOOLRELAY_TEST_REDIS_URL to a Redis server (.ci/services.sh starts one)")
    return REDIS_URL


@pytest.fixture
async def prefix(redis_url: str) -> AsyncIterator[str]:
    from redis.asyncio import Redis

    value = f"toolrelay-test:{uuid.uuid4().hex}:"
    yield value
    client = Redis.from_url(redis_url)
    try:
        keys = [key async for key in client.scan_iter(match=f"{value}*")]
        if keys:
            await client.delete(*keys)
    finally:
        await client.aclose()


@pytest.fixture
def free_port() -> int:
    """A loopback port nothing listens on."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
