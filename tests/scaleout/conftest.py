"""Servers for the scale-out tests (see .ci/services.sh); without them the tests skip.

Redis comes from ``redis_url`` and ``prefix`` in tests/conftest.py. Every test here needs the
redis extra: without it the folder skips as a whole.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from tests.extras import needs_extra, server_variable

pytest.importorskip("redis.asyncio", reason=needs_extra("redis"))


@pytest.fixture
def postgres_schema() -> Iterator[tuple[str | None, str]]:
    """(DSN or None, schema): the load test uses the shared PostgreSQL index when it can.

    A DSN set without the postgres extra installed skips the test, naming the extra.
    """
    name = f"s_{uuid.uuid4().hex[:16]}"
    dsn = server_variable("TOOLRELAY_TEST_POSTGRES_DSN", module="psycopg", extra="postgres")
    if dsn is None:
        yield None, name
        return
    import psycopg

    yield dsn, name
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")
