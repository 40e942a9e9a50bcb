"""Helpers of the gateway tests: config tables, where the test MCP servers live, and a
gateway served to an in-process MCP client."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from mcp.server import Server
from mcp_types import CallToolResult, TextContent

from toolrelay.gateway import GatewayConfig, ToolGateway, gateway_server

ROOT = Path(__file__).resolve().parents[2]
SERVERS = ROOT / "tests" / "mcp" / "servers"
PYTHON = sys.executable


def toml_string(value: str) -> str:
    """``value`` as a TOML basic string."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def demo_server_table(name: str = "demo", prefix: str | None = None) -> str:
    """A ``[[servers]]`` table running the demo MCP server over stdio."""
    lines = [
        "[[servers]]",
        f"name = {toml_string(name)}",
        f"command = {toml_string(PYTHON)}",
        f"args = [{toml_string(str(SERVERS / 'demo_server.py'))}]",
        f"env = {{ DEMO_SERVER_NAME = {toml_string(name)} }}",
        'stderr = "discard"',
        "timeout = 10",
    ]
    if prefix is not None:
        lines.append(f"prefix = {toml_string(prefix)}")
    return "\n".join(lines) + "\n"


def served(gateway: ToolGateway, **settings: Any) -> Server[Any]:
    """The MCP server ``gateway_server`` builds over ``gateway``, for an in-process client.

    ``settings`` are the file's (``GatewayConfig`` fields: ``context``, ``instructions``...);
    the modules named are never loaded here: the gateway is built already.
    """
    return gateway_server(gateway, GatewayConfig(modules=("in_process",), **settings))


def text_of(result: CallToolResult) -> str:
    """The text of a call's one content block."""
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text
