"""MCP servers for the tests: the demo server over stdio (once per module) and over HTTP."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytest.importorskip("mcp", reason="needs the mcp extra (the MCP SDK)")

from mcp_helpers import demo_stdio

from toolrelay.mcp import McpToolset


@pytest.fixture(scope="module")
def stdio_toolset() -> Iterator[McpToolset]:
    """An open toolset over one demo stdio server, shared by a module's tests."""
    with McpToolset(demo_stdio()) as toolset:
        yield toolset


@pytest.fixture
def http_url() -> Iterator[str]:
    """A fresh demo server over streamable HTTP (fresh: some tests change its tools)."""
    from demo_server import build_server
    from http_thread import serve_app

    with serve_app(build_server("demo-http").streamable_http_app()) as url:
        yield url
