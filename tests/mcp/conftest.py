"""MCP servers for the tests: the demo server over stdio (once per module) and over HTTP.

Each test module that needs the MCP SDK skips without it (on ``mcp_types``); the others test
what works without the extra. This file loads without the SDK (``mcp_helpers`` needs none,
and puts servers/ on sys.path); the toolset is imported only when a test takes it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from tests.mcp.mcp_helpers import demo_stdio

if TYPE_CHECKING:
    from toolrelay.mcp import McpToolset


@pytest.fixture(scope="module")
def stdio_toolset() -> Iterator[McpToolset]:
    """An open toolset over one demo stdio server, shared by a module's tests."""
    from toolrelay.mcp import McpToolset

    with McpToolset(demo_stdio()) as toolset:
        yield toolset


@pytest.fixture
def http_url() -> Iterator[str]:
    """A fresh demo server over streamable HTTP (fresh: some tests change its tools)."""
    from demo_server import build_server
    from http_thread import serve_app

    with serve_app(build_server("demo-http").streamable_http_app()) as url:
        yield url
