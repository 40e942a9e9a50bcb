"""Skips for want of an extra name it, also where a server's variable is set (tests/extras.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.extras import import_extra, needs_extra, server_variable
from tests.faults.test_idempotency import _stores

REDIS_REASON = "needs the redis extra: pip install -e '.[redis]'"


@pytest.fixture
def without_redis(monkeypatch: pytest.MonkeyPatch) -> None:
    """``import redis`` fails as where the redis extra is not installed."""
    for name in ("redis", "redis.asyncio"):
        monkeypatch.setitem(sys.modules, name, None)


def test_the_reason_names_the_extra_and_how_to_install_it() -> None:
    assert needs_extra("redis") == REDIS_REASON
    with pytest.raises(pytest.skip.Exception, match="needs the x extra"):
        import_extra("no_such_module_here", "x")
    assert import_extra("json", "x") is sys.modules["json"]


def test_an_unset_variable_is_no_server_whatever_is_installed(
    monkeypatch: pytest.MonkeyPatch, without_redis: None
) -> None:
    monkeypatch.delenv("TOOLRELAY_TEST_REDIS_URL", raising=False)
    assert server_variable("TOOLRELAY_TEST_REDIS_URL", module="redis", extra="redis") is None
    monkeypatch.setenv("TOOLRELAY_TEST_REDIS_URL", "")
    assert server_variable("TOOLRELAY_TEST_REDIS_URL", module="redis", extra="redis") is None


def test_a_server_named_without_its_client_skips_naming_the_extra(
    monkeypatch: pytest.MonkeyPatch, without_redis: None
) -> None:
    monkeypatch.setenv("TOOLRELAY_TEST_REDIS_URL", "redis://127.0.0.1:1/0")
    with pytest.raises(pytest.skip.Exception) as skipped:
        server_variable("TOOLRELAY_TEST_REDIS_URL", module="redis.asyncio", extra="redis")
    assert skipped.value.msg == REDIS_REASON


def test_a_server_named_with_its_client_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLRELAY_TEST_POSTGRES_DSN", "postgresql://db/x")
    dsn = server_variable("TOOLRELAY_TEST_POSTGRES_DSN", module="json", extra="postgres")
    assert dsn == "postgresql://db/x"


async def test_the_idempotency_fault_campaign_skips_before_it_starts(
    monkeypatch: pytest.MonkeyPatch, without_redis: None, tmp_path: Path
) -> None:
    monkeypatch.setenv("TOOLRELAY_TEST_REDIS_URL", "redis://127.0.0.1:1/0")
    with pytest.raises(pytest.skip.Exception) as skipped:
        async with _stores(tmp_path):
            raise AssertionError("no store is made without the redis extra")
    assert skipped.value.msg == REDIS_REASON
