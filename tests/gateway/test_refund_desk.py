"""The refund-desk triage through the gateway: two MCP servers and a module of tools.

The refund and payment tools run in one MCP server, the ticket tools in another, the
notification tools in a Python module; a scripted MCP client session (the official SDK's
client over stdio) finds each tool with tool_search and runs it with call_tool.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp_types import TextContent

from toolrelay.exceptions import ConfigurationError
from toolrelay.gateway import load_gateway_config, open_gateway

from ._helpers import PYTHON, SERVERS, toml_string

YESTERDAY_FAILED = {"RF-2001", "RF-2002", "RF-2004", "RF-2005", "RF-2006"}
RECOVERABLE = {"RF-2001", "RF-2005", "RF-2006"}
UNRECOVERABLE = {"RF-2002", "RF-2004"}


def server_table(name: str, script: str) -> str:
    return f"""
[[servers]]
name = "{name}"
command = {toml_string(PYTHON)}
args = [{toml_string(str(SERVERS / script))}]
prefix = ""          # the tools' own dotted names are categories enough
stderr = "discard"
timeout = 20
"""


APPROVALS = """\
from toolrelay.execution import Defer


def decide(request):
    # A person decides later: a call that needs approval waits and does not run.
    return Defer()
"""


def desk_config(approval: str = "") -> str:
    return f"""
[gateway]
name = "refund-desk"
{approval}

[search]
index = "bm25"

[context]
tenant_id = "acme"
{server_table("payments", "refund_payments_server.py")}
{server_table("tickets", "refund_tickets_server.py")}
[[modules]]
path = {toml_string(str(SERVERS / "refund_notify_tools.py"))}
"""


@pytest.fixture(scope="module")
def refund_desk_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("refund-desk")
    (folder / "approvals.py").write_text(APPROVALS, encoding="utf-8")
    path = folder / "gateway.toml"
    # Some upstream tools require approval: the gateway needs a handler to open.
    path.write_text(desk_config('[approval]\nhandler = "approvals.py:decide"'), encoding="utf-8")
    return path


class Session:
    """A scripted MCP client: searches, then calls what it found."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.user = {"user_id": "U-ZHANG"}

    async def find(self, query: str, expected: str) -> dict[str, Any]:
        result = await self.client.call_tool("tool_search", {"queries": [query], "max_results": 5})
        hits = json.loads(self._text(result))
        names = [h["name"] for h in hits]
        assert expected in names, f"{query!r} found {names}"
        return next(h for h in hits if h["name"] == expected)

    async def call(self, name: str, **arguments: Any) -> Any:
        result = await self.client.call_tool(
            "call_tool", {"name": name, "arguments": arguments}, meta=self.user
        )
        text = self._text(result)
        assert not result.is_error, text
        return json.loads(text)

    @staticmethod
    def _text(result: Any) -> str:
        block = result.content[0]
        assert isinstance(block, TextContent)
        return block.text


async def test_triage_over_two_mcp_servers(refund_desk_file: Path) -> None:
    parameters = StdioServerParameters(
        command=PYTHON, args=["-m", "toolrelay", "serve", str(refund_desk_file)]
    )
    async with Client(parameters, read_timeout_seconds=60) as client:
        session = Session(client)

        finder = await session.find("failed refunds from yesterday", "refund.find_failed_orders")
        assert "retryable_only" in finder["input_schema"]["properties"]
        failed = await session.call("refund.find_failed_orders")
        assert {f["refund_id"] for f in failed} == YESTERDAY_FAILED

        await session.find("retry a failed refund", "refund.retry_failed_order")
        recoverable = sorted(f["refund_id"] for f in failed if f["retryable"])
        assert set(recoverable) == RECOVERABLE
        for refund_id in recoverable:
            outcome = await session.call("refund.retry_failed_order", refund_id=refund_id)
            assert (outcome["status"], outcome["succeeded"]) == ("succeeded", True)

        await session.find("open an incident ticket for failing refunds", "ticket.create_incident")
        still_failing = [f for f in failed if not f["retryable"]]
        tickets = []
        for refund in still_failing:
            ticket = await session.call(
                "ticket.create_incident",
                title=f"Refund {refund['refund_id']} failing: {refund['failure_reason']}",
                description="Retry cannot fix this; a person must act.",
                refund_ids=[refund["refund_id"]],
                severity="sev2",
            )
            tickets.append(ticket)
        assert sorted(r for t in tickets for r in t["refund_ids"]) == sorted(UNRECOVERABLE)
        # The caller's identity crossed both hops: client _meta -> gateway -> tickets server.
        assert {(t["reporter"], t["tenant_id"]) for t in tickets} == {("U-ZHANG", "acme")}

        await session.find("notify the owner of the refunds", "notify.send_owner_message")
        # (The module has a back end of its own, which knows no tickets of the other server:
        # the ids go in the text.)
        ticket_ids = ", ".join(t["ticket_id"] for t in tickets)
        message = await session.call(
            "notify.send_owner_message",
            message=f"Retried {len(recoverable)} refunds; incidents {ticket_ids} still open.",
        )
        assert message["recipient"] == "U-LIN"
        assert ticket_ids in message["body"]

        # A second retry of a settled refund is refused by the server: an error result.
        again = await client.call_tool(
            "call_tool",
            {"name": "refund.retry_failed_order", "arguments": {"refund_id": "RF-2001"}},
        )
        assert again.is_error


async def test_approval_metadata_survives_the_mcp_hop(refund_desk_file: Path) -> None:
    # Where approval plugs in: the gateway's tool calling manager sees the upstream tools'
    # metadata (requires_approval, destructive) exactly as the refund desk declares it.
    config = load_gateway_config(refund_desk_file)
    async with open_gateway(config) as gateway:
        tools = (await gateway.snapshot()).tools
    assert tools["refund.force_success"].metadata.requires_approval is True
    assert tools["refund.retry_failed_order"].metadata.destructive is True
    assert tools["refund.find_failed_orders"].metadata.read_only is True
    assert tools["payment.top_up_merchant_balance"].metadata.requires_approval is True


async def test_without_approval_the_upstream_tools_needing_it_refuse_the_gateway(
    tmp_path: Path,
) -> None:
    path = tmp_path / "gateway.toml"
    path.write_text(desk_config(), encoding="utf-8")
    with pytest.raises(ConfigurationError, match=r"'refund.force_success'.* require approval"):
        async with open_gateway(load_gateway_config(path)):
            pass
