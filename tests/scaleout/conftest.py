"""Servers for the scale-out tests (see .ci/services.sh); without them the tests skip.

Redis comes from ``redis_url`` and ``prefix`` in tests/conftest.py. Every test here needs the
redis extra: without it the folder skips as a whole.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest

pytest.importorskip("redis.asyncio", reason="needs the redis extra: pip install 'toolrelay[redis]'")

POSTGRES_DSN = os.environ.get("TOOLRELAY_TEST_POSTGRES_DSN")


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
