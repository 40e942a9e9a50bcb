"""A small MCP server (the official SDK's MCPServer) exercising what the toolset handles.

Run as a stdio server (``python demo_server.py``) or import :func:`build_server` and serve it
over streamable HTTP in a thread.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

import anyio
from mcp.server import NotificationOptions
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.runner import serve_loop
from mcp.server.stdio import stdio_server
from mcp_types import ToolAnnotations
from pydantic import BaseModel, Field

LONG_A = "get_the_monthly_revenue_breakdown_by_region_and_product_line_for_customer_a"
LONG_B = "get_the_monthly_revenue_breakdown_by_region_and_product_line_for_customer_b"
CHINESE_NAME = "查询天气"


class Item(BaseModel):
    sku: str
    quantity: int = Field(ge=1)


def build_server(name: str = "demo") -> MCPServer:
    server = MCPServer(name, log_level="WARNING")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True))
    def add(a: int, b: int) -> int:
        """Add two whole numbers."""
        return a + b

    @server.tool(annotations=ToolAnnotations(destructive_hint=True))
    def delete_record(record_id: str) -> str:
        """Delete a record for good."""
        return f"deleted {record_id}"

    @server.tool()
    def create_order(customer: str, items: list[Item]) -> str:
        """Create an order with line items."""
        return f"order for {customer}: {len(items)} items"

    @server.tool()
    async def echo_context(ctx: Context, note: str = "") -> dict[str, Any]:
        """Return the request's _meta (without the protocol's own keys) and the arguments."""
        meta = dict(ctx.request_context.meta or {})
        seen = {k: v for k, v in meta.items() if "/" not in k and k != "progressToken"}
        return {"meta": seen, "note": note}

    @server.tool()
    async def protocol(ctx: Context) -> str:
        """The protocol version of this connection."""
        return ctx.request_context.protocol_version

    @server.tool()
    def fail(reason: str) -> str:
        """Always fails with the given reason."""
        raise ToolError(reason)

    @server.tool()
    async def slow(seconds: float) -> str:
        """Sleep, then answer."""
        await anyio.sleep(seconds)
        return "done"

    @server.tool()
    def die() -> str:
        """Kill the server process in the middle of the call."""
        os._exit(3)

    @server.tool()
    async def grow(ctx: Context, tool_name: str) -> str:
        """Add a multiplying tool named tool_name and announce the new tool list."""

        def multiply(a: int, b: int) -> int:
            """Multiply two whole numbers (the product)."""
            return a * b

        server.add_tool(multiply, name=tool_name)
        await ctx.notify_tools_changed()  # 2026-07-28 connections: subscriptions/listen
        with contextlib.suppress(Exception):  # older connections: a notification
            await ctx.session.send_tool_list_changed()
        return f"added {tool_name}"

    def weather(city: str) -> str:
        return f"{city}：晴"

    # A name in Chinese: valid in toolrelay, kept as it is, sent to providers hashed.
    server.add_tool(weather, name=CHINESE_NAME, description="查询城市当前的天气。")

    for long_name in (LONG_A, LONG_B):

        def revenue(region: str) -> str:
            return f"revenue for {region}"

        server.add_tool(revenue, name=long_name, description="Monthly revenue by region.")

    def search_docs(query: str) -> str:
        return f"docs about {query}"

    # A name providers reject (a space); MCP only warns about it.
    server.add_tool(search_docs, name="search docs", description="Search the documentation.")
    return server


async def run_handshake_era(server: MCPServer) -> None:
    """Serve stdio like a server from before 2026: the initialize handshake only."""
    lowlevel = server._lowlevel_server
    options = lowlevel.create_initialization_options(NotificationOptions(tools_changed=True))
    async with stdio_server() as (read, write), lowlevel.lifespan(lowlevel) as state:
        await serve_loop(lowlevel, read, write, lifespan_state=state, init_options=options)


if __name__ == "__main__":
    demo = build_server(os.environ.get("DEMO_SERVER_NAME", "demo"))
    if os.environ.get("DEMO_SERVER_LEGACY") == "1":
        anyio.run(run_handshake_era, demo)
    else:
        demo.run()
