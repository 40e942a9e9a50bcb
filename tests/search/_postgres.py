"""The PostgreSQL server of the search tests, from TOOLRELAY_TEST_POSTGRES_DSN.

.ci/services.sh starts one and sets the variable; without it the tests that need a server
skip. Each test gets a schema of its own, dropped afterwards.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest

DSN = os.environ.get("TOOLRELAY_TEST_POSTGRES_DSN")
SKIP_REASON = "set TOOLRELAY_TEST_POSTGRES_DSN to a PostgreSQL server (.ci/services.sh starts one)"


def require_dsn() -> str:
    pytest.importorskip("psycopg", reason="needs the postgres extra: pip install 'toolrelay[postgres]'")
    if not DSN:
        pytest.skip(SKIP_REASON)
    return DSN


def has_pgvector(dsn: str) -> bool:
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute(
            "SELECT 1 FROM pg_available_extensions WHERE name = 'vector'"
        ).fetchone()
    return row is not None


@pytest.fixture
def postgres_dsn() -> str:
    return require_dsn()


@pytest.fixture
def schema(postgres_dsn: str) -> Iterator[str]:
    import psycopg

    name = f"t_{uuid.uuid4().hex[:16]}"
    yield name
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")
