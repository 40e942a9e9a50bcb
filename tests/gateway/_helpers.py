"""Helpers of the gateway tests: config tables and where the test MCP servers live."""

from __future__ import annotations

import sys
from pathlib import Path

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
