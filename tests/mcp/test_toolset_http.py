"""The toolset over streamable HTTP (servers in a thread of this process)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest

from tests.extras import needs_extra

pytest.importorskip("mcp_types", reason=needs_extra("mcp"))
from demo_server import build_server
from http_thread import serve_app

from toolrelay.exceptions import DuplicateToolError, ToolArgumentError, ToolExecutionError
from toolrelay.mcp import McpServerConfig, McpToolset
from toolrelay.tools import ToolContext


async def test_listing_calling_and_context_over_http(http_url: str) -> None:
    config = McpServerConfig(name="web", url=http_url, headers={"X-Trace": "t-1"})
    async with McpToolset(config) as toolset:
        assert toolset.catalog.names()[:2] == ["web.add", "web.delete_record"]
        add = toolset.catalog.get("web__add")
        assert add is not None
        assert await add.call('{"a": 40, "b": 2}') == "42"
        echo = toolset.catalog.get("web.echo_context")
        assert echo is not None
        answer = json.loads(await echo.call("", ToolContext(tenant_id="t9")))
        assert answer["meta"] == {"tenant_id": "t9"}
        fail = toolset.catalog.get("web.fail")
        assert fail is not None
        with pytest.raises(ToolExecutionError, match="out of stock"):
            await fail.call('{"reason": "out of stock"}')
        with pytest.raises(ToolArgumentError, match="b: Field required"):
            await add.call('{"a": 1}')


async def test_a_list_change_refreshes_the_toolset(http_url: str) -> None:
    changes: list[int] = []
    config = McpServerConfig(name="web", url=http_url)
    async with McpToolset(config, on_change=lambda t: changes.append(t.version)) as toolset:
        before = toolset.version
        add = toolset.catalog.get("web.add")
        assert "web.multiply" not in toolset.catalog
        grow = toolset.catalog.get("web.grow")
        assert grow is not None
        assert await grow.call('{"tool_name": "multiply"}') == "added multiply"
        async with asyncio.timeout(10):
            await toolset.wait_for_version(before + 1)
        multiply = toolset.catalog.get("web.multiply")
        assert multiply is not None
        assert await multiply.call('{"a": 6, "b": 7}') == "42"
        assert toolset.catalog.get("web.add") is add  # unchanged tools keep their objects
        assert changes == [before + 1]


@pytest.fixture
def two_urls() -> Iterator[tuple[str, str]]:
    with (
        serve_app(build_server("one").streamable_http_app()) as first,
        serve_app(build_server("two").streamable_http_app()) as second,
    ):
        yield first, second


async def test_same_names_on_two_servers_need_prefixes(two_urls: tuple[str, str]) -> None:
    first, second = two_urls
    bare = [
        McpServerConfig(name="one", url=first, prefix=""),
        McpServerConfig(name="two", url=second, prefix=""),
    ]
    with pytest.raises(DuplicateToolError) as caught:
        await McpToolset(bare).aopen()
    message = str(caught.value)
    assert "'add'" in message
    assert "MCP server 'one'" in message
    assert "MCP server 'two'" in message

    prefixed = [McpServerConfig(name="one", url=first), McpServerConfig(name="two", url=second)]
    async with McpToolset(prefixed) as toolset:
        assert {"one.add", "two.add"} <= set(toolset.catalog.names())
        assert {t.server for t in toolset.tools_of("two")} == {"two"}
