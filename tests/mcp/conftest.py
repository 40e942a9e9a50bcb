"""MCP servers for the tests: the demo server over stdio (once per module) and over HTTP."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp", reason="needs the mcp extra")

SERVERS = Path(__file__).parent / "servers"
sys.path.insert(0, str(SERVERS))

from demo_server import build_server  # noqa: E402
from http_thread import serve_app  # noqa: E402

from toolrelay.mcp import McpServerConfig, McpToolset  # noqa: E402


def demo_stdio(name: str = "demo", **options: Any) -> McpServerConfig:
    """The demo server as a stdio subprocess."""
    options.setdefault("stderr", "discard")
    options.setdefault("timeout", 10.0)
    return McpServerConfig(
        name=name,
        command=sys.executable,
        args=(str(SERVERS / "demo_server.py"),),
        env={"DEMO_SERVER_NAME": name},
        **options,
    )


@pytest.fixture(scope="module")
def stdio_toolset() -> Iterator[McpToolset]:
    """An open toolset over one demo stdio server, shared by a module's tests."""
    with McpToolset(demo_stdio()) as toolset:
        yield toolset


@pytest.fixture
def http_url() -> Iterator[str]:
    """A fresh demo server over streamable HTTP (fresh: some tests change its tools)."""
    with serve_app(build_server("demo-http").streamable_http_app()) as url:
        yield url
