"""Tool list changes over stdio, on both protocol eras."""

from __future__ import annotations

import asyncio

import pytest

from tests.extras import needs_extra

pytest.importorskip("mcp_types", reason=needs_extra("mcp"))
from tests.mcp.mcp_helpers import demo_stdio
from toolrelay.mcp import McpToolset


@pytest.mark.parametrize(
    ("legacy", "era"),
    [(False, "2026-07-28"), (True, "2025-11-25")],
    ids=["subscriptions-listen", "list-changed-notification"],
)
async def test_a_server_announcing_new_tools_refreshes_the_toolset(legacy: bool, era: str) -> None:
    async with McpToolset(demo_stdio("calc", legacy=legacy)) as toolset:
        protocol = toolset.catalog.get("calc.protocol")
        assert protocol is not None
        assert await protocol.call("") == era
        version = toolset.version
        grow = toolset.catalog.get("calc.grow")
        assert grow is not None
        await grow.call('{"tool_name": "multiply"}')
        async with asyncio.timeout(10):
            await toolset.wait_for_version(version + 1)
        multiply = toolset.catalog.get("calc.multiply")
        assert multiply is not None
        assert await multiply.call('{"a": 6, "b": 7}') == "42"
