"""Toolrelay tools served over MCP, checked with the official client (in process)."""

from __future__ import annotations

import asyncio
import json
from typing import Literal

import pytest

from tests.extras import needs_extra

pytest.importorskip("mcp_types", reason=needs_extra("mcp"))

from http_thread import serve_app
from mcp import Client
from mcp.server import Server
from mcp.shared.exceptions import MCPError
from mcp_types import ToolAnnotations

from toolrelay.exceptions import ConfigurationError, ToolExecutionError
from toolrelay.execution import Approve, ToolCallingManager, ToolInvocation
from toolrelay.mcp import McpServerConfig, McpToolset, tools_server
from toolrelay.mcp._annotations import IDEMPOTENT, REQUIRES_APPROVAL_META
from toolrelay.mcp._server import tool_info
from toolrelay.tools import FunctionTool, ToolCatalog, ToolContext, ToolMetadata, as_tools, tool


@tool(name="orders.cancel", destructive=True, requires_approval=True)
def cancel_order(order_id: str, reason: Literal["customer", "fraud"] = "customer") -> str:
    """Cancel an order that has not shipped yet.

    Args:
        order_id: The order, e.g. "O-1".
        reason: Why it is cancelled.
    """
    return f"cancelled {order_id} ({reason})"


@tool(name="whoami", read_only=True)
def whoami(context: ToolContext) -> dict[str, object]:
    """Who is calling, from the tool context."""
    return {"tenant": context.tenant_id, "user": context.user_id}


@tool
def explode() -> str:
    """Always fails."""
    raise ToolExecutionError("explode", "the warehouse is on fire")


async def crawl() -> str:
    """Takes too long."""
    await asyncio.sleep(30)
    return "late"


async def approve_all(call: ToolInvocation, /) -> Approve:
    return Approve()


def served(**options: object) -> Server[object]:
    """The catalog served with an approver for its guarded tool (the server refuses none)."""
    manager = ToolCallingManager(approval=approve_all)
    return tools_server(catalog(), tool_calling_manager=manager, **options)  # type: ignore[arg-type]


def catalog() -> ToolCatalog:
    slow = FunctionTool.from_function(crawl, metadata=ToolMetadata(timeout=0.2))
    return ToolCatalog(as_tools(cancel_order, whoami, explode, slow))


def test_tools_are_listed_as_toolrelay_defines_them() -> None:
    cancel = FunctionTool.from_function(cancel_order)
    info = tool_info(cancel)
    assert info.name == "orders.cancel"
    assert info.description == cancel.definition.description
    assert info.input_schema == dict(cancel.definition.input_schema)
    assert info.annotations is not None
    assert (info.annotations.read_only_hint, info.annotations.destructive_hint) == (False, True)
    assert info.meta == {REQUIRES_APPROVAL_META: True}


def test_no_tool_is_listed_as_safer_than_it_declares() -> None:
    listed = {t.definition.name: tool_info(t).annotations for t in catalog()}
    # explode declares nothing: it may change state, so it may destroy.
    assert listed["explode"] == ToolAnnotations(
        read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=True
    )
    assert listed["whoami"] == ToolAnnotations(read_only_hint=True, open_world_hint=True)
    # A served call runs through a manager, which records a keyed tool's results: a repeated
    # call gets the recorded result (see test_served_calls_keep_their_declared_idempotency).
    keyed = FunctionTool.from_function(
        cancel_order, metadata=ToolMetadata(destructive=True, idempotency_key=["order_id"])
    )
    annotations = tool_info(keyed).annotations
    assert annotations == ToolAnnotations(
        read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=True
    )


async def test_list_and_call_with_the_official_client() -> None:
    server = served(name="shop")
    async with Client(server) as client:
        listed = await client.list_tools()
        assert [t.name for t in listed.tools] == ["orders.cancel", "whoami", "explode", "crawl"]
        result = await client.call_tool("orders.cancel", {"order_id": "O-1"})
        assert (result.is_error, result.content[0].text) == (False, "cancelled O-1 (customer)")  # type: ignore[union-attr]


async def test_meta_becomes_the_tool_context_and_fixed_entries_win() -> None:
    server = served(context={"tenant_id": "acme"})
    async with Client(server) as client:
        result = await client.call_tool("whoami", {}, meta={"tenant_id": "forged", "user_id": "u1"})
    assert json.loads(result.content[0].text) == {"tenant": "acme", "user": "u1"}  # type: ignore[union-attr]


async def test_failures_are_error_results() -> None:
    async with Client(served()) as client:
        bad = await client.call_tool("orders.cancel", {"reason": "boredom"})
        failed = await client.call_tool("explode", {})
        slow = await client.call_tool("crawl", {})
        with pytest.raises(MCPError, match="Unknown tool"):
            await client.call_tool("nope", {})
    assert bad.is_error
    text = bad.content[0].text  # type: ignore[union-attr]
    assert "order_id: Field required" in text
    assert "reason:" in text
    assert (failed.is_error, failed.content[0].text) == (True, "the warehouse is on fire")  # type: ignore[union-attr]
    assert slow.is_error
    assert "timed out after 0.2 s" in slow.content[0].text  # type: ignore[union-attr]


async def test_a_toolset_reads_served_tools_back_unchanged() -> None:
    with serve_app(served(name="shop").streamable_http_app()) as url:
        async with McpToolset(McpServerConfig(name="shop", url=url, prefix="")) as toolset:
            cancel = toolset.catalog.get("orders.cancel")
            assert cancel is not None
            original = FunctionTool.from_function(cancel_order)
            assert cancel.definition == original.definition
            assert cancel.metadata.destructive is True
            assert cancel.metadata.requires_approval is True
            assert cancel.metadata.extra[IDEMPOTENT] is False
            whoami_tool = toolset.catalog.get("whoami")
            assert whoami_tool is not None
            answer = await whoami_tool.call("{}", ToolContext(tenant_id="t1", user_id="u2"))
            assert json.loads(answer) == {"tenant": "t1", "user": "u2"}


def test_a_tool_that_requires_approval_is_not_served_without_an_approver() -> None:
    with pytest.raises(ConfigurationError, match=r"'orders.cancel' requires approval"):
        tools_server(catalog())


async def test_served_calls_keep_their_declared_idempotency() -> None:
    runs: list[str] = []

    @tool(name="refund.issue", idempotency_key=["refund_id"])
    def issue(refund_id: str, amount_cents: int) -> str:
        """Issue a refund."""
        runs.append(refund_id)
        return f"refunded {amount_cents}"

    async with Client(tools_server([issue], context={"tenant_id": "acme"})) as client:
        first = await client.call_tool("refund.issue", {"refund_id": "R1", "amount_cents": 5})
        again = await client.call_tool("refund.issue", {"refund_id": "R1", "amount_cents": 5})
        # 7 and 7.0 are one operation, whatever spelling the client sends.
        await client.call_tool("refund.issue", {"refund_id": "R2", "amount_cents": 7})
        same = await client.call_tool("refund.issue", {"refund_id": "R2", "amount_cents": 7.0})
    assert runs == ["R1", "R2"]
    assert first.content[0].text == "refunded 5"  # type: ignore[union-attr]
    assert again.content[0].text.endswith("refunded 5")  # type: ignore[union-attr]
    assert same.content[0].text.startswith("[not run again")  # type: ignore[union-attr]


async def test_a_served_call_naming_no_caller_is_refused_before_it_runs() -> None:
    runs: list[str] = []

    @tool(name="refund.issue", idempotency_key=["refund_id"])
    def issue(refund_id: str) -> str:
        """Issue a refund."""
        runs.append(refund_id)
        return "refunded"

    async with Client(tools_server([issue])) as client:
        refused = await client.call_tool("refund.issue", {"refund_id": "R1"})
        known = await client.call_tool(
            "refund.issue", {"refund_id": "R1"}, meta={"user_id": "alice"}
        )
    assert refused.is_error
    assert "keeps its idempotency keys per caller" in refused.content[0].text  # type: ignore[union-attr]
    assert known.content[0].text == "refunded"  # type: ignore[union-attr]
    assert runs == ["R1"]
