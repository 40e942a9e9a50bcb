"""The refund desk over two MCP servers through the gateway, with approval and idempotency.

``examples/refund_desk_mcp``: the payments and tickets servers run as subprocesses behind a
gateway configured by the example's ``gateway.toml``; the official MCP client, scripted like
a model, searches for each tool and calls it. The retry tool is destructive (its server says
so) and made idempotent by the gateway's policy: called twice, it is approved once and runs
once, and the repeat gets the recorded result.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from mcp import Client, StdioServerParameters
from mcp_types import CallToolResult, TextContent

from toolrelay.execution import Approve, AuditRecord, Deny, ToolInvocation
from toolrelay.execution._result import ApprovalVerdict
from toolrelay.gateway import (
    GatewayConfig,
    ToolGateway,
    gateway_server,
    load_gateway_config,
    open_gateway,
)

from ._helpers import PYTHON, ROOT

EXAMPLE = ROOT / "examples" / "refund_desk_mcp" / "gateway.toml"
RETRY = "refund.retry_failed_order"
AGENT = {"user_id": "U-ZHANG"}


@pytest.fixture(autouse=True)
def python_is_this_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    # The example starts its servers as `python`, as in an activated virtual environment.
    monkeypatch.setenv("PATH", str(Path(PYTHON).parent) + os.pathsep + os.environ["PATH"])


class Approvals:
    """An approval hook that records what it was asked and answers with ``verdict``."""

    def __init__(self, verdict: ApprovalVerdict) -> None:
        self.verdict = verdict
        self.asked: list[tuple[str, dict[str, Any], Any]] = []

    async def __call__(self, request: ToolInvocation, /) -> ApprovalVerdict:
        self.asked.append(
            (request.tool.definition.name, dict(request.arguments), request.context.user_id)
        )
        return self.verdict


class AuditTrail:
    """An audit sink keeping the records in a list."""

    def __init__(self) -> None:
        self.records: list[AuditRecord] = []

    async def write(self, record: AuditRecord) -> None:
        self.records.append(record)


class Agent:
    """A scripted MCP client session: searches like a model, then calls what it found."""

    def __init__(self, client: Client, meta: dict[str, Any] | None = AGENT) -> None:
        self.client = client
        self.meta = meta

    async def find(self, query: str, expected: str) -> None:
        result = await self.client.call_tool("tool_search", {"queries": [query], "max_results": 5})
        names = [hit["name"] for hit in json.loads(text_of(result))]
        assert expected in names, f"{query!r} found {names}"

    async def call(
        self, name: str, meta: dict[str, Any] | None = None, **arguments: Any
    ) -> CallToolResult:
        return await self.client.call_tool(
            "call_tool", {"name": name, "arguments": arguments}, meta=meta or self.meta
        )

    async def read(self, name: str, **arguments: Any) -> Any:
        result = await self.call(name, **arguments)
        assert not result.is_error, text_of(result)
        return json.loads(text_of(result))


def text_of(result: CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


@contextlib.asynccontextmanager
async def served_over_http(gateway: ToolGateway, config: GatewayConfig) -> AsyncIterator[str]:
    """The gateway over streamable HTTP on a free loopback port, in this event loop."""
    app = gateway_server(gateway, config).streamable_http_app(
        streamable_http_path="/mcp", host="127.0.0.1"
    )
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        async with asyncio.timeout(20):
            while not server.started:
                if serving.done():
                    serving.result()  # raises why it stopped
                await asyncio.sleep(0.02)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    finally:
        server.should_exit = True
        await serving
        sock.close()


@contextlib.asynccontextmanager
async def refund_desk(approvals: Approvals, audit: AuditTrail) -> AsyncIterator[Agent]:
    """The example's gateway in process, served over HTTP, and an agent connected to it."""
    config = load_gateway_config(EXAMPLE)
    async with (
        open_gateway(config, approval=approvals, audit=audit) as gateway,
        served_over_http(gateway, config) as url,
        Client(url, read_timeout_seconds=30) as client,
    ):
        yield Agent(client)


async def test_a_repeated_retry_is_approved_once_and_runs_once() -> None:
    approvals, audit = Approvals(Approve()), AuditTrail()
    async with refund_desk(approvals, audit) as agent:
        await agent.find("failed refunds from yesterday", "refund.find_failed_orders")
        failed = await agent.read("refund.find_failed_orders")
        refund = next(f for f in failed if f["retryable"])

        await agent.find("retry a failed refund", RETRY)
        first = await agent.call(RETRY, refund_id=refund["refund_id"])
        again = await agent.call(RETRY, refund_id=refund["refund_id"])  # the model repeats
        assert not first.is_error, text_of(first)
        assert not again.is_error, text_of(again)
        assert json.loads(text_of(first))["succeeded"] is True
        # The recorded result, after a line telling the model it did not run again.
        notice, recorded = text_of(again).split("\n", 1)
        assert notice.startswith("[not run again: this exact call already ran at ")
        assert recorded == text_of(first)

        await agent.find("open an incident ticket for failing refunds", "ticket.create_incident")
        stuck = [f["refund_id"] for f in failed if not f["retryable"]]
        ticket = await agent.read(
            "ticket.create_incident",
            title="Refunds failing for good",
            description="A retry cannot fix these; a person must act.",
            refund_ids=stuck,
            severity="sev2",
        )
        assert (ticket["refund_ids"], ticket["tenant_id"]) == (stuck, "acme")

        # The payment channel saw one retry: one attempt more than before.
        attempts = await agent.read("refund.list_attempts", refund_id=refund["refund_id"])
        assert len(attempts) == refund["attempts"] + 1

    assert approvals.asked == [(RETRY, {"refund_id": refund["refund_id"]}, "U-ZHANG")]
    retries = [(r.approval, r.replayed) for r in audit.records if r.tool == RETRY]
    assert retries == [("approved", False), (None, True)]


async def test_a_denied_retry_does_not_run() -> None:
    approvals = Approvals(Deny("Retries are frozen while cardpay recovers."))
    async with refund_desk(approvals, AuditTrail()) as agent:
        failed = await agent.read("refund.find_failed_orders", retryable_only=True)
        refund = failed[0]
        for _ in range(2):
            denied = await agent.call(RETRY, refund_id=refund["refund_id"])
            assert denied.is_error
            assert text_of(denied) == "Retries are frozen while cardpay recovers."
        attempts = await agent.read("refund.list_attempts", refund_id=refund["refund_id"])
        assert len(attempts) == refund["attempts"]
    # A denial is not recorded: the repeat was asked about again, and denied again.
    assert [name for name, _, _ in approvals.asked] == [RETRY, RETRY]


async def test_the_example_over_stdio() -> None:
    # `toolrelay serve examples/refund_desk_mcp/gateway.toml`, with the example's own
    # approval handler: it approves a named agent's retries and refuses anonymous ones.
    parameters = StdioServerParameters(
        command=PYTHON, args=["-m", "toolrelay", "serve", str(EXAMPLE)]
    )
    async with Client(parameters, read_timeout_seconds=30) as client:
        agent = Agent(client)
        failed = await agent.read("refund.find_failed_orders", retryable_only=True)
        first, second = failed[0], failed[1]

        retried = await agent.call(RETRY, refund_id=first["refund_id"])
        assert not retried.is_error, text_of(retried)
        # Repeated by the same agent: the recorded result answers, saying it did not run again.
        repeated = await agent.call(RETRY, refund_id=first["refund_id"])
        assert not repeated.is_error
        assert text_of(repeated).startswith("[not run again: this exact call already ran at ")
        assert text_of(repeated).endswith("\n" + text_of(retried))
        # Repeated without naming the agent: another user's record never answers it, so the
        # handler is asked, and refuses.
        for refund in (first, second):
            anonymous = await agent.call(RETRY, meta={"user_id": ""}, refund_id=refund["refund_id"])
            assert anonymous.is_error
            assert "needs a signed-in support agent" in text_of(anonymous)

        for refund, more in ((first, 1), (second, 0)):
            attempts = await agent.read("refund.list_attempts", refund_id=refund["refund_id"])
            assert len(attempts) == refund["attempts"] + more
