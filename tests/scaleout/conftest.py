"""Servers for the scale-out tests (see .ci/services.sh); without them the tests skip."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Iterator

import pytest

REDIS_URL = os.environ.get("TOOLRELAY_TEST_REDIS_URL")
POSTGRES_DSN = os.environ.get("TOOLRELAY_TEST_POSTGRES_DSN")


@pytest.fixture
def redis_url() -> str:
    pytest.importorskip("redis", reason="needs the redis extra: pip install 'toolrelay[redis]'")
    if not REDIS_URL:
        pytest.skip("set TOOLRELAY_TEST_REDIS_URL to a Redis server (.ci/services.sh starts one)")
    return REDIS_URL


@pytest.fixture
async def prefix(redis_url: str) -> AsyncIterator[str]:
    from redis.asyncio import Redis

    value = f"toolrelay-scaleout:{uuid.uuid4().hex}:"
    yield value
    client = Redis.from_url(redis_url)
    try:
        keys = [key async for key in client.scan_iter(match=f"{value}*", count=1000)]
        for start in range(0, len(keys), 1000):
            await client.delete(*keys[start : start + 1000])
    finally:
        await client.aclose()


@pytest.fixture
def postgres_schema() -> Iterator[tuple[str | None, str]]:
    """(DSN or None, schema): the load test uses the shared PostgreSQL index when it can."""
    name = f"s_{uuid.uuid4().hex[:16]}"
    if not POSTGRES_DSN:
        yield None, name
        return
    psycopg = pytest.importorskip("psycopg")
    yield POSTGRES_DSN, name
    with psycopg.connect(POSTGRES_DSN, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")
