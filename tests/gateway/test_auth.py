"""A gateway over HTTP with ``[auth]`` and ``[scopes]``: callers are who their tokens say,
see and run what their scopes reach, and tenants never share records."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.mcp.auth_helpers import (
    AUDIENCE,
    ISSUER,
    Issuer,
    bearer,
    connected,
    opening,
    text_of,
)
from toolrelay.cli import app
from toolrelay.exceptions import ConfigurationError
from toolrelay.gateway import aserve
from toolrelay.gateway._modules import load_module_tools
from toolrelay.search import SQLiteUsageLog

MODULE = '''
from pathlib import Path

from toolrelay.tools import ToolContext, tool

RAN = Path(__file__).with_name("ran.txt")


@tool(name="refund.find_failed", read_only=True)
def find_failed() -> list[str]:
    """Find failed refunds that may be retried."""
    return ["R-1", "R-2"]


@tool(name="refund.retry", idempotency_key="refund_id")
def retry(refund_id: str, context: ToolContext) -> str:
    """Retry a failed refund payment."""
    with RAN.open("a") as ran:
        ran.write(f"{context.tenant_id} {refund_id}\\n")
    return f"retried {refund_id} for {context.tenant_id}"


@tool(name="ticket.comment")
def comment(ticket_id: str, text: str) -> str:
    """Comment on a support ticket."""
    return "commented"


@tool(name="ops.whoami", read_only=True)
def whoami(context: ToolContext) -> dict:
    """Who is calling: the caller's tool context."""
    return dict(context)
'''

WRITE = "refunds:read refunds:write"


@pytest.fixture
def issuer(tmp_path: Path) -> Issuer:
    return Issuer(tmp_path)


@pytest.fixture
def gateway_file(tmp_path: Path, issuer: Issuer) -> Path:
    (tmp_path / "desk_tools.py").write_text(MODULE, encoding="utf-8")
    path = tmp_path / "gateway.toml"
    path.write_text(
        f"""
[gateway]
name = "secured-desk"

[search]
index = "bm25"
usage_log = "usage.sqlite"

[[modules]]
path = "desk_tools.py"

[audit]
path = "audit.jsonl"

[auth]
issuer = "{ISSUER}"
audience = "{AUDIENCE}"
jwks = "jwks.json"

[auth.claims]
tenant_id = "org"

[scopes]
"refunds:read" = ["refund.find_*", "ops.*"]
"refunds:write" = ["refund.*", "ops.*"]
"desk" = ["ticket.*"]
""",
        encoding="utf-8",
    )
    return path


@contextlib.asynccontextmanager
async def gateway(config: Path, **options: Any) -> AsyncIterator[tuple[str, str]]:
    """``aserve(config, "http", port=0)`` in this event loop: its URL and who may call."""
    listening: asyncio.Future[tuple[str, str]] = asyncio.get_running_loop().create_future()
    task = asyncio.create_task(
        aserve(
            config,
            "http",
            port=0,
            on_listening=lambda url, callers: listening.set_result((url, callers)),
            **options,
        )
    )
    try:
        async with asyncio.timeout(60):
            done, _ = await asyncio.wait({task, listening}, return_when=asyncio.FIRST_COMPLETED)
        if task in done:
            task.result()
        yield listening.result()
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def audited(folder: Path) -> list[tuple[str, str, str]]:
    """(tool, tenant_id, user_id) of each audit record."""
    path = folder / "audit.jsonl"
    if not path.exists():
        return []
    records = [json.loads(line) for line in path.read_text().splitlines()]
    return [(r["tool"], r["tenant_id"], r["user_id"]) for r in records]


def ran(folder: Path) -> list[str]:
    path = folder / "ran.txt"
    return path.read_text().splitlines() if path.exists() else []


async def call(client: Any, name: str, **arguments: Any) -> tuple[bool, str]:
    result = await client.call_tool("call_tool", {"name": name, "arguments": arguments})
    return result.is_error, text_of(result)


async def search(client: Any, query: str) -> list[str]:
    result = await client.call_tool("tool_search", {"queries": [query], "max_results": 10})
    return sorted(hit["name"] for hit in json.loads(text_of(result)))


async def test_the_caller_is_the_tokens_whatever_meta_claims(
    gateway_file: Path, issuer: Issuer
) -> None:
    token = issuer.token(sub="u-7", org="acme", scope=WRITE)
    forged = {"tenant_id": "victim-corp", "user_id": "ceo", "scopes": ["desk"]}
    async with gateway(gateway_file) as (url, callers), connected(url, token) as client:
        result = await client.call_tool(
            "call_tool", {"name": "ops.whoami", "arguments": {}}, meta=forged
        )
    assert callers == f"bearer token required: a JWT from {ISSUER} for {AUDIENCE}"
    assert json.loads(text_of(result)) == {
        "user_id": "u-7",
        "tenant_id": "acme",
        "scopes": ["refunds:read", "refunds:write"],
    }
    assert audited(gateway_file.parent) == [("ops.whoami", "acme", "u-7")]


async def test_a_request_without_a_valid_token_is_401_and_nothing_is_recorded(
    gateway_file: Path, issuer: Issuer, tmp_path: Path
) -> None:
    (tmp_path / "stranger").mkdir()
    stranger = Issuer(tmp_path / "stranger")
    bad = {
        "missing": {},
        "malformed": bearer("eyJhbGciOiJFUzI1NiJ9.not-a-jwt"),
        "expired": bearer(issuer.token(org="acme", scope=WRITE, lifetime=-600)),
        "wrongly signed": bearer(stranger.token(org="acme", scope=WRITE)),
        "wrong audience": bearer(issuer.token(org="acme", scope=WRITE, aud="https://other/mcp")),
    }
    async with gateway(gateway_file) as (url, _):
        for case, headers in bad.items():
            answer = await opening(url, headers)
            assert answer.status_code == 401, case
            assert answer.headers["www-authenticate"].startswith("Bearer "), case
    assert (audited(gateway_file.parent), ran(gateway_file.parent)) == ([], [])
    usage = SQLiteUsageLog(str(gateway_file.parent / "usage.sqlite"))
    assert await usage.entries() == ()


async def test_two_tenants_on_one_gateway_never_see_each_others_records(
    gateway_file: Path, issuer: Issuer
) -> None:
    acme = issuer.token(sub="u-1", org="acme", scope=WRITE)
    beta = issuer.token(sub="u-1", org="beta", scope=WRITE)  # the same user name elsewhere
    async with gateway(gateway_file) as (url, _):
        async with connected(url, acme) as client:
            assert "refund.retry" in await search(client, "retry a failed refund")
            first = await call(client, "refund.retry", refund_id="R-1")
        async with connected(url, beta) as client:
            assert "refund.retry" in await search(client, "redo the refund payment")
            other = await call(client, "refund.retry", refund_id="R-1")
            # beta forging acme in _meta gets beta's record, not acme's
            forged = await client.call_tool(
                "call_tool",
                {"name": "refund.retry", "arguments": {"refund_id": "R-1"}},
                meta={"tenant_id": "acme"},
            )
        async with connected(url, acme) as client:
            again = await call(client, "refund.retry", refund_id="R-1")
    assert first == (False, "retried R-1 for acme")
    assert other == (False, "retried R-1 for beta")  # ran: acme's record is not beta's
    assert text_of(forged).startswith("[not run again")
    assert text_of(forged).endswith("for beta")
    assert again[1].startswith("[not run again")
    assert again[1].endswith("retried R-1 for acme")
    assert ran(gateway_file.parent) == ["acme R-1", "beta R-1"]
    usage = SQLiteUsageLog(str(gateway_file.parent / "usage.sqlite"))
    assert {(e.scope, e.query) for e in await usage.entries()} == {
        ("tenant:acme", "retry a failed refund"),
        ("tenant:beta", "redo the refund payment"),
    }


async def test_scopes_narrow_what_a_caller_finds_and_runs(
    gateway_file: Path, issuer: Issuer
) -> None:
    reader = issuer.token(org="acme", scope="refunds:read")
    agent = issuer.token(org="acme", scp=["desk"])
    nobody = issuer.token(org="acme")
    async with gateway(gateway_file) as (url, _):
        async with connected(url, reader) as client:
            assert await search(client, "retry failed refund") == ["refund.find_failed"]
            refused = await call(client, "refund.retry", refund_id="R-1")
            found = await call(client, "refund.find_failed")
        async with connected(url, agent) as client:
            assert await search(client, "refund ticket comment") == ["ticket.comment"]
            hidden = await call(client, "refund.find_failed")
        async with connected(url, nobody) as client:
            assert await search(client, "refund ticket comment") == []
    assert refused[0]
    assert refused[1].startswith("Tool 'refund.retry' is not available.")
    assert found == (False, '["R-1", "R-2"]')
    assert hidden[0]
    assert hidden[1].startswith("Tool 'refund.find_failed' is not available.")
    assert ran(gateway_file.parent) == []


async def test_no_anonymous_gateway_off_loopback_and_nothing_starts(tmp_path: Path) -> None:
    (tmp_path / "desk_tools.py").write_text(MODULE, encoding="utf-8")
    (tmp_path / "open.toml").write_text('[[modules]]\npath = "desk_tools.py"\n')
    loaded: list[str] = []

    def loader(spec: str) -> Any:
        loaded.append(spec)
        return load_module_tools(spec)

    with pytest.raises(ConfigurationError, match="add an authenticator"):
        await aserve(tmp_path / "open.toml", "http", host="0.0.0.0", module_loader=loader)
    assert loaded == []  # refused before any source started


async def test_auth_over_stdio_is_an_error(gateway_file: Path) -> None:
    with pytest.raises(ConfigurationError) as caught:
        await aserve(gateway_file, "stdio")
    assert str(caught.value) == (
        "[auth] and [http] apply to HTTP, and over stdio nothing would enforce them (the client "
        "that starts the gateway is its user, and its _meta says who calls): serve with "
        "transport 'http' (-t http), or leave them out"
    )


def test_the_command_line_names_what_is_missing_off_loopback(gateway_file: Path) -> None:
    command = ["serve", str(gateway_file), "-t", "http", "--host", "0.0.0.0"]
    missing_hosts = CliRunner().invoke(app, [*command, "--behind-proxy"])
    missing_tls = CliRunner().invoke(app, [*command, "--allowed-host", "tools.example.com"])
    assert missing_hosts.exit_code == missing_tls.exit_code == 1
    assert missing_hosts.stderr.startswith("error: serving on 0.0.0.0 needs the names clients")
    assert missing_tls.stderr.startswith(
        "error: serving on 0.0.0.0, anyone who reaches it could read the bearer tokens"
    )
